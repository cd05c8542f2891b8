import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import HTTPVCR
import HTTPBinTestSupport

extension VCRTests {
    /// Under a cassette the app sees what the server gave it.
    @Suite struct FidelityTests {
        let session = vcrSession()

        @Test(arguments: ["/get", "/gzip", "/status/204"])
        func headKeepsTheLengthTheServerAnnounced(_ path: String) async throws {
            let folder = try TemporaryFolder()
            var request = URLRequest(url: try HTTPBin.url(path))
            request.httpMethod = "HEAD"
            let live = try await URLSession(configuration: .ephemeral).data(for: request).1 as? HTTPURLResponse
            let announced = live?.value(forHTTPHeaderField: "Content-Length")
            try await holdingCassettes {
                let recorded = try await withCassette("head", in: folder.path) { _ in
                    try await session.data(for: request)
                }
                let replayed = try await withCassette("head", in: folder.path, { $0.recordMode = .none }) { _ in
                    try await session.data(for: request)
                }
                for (data, response) in [recorded, replayed] {
                    #expect(data.isEmpty)
                    #expect((response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Length") == announced)
                }
                let tape = try CassetteFile.read(at: folder.url.appendingPathComponent("head.json")).tape
                #expect(tape.interactions[0].response?.headers[field: "Content-Length"] == announced)
                if path == "/gzip" {
                    #expect(tape.interactions[0].response?.headers[field: "Content-Encoding"] == "gzip")
                }
            }
        }
    }
}
