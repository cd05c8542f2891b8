import Foundation
import HTTPVCR
import Testing
import TestSupport

/// Runs the built `vcr` executable as a subprocess, the way a user or a CI job does.
enum VCRTool {
    struct Result: CustomStringConvertible {
        var status: Int32
        var stdout: String
        var stderr: String

        var lines: [String] { stdout.split(separator: "\n").map(String.init) }
        var description: String { "exit \(status)\n--- stdout\n\(stdout)--- stderr\n\(stderr)" }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The package's root folder: the tests live in `<root>/Tests/VCRCommandTests/Support/`.
    static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()
        .deletingLastPathComponent()
        .deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Other tools' cassettes this project made itself: `Tests/Fixtures` (its README says how).
    static let fixtures: URL = packageRoot.appendingPathComponent("Tests/Fixtures")

    static var vcrPyFixture: URL { fixtures.appendingPathComponent("vcrpy/httpbin-basics.json") }

    static func yahttpvcrFixture(_ name: String) -> URL {
        fixtures.appendingPathComponent("yahttpvcr").appendingPathComponent(name)
    }

    /// Every YAHTTPVCR cassette, JSON and property list; empty when the folder is missing (tests that loop over
    /// them check that they found some).
    static var yahttpvcrFixtures: [URL] {
        let folder = fixtures.appendingPathComponent("yahttpvcr")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { $0.hasSuffix(".json") || $0.hasSuffix(".plist") }.sorted()
            .map { folder.appendingPathComponent($0) }
    }

    /// The `vcr` executable built with these tests: in the products folder next to the test bundle, whatever
    /// `--scratch-path` says. `VCR_EXECUTABLE` overrides.
    static let executable: URL? = {
        if let override = ProcessInfo.processInfo.environment["VCR_EXECUTABLE"], !override.isEmpty {
            return URL(fileURLWithPath: override)
        }
        return try? Subprocess.builtExecutable("vcr")
    }()

