import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCRTesting
import Testing

/// Cassettes: `Cassettes.bundle/FixtureSwiftTestingTests/<test>.json` in this package, one per argument for
/// `user(name:)`.
@Suite(.cassette(matchers: [.method, .path, .query]))
struct FixtureSwiftTestingTests {
    @Test func get() async throws {
        let (data, response) = try await URLSession.shared.data(from: Fixture.url("/get"))
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        let json = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        #expect((json?["args"] as? [String: String])?["fixture"] == Fixture.query)
    }

    @Test(arguments: ["alice", "bob"])
    func user(name: String) async throws {
        let (_, response) = try await URLSession.shared.data(from: Fixture.url("/anything/user/\(name)"))
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
    }
}
