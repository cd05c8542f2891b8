import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import HTTPVCR
import HTTPBinTestSupport
import Testing
import TestSupport

/// A process launched with a bridge's environment reaches the launching test's cassette: `bridge-child`
/// (Tests/BridgeChild) makes an app's requests and prints what it got.
@Suite struct VCRBridgeTests {
    static func child() throws -> URL { try Subprocess.builtExecutable("bridge-child") }

    static func folder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bridge-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// Runs `body` with a bridge started under a cassette bound to this task, then saves the cassette.
    static func underBridge<T: Sendable>(
        _ name: String,
        in folder: URL,
        _ recordMode: RecordMode,
        _ body: (VCRBridge) async throws -> T
    ) async throws -> (T, Cassette) {
        let cassette = try VCR.loadCassette { configuration in
            configuration = VCRConfiguration()
            configuration.cassettesPath = folder.path
            configuration.cassettePath = name
            configuration.recordMode = recordMode
        }
        let result = try await bound(cassette) {
            let bridge = try VCRBridge.start()
            defer { bridge.stop() }
            return try await body(bridge)
        }
        try VCR.saveBoundCassette(cassette)
        return (result, cassette)
    }

    /// Runs `body` with `cassette` bound to this task, holding ``VCRCassetteLock/shared`` shared as the `.cassette`
    /// trait does: a scope that runs alone (an exclusive one, XCTest's) waits until no cassette is bound.
    static func bound<T>(_ cassette: Cassette, _ body: () async throws -> T) async throws -> T {
        await VCRCassetteLock.shared.lockShared()
        defer { VCRCassetteLock.shared.unlockShared() }
        return try await VCR.withCassette(cassette) { try await body() }
    }

    /// Done-when of issue 29: the child records from httpbin, then replays with that httpbin stopped and prints the
    /// same. Two markers run at once (arguments run in parallel), each with its own httpbin, cassette, bridge and
    /// child: each cassette holds only its own requests.
    @Test(arguments: ["alpha", "beta"])
    func childRecordsThenReplaysWithItsServerDown(marker: String) async throws {
        let child = try Self.child()
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try await PrivateHTTPBin.start()
        let base = server.url.absoluteString

        let (recorded, recording) = try await Self.underBridge(marker, in: folder, .once) { bridge in
            try await TestProcess.run(child, ["requests", base, marker], environment: bridge.environment)
        }
        #expect(recording.failures.isEmpty, "\(recording.failures)")
        await server.stop()
        #expect(!PrivateHTTPBin.accepts(port: UInt16(server.url.port!)), "httpbin must be down for the replay")

        let (replayed, replaying) = try await Self.underBridge(marker, in: folder, .never) { bridge in
            try await TestProcess.run(child, ["requests", base, marker], environment: bridge.environment)
        }
        #expect(replaying.failures.isEmpty, "\(replaying.failures)")
        #expect(recorded.status == 0, "\(recorded)")
        #expect(replayed.status == 0, "\(replayed)")
        #expect(replayed.stdout == recorded.stdout, "recorded:\n\(recorded)\nreplayed:\n\(replayed)")
        #expect(replaying.allPlayed)

        // What the app got, as it got it.
        let lines = recorded.lines
        #expect(lines.contains("shared-get: status 200 url \(base)/get?greeting=hello%20bridge&n=1&marker=\(marker)"))
        #expect(lines.contains { $0.hasPrefix("shared-get: body ") && $0.contains("\"greeting\": \"hello bridge\"") })
        #expect(lines.contains("custom-post: Content-Type: application/json"))
        #expect(lines.contains { $0.hasPrefix("custom-post: body ") && $0.contains("\"count\": 2") })
        #expect(lines.contains("custom-headers: X-Bridge-Test: yes"))
        #expect(lines.contains("custom-redirect: hop 302 /redirect-to -> /anything/arrived"))
        #expect(lines.contains("custom-redirect: status 200 url \(base)/anything/arrived?marker=\(marker)"))
        #expect(lines.contains("shared-404: status 404 url \(base)/status/404?marker=\(marker)"))
        #expect(lines.contains("door: status 200 url \(base)/anything/door?marker=\(marker)"))
        #expect(!lines.contains { $0.contains(": error ") }, "\(recorded)")

        // Only this test's requests, each once.
        let urls = replaying.requests.compactMap { $0.url?.absoluteString }
        #expect(urls.count == 7, "\(urls)")
        #expect(urls.allSatisfy { $0.hasSuffix("marker=\(marker)") }, "\(urls)")
        for request in replaying.requests {
            let fields = request.allHTTPHeaderFields ?? [:]
            #expect(!fields.keys.contains { $0.lowercased().hasPrefix("x-vcr-bridge") }, "\(fields)")
        }
    }

    /// A request the test's cassette cannot match fails in the launched process with the same error, and is
    /// kept on the cassette for the test to report.
    @Test func unmatchedRequestFailsInTheChildAndIsReportedHere() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // One request taped through the door, so that the cassette exists and is write-protected.
        let taped = try VCR.loadCassette { configuration in
            configuration = VCRConfiguration()
            configuration.cassettesPath = folder.path
            configuration.cassettePath = "known"
        }
        try await Self.bound(taped) { try await Self.tape("http://127.0.0.1:9/anything/one?marker=known") }
        try VCR.saveBoundCassette(taped)