    /// Runs `vcr arguments…` in `directory` (the package root unless said otherwise).
    static func run(_ arguments: [String], in directory: URL? = nil) throws -> Result {
        guard let executable else {
            throw Failure(description: "the vcr executable was not found next to the test bundle: run `swift build` "
                + "(or set VCR_EXECUTABLE)")
        }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("vcr-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let outURL = scratch.appendingPathComponent("stdout")
        let errURL = scratch.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let out = try FileHandle(forWritingTo: outURL)
        let err = try FileHandle(forWritingTo: errURL)

        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.currentDirectoryURL = directory ?? packageRoot
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try out.close()
        try err.close()
        return Result(
            status: process.terminationStatus,
            stdout: String(decoding: try Data(contentsOf: outURL), as: UTF8.self),
            stderr: String(decoding: try Data(contentsOf: errURL), as: UTF8.self)
        )
    }

    static func run(_ arguments: String..., in directory: URL? = nil) throws -> Result {
        try run(arguments, in: directory)
    }
}

/// A fresh folder for one test, removed afterwards.
final class TemporaryFolder {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("VCRCommandTests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    func file(_ name: String) -> URL { url.appendingPathComponent(name) }

    /// Writes a tape as HTTPVCR JSON (the recorder's writer) and returns its path.
    @discardableResult
    func write(_ tape: Tape, _ name: String, as format: CassetteFormat = .json) throws -> String {
        let url = file(name)
        try CassetteFile.write(tape, to: url, as: format)
        return url.path
    }

    @discardableResult
    func write(_ text: String, _ name: String) throws -> String {
        let url = file(name)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
        return url.path
    }

    /// A copy of `source` in this folder.
    func copy(_ source: URL, as name: String? = nil) throws -> String {
        let url = file(name ?? source.lastPathComponent)
        try FileManager.default.copyItem(at: source, to: url)
        return url.path
    }
}

/// Tapes shaped like the ones HTTPVCR records.
enum Tapes {
    /// One request with a JSON response, as the recorder writes it (header order and case kept).
    static func exchange(
        chapter: Int = 1,
        method: String = "GET",
        url: String = "https://api.example.com/v1/items",
        requestHeaders: [RecordedHeader] = [RecordedHeader("Accept", "application/json")],
        requestBody: String? = nil,
        status: Int = 200,
        responseHeaders: [RecordedHeader] = [RecordedHeader("Content-Type", "application/json")],
        chunks: [String] = [#"{"ok":true}"#],
        timeToFirstByte: TimeInterval = 0.042,
        duration: TimeInterval = 0.05
    ) -> Interaction {
        Interaction(
            chapter: chapter,
            request: RecordedRequest(
                method: method,
                url: url,
                headers: requestHeaders,
                body: requestBody.map { Data($0.utf8) }
            ),
            response: RecordedResponse(url: url, statusCode: status, headers: responseHeaders),
            chunks: chunks.map { Data($0.utf8) },
            timeToFirstByte: timeToFirstByte,
            duration: duration
        )
    }

    static func tape(_ interactions: Interaction...) -> Tape {
        Tape(interactions: interactions)
    }

    /// A realistic recording: a chunked download, a POST, a redirect, a failure, and two requests that overlap.
    static var recorded: Tape {
        let list = exchange(
            chapter: 1,
            url: "https://api.example.com/v1/items?page=2",
            requestHeaders: [RecordedHeader("Accept", "application/json"), RecordedHeader("Authorization", "[FILTERED]")],
            responseHeaders: [RecordedHeader("Content-Length", "55"), RecordedHeader("Content-Type", "application/json")],
            chunks: [#"{"items":[{"id":1,"#, #""name":"one"},{"id":2,"#, #""name":"two"}]}"#],
            timeToFirstByte: 0.120,
            duration: 0.180
        )
        let create = exchange(
            chapter: 2,
            method: "POST",
            url: "https://api.example.com/v1/items",
            requestHeaders: [RecordedHeader("Content-Type", "application/json")],
            requestBody: #"{"name":"three"}"#,
            status: 201,
            chunks: [#"{"id":3,"name":"three"}"#],
            timeToFirstByte: 0.075,
            duration: 0.080
        )
        let moved = Interaction(
            chapter: 3,
            request: RecordedRequest(method: "GET", url: "https://api.example.com/old"),
            redirects: [Interaction.Redirect(
                response: RecordedResponse(
                    url: "https://api.example.com/old",
                    statusCode: 301,
                    headers: [RecordedHeader("Location", "https://api.example.com/new")]
                ),
                request: RecordedRequest(method: "GET", url: "https://api.example.com/new")
            )],
            response: RecordedResponse(
                url: "https://api.example.com/new",
                statusCode: 200,
                headers: [RecordedHeader("Content-Type", "text/plain")]
            ),
            chunks: [Data("moved here".utf8)],
            timeToFirstByte: 0.030,
            duration: 0.031
        )
        let timeout = Interaction(
            chapter: 4,
            request: RecordedRequest(method: "GET", url: "https://api.example.com/slow"),
            response: nil,
            error: RecordedError(
                domain: NSURLErrorDomain,
                code: -1001,
                userInfo: [
                    NSLocalizedDescriptionKey: "The request timed out.",
                    "NSErrorFailingURLStringKey": "https://api.example.com/slow",
                ]
            ),
            timeToFirstByte: 1.0,
            duration: 1.0
        )
        var scenes = list.scenes + create.scenes + moved.scenes + timeout.scenes
        // Chapters 5 and 6 overlap: 6 starts before 5 has its body.
        let a = exchange(chapter: 5, url: "https://api.example.com/a", chunks: ["A1", "A2"])
        let b = exchange(chapter: 6, url: "https://api.example.com/b", chunks: ["B"])
        scenes += [a.scenes[0], b.scenes[0], a.scenes[1], b.scenes[1], a.scenes[2], b.scenes[2], a.scenes[3]]
        scenes += [b.scenes[3], a.scenes[4]]
        return Tape(scenes: scenes)
    }
}

extension String {
    func occurrences(of needle: String) -> Int {
        components(separatedBy: needle).count - 1
    }
}

/// A running `vcr serve`: started, its URL read from its first line of stdout, stopped with SIGTERM.
final class ServeProcess {
    let process = Process()
    let url: URL
    private let errorFile: URL

    var port: UInt16 { UInt16(url.port ?? 0) }

    /// Starts `vcr serve arguments…` and waits for the line that says where it listens (not a timer: the read
    /// returns when the line is written, or at end of file when the command failed).
    init(_ arguments: [String]) throws {
        guard let executable = VCRTool.executable else { throw VCRTool.Failure(description: "no vcr executable") }
        errorFile = FileManager.default.temporaryDirectory.appendingPathComponent("vcr-serve-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: errorFile.path, contents: nil)
        let output = Pipe()
        process.executableURL = executable
        process.arguments = ["serve"] + arguments
        process.standardOutput = output
        process.standardError = try FileHandle(forWritingTo: errorFile)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        var line = Data()
        while true {
            let byte = output.fileHandleForReading.readData(ofLength: 1)
            if byte.isEmpty || byte == Data("\n".utf8) { break }
            line += byte
        }
        guard let url = URL(string: String(decoding: line, as: UTF8.self)), url.port != nil else {
            process.waitUntilExit()
            let errors = (try? String(contentsOf: errorFile, encoding: .utf8)) ?? ""
            throw VCRTool.Failure(description: "vcr serve did not start (exit \(process.terminationStatus)): \(errors)")
        }
        self.url = url
    }

    /// Sends SIGTERM and waits for the exit: its status and what it wrote on stderr.
    @discardableResult
    func stop() -> (status: Int32, stderr: String) {
        if process.isRunning { kill(process.processIdentifier, SIGTERM) }
        process.waitUntilExit()
        let errors = (try? String(contentsOf: errorFile, encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(at: errorFile)
        return (process.terminationStatus, errors)
    }

    deinit { if process.isRunning { stop() } }
}
