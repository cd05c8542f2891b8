import Foundation
import HTTPVCR

/// File names, package roots and `swift test --filter` commands for test cassettes.
enum CassetteNaming {
    /// The folder, at the package root, that holds the cassettes of every suite.
    static let bundleName = "Cassettes.bundle"

    /// The longest file name (in UTF-8 bytes, extension excluded) a sanitized name may have. Longer names are
    /// cut and end in a hash of the whole name, so that they stay distinct.
    static let maximumNameLength = 120

    /// `name` made safe as a file name on every file system: letters (any script), digits, `_`, `-` and `.`
    /// are kept as written; every run of other characters (spaces, `/`, `:`, `*`, quotes, parentheses, …)
    /// becomes one `_`. Leading and trailing dots and underscores that sanitizing produced are dropped, so the
    /// file is never hidden. Nothing else changes: `test_search_v2` stays `test_search_v2`.
    ///
    /// ```swift
    /// CassetteNaming.sanitize("testSearch")          // "testSearch"
    /// CassetteNaming.sanitize("search: a/b \"c\"")   // "search_a_b_c"
    /// ```
    static func sanitize(_ name: String) -> String {
        var result = ""
        var pendingSeparator = false
        for character in name {
            if isAllowed(character) {
                if pendingSeparator && !result.isEmpty { result.append("_") }
                pendingSeparator = false
                result.append(character)
            } else {
                pendingSeparator = true
            }
        }
        while result.hasPrefix(".") { result.removeFirst() }
        while result.hasSuffix(".") { result.removeLast() }
        if result.isEmpty { result = "_" }
        return shortened(result, original: name)
    }

    /// A cassette name that may name subfolders (`"Login/alice"`): each `/`-separated component sanitized, empty
    /// and `..` components dropped. An extension (`.json`, `.plist`) is kept.
    static func sanitizePath(_ path: String) -> String {
        let components = path.split(separator: "/", omittingEmptySubsequences: true)
            .map(String.init)
            .filter { $0 != "." && $0 != ".." }
            .map(sanitize)
        return components.isEmpty ? "_" : components.joined(separator: "/")
    }

    /// The name of a test function without its parameter list: `search()` → `search`, `login(user:)` → `login`.
    static func functionBaseName(_ name: String) -> String {
        var base = name
        if let parenthesis = base.firstIndex(of: "(") { base = String(base[..<parenthesis]) }
        if base.hasPrefix("`") && base.hasSuffix("`") && base.count >= 2 { base = String(base.dropFirst().dropLast()) }
        return base
    }

