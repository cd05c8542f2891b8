import Foundation
import HTTPVCR

/// The cassette a ``VCRTestCase`` has inserted, readable from the test's other threads.
final class CassetteBox: @unchecked Sendable {
    private let cassette = Locked<Cassette?>(nil, level: .testing)

    var value: Cassette? {
        get { cassette.withLock { $0 } }
        set { cassette.withLock { $0 = newValue } }
    }
}

/// Package roots of XCTest classes and the source locations of their test methods, looked up once.
final class PackageRoots: @unchecked Sendable {
    static let shared = PackageRoots()

    private let roots = Locked<[ObjectIdentifier: URL?]>([:], level: .testing)
    private let sources = Locked<[String: (path: String, text: [Substring])?]>([:], level: .testing)

    func root(for testClass: AnyClass, testFilePath: String?) -> URL? {
        let key = ObjectIdentifier(testClass)
        if let cached = roots.withLock({ $0[key] }) { return cached }
        let root = Self.findRoot(for: testClass, testFilePath: testFilePath)
        roots.withLock { $0[key] = root }
        return root
    }

    /// The variable that names the root outright, for Xcode (a scheme's test environment: `$(SRCROOT)`). xcodebuild
    /// passes `TEST_RUNNER_VCR_PACKAGE_ROOT` on without its prefix; the prefixed name is read too.
    static let packageRootVariable = "VCR_PACKAGE_ROOT"

    static func findRoot(
        for testClass: AnyClass,
        testFilePath: String?,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> URL? {
        if let testFilePath {
            return CassetteNaming.packageRoot(ofSourceFile: testFilePath)
        }
        if let named = environment[packageRootVariable] ?? environment["TEST_RUNNER_" + packageRootVariable],
           !named.isEmpty {
            return URL(fileURLWithPath: NSString(string: named).expandingTildeInPath).standardizedFileURL
        }
        var starts: [URL] = [Bundle(for: testClass).bundleURL, Bundle.main.bundleURL]
        if let executable = Bundle.main.executableURL { starts.append(executable.deletingLastPathComponent()) }
        if let argument = CommandLine.arguments.first, argument.hasPrefix("/") {
            starts.append(URL(fileURLWithPath: argument).deletingLastPathComponent())
        }
        for start in starts {
            if let root = CassetteNaming.packageRoot(searchingUpFrom: start) { return root }
        }
        return CassetteNaming.packageRoot(
            searchingUpFrom: URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        )
    }

    /// The line declaring `method` in the file declaring `className`, searched for under the package's `Tests`
    /// folder (or in `testFilePath`). Without one, this file, which is still better than nothing.
    func location(ofMethod method: String, inClass className: String, testFilePath: String?, packageRoot: URL?)
        -> VCRSourceLocation
    {
        let key = "\(packageRoot?.path ?? "")|\(testFilePath ?? "")|\(className)"
        let cached = sources.withLock { $0[key] }
        let source: (path: String, text: [Substring])?
        if let cached {
            source = cached
        } else {
            source = Self.findSource(ofClass: className, testFilePath: testFilePath, packageRoot: packageRoot)
            sources.withLock { $0[key] = .some(source) }
        }
        guard let source else { return VCRSourceLocation() }
        let fileID = "\(URL(fileURLWithPath: source.path).deletingLastPathComponent().lastPathComponent)/"
            + URL(fileURLWithPath: source.path).lastPathComponent
        let patterns = ["func \(method)(", "func \(method) ("]
        let line = source.text.firstIndex { line in patterns.contains { line.contains($0) } }
            ?? source.text.firstIndex { $0.contains("class \(className)") }
            ?? 0
        return VCRSourceLocation(fileID: fileID, filePath: source.path, line: line + 1, column: 1)
    }

    private static func findSource(ofClass className: String, testFilePath: String?, packageRoot: URL?)
        -> (path: String, text: [Substring])?
    {
        func read(_ path: String) -> [Substring]? {
            guard let data = FileManager.default.contents(atPath: path) else { return nil }
            return String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        }
        if let testFilePath, let text = read(testFilePath) { return (testFilePath, text) }
        guard let packageRoot else { return nil }
        let tests = packageRoot.appendingPathComponent("Tests")
        guard let enumerator = FileManager.default.enumerator(
            at: tests, includingPropertiesForKeys: nil, options: [.skipsHiddenFiles]
        ) else { return nil }
        let declaration = "class \(className)"
        for case let url as URL in enumerator where url.pathExtension == "swift" {
            guard let text = read(url.path) else { continue }
            let declares = text.contains { line in
                guard let range = line.range(of: declaration) else { return false }
                let after = line[range.upperBound...].first
                return after == nil || after == ":" || after == " " || after == "{" || after == "<"
            }
            if declares { return (url.path, text) }
        }
        return nil
    }
}
