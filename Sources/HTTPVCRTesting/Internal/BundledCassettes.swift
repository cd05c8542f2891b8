import Foundation

/// The copies of `Cassettes.bundle` that a build put into the test bundle, and where a scope's cassette is in them.
enum BundledCassettes {
    /// Where to look.
    struct Search {
        /// Named by the user (``VCRCassetteScope/cassettesBundle``): the only bundle looked in.
        var named: Bundle?
        /// A ``VCRTestCase`` class's bundle.
        var testBundle: Bundle?
        /// The test's module: SwiftPM names its resource bundle `<Package>_<Module>`.
        var moduleName: String?

        init(_ scope: VCRCassetteScope) {
            named = scope.cassettesBundle
            testBundle = scope.testBundle
            moduleName = scope.moduleName
        }
    }

    /// The `Cassettes.bundle` folders there are, in the order they are tried:
    /// 1. in the bundle the user named, and nowhere else;
    /// 2. in a ``VCRTestCase`` class's bundle (`Bundle(for:)`);
    /// 3. in SwiftPM's resource bundle of the test's module (`<Package>_<Module>.resources` on Linux, `.bundle` on
    ///    Apple platforms), next to or inside the bundles of 2, `Bundle.allBundles` and `Bundle.main`;
    /// 4. in `Bundle.allBundles` and `Bundle.main` themselves (an Xcode test target's Copy Bundle Resources);
    /// 5. in the other resource bundles next to or inside them.
    static func folders(_ search: Search) -> [URL] {
        if let named = search.named { return unique(cassettesFolders(in: named)) }
        let bundles = (search.testBundle.map { [$0] } ?? []) + Bundle.allBundles + [Bundle.main]
        // Swift Testing has no class to ask: the test executable's resource bundles sit beside it (Linux: the
        // build folder is its bundle), or, under Xcode, inside the test bundle.
        var places: [URL] = []
        for bundle in bundles {
            places.append(bundle.bundleURL)
            places.append(bundle.bundleURL.deletingLastPathComponent())
            if let resources = bundle.resourceURL { places.append(resources) }
        }
        let resourceBundles = unique(places).flatMap(resourceBundles(in:))
        let suffix = search.moduleName.map { "_" + $0 }
        let own = resourceBundles.filter { suffix.map($0.deletingPathExtension().lastPathComponent.hasSuffix) ?? false }
        let others = resourceBundles.filter { !own.contains($0) }
        var folders: [URL] = []
        if let testBundle = search.testBundle { folders += cassettesFolders(in: testBundle) }
        folders += own.flatMap(cassettesFolders(inResourceBundle:))
        folders += bundles.flatMap(cassettesFolders(in:))
        folders += others.flatMap(cassettesFolders(inResourceBundle:))
        return unique(folders)
    }

    /// The cassette's path inside `Cassettes.bundle`: what follows `Cassettes.bundle/` in its path
    /// (`<Suite>/<test>.json`), or, for a folder of another name, that folder's name and the file's.
    static func pathInCopy(_ scope: VCRCassetteScope) -> String {
        let folder = scope.cassettesPath.isEmpty
            // VCRTestCase without a package root: its cassettes' default folder.
            ? "/" + CassetteNaming.bundleName + "/" + CassetteNaming.sanitize(scope.suiteName)
            : scope.cassettesPath
        let components = CassetteNaming.cassetteURL(folder: folder, name: scope.cassetteName)
            .standardizedFileURL.pathComponents
        if let index = components.lastIndex(of: CassetteNaming.bundleName), index + 1 < components.count {
            return components[(index + 1)...].joined(separator: "/")
        }
        return components.suffix(2).joined(separator: "/")
    }

    /// The first of `folders` that holds the file at `path`.
    static func copy(at path: String, in folders: [URL]) -> URL? {
        folders.first { isFile($0.appendingPathComponent(path)) }
    }

    // MARK: Private

    private static func cassettesFolders(in bundle: Bundle) -> [URL] {
        [bundle.resourceURL, bundle.bundleURL].compactMap { url in
            url.map { $0.appendingPathComponent(CassetteNaming.bundleName) }.flatMap { isFolder($0) ? $0 : nil }
        }
    }

    private static func cassettesFolders(inResourceBundle url: URL) -> [URL] {
        Bundle(url: url).map(cassettesFolders(in:)) ?? []
    }

    /// The SwiftPM resource bundles in `folder`: `*.resources` (Linux), `*.bundle` (Apple), never a `Cassettes.bundle`.
    private static func resourceBundles(in folder: URL) -> [URL] {
        let entries = (try? FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)) ?? []
        return entries
            .filter { ["resources", "bundle"].contains($0.pathExtension) }
            .filter { $0.lastPathComponent != CassetteNaming.bundleName && isFolder($0) }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    private static func isFolder(_ url: URL) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) && isDirectory.boolValue
    }

    private static func isFile(_ url: URL) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) && !isDirectory.boolValue
    }

    private static func unique(_ urls: [URL]) -> [URL] {
        var seen: Set<String> = []
        return urls.filter { seen.insert($0.standardizedFileURL.path).inserted }
    }
}
