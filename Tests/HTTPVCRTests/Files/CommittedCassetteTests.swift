import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import HTTPVCR
import HTTPBinTestSupport

extension VCRTests {
    /// Replays `Cassettes.bundle/Core/httpbin-traffic.json`, committed with the project: passes with no server.
    ///
    /// The cassette records itself when it is missing (record mode `.once`), so deleting it and running
    /// `scripts/test --filter CommittedCassetteTests` re-records it. Host and port are not matched, so it replays
    /// whatever port the local server had when it was recorded.
    @Suite struct CommittedCassetteTests {
        static let cassettes = packageRoot.appendingPathComponent("Cassettes.bundle").path

        @Test func replaysRealTrafficOffline() async throws {
            try await holdingCassettes { try await replay() }
        }

        private func replay() async throws {
            let base = (try? HTTPBin.baseURL()) ?? URL(string: "http://127.0.0.1:9")!
            func url(_ path: String) -> URL { URL(string: base.absoluteString + path)! }
            let session = vcrSession()
            let before = try? HTTPBin.settledRequestCount()
            let file = URL(fileURLWithPath: Self.cassettes).appendingPathComponent("Core/httpbin-traffic.json")
            let existed = FileManager.default.fileExists(atPath: file.path)
            try await withCassette("Core/httpbin-traffic", in: Self.cassettes, { $0.matchers = [.method, .path, .query] }) { cassette in
                #expect(cassette.isWriteProtected == existed)
                let (redirected, redirectResponse) = try await session.data(from: url("/redirect/2"))
                #expect(redirectResponse.url?.path == "/get")
                #expect(redirected.json?["url"] as? String != nil)
                #expect(try await session.data(from: url("/gzip")).0.json?["gzipped"] as? Bool == true)
                #expect(try await session.data(from: url("/bytes/1024?seed=5")).0.count == 1024)
                #expect(try await session.data(from: url("/stream-bytes/4000?chunk_size=500&seed=2")).0.count == 4000)
                let first = try await session.data(from: url("/uuid")).0
                let second = try await session.data(from: url("/uuid")).0
                #expect(first != second)
                var slow = URLRequest(url: url("/delay/2"))
                slow.timeoutInterval = 1
                let error = await #expect(throws: URLError.self) { try await session.data(for: slow) }
                #expect(error?.code == .timedOut)
                #expect(cassette.allPlayed || !existed)
            }
            if existed, let before {
                // Other test targets record against the same server meanwhile: look for this test's paths only.
                let paths = ["/redirect/2", "/relative-redirect/1", "/get", "/gzip", "/bytes/1024", "/stream-bytes/4000",
                             "/uuid", "/delay/2"]
                let own = try HTTPBin.requests(since: before, to: paths)
                #expect(own.isEmpty, "the committed cassette reached the server: \(own)")
            }
        }
    }
}
