import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import HTTPVCR
import HTTPBinTestSupport

extension VCRTests {
    /// Volatile values as a user meets them: recorded against httpbin, which echoes every request back, then
    /// replayed offline with the values a new run makes.
    @Suite struct VolatileReplayTests {
        let session = vcrSession(timeout: 10)

        /// A POST whose JSON body carries a new client id and time on every run.
        func post(clientId: String, sentAt: String) throws -> URLRequest {
            var request = URLRequest(url: try HTTPBin.url("/post"))
            request.httpMethod = "POST"
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(#"{"item":"tea","meta":{"clientId":"\#(clientId)"},"sentAt":"\#(sentAt)"}"#.utf8)
            return request
        }

        static func now() -> String {
            ISO8601DateFormatter().string(from: Date().addingTimeInterval(Double.random(in: 1...86_400)))
        }

        func answer(_ request: URLRequest) async throws -> (json: [String: Any], data: String, bytes: Data, length: String?) {
            let (bytes, response) = try await session.data(for: request)
            let object = try #require(try JSONSerialization.jsonObject(with: bytes) as? [String: Any])
            return (
                try #require(object["json"] as? [String: Any]), try #require(object["data"] as? String), bytes,
                (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Length")
            )
        }

        @Test func aBodyWithAFreshUUIDAndTimeMatchesByShapeAndTheEchoHoldsTheLiveValues() async throws {
            let folder = try TemporaryFolder()
            func configure(_ configuration: inout VCRConfiguration) {
                configuration.matchers = [.method, .path, .body]
                configuration.volatileValues += [.jsonPath("$.meta.clientId")]
            }
            try await holdingCassettes {
                let recordedID = UUID().uuidString
                try await withCassette("posted", in: folder.path, configure) { _ in
                    _ = try await answer(try post(clientId: recordedID, sentAt: Self.now()))
                }
                let file = String(decoding: try Data(contentsOf: folder.url.appendingPathComponent("posted.json")), as: UTF8.self)
                #expect(file.contains(recordedID), "the file holds what was sent")

                let (liveID, liveTime) = (UUID().uuidString, Self.now())
                let replayed = try await replayOffline("posted", in: folder.url, configure) {
                    try await answer(try post(clientId: liveID, sentAt: liveTime))
                }
                #expect((replayed.json["meta"] as? [String: String])?["clientId"] == liveID)
                #expect(replayed.json["sentAt"] as? String == liveTime)
                #expect(replayed.data.contains(liveID) && replayed.data.contains(liveTime))
                #expect(!String(decoding: replayed.bytes, as: UTF8.self).contains(recordedID))
                #expect(replayed.length == "\(replayed.bytes.count)", "Content-Length follows the body")
            }
        }

        @Test func aPresignedURLWhoseDateAndSignatureChangeMatchesItsRecording() async throws {
            let folder = try TemporaryFolder()
            func presigned(date: String, signature: String) throws -> URLRequest {
                URLRequest(url: try HTTPBin.url(
                    "/get?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Date=\(date)&X-Amz-Expires=900"
                        + "&X-Amz-SignedHeaders=host&X-Amz-Signature=\(signature)"
                ))
            }
            func signature() -> String {
                (0..<4).map { _ in String(format: "%016llx", UInt64.random(in: 1 << 60...UInt64.max)) }.joined()
            }
            try await holdingCassettes {
                try await withCassette("presigned", in: folder.path) { _ in
                    _ = try await session.data(for: try presigned(date: "20261128T101500Z", signature: signature()))
                }
                let live = (date: "20261129T093012Z", signature: signature())
                let body = try await replayOffline("presigned", in: folder.url) {
                    try await session.data(for: try presigned(date: live.date, signature: live.signature)).0
                }
                let echo = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
                let args = try #require(echo["args"] as? [String: String])
                #expect(args["X-Amz-Date"] == live.date && args["X-Amz-Signature"] == live.signature)
                #expect((echo["url"] as? String)?.contains(live.signature) == true)
            }
        }

        @Test func aValueNotDeclaredFailsNamingItAndTheLineToAdd() async throws {
            let folder = try TemporaryFolder()
            func tagged(_ tag: String) throws -> URLRequest {
                var request = URLRequest(url: try HTTPBin.url("/post"))
                request.httpMethod = "POST"
                request.setValue("application/json", forHTTPHeaderField: "Content-Type")
                request.httpBody = Data(#"{"order":{"tag":"\#(tag)"},"qty":2}"#.utf8)
                return request
            }
            try await holdingCassettes {
                try await withCassette("tagged", in: folder.path, { $0.matchers = [.method, .path, .body] }) { _ in
                    _ = try await session.data(for: try tagged(UUID().uuidString))
                }
                try await withCassette("tagged", in: folder.path, {
                    $0.matchers = [.method, .path, .body]
                    $0.recordMode = .never
                }) { _ in
                    await #expect(throws: (any Error).self) { try await session.data(for: try tagged(UUID().uuidString)) }
                    let failure = try #require(VCR.takeFailures().first)
                    #expect(failure.message.contains(#"Looks volatile"#))
                    #expect(failure.message.contains(#"configuration.volatileValues += [.jsonPath("$.order.tag")]"#))
                }
            }
        }

        @Test func verifyProposesTheValuesThatLookVolatile() async throws {
            let folder = try TemporaryFolder()
            let url = { (buster: Int) in try HTTPBin.url("/get?page=2&ts=\(buster)") }
            try await holdingCassettes {
                try await withCassette("busted", in: folder.path) { _ in
                    _ = try await session.data(from: try url(1_732_800_000))
                }
                let drift = try await withCassette("busted", in: folder.path, { $0.recordMode = .verify }) { cassette in
                    _ = try await session.data(from: try url(1_732_875_300))
                    return cassette.drift
                }
                let new = try #require(drift.first { $0.kind == .new })
                #expect(new.differences.map(\.location) == [#".query("ts")"#])
                #expect(new.differences.first?.recorded == "1732800000" && new.differences.first?.live == "1732875300")
                #expect(new.description.contains(#"looks volatile, add to volatileValues: .query("ts")"#))
            }
        }

        @Test func recordingAnewWithAllProposesTheValuesThatChangedButKeptTheirShape() async throws {
            let folder = try TemporaryFolder()
            let url = { (buster: Int, page: Int) in try HTTPBin.url("/get?page=\(page)&ts=\(buster)&_=\(buster)") }
            try await holdingCassettes {
                try await withCassette("rerecorded", in: folder.path) { _ in
                    _ = try await session.data(from: try url(1_732_800_000, 2))
                }
                let proposed = try await withCassette("rerecorded", in: folder.path, { $0.recordMode = .all }) { cassette in
                    _ = try await session.data(from: try url(1_732_875_300, 3))
                    return cassette.volatileCandidates
                }
                // `_` is declared by default; a page number is no candidate.
                #expect(proposed == [.query("ts")])
                let again = try await withCassette("rerecorded", in: folder.path, { $0.recordMode = .once }) { cassette in
                    _ = try await session.data(from: try url(1_732_875_300, 3))
                    return cassette.volatileCandidates
                }
                #expect(again.isEmpty, "only recording anew proposes")
            }
        }

        @Test func aSecretVolatileValueIsFilteredInTheFileMatchedAndEchoedLive() async throws {
            let folder = try TemporaryFolder()
            let signed = { (nonce: String, signature: String) in
                URLRequest(url: try HTTPBin.url("/get?oauth_nonce=\(nonce)&oauth_signature=\(signature)&q=tea"))
            }
            try await holdingCassettes {
                let recordedSignature = "sig" + UUID().uuidString.prefix(8)
                try await withCassette("oauth", in: folder.path) { _ in
                    _ = try await session.data(for: try signed("n0nce1111", recordedSignature))
                }
                let file = String(decoding: try Data(contentsOf: folder.url.appendingPathComponent("oauth.json")), as: UTF8.self)
                #expect(!file.contains(recordedSignature), "the secure defaults filter a signature")
                let liveSignature = "sig" + UUID().uuidString.prefix(8)
                let body = try await replayOffline("oauth", in: folder.url) {
                    try await session.data(for: try signed("n0nce2222", liveSignature)).0
                }
                let args = try #require((try JSONSerialization.jsonObject(with: body) as? [String: Any])?["args"] as? [String: String])
                #expect(args["oauth_nonce"] == "n0nce2222")
                #expect(args["oauth_signature"] == liveSignature)
            }
        }
    }
}
