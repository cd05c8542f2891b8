import Foundation
import Testing
import HTTPBinTestSupport

/// End to end, in a package of its own: `Tests/Fixtures/VCRFixturePackage` (an XCTest `VCRTestCase` subclass and a
/// Swift Testing suite with the `.cassette` trait) copied to a temporary folder and tested with `swift test`:
///
/// 1. with httpbin: records `Cassettes.bundle/<Suite>/<test>.json` into the copy's source tree;
/// 2. with no server (a closed port): replays them, and passes;
/// 3. with requests that are not on the cassettes: fails, and the XCTest and Swift Testing failure output names
///    the request, the cassette file, the closest recorded request and the command that re-records the test, each
///    failure once in each library's output;
/// 4. with the record mode and `--filter` patterns those commands print: runs exactly those two tests, and records
///    them anew, leaving no stale recording;
/// 5. replaying them: passes with nothing to report and nothing waited for;
/// 6. in verify mode: one summary for each test process, saying whose tests it covers.
///
/// Every run shares one build folder in the temporary directory, so only the first run of a machine builds
/// HTTPVCR; the later ones take seconds.
@Suite(.timeLimit(.minutes(15)))
struct FixturePackageTests {
    static let fixture = packageRoot.appendingPathComponent("Tests/Fixtures/VCRFixturePackage")
    static let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("httpvcr-fixture-build")
    static let closedPort = "http://127.0.0.1:1"

    @Test func recordsThenReplaysOfflineThenReportsMismatchesWithTheCommandToReRecord() async throws {
        let server = try HTTPBin.baseURL().absoluteString
        let folder = TemporaryFolder("httpvcr-fixture")
        let package = try Self.copyFixture(into: folder.url)
        let cassettes = package.appendingPathComponent("Cassettes.bundle")
        let before = try HTTPBin.requestCount()

        // 1. Record.
        let record = try await SwiftTest.run(in: package, scratch: Self.scratch, environment: ["HTTPBIN_URL": server])
        try #require(record.status == 0, "the recording run failed:\n\(record.output)")
        let expected = [
            "FixtureXCTests/testGet.json",
            "FixtureXCTests/test_snake_case_name.json",  // test names are kept as written
            "FixtureSwiftTestingTests/get.json",
            "FixtureSwiftTestingTests/user-alice.json",  // one cassette per argument
            "FixtureSwiftTestingTests/user-bob.json",
        ]
        #expect(Self.files(in: cassettes) == Set(expected), "shouldSetUpVCR() false: no cassette for testStubbed…")
        let seen = try HTTPBin.requestsFromAnyProcess(since: before).filter { $0.contains("fixture=recorded") }
        let live = seen.filter { $0.contains("/anything/live/") }
        #expect(seen.count - live.count == 5, "each recorded request reached the server once: \(seen)")
        #expect(live.count == 2, "the cassette-less suite's requests reached the server: \(seen)")
        #expect(!FileManager.default.fileExists(atPath: Self.scratch.appendingPathComponent("Cassettes.bundle").path),
                "never written into the build folder")
        let recorded = try Self.contents(of: expected, in: cassettes)
        // The suites ran in parallel: each cassette holds its own test's request, none of another suite's.
        for (file, bytes) in recorded {
            let document = try JSONSerialization.jsonObject(with: bytes) as? [String: Any]
            let scenes = document?["scenes"] as? [[String: Any]] ?? []
            let urls = scenes.compactMap { ($0["request"] as? [String: Any])?["url"] as? String }
            let own = ["user-alice.json": "/anything/user/alice", "user-bob.json": "/anything/user/bob",
                       "test_snake_case_name.json": "/anything/snake"][URL(fileURLWithPath: file).lastPathComponent]
                ?? "/get?fixture"
            #expect(urls.count == 1 && urls.allSatisfy { $0.contains(own) }, "\(file) holds \(urls)")
        }

        // 2. Replay with no server.
        let replay = try await SwiftTest.run(in: package, scratch: Self.scratch, environment: ["HTTPBIN_URL": Self.closedPort])
        #expect(replay.status == 0, "the replaying run failed:\n\(replay.output)")
        #expect(replay.output.contains("Executed 3 tests, with 0 failures"), "\(replay.output)")
        #expect(replay.output.contains("Test run with 3 tests"), "\(replay.output)")
        #expect(try Self.contents(of: expected, in: cassettes) == recorded, "replaying must not rewrite cassettes")

