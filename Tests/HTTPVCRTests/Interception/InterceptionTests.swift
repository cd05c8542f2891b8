import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import HTTPVCR
import HTTPBinTestSupport

extension VCRTests {
    /// What the URL protocol does with a request before it is replayed or recorded.
    @Suite struct InterceptionTests {
        let session = vcrSession()

        /// `canInit` asks `beforeRecordRequest` whether the request is the cassette's; `startLoading` uses that
        /// answer instead of asking again, recording and replaying.
        @Test func beforeRecordRequestRunsOncePerRequest() async throws {
            let folder = try TemporaryFolder()
            let url = try HTTPBin.url("/anything/asked-once")
            let asked = Locked(0)
            let configure: (inout VCRConfiguration) -> Void = { configuration in
                configuration.beforeRecordRequest = { request in
                    asked.withLock { $0 += 1 }
                    var request = request
                    request.setValue("rewritten", forHTTPHeaderField: "X-Before-Record")
                    return request
                }
            }
            let recorded = try await withCassette("asked-once", in: folder.path, configure) { _ in
                try await session.data(from: url).0
            }
            #expect(asked.withLock { $0 } == 1, "recording")
            let (tape, _) = try CassetteFile.read(at: folder.url.appendingPathComponent("asked-once.json"))
            #expect(tape.interactions.first?.request.headers[field: "X-Before-Record"] == "rewritten")
            let replayed = try await withCassette("asked-once", in: folder.path, {
                configure(&$0)
                $0.recordMode = .never
            }) { _ in try await session.data(from: url).0 }
            #expect(asked.withLock { $0 } == 2, "replaying")
            #expect(replayed == recorded)
        }

        /// A request `beforeRecordRequest` refuses is not the cassette's: it goes to the network, unrecorded.
        @Test func aRequestBeforeRecordRequestRefusesIsNotIntercepted() async throws {
            let folder = try TemporaryFolder()
            let url = try HTTPBin.url("/anything/refused-by-hook")
            try await withCassette("refused", in: folder.path, { $0.beforeRecordRequest = { _ in nil } }) { cassette in
                let (data, _) = try await session.data(from: url)
                #expect(data.json?["url"] as? String == url.absoluteString)
                #expect(!cassette.hasUnsavedChanges)
            }
        }

        /// A WebSocket handshake is the socket's: `canInit` leaves every request that asks to upgrade to the
        /// loader, whatever the case of the field's name, on every platform's protocol.
        @Test(arguments: ["Upgrade", "upgrade", "UPGRADE", "Sec-WebSocket-Key", "sec-websocket-key"])
        func aRequestThatAsksToUpgradeIsNeverIntercepted(_ field: String) async throws {
            let folder = try TemporaryFolder()
            let url = URL(string: "https://socket.test/chat")!
            try await withCassette("websocket", in: folder.path) { _ in
                var upgrade = URLRequest(url: url)
                upgrade.setValue(field.lowercased().hasSuffix("key") ? "dGhlIHNhbXBsZSBub25jZQ==" : "websocket",
                                 forHTTPHeaderField: field)
                for protocolClass in DoubledLoader.allCases.map(\.protocolClass) {
                    #expect(!protocolClass.canInit(with: upgrade), "\(protocolClass)")
                    #expect(protocolClass.canInit(with: URLRequest(url: url)), "an ordinary request still is")
                    // What canInit noted for a startLoading that never comes.
                    _ = CanInitNotes.take(on: protocolClass.platform.currentQueue)
                }
            }
        }
    }
}
