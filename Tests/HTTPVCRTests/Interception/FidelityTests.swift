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

        enum SessionKind: String, CaseIterable, CustomTestStringConvertible {
            case installed, delegate
            var testDescription: String { rawValue }
        }

        /// What `GET /cookies` returns after `GET /cookies/set?flavour=…` (which redirects to `/cookies`), then
        /// after a plain response sets another cookie.
        func cookieFlow(_ kind: SessionKind) async throws -> (afterSet: [String: String], after: [String: String]) {
            let configuration = URLSessionConfiguration.ephemeral
            VCR.install(in: configuration)
            let session = kind == .delegate
                ? URLSession(configuration: configuration, delegate: FinishLog(Locked([])), delegateQueue: nil)
                : URLSession(configuration: configuration)
            defer { session.finishTasksAndInvalidate() }
            func cookies(_ path: String) async throws -> [String: String] {
                let (data, _) = try await session.data(from: try HTTPBin.url(path))
                return (try JSONSerialization.jsonObject(with: data) as? [String: Any])?["cookies"] as? [String: String] ?? [:]
            }
            let afterSet = try await cookies("/cookies/set?flavour=oat")
            _ = try await session.data(from: try HTTPBin.url("/response-headers?Set-Cookie=size%3Dlarge"))
            return (afterSet, try await cookies("/cookies"))
        }

        @Test(arguments: SessionKind.allCases)
        func cookiesASessionIsGivenAreSentOnRecordingAndReplaying(_ kind: SessionKind) async throws {
            let folder = try TemporaryFolder()
            let live = try await {
                let session = URLSession(configuration: .ephemeral)
                _ = try await session.data(from: try HTTPBin.url("/cookies/set?flavour=oat"))
                let (data, _) = try await session.data(from: try HTTPBin.url("/cookies"))
                return (try JSONSerialization.jsonObject(with: data) as? [String: Any])?["cookies"] as? [String: String]
            }()
            #expect(live == ["flavour": "oat"])
            try await holdingCassettes {
                let recorded = try await withCassette("cookies", in: folder.path) { _ in try await cookieFlow(kind) }
                #expect(recorded.afterSet == ["flavour": "oat"])
                #expect(recorded.after == ["flavour": "oat", "size": "large"])
                let replayed = try await withCassette("cookies", in: folder.path, { $0.recordMode = .none }) { cassette in
                    let replayed = try await cookieFlow(kind)
                    #expect(cassette.allPlayed)
                    return replayed
                }
                #expect(replayed.afterSet == recorded.afterSet)
                // A cookie value is a secret by default: where the server echoes one of 5 characters or more, the
                // cassette (and so the replay) has the placeholder. "oat" is too short to be chased.
                #expect(replayed.after == ["flavour": "oat", "size": "[FILTERED]"])
                // The cassette keeps names, not values.
                let tape = try CassetteFile.read(at: folder.url.appendingPathComponent("cookies.json")).tape
                let hop = try #require(tape.interactions[0].redirects.first)
                #expect(hop.response.headers[field: "Set-Cookie"]?.hasPrefix("flavour=[FILTERED]") == true)
                let sent = tape.interactions[2].request.headers[field: "Cookie"]?.components(separatedBy: "; ")
                #expect(Set(sent ?? []) == ["flavour=[FILTERED]", "size=[FILTERED]"])
            }
        }

        @Test func aSessionThatRefusesCookiesGetsNone() async throws {
            let folder = try TemporaryFolder()
            let configuration = URLSessionConfiguration.ephemeral
            configuration.httpCookieAcceptPolicy = .never
            VCR.install(in: configuration)
            let session = URLSession(configuration: configuration)
            try await holdingCassettes {
                try await withCassette("refused", in: folder.path) { _ in
                    _ = try await session.data(from: try HTTPBin.url("/cookies/set?flavour=oat"))
                }
            }
            #expect(configuration.httpCookieStorage?.cookies?.isEmpty ?? true)
        }

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
