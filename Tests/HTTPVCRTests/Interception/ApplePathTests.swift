import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import HTTPVCR
import HTTPBinTestSupport

extension VCRTests {
    /// What differs between Linux and Apple platforms, driven through ``LoaderDouble`` (which stands in for either
    /// loader). CI runs these twice: as built for Linux, and built with `HTTPVCR_APPLE_PATHS`, which compiles the
    /// Apple branches on Linux (scripts/test-apple-paths).
    @Suite struct ApplePathTests {
        static var isApplePath: Bool {
            #if HTTPVCR_APPLE_PATHS || !canImport(FoundationNetworking)
            true
            #else
            false
            #endif
        }

        @Test func chunksReachALoaderThatTakesThemOneByOne() async throws {
            let folder = try TemporaryFolder()
            let url = try HTTPBin.url("/stream/5")
            try await holdingCassettes {
                let recorded = try await withCassette("stream", in: folder.path) { _ in
                    await LoaderDouble().load(URLRequest(url: url))
                }
                let tape = try CassetteFile.read(at: folder.url.appendingPathComponent("stream.json")).tape
                let replayed = try await withCassette("stream", in: folder.path, { $0.recordMode = .never }) { _ in
                    await LoaderDouble().load(URLRequest(url: url))
                }
                #expect(recorded.body == tape.interactions[0].body)
                #expect(replayed.body == tape.interactions[0].body)
                #expect(tape.interactions[0].chunks.count > 1, "httpbin sent /stream/5 in one piece")
                // Apple's loader hands every didLoad on; a corelibs task with no session behind it (this double)
                // is given the body in one piece.
                let expected = Self.isApplePath ? tape.interactions[0].chunks : [tape.interactions[0].body]
                #expect(recorded.chunks == expected)
                #expect(replayed.chunks == expected)
                // Every client call where the loader started the protocol, recording (the answer comes from the
                // recorder's session) as replaying: corelibs' task queue, Apple's loader thread.
                #expect(recorded.callsOffThread == 0)
                #expect(replayed.callsOffThread == 0)
            }
        }

        @Test func cookiesGoWhereThePlatformKeepsThem() async throws {
            let folder = try TemporaryFolder()
            let cookie = try SharedStorageCookie(prefix: "applepath")
            defer { cookie.forget() }
            let request = URLRequest(url: cookie.url)
            try await holdingCassettes {
                _ = try await withCassette("cookie", in: folder.path) { _ in await LoaderDouble().load(request) }
                // Apple platforms: the shared storage, as stubbing libraries do (a protocol cannot see its session).
                // Linux: the session's own storage, read from the task; this double has none, so nothing is stored.
                #expect(try cookie.stored().count == (Self.isApplePath ? 1 : 0))
                cookie.forget()
                _ = try await withCassette("cookie", in: folder.path, { $0.recordMode = .never }) { _ in
                    await LoaderDouble().load(request)
                }
                #expect(try cookie.stored().count == (Self.isApplePath ? 1 : 0), "replayed too")
            }
        }

        @Test func hopsAreReportedOnlyWhereTheLoaderTakesThemAndTheCassetteAsks() {
            let cassetteAsks = VCRConfiguration()
            #expect(!cassetteAsks.reportsRedirectHops, "off by default")
            #expect(RedirectHandling.platformDefault == (Self.isApplePath ? .reportToClient : .followInProtocol))
        }
    }
}
