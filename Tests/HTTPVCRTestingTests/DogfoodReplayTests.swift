import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCRTesting
import Testing
import HTTPBinTestSupport

/// The project's own replay tests on its own integration: each test's cassette is
/// `Cassettes.bundle/DogfoodReplayTests/<test>.json` at the package root, recorded by the `.cassette` trait on the
/// first run against httpbin and committed; every later run (CI included) replays it with no server.
///
/// Re-record one: `VCR_RECORD_MODE=all scripts/test --filter DogfoodReplayTests/getJSON`.
@Suite(.cassette(configure: DogfoodServer.configure))
struct DogfoodReplayTests {
    @Test func getJSON() async throws {
        let cassette = try #require(VCRActiveCassette.current?.cassette)
        let before = try? HTTPBin.requestCount()
        let (data, response) = try await URLSession.shared.data(from: DogfoodServer.url("/get?dogfood=get"))
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(data.json?["args"] as? [String: String] == ["dogfood": "get"])
        try Self.expectReplayed(cassette, marker: "dogfood=get", since: before)
    }

    @Test func postForm() async throws {
        let cassette = try #require(VCRActiveCassette.current?.cassette)
        let before = try? HTTPBin.requestCount()
        var request = URLRequest(url: DogfoodServer.url("/post?dogfood=post"))
        request.httpMethod = "POST"
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data("name=HTTPVCR&kind=cassette".utf8)
        let (data, response) = try await URLSession.shared.data(for: request)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(data.json?["form"] as? [String: String] == ["name": "HTTPVCR", "kind": "cassette"])
        try Self.expectReplayed(cassette, marker: "dogfood=post", since: before)
    }

    @Test(.cassette(failsOnUnplayedInteractions: true))
    func statusAndHeadersInOrder() async throws {
        let cassette = try #require(VCRActiveCassette.current?.cassette)
        #expect(cassette.configuration.matchers.map(\.name) == ["method", "path", "query"], "the suite's settings")
        let before = try? HTTPBin.requestCount()
        let (_, teapot) = try await URLSession.shared.data(from: DogfoodServer.url("/status/418?dogfood=status"))
        #expect((teapot as? HTTPURLResponse)?.statusCode == 418)
        let url = DogfoodServer.url("/response-headers?X-Dogfood=yes&dogfood=headers")
        let (_, headers) = try await URLSession.shared.data(from: url)
        #expect((headers as? HTTPURLResponse)?.value(forHTTPHeaderField: "X-Dogfood") == "yes")
        try Self.expectReplayed(cassette, marker: "dogfood=", since: before)
    }

    /// When the cassette was there already (committed), nothing reached the server.
    static func expectReplayed(_ cassette: Cassette, marker: String, since before: Int?) throws {
        guard !cassette.isNew else { return }  // the first run ever records
        #expect(cassette.isWriteProtected)
        if let before {
            let reached = try HTTPBin.requests(since: before).filter { $0.contains(marker) }
            #expect(reached.isEmpty, "a committed cassette let requests through to the server: \(reached)")
        }
    }
}

/// The committed cassettes are there: a checkout that lost them would silently record again.
@Test func theDogfoodCassettesAreCommitted() {
    let bundle = packageRoot.appendingPathComponent("Cassettes.bundle")
    for file in [
        "DogfoodReplayTests/getJSON.json",
        "DogfoodReplayTests/postForm.json",
        "DogfoodReplayTests/statusAndHeadersInOrder.json",
        "VCRTestCaseDogfoodTests/testGetJSON.json",
        "VCRTestCaseDogfoodTests/test_synchronous_request.json",
        "CassetteFailureMessageTests/recorded-get.json",
    ] {
        #expect(FileManager.default.fileExists(atPath: bundle.appendingPathComponent(file).path), "missing \(file)")
    }
}
