import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPBinTestSupport
@testable import HTTPVCRTesting
import Testing

/// Cassette suites, a suite on a session HTTPVCR is installed in, and a suite with no cassette, which Swift Testing
/// runs in parallel with each other, their own tests and the rest of the test run. Every test makes its requests at
/// once, against httpbin, which echoes each request's URL back.
///
/// When all four suites are done, ``ParallelCassettesCheck`` checks that every cassette holds its own test's requests
/// and nothing else (none of the cassette-less suite's), and that the cassette-less requests all reached the server.
/// Then it replays every cassette at once, offline (record mode `.never`), with cassette-less requests going on
/// beside them: each test gets its own answers back, the server sees none of the cassettes' requests, and the
/// cassette-less ones still reach it.
///
/// The suites record into a temporary folder (the trait's `cassettesPath:`), removed at the end.
enum ParallelCassettes {
    static let folder = FileManager.default.temporaryDirectory
        .appendingPathComponent("HTTPVCRTesting-parallel-\(UUID().uuidString)")
    /// In every request's path, so that the server's log can be searched for this run's requests alone.
    static let run = UUID().uuidString.prefix(8).lowercased()
    static let requestsPerTest = 3
    static let testsPerSuite = 4
    static let cassetteSuites = ["alpha", "beta", "installed"]
    static let suites = cassetteSuites + ["bare"]

    static func marker(_ suite: String, _ test: Int) -> String { "/anything/parallel-\(run)-\(suite)-\(test)/" }

    static func cassettesPath(_ suite: String) -> String { folder.appendingPathComponent(suite).path }

    /// How a test sends its requests.
    enum Client {
        /// `URLSession.shared`, async.
        case shared
        /// `URLSession.shared`, a completion handler (resumed from the test's task).
        case completionHandler
        /// A session made from a configuration HTTPVCR is installed in.
        case installed
    }

    /// Makes the test's requests at once, and checks each answer is the one for its own URL.
    static func fetch(suite: String, test: Int, via client: Client) async throws {
        if suite != "bare" {
            let cassette = try #require(VCRActiveCassette.current?.cassette)
            #expect(cassette.isBoundToTask == VCR.attributesRequestsToTasks, "bound to the test's task, not inserted")
        }
        let session = client == .installed ? DogfoodServer.session() : URLSession.shared
        try await withThrowingTaskGroup(of: Void.self) { group in
            for request in 0..<requestsPerTest {
                group.addTask {
                    let path = marker(suite, test) + "\(request)"
                    let (data, response) = try await send(DogfoodServer.url(path), on: session, via: client)
                    #expect((response as? HTTPURLResponse)?.statusCode == 200, "\(path)")
                    let echoed = (try? JSONSerialization.jsonObject(with: data) as? [String: Any])?["url"] as? String
                    #expect(echoed?.hasSuffix(path) == true, "\(path) was answered with \(echoed ?? "nothing")")
                }
            }
            try await group.waitForAll()
        }
    }

    static func send(_ url: URL, on session: URLSession, via client: Client) async throws -> (Data, URLResponse) {
        guard client == .completionHandler else { return try await session.data(from: url) }
        return try await withCheckedThrowingContinuation { continuation in
            session.dataTask(with: url) { data, response, error in
                if let data, let response {
                    continuation.resume(returning: (data, response))
                } else {
                    continuation.resume(throwing: error ?? URLError(.unknown))
                }
            }.resume()
        }
    }

    static func client(for suite: String, test: Int) -> Client {
        switch suite {
        case "alpha": .shared
        case "beta": .completionHandler
        case "installed": .installed
        default: test.isMultiple(of: 2) ? .shared : .installed
        }
    }
}

@Suite(
    .cassette(cassettesPath: ParallelCassettes.cassettesPath("alpha"), configure: DogfoodServer.configure),
    ParallelCassettesCheck(suite: "alpha"),
    .timeLimit(.minutes(2))
)
struct ParallelAlphaTests {
    @Test(arguments: 0..<ParallelCassettes.testsPerSuite)
    func fetch(test: Int) async throws {
        try await ParallelCassettes.fetch(suite: "alpha", test: test, via: .shared)
    }
}

@Suite(
    .cassette(cassettesPath: ParallelCassettes.cassettesPath("beta"), configure: DogfoodServer.configure),
    ParallelCassettesCheck(suite: "beta"),
    .timeLimit(.minutes(2))
)
struct ParallelBetaTests {
    @Test(arguments: 0..<ParallelCassettes.testsPerSuite)
    func fetch(test: Int) async throws {
        try await ParallelCassettes.fetch(suite: "beta", test: test, via: .completionHandler)
    }
}

@Suite(
    .cassette(cassettesPath: ParallelCassettes.cassettesPath("installed"), configure: DogfoodServer.configure),
    ParallelCassettesCheck(suite: "installed"),
    .timeLimit(.minutes(2))
)
struct ParallelInstalledSessionTests {
    @Test(arguments: 0..<ParallelCassettes.testsPerSuite)
    func fetch(test: Int) async throws {
        try await ParallelCassettes.fetch(suite: "installed", test: test, via: .installed)
    }
}