        let (result, cassette) = try await Self.underBridge("known", in: folder, .never) { bridge in
            try await TestProcess.run(
                try Self.child(), ["one", "http://127.0.0.1:9", "lonely"], environment: bridge.environment
            )
        }
        #expect(result.lines == ["one: error \(VCRError.errorDomain) \(VCRError.Code.noMatch.rawValue)"], "\(result)")
        // The unmatched request, then (at the bridge's stop) the recorded one the child never made.
        let failures = cassette.takeFailures()
        #expect(failures.map(\.code) == [.noMatch, .requestsNeverCame], "\(failures)")
        #expect(failures.first?.request?.contains("/anything/one?marker=lonely") == true, "\(failures)")
        #expect(failures.last?.message.contains("GET http://127.0.0.1:9/anything/one?marker=known") == true,
                "\(failures)")
    }

    /// A bridge started where a cassette is inserted for the process (by this test) answers from that one.
    @Test func bridgeAnswersFromTheCassetteInsertedForTheProcess() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let child = try Self.child()
        try await withCassette("inserted", in: folder.path) { _ in
            try await Self.tape("http://127.0.0.1:9/anything/one?marker=inserted")
        }
        let (result, played) = try await withCassette("inserted", in: folder.path) { cassette in
            let bridge = try VCRBridge.start()
            defer { bridge.stop() }
            let result = try await TestProcess.run(
                child, ["one", "http://127.0.0.1:9", "inserted"], environment: bridge.environment
            )
            return (result, cassette.playCount)
        }
        #expect(result.lines == [
            "one: status 200 url http://127.0.0.1:9/anything/one?marker=inserted", "one: body taped",
        ], "\(result)")
        #expect(played == 1)
        #expect(VCR.takeFailures().isEmpty)
    }

    /// Tapes `GET url` answered with 200 and `taped` through the door, with no server.
    static func tape(_ url: String) async throws {
        _ = try await VCR.dataKeepingFields(for: URLRequest(url: URL(string: url)!)) { _ in
            (Data("taped".utf8), RecordedResponse(url: url, statusCode: 200))
        }
    }

    /// A request that cannot reach its server while recording fails in the child with the same URLError, and the
    /// test process reports it as not recorded (the cassette would replay the outage).
    @Test func aConnectionErrorWhileRecordingReachesTheChild() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (result, cassette) = try await Self.underBridge("outage", in: folder, .once) { bridge in
            try await TestProcess.run(try Self.child(), ["one", "http://127.0.0.1:9", "outage"], environment: bridge.environment)
        }
        #expect(result.lines == ["one: error \(NSURLErrorDomain) \(NSURLErrorCannotConnectToHost)"], "\(result)")
        #expect(cassette.takeFailures().map(\.code) == [.connectionErrorNotRecorded])
        #expect(cassette.tape.scenes.isEmpty)
    }

    /// Bodies larger than one read cross the bridge whole, both ways (recording from the suite's httpbin).
    @Test func largeBodiesCrossTheBridgeWhole() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let base = try HTTPBin.baseURL().absoluteString
        let (result, _) = try await Self.underBridge("big", in: folder, .once) { bridge in
            try await TestProcess.run(try Self.child(), ["big", base], environment: bridge.environment)
        }
        #expect(result.lines == ["big-get: status 200, 90000 bytes", "big-post: echoed 200000 bytes"], "\(result)")
    }

    /// Without the token, or with another, the bridge answers 403 and the cassette never sees the request.
    @Test func requestWithoutTheTokenIsRefusedAndNotRecorded() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let session = URLSession(configuration: .ephemeral)
        let (statuses, cassette) = try await Self.underBridge("refused", in: folder, .once) { bridge in
            var statuses: [Int] = []
            for token in [nil, "0123", String(repeating: "0", count: 64)] {
                var request = URLRequest(url: bridge.url.appendingPathComponent("get"))
                request.setValue("http://127.0.0.1:9", forHTTPHeaderField: "X-VCR-Bridge-Origin")
                if let token { request.setValue(token, forHTTPHeaderField: "X-VCR-Bridge-Token") }
                let (_, response) = try await session.data(for: request)
                statuses.append((response as? HTTPURLResponse)?.statusCode ?? -1)
            }
            return statuses
        }
        #expect(statuses == [403, 403, 403])
        #expect(cassette.requestCount == 0)
        #expect(cassette.tape.scenes.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("refused.json").path))
    }

    /// The environment holds the bridge's URL and a token of 64 hex digits, new for each bridge.
    @Test func environmentNamesTheBridgeAndARandomToken() throws {
        let first = try VCRBridge.start(), second = try VCRBridge.start()
        defer { first.stop(); second.stop() }
        #expect(first.environment["HTTPVCR_BRIDGE_URL"] == first.url.absoluteString)
        #expect(first.url.host == "127.0.0.1")
        let token = try #require(first.environment["HTTPVCR_BRIDGE_TOKEN"])
        #expect(token.count == 64 && token.allSatisfy(\.isHexDigit))
        #expect(token != second.environment["HTTPVCR_BRIDGE_TOKEN"])
    }

    /// Without the bridge's environment `connectToBridge()` returns false and changes nothing; with it, true.
    @Test func connectToBridgeNeedsTheEnvironment() async throws {
        #expect(try BridgeConnection.connect(environment: { _ in nil }) == nil)
        let child = try Self.child()
        let without = try await TestProcess.run(
            child, ["connect"], environment: ["HTTPVCR_BRIDGE_URL": "", "HTTPVCR_BRIDGE_TOKEN": ""]
        )
        #expect(without.lines == ["connected: false"], "\(without)")
        let bridge = try VCRBridge.start()
        defer { bridge.stop() }
        let with = try await TestProcess.run(child, ["connect"], environment: bridge.environment)
        #expect(with.lines == ["connected: true"], "\(with)")
    }
}