    /// The suffix that tells the cassettes of a parameterized test's arguments apart: the arguments'
    /// descriptions, sanitized and joined by `-` (`login(user:)` with `"alice"` → `login-alice`).
    static func argumentSuffix(_ descriptions: [String]) -> String {
        let parts = descriptions.map { description -> String in
            var text = description
            if text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") {
                text = String(text.dropFirst().dropLast())
            }
            var sanitized = sanitize(text)
            while sanitized.hasPrefix("_") && sanitized.count > 1 { sanitized.removeFirst() }
            while sanitized.hasSuffix("_") && sanitized.count > 1 { sanitized.removeLast() }
            return sanitized
        }
        return parts.joined(separator: "-")
    }

    // MARK: Package root

    /// The nearest folder at or above `directory` that holds a `Package.swift`.
    static func packageRoot(searchingUpFrom directory: URL) -> URL? {
        var url = directory.standardizedFileURL
        let fileManager = FileManager.default
        while true {
            if fileManager.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { return url }
            let parent = url.deletingLastPathComponent().standardizedFileURL
            if parent.path == url.path || url.path == "/" || url.path.isEmpty { return nil }
            url = parent
        }
    }

    /// The package root of a source file: the nearest folder above it holding `Package.swift`. Without one (an
    /// Xcode project), the file's own folder.
    static func packageRoot(ofSourceFile filePath: String) -> URL {
        let folder = URL(fileURLWithPath: filePath).deletingLastPathComponent()
        return packageRoot(searchingUpFrom: folder) ?? folder.standardizedFileURL
    }

    /// `<package root>/Cassettes.bundle/<suite>`, the default folder of a suite's cassettes.
    static func defaultCassettesPath(packageRoot: URL, suiteName: String) -> String {
        packageRoot.appendingPathComponent(bundleName).appendingPathComponent(sanitize(suiteName)).path
    }

    /// The file of cassette `name` (relative to `folder`, or absolute), resolved the way `VCR.insertCassette`
    /// resolves it: `.json` added when it has no extension.
    static func cassetteURL(folder: String, name: String) -> URL {
        var configuration = VCRConfiguration()
        configuration.cassettesPath = folder
        configuration.cassettePath = name
        return configuration.cassetteURL ?? URL(fileURLWithPath: folder).appendingPathComponent(name)
    }

    /// `path` when absolute, else resolved against `root`.
    static func resolve(_ path: String, against root: URL) -> String {
        if path.hasPrefix("/") { return URL(fileURLWithPath: path).standardizedFileURL.path }
        if path.hasPrefix("~") { return NSString(string: path).expandingTildeInPath }
        return root.appendingPathComponent(path).standardizedFileURL.path
    }

    // MARK: Re-recording

    /// The command that re-records one test: `VCR_RECORD_MODE=new swift test --filter SearchTests/search`.
    static func rerecordCommand(filter: String, recordMode: String = "new") -> String {
        "VCR_RECORD_MODE=\(recordMode) swift test --filter \(shellQuoted(filter))"
    }

    /// A `--filter` pattern (a regular expression matched against `Module.Suite/test()` identifiers) for the
    /// given name components, escaped: `["SearchTests", "search"]` → `SearchTests/search`.
    static func filterPattern(_ components: [String]) -> String {
        components.map(regexEscaped).joined(separator: "/")
    }

    static func regexEscaped(_ text: String) -> String {
        var result = ""
        for character in text {
            if "\\^$.|?*+()[]{}".contains(character) { result.append("\\") }
            result.append(character)
        }
        return result
    }

    static func shellQuoted(_ text: String) -> String {
        let safe = CharacterSet(
            charactersIn: "abcdefghijklmnopqrstuvwxyz" + "ABCDEFGHIJKLMNOPQRSTUVWXYZ" + "0123456789_-./:=,+@%"
        )
        if !text.isEmpty, text.unicodeScalars.allSatisfy({ safe.contains($0) }) { return text }
        return "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    // MARK: XCTest names

    /// The test method of an XCTest `name`: `SearchTests.testSearch` (Linux) and `-[SearchTests testSearch]`
    /// (Apple platforms) both give `testSearch`. Selector suffixes Objective-C adds to throwing and async
    /// methods (`testSearchAndReturnError:`, `testSearchWithCompletionHandler:`) are removed.
    static func xcTestMethodName(fromTestName name: String) -> String {
        var method: String
        if name.hasPrefix("-["), name.hasSuffix("]"), let space = name.lastIndex(of: " ") {
            method = String(name[name.index(after: space)..<name.index(before: name.endIndex)])
        } else if let dot = name.lastIndex(of: ".") {
            method = String(name[name.index(after: dot)...])
        } else {
            method = name
        }
        if method.hasSuffix(":") {
            method.removeLast()
            for suffix in ["AndReturnError", "WithCompletionHandler", "WithCompletion"] where method.hasSuffix(suffix) {
                method.removeLast(suffix.count)
                break
            }
            method = method.split(separator: ":").first.map(String.init) ?? method
        }
        return method
    }

    // MARK: Private

    private static func isAllowed(_ character: Character) -> Bool {
        if character == "_" || character == "-" || character == "." { return true }
        if character.isASCII { return character.isLetter || character.isNumber }
        return character.unicodeScalars.allSatisfy { scalar in
            scalar.properties.isAlphabetic || scalar.properties.numericType == .decimal
                || scalar.properties.generalCategory == .nonspacingMark
                || scalar.properties.generalCategory == .spacingMark
        }
    }

    private static func shortened(_ name: String, original: String) -> String {
        guard name.utf8.count > maximumNameLength else { return name }
        var prefix = ""
        var length = 0
        for character in name {
            let size = String(character).utf8.count
            if length + size > maximumNameLength - 9 { break }
            prefix.append(character)
            length += size
        }
        return prefix + "-" + stableHash(original)
    }

    /// FNV-1a, 32 bits, as 8 hex digits: the same in every process (Swift's `Hasher` is seeded per process).
    static func stableHash(_ text: String) -> String {
        var hash: UInt32 = 0x811C_9DC5
        for byte in text.utf8 {
            hash ^= UInt32(byte)
            hash = hash &* 0x0100_0193
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 8 - hex.count) + hex
    }
}