        // 3. Requests that are not on the cassettes.
        let mismatch = try await SwiftTest.run(
            in: package,
            scratch: Self.scratch,
            environment: ["HTTPBIN_URL": Self.closedPort, "FIXTURE_QUERY": "changed"]
        )
        #expect(mismatch.status != 0)
        let output = mismatch.output
        let xctFile = package.appendingPathComponent("Tests/FixtureTests/FixtureXCTests.swift").path
        let xctLine = try Self.line(of: "func testGet()", in: xctFile)
        let getLocation = try Self.location(
            of: "@Test func get()",
            in: package.appendingPathComponent("Tests/FixtureTests/FixtureSwiftTestingTests.swift").path
        )
        for text in [
            // XCTest: at the test method, in the test's file.
            "\(xctFile):\(xctLine): error: FixtureXCTests.testGet : "
                + "No recorded request matches GET \(Self.closedPort)/get?fixture=changed",
            "  cassette: \(cassettes.path)/FixtureXCTests/testGet.json",
            "  closest recorded request: #1 GET \(server)/get?fixture=recorded",
            "    query: − \"fixture=recorded\"  + \"fixture=changed\"",
            // The closest recording is the request as it was: recorded anew, not beside it.
            "  To record this test anew (VCR_RECORD_MODE=new would keep the recording this request replaces, never "
                + "played again): VCR_RECORD_MODE=all swift test --filter FixtureXCTests/testGet",
            "): VCR_RECORD_MODE=all swift test --filter FixtureXCTests/test_snake_case_name",
            // XCTest strictness (the class turns failsOnUnplayedInteractions on in setUp).
            "error: FixtureXCTests.testGet : 1 recorded interaction was never replayed",
            "record the cassette anew: VCR_RECORD_MODE=all swift test --filter FixtureXCTests/testGet",
            // Swift Testing: at the test's declaration.
            "Test get() recorded an issue at FixtureSwiftTestingTests.swift:\(getLocation): Issue recorded",
            "  cassette: \(cassettes.path)/FixtureSwiftTestingTests/get.json",
            "): VCR_RECORD_MODE=all swift test --filter FixtureSwiftTestingTests/get",
            "  cassette: \(cassettes.path)/FixtureSwiftTestingTests/user-alice.json",
            "): VCR_RECORD_MODE=all swift test --filter FixtureSwiftTestingTests/user",
        ] {
            #expect(output.contains(text), "missing from the output: \(text)\n\(output)")
        }
        #expect(!output.contains("VCR_RECORD_MODE=new swift test"), "new would keep the stale recordings")
        #expect(!output.contains("FixtureXCTests.testStubbedHasNoCassette' failed"))
        // Each failure is said once in each library's output: the error a test threw (or an assertion printed) is
        // not the whole message again. The line naming the closest recording is in that message only.
        let (xcTestOutput, swiftTestingOutput) = Self.split(output)
        for (part, closest) in [
            (xcTestOutput, "/get?fixture=recorded"), (xcTestOutput, "/anything/snake?fixture=recorded"),
            (swiftTestingOutput, "/get?fixture=recorded"), (swiftTestingOutput, "/anything/user/alice?fixture=recorded"),
            (swiftTestingOutput, "/anything/user/bob?fixture=recorded"),
        ] {
            let line = "closest recorded request: #1 GET \(server)\(closest)"
            #expect(part.components(separatedBy: line).count - 1 == 1, "said once: \(line)\n\(output)")
        }
        #expect(!output.contains("threw error \"No recorded request") && !output.contains("Caught error: No recorded"))

        // 4. Run the printed commands, as printed: their record mode, and their filters, which select exactly those
        // tests (and re-record them from the server).
        let commands = try ["FixtureXCTests/testGet", "FixtureSwiftTestingTests/get"].map { test in
            try #require(output.firstMatch(of: try Regex("VCR_RECORD_MODE=(\\w+) swift test --filter (\(test))\\n")))
        }
        let modes = Set(commands.compactMap { $0.output[1].substring.map(String.init) })
        #expect(modes == ["all"])
        let rerecord = try await SwiftTest.run(
            in: package,
            scratch: Self.scratch,
            arguments: commands.flatMap { ["--filter", String($0.output[2].substring ?? "")] },
            environment: ["HTTPBIN_URL": server, "FIXTURE_QUERY": "changed", "VCR_RECORD_MODE": modes.first ?? ""]
        )
        #expect(rerecord.status == 0, "\(rerecord.output)")
        #expect(rerecord.output.contains("Executed 1 test, with 0 failures"), "\(rerecord.output)")
        #expect(rerecord.output.contains("Test run with 1 test"), "\(rerecord.output)")
        #expect(rerecord.output.contains("Test Case 'FixtureXCTests.testGet' passed"))
        #expect(!rerecord.output.contains("test_snake_case_name"))
        #expect(!rerecord.output.contains("user(name:)"))
        let rerecorded = try String(contentsOf: cassettes.appendingPathComponent("FixtureXCTests/testGet.json"), encoding: .utf8)
        #expect(rerecorded.contains("fixture=changed") && !rerecorded.contains("fixture=recorded"))

