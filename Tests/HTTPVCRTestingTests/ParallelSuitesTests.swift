import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import HTTPVCRTesting
import Testing

/// Two suites of cassette tests that Swift Testing runs in parallel (with each other, their own tests, and the rest
/// of the test run), each test recording several requests of its own into its own cassette. The `.cassette` scopes
/// take turns, so no cassette may hold another test's request.
///
/// They record into a temporary folder (the trait's `cassettesPath:`), which ``ParallelCassettesCheck`` examines
/// once a whole suite is done, then removes.
enum ParallelCassettes {
    /// Created by the first save, removed by the last suite's check.
    static let folder = FileManager.default.temporaryDirectory
        .appendingPathComponent("HTTPVCRTesting-parallel-\(UUID().uuidString)")
    static let requestsPerTest = 3
    static let testsPerSuite = 4

    /// Makes this test's requests, and checks the in-memory tape holds them and nothing else.
    ///
    /// One after the other: HTTPVCR's recorder sometimes loses the completion of one of several requests recorded
    /// at once (the request reaches the server, the client never hears back), which would hang the test. The
    /// parallelism under test here is between the tests, which the `.cassette` scopes serialize.
    static func fetch(suite: String, test: Int) async throws {
        let cassette = try #require(VCRActiveCassette.current?.cassette)
        let marker = "/anything/\(suite)-\(test)/"
        for request in 0..<requestsPerTest {
            try await Task.sleep(nanoseconds: UInt64.random(in: 0...2_000_000))
            let (_, response) = try await URLSession.shared.data(from: DogfoodServer.url("\(marker)\(request)"))
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
        }
        let paths = cassette.requests.compactMap { $0.url?.path }
        #expect(paths.count == requestsPerTest)
        #expect(paths.allSatisfy { $0.hasPrefix(marker) }, "\(paths)")
    }
}

@Suite(
    .cassette(cassettesPath: ParallelCassettes.folder.path + "/Alpha", configure: DogfoodServer.configure),
    ParallelCassettesCheck(suite: "alpha"),
    .timeLimit(.minutes(2))
)
struct ParallelAlphaTests {
    @Test(arguments: 0..<ParallelCassettes.testsPerSuite)
    func fetch(test: Int) async throws {
        try await ParallelCassettes.fetch(suite: "alpha", test: test)
    }
}

@Suite(
    .cassette(cassettesPath: ParallelCassettes.folder.path + "/Beta", configure: DogfoodServer.configure),
    ParallelCassettesCheck(suite: "beta"),
    .timeLimit(.minutes(2))
)
struct ParallelBetaTests {
    @Test(arguments: 0..<ParallelCassettes.testsPerSuite)
    func fetch(test: Int) async throws {
        try await ParallelCassettes.fetch(suite: "beta", test: test)
    }
}

/// When a suite's tests are all done, checks each cassette file holds only its own test's requests, then removes
/// the suite's folder.
struct ParallelCassettesCheck: SuiteTrait, TestScoping {
    let suite: String

    var isRecursive: Bool { false }

    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        try await function()
        let folder = ParallelCassettes.folder.appendingPathComponent(suite == "alpha" ? "Alpha" : "Beta")
        defer {
            try? FileManager.default.removeItem(at: folder)
            let parent = ParallelCassettes.folder.path
            if (try? FileManager.default.contentsOfDirectory(atPath: parent))?.isEmpty == true {
                try? FileManager.default.removeItem(atPath: parent)
            }
        }
        for number in 0..<ParallelCassettes.testsPerSuite {
            let file = folder.appendingPathComponent("fetch-\(number).json")
            let data = try Data(contentsOf: file)
            let document = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            let scenes = try #require(document["scenes"] as? [[String: Any]])
            let urls = scenes.compactMap { ($0["request"] as? [String: Any])?["url"] as? String }
            #expect(urls.count == ParallelCassettes.requestsPerTest, "\(file.path): \(urls)")
            #expect(urls.allSatisfy { $0.contains("/anything/\(suite)-\(number)/") },
                    "\(file.path) holds another test's requests: \(urls)")
        }
    }
}