/// No cassette: its requests go to the server, on `URLSession.shared` and on an installed session alike.
@Suite(ParallelCassettesCheck(suite: "bare"), .timeLimit(.minutes(2)))
struct ParallelCassetteLessTests {
    @Test(arguments: 0..<ParallelCassettes.testsPerSuite)
    func fetch(test: Int) async throws {
        #expect(VCRActiveCassette.current == nil)
        try await ParallelCassettes.fetch(suite: "bare", test: test, via: ParallelCassettes.client(for: "bare", test: test))
    }
}

/// Once all four suites are done, checks what they recorded, then replays it (see ``ParallelCassettes``).
struct ParallelCassettesCheck: SuiteTrait, TestScoping {
    let suite: String

    var isRecursive: Bool { false }

    /// The suites done so far.
    private static let finished = Locked<Set<String>>([])

    func provideScope(
        for test: Test,
        testCase: Test.Case?,
        performing function: @Sendable () async throws -> Void
    ) async throws {
        try await function()
        let isLast = Self.finished.withLock { finished in
            finished.insert(suite)
            return finished.count == ParallelCassettes.suites.count
        }
        guard isLast else { return }
        defer { try? FileManager.default.removeItem(at: ParallelCassettes.folder) }
        try checkRecordings()
        try await replayOffline()
    }

    /// Each cassette holds its own test's requests, all of them, and nothing else; the server saw every request once.
    func checkRecordings() throws {
        for suite in ParallelCassettes.cassetteSuites {
            for number in 0..<ParallelCassettes.testsPerSuite {
                let urls = try Self.recordedURLs(suite, number)
                #expect(urls.count == ParallelCassettes.requestsPerTest, "\(suite)/fetch-\(number): \(urls)")
                #expect(urls.allSatisfy { $0.contains(ParallelCassettes.marker(suite, number)) },
                        "\(suite)/fetch-\(number) holds another test's requests: \(urls)")
            }
        }
        let files = FileManager.default.enumerator(atPath: ParallelCassettes.folder.path)?.allObjects as? [String] ?? []
        #expect(files.filter { $0.hasSuffix(".json") }.count
            == ParallelCassettes.cassetteSuites.count * ParallelCassettes.testsPerSuite, "\(files)")
        let seen = try HTTPBin.requests(since: 0).filter { $0.contains("parallel-\(ParallelCassettes.run)-") }
        for suite in ParallelCassettes.suites {
            for number in 0..<ParallelCassettes.testsPerSuite {
                for request in 0..<ParallelCassettes.requestsPerTest {
                    let path = ParallelCassettes.marker(suite, number) + "\(request)"
                    #expect(seen.filter { $0 == "GET \(path)" }.count == 1, "\(path) reached the server once: \(seen)")
                }
            }
        }
    }

    /// Every cassette replayed at once with record mode `.never`, beside cassette-less requests.
    func replayOffline() async throws {
        let before = try HTTPBin.settledRequestCount()
        let recorded = try Self.cassetteBytes()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for suite in ParallelCassettes.suites {
                for number in 0..<ParallelCassettes.testsPerSuite {
                    let client = ParallelCassettes.client(for: suite, test: number)
                    group.addTask {
                        guard suite != "bare" else {
                            return try await ParallelCassettes.fetch(suite: suite, test: number, via: client)
                        }
                        let scope = VCRCassetteScope(
                            "fetch-\(number)",
                            cassettesPath: ParallelCassettes.cassettesPath(suite),
                            recordMode: .never,
                            failsOnUnplayedInteractions: true,
                            configure: DogfoodServer.configure
                        )
                        try await withVCRCassette(scope) {
                            try await ParallelCassettes.fetch(suite: suite, test: number, via: client)
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let barePaths = (0..<ParallelCassettes.testsPerSuite).flatMap { number in
            (0..<ParallelCassettes.requestsPerTest).map { ParallelCassettes.marker("bare", number) + "\($0)" }
        }
        _ = try HTTPBin.requestCount(onceLogged: barePaths, since: before)
        let seen = try HTTPBin.requests(since: before).filter { $0.contains("parallel-\(ParallelCassettes.run)-") }
        #expect(seen.filter { !$0.contains("-bare-") }.isEmpty, "replaying reached the server: \(seen)")
        #expect(Set(seen) == Set(barePaths.map { "GET \($0)" }), "the cassette-less requests still reach it")
        #expect(try Self.cassetteBytes() == recorded, "replaying must not rewrite cassettes")
    }

    static func recordedURLs(_ suite: String, _ number: Int) throws -> [String] {
        let file = URL(fileURLWithPath: ParallelCassettes.cassettesPath(suite)).appendingPathComponent("fetch-\(number).json")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any])
        let scenes = try #require(document["scenes"] as? [[String: Any]])
        return scenes.compactMap { ($0["request"] as? [String: Any])?["url"] as? String }
    }

    static func cassetteBytes() throws -> [String: Data] {
        var bytes: [String: Data] = [:]
        for suite in ParallelCassettes.cassetteSuites {
            for number in 0..<ParallelCassettes.testsPerSuite {
                let file = URL(fileURLWithPath: ParallelCassettes.cassettesPath(suite)).appendingPathComponent("fetch-\(number).json")
                bytes[file.path] = try Data(contentsOf: file)
            }
        }
        return bytes
    }
}
