// Checks that only Apple's URL loading system can answer, run by scripts/test-apple on a Mac. Compiled everywhere,
// so that CI builds them, and enabled only where Apple's loader is: corelibs' is not the one they check.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import HTTPVCR
import HTTPBinTestSupport

extension VCRTests {
    @Suite(.enabled(if: VCRURLProtocol.platform is ApplePlatform, "checks Apple's URL loading system"))
    struct AppleLoaderChecks {
        /// Decides every hop as told, and notes what it was asked.
        final class RedirectDecider: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
            enum Decision { case follow, refuse, modify(URL) }
            let decision: Decision
            private let asked = Locked(0)
            var hopsSeen: Int { asked.withLock { $0 } }

            init(_ decision: Decision) { self.decision = decision }

            func urlSession(
                _ session: URLSession,
                task: URLSessionTask,
                willPerformHTTPRedirection response: HTTPURLResponse,
                newRequest request: URLRequest,
                completionHandler: @escaping @Sendable (URLRequest?) -> Void
            ) {
                asked.withLock { $0 += 1 }
                switch decision {
                case .follow: completionHandler(request)
                case .refuse: completionHandler(nil)
                case let .modify(url): completionHandler(URLRequest(url: url))
                }
            }
        }

        func session(_ delegate: URLSessionDelegate? = nil) -> URLSession {
            let configuration = URLSessionConfiguration.ephemeral
            VCR.install(in: configuration)
            return URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
        }

        @Test func aHopTheDelegateDecidesIsFollowedRefusedOrChangedAThousandTimes() async throws {
            let folder = try TemporaryFolder()
            let url = try HTTPBin.url("/redirect/2")
            let elsewhere = try HTTPBin.url("/get?changed=1")
            let configure: (inout VCRConfiguration) -> Void = { $0.reportsRedirectHops = true }
            try await holdingCassettes {
                try await withCassette("hops", in: folder.path, configure) { _ in
                    _ = try await session().data(from: url)
                    _ = try await session().data(from: elsewhere)
                }
                try await withCassette("hops", in: folder.path, {
                    configure(&$0)
                    $0.recordMode = .never
                    $0.allowsPlaybackRepeats = true
                }) { _ in
                    for round in 0..<1_000 {
                        let follow = RedirectDecider(.follow)
                        let (_, followed) = try await session(follow).data(from: url)
                        #expect((followed as? HTTPURLResponse)?.statusCode == 200, "round \(round)")
                        #expect(follow.hopsSeen == 2, "round \(round)")

                        let (_, refused) = try await session(RedirectDecider(.refuse)).data(from: url)
                        #expect((refused as? HTTPURLResponse)?.statusCode == 302, "round \(round)")

                        let (_, changed) = try await session(RedirectDecider(.modify(elsewhere))).data(from: url)
                        #expect(changed.url == elsewhere, "round \(round)")
                    }
                }
            }
        }

        @Test func anUploadIsRecordedWithItsBodyOrFailsSayingSo() async throws {
            let folder = try TemporaryFolder()
            var request = URLRequest(url: try HTTPBin.url("/post"))
            request.httpMethod = "POST"
            let body = Data("uploaded=\(UUID().uuidString)".utf8)
            try await holdingCassettes {
                do {
                    try await withCassette("upload", in: folder.path) { _ in
                        _ = try await session().upload(for: request, from: body)
                    }
                    let tape = try CassetteFile.read(at: folder.url.appendingPathComponent("upload.json")).tape
                    #expect(tape.interactions.first?.request.body == body, "recorded without its body")
                } catch let error as NSError where error.domain == VCRError.errorDomain {
                    #expect(error.code == VCRError.Code.unsupportedRequest.rawValue)
                    #expect(error.localizedDescription.contains("upload(for:from:)"))
                }
            }
        }

        @Test func aDownloadReplays() async throws {
            let folder = try TemporaryFolder()
            let url = try HTTPBin.url("/bytes/2048?seed=7")
            try await holdingCassettes {
                let recorded = try await withCassette("download", in: folder.path) { _ in
                    let (file, _) = try await session().download(from: url)
                    return try Data(contentsOf: file)
                }
                let replayed = try await withCassette("download", in: folder.path, { $0.recordMode = .never }) { _ in
                    let (file, _) = try await session().download(from: url)
                    return try Data(contentsOf: file)
                }
                #expect(recorded.count == 2048)
                #expect(replayed == recorded)
            }
        }

        @Test func sessionWideHeadersReachTheServerWhileRecording() async throws {
            let folder = try TemporaryFolder()
            let configuration = URLSessionConfiguration.ephemeral
            configuration.httpAdditionalHeaders = ["X-Session-Wide": "yes"]
            VCR.install(in: configuration)
            let session = URLSession(configuration: configuration)
            try await holdingCassettes {
                let data = try await withCassette("additional", in: folder.path) { _ in
                    try await session.data(from: try HTTPBin.url("/headers")).0
                }
                let headers = (try JSONSerialization.jsonObject(with: data) as? [String: Any])?["headers"] as? [String: String]
                #expect(headers?["X-Session-Wide"] == "yes")
                let tape = try CassetteFile.read(at: folder.url.appendingPathComponent("additional.json")).tape
                // Whether the protocol saw it (and so whether it is matched and taped) is what this reports.
                print("httpAdditionalHeaders on the tape: \(tape.interactions[0].request.headers[field: "X-Session-Wide"] ?? "no")")
            }
        }

        @Test func aReplayedCookieLandsInTheSharedStorage() async throws {
            let folder = try TemporaryFolder()
            let cookie = try SharedStorageCookie(prefix: "apple")
            defer { cookie.forget() }
            try await holdingCassettes {
                try await withCassette("cookie", in: folder.path) { _ in _ = try await URLSession.shared.data(from: cookie.url) }
                cookie.forget()
                try await withCassette("cookie", in: folder.path, { $0.recordMode = .never }) { _ in
                    _ = try await URLSession.shared.data(from: cookie.url)
                }
                #expect(try cookie.stored().count == 1)
            }
        }

        @Test func aRecordingCancelledMidStreamKeepsWhatCameAndTheCancellation() async throws {
            let folder = try TemporaryFolder()
            let url = try HTTPBin.url("/drip?duration=3&numbytes=6&delay=0")
            try await holdingCassettes {
                let seen = try await withCassette("cancelled", in: folder.path) { _ in
                    await FidelityTests().chunks(of: url, cancellingAfter: 1)
                }
                #expect((seen.error as? URLError)?.code == .cancelled)
                let tape = try CassetteFile.read(at: folder.url.appendingPathComponent("cancelled.json")).tape
                #expect(tape.interactions.first?.error?.code == NSURLErrorCancelled)
                #expect((tape.interactions.first?.body.count ?? 0) < 6)
            }
        }
    }
}
