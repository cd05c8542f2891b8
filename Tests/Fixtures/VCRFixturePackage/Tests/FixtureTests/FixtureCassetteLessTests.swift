import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCRTesting
import Testing

/// No cassette, running in parallel with the cassette suites: its requests go to the server (a closed port when
/// replaying, where they fail to connect), never to another test's cassette.
@Suite struct FixtureCassetteLessTests {
    @Test(arguments: ["one", "two"])
    func live(name: String) async throws {
        do {
            let (_, response) = try await URLSession.shared.data(from: Fixture.url("/anything/live/\(name)"))
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            #expect(Fixture.isLive, "answered with no server: replayed from a cassette")
        } catch let error as VCRError {
            Issue.record("went through HTTPVCR: \(error)")
        } catch {
            #expect(!Fixture.isLive && (error as? URLError)?.code == .cannotConnectToHost, "\(error)")
        }
    }
}