        // 5. The next replay, with no server, passes and has nothing to tell: no stale recording, nothing waited for.
        let replayChanged = try await SwiftTest.run(
            in: package,
            scratch: Self.scratch,
            arguments: ["--filter", "FixtureXCTests/testGet", "--filter", "FixtureSwiftTestingTests/get"],
            environment: ["HTTPBIN_URL": Self.closedPort, "FIXTURE_QUERY": "changed"]
        )
        #expect(replayChanged.status == 0, "\(replayChanged.output)")
        #expect(!replayChanged.output.contains("never replayed") && !replayChanged.output.contains("waited"),
                "\(replayChanged.output)")

        // 6. Verify: one summary for each test process (swift test runs XCTest's and Swift Testing's tests in one
        // each), saying whose tests it covers.
        let verify = try await SwiftTest.run(
            in: package,
            scratch: Self.scratch,
            environment: ["HTTPBIN_URL": server, "FIXTURE_QUERY": "changed", "VCR_RECORD_MODE": "verify"]
        )
        let summaries = verify.output.components(separatedBy: "\n").filter { $0.hasPrefix("HTTPVCR verify: ") }
        #expect(summaries.count == 2, "\(verify.output)")
        #expect(summaries.filter { $0.contains(" of XCTest tests checked ") }.count == 1, "\(summaries)")
        #expect(summaries.filter { $0.contains(" of Swift Testing tests checked ") }.count == 1, "\(summaries)")
    }

    /// A `swift test` run's output: XCTest's part, then Swift Testing's.
    static func split(_ output: String) -> (xcTest: String, swiftTesting: String) {
        guard let start = output.range(of: "◇ Test run started.") else { return (output, "") }
        return (String(output[..<start.lowerBound]), String(output[start.lowerBound...]))
    }

    /// Copies the fixture into `folder`, with the dependency pointing at this checkout.
    static func copyFixture(into folder: URL) throws -> URL {
        let package = folder.appendingPathComponent("VCRFixturePackage")
        let fileManager = FileManager.default
        try fileManager.createDirectory(at: package, withIntermediateDirectories: true)
        for name in ["Package.swift", "Tests"] {
            try fileManager.copyItem(at: fixture.appendingPathComponent(name), to: package.appendingPathComponent(name))
        }
        let manifestURL = package.appendingPathComponent("Package.swift")
        let manifest = try String(contentsOf: manifestURL, encoding: .utf8)
        let placeholder = "path: \"../../..\""
        try #require(manifest.contains(placeholder), "the fixture's Package.swift no longer depends on ../../..")
        let absolute = manifest.replacingOccurrences(of: placeholder, with: "path: \"\(packageRoot.path)\"")
        try absolute.write(to: manifestURL, atomically: true, encoding: .utf8)
        return package
    }

    /// The 1-based line of the first line containing `text`.
    static func line(of text: String, in file: String) throws -> Int {
        let lines = try String(contentsOfFile: file, encoding: .utf8).components(separatedBy: "\n")
        return try #require(lines.firstIndex { $0.contains(text) }, "\(text) is not in \(file)") + 1
    }

    /// `line:column` of a `@Test` attribute as Swift Testing reports it (the column of `Test`).
    static func location(of text: String, in file: String) throws -> String {
        let lines = try String(contentsOfFile: file, encoding: .utf8).components(separatedBy: "\n")
        let index = try #require(lines.firstIndex { $0.contains(text) }, "\(text) is not in \(file)")
        let column = try #require(lines[index].range(of: "Test")).lowerBound.utf16Offset(in: lines[index]) + 1
        return "\(index + 1):\(column)"
    }

    /// Every file under `folder`, relative to it.
    static func files(in folder: URL) -> Set<String> {
        guard let enumerator = FileManager.default.enumerator(atPath: folder.path) else { return [] }
        var files = Set<String>()
        while let path = enumerator.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: folder.appendingPathComponent(path).path, isDirectory: &isDirectory),
               !isDirectory.boolValue {
                files.insert(path)
            }
        }
        return files
    }

    static func contents(of files: [String], in folder: URL) throws -> [String: Data] {
        var contents: [String: Data] = [:]
        for file in files { contents[file] = try Data(contentsOf: folder.appendingPathComponent(file)) }
        return contents
    }
}

/// `swift test` in another package, awaited without blocking a thread.
enum SwiftTest {
    struct Result {
        var status: Int32
        var output: String
    }

    static func run(
        in package: URL,
        scratch: URL,
        arguments: [String] = [],
        environment: [String: String]
    ) async throws -> Result {
        let log = package.deletingLastPathComponent().appendingPathComponent("swift-test-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        defer { try? handle.close() }

        let process = Process()
        process.executableURL = swiftExecutable()
        process.arguments = ["test", "--scratch-path", scratch.path] + arguments
        process.currentDirectoryURL = package
        var variables = ProcessInfo.processInfo.environment
        for name in ["VCR_RECORD_MODE", "FIXTURE_QUERY", "HTTPBIN_URL"] { variables[name] = nil }
        variables.merge(environment) { _, new in new }
        process.environment = variables
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice

        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { process in continuation.resume(returning: process.terminationStatus) }
            do {
                try process.run()
            } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: error)
            }
        }
        let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        return Result(status: status, output: output)
    }

    /// `swift` from `PATH` (the toolchain running these tests puts itself there), else `/usr/bin/swift`.
    static func swiftExecutable() -> URL {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for directory in path.split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent("swift")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return URL(fileURLWithPath: "/usr/bin/swift")
    }
}
