import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import HTTPVCR

extension VCRTests {
    /// `VCR.exchange(_:_:headers:body:sending:)`: the door in the terms every client has, used the way the
    /// AsyncHTTPClient example's adapter uses it, with a client of its own types that answers by itself.
    @Suite struct AnyClientPartsTests {
        /// A client's own request: the body a stream of chunks that can be read once, as NIO's are.
        struct MinimalRequest: Sendable {
            var method = "GET"
            var url: String
            var headers: [(name: String, value: String)] = []
            var body: AsyncStream<[UInt8]>?
        }

        /// A client's own response.
        struct MinimalResponse: Sendable {
            var status: Int
            var headers: [(name: String, value: String)]
            var version: (major: Int, minor: Int)
            var body: [UInt8]
        }

        /// The client: answers every request with repeated fields, out of order, and echoes the body it was sent.
        final class MinimalClient: @unchecked Sendable {
            let sent = Locked<[(method: String, body: [UInt8])]>([])

            func execute(_ request: MinimalRequest) async -> MinimalResponse {
                var body: [UInt8] = []
                if let chunks = request.body { for await chunk in chunks { body += chunk } }
                sent.withLock { $0.append((request.method, body)) }
                let headers = [
                    (name: "X-Multi", value: "one"), (name: "Set-Cookie", value: "theme=dark"),
                    (name: "Content-Type", value: "text/plain"), (name: "X-Multi", value: "two"),
                ]
                return MinimalResponse(status: 201, headers: headers, version: (2, 0), body: Array("got: ".utf8) + body)
            }

            /// The adapter, as an adapter for a real client writes it.
            func executeThroughVCR(_ request: MinimalRequest) async throws -> MinimalResponse {
                let (status, headers, version, body) = try await VCR.exchange(
                    request.method, request.url, headers: request.headers, body: request.body
                ) { collected in
                    var sent = request
                    sent.body = collected.map { bytes in AsyncStream { $0.yield(Array(bytes)); $0.finish() } }
                    let answer = await self.execute(sent)
                    return (answer.status, answer.headers, answer.version, answer.body)
                }
                return MinimalResponse(status: status, headers: headers, version: version, body: Array(body))
            }
        }

        static func post(_ url: String, chunks: [String]) -> MinimalRequest {
            MinimalRequest(
                method: "POST", url: url, headers: [(name: "Content-Type", value: "text/plain"), (name: "X-Id", value: "7")],
                body: AsyncStream { continuation in
                    for chunk in chunks { continuation.yield(Array(chunk.utf8)) }
                    continuation.finish()
                }
            )
        }

        static func fields(_ headers: [(name: String, value: String)]) -> [String] {
            headers.map { "\($0.name): \($0.value)" }
        }

        @Test func recordsTheRequestsPartsAndTheAnswersThenReplaysThem() async throws {
            let folder = try TemporaryFolder()
            let url = "http://parts.example.test/items?page=2"
            let client = MinimalClient()
            let live = try await withCassette("parts", in: folder.path) { _ in
                try await client.executeThroughVCR(Self.post(url, chunks: ["hel", "lo"]))
            }
            #expect(client.sent.withLock { $0.map(\.body) } == [Array("hello".utf8)], "the body collected, sent once")
            #expect(live.status == 201 && live.version == (2, 0))
            #expect(Self.fields(live.headers)
                == ["X-Multi: one", "Set-Cookie: theme=dark", "Content-Type: text/plain", "X-Multi: two"])
            #expect(String(decoding: live.body, as: UTF8.self) == "got: hello")

            let interaction = try #require(
                try CassetteFile.read(at: folder.url.appendingPathComponent("parts.json")).tape.interactions.first
            )
            #expect(interaction.request.method == "POST" && interaction.request.url == url)
            #expect(interaction.request.body == Data("hello".utf8))
            #expect(interaction.request.headers[field: "X-Id"] == "7")
            let taped = try #require(interaction.response)
            #expect(taped.url == url && taped.statusCode == 201 && taped.httpVersion == "HTTP/2")
            #expect(taped.headers.filter { $0.name == "X-Multi" }.map(\.value) == ["one", "two"])

            let replayed = try await withCassette("parts", in: folder.path, { $0.recordMode = .never }) { cassette in
                let answer = try await client.executeThroughVCR(Self.post(url, chunks: ["he", "llo"]))
                #expect(cassette.allPlayed)
                return answer
            }
            #expect(client.sent.withLock { $0.count } == 1, "replayed without the client")
            #expect(replayed.status == 201 && replayed.version == (2, 0))
            #expect(replayed.headers.filter { $0.name == "X-Multi" }.map(\.value) == ["one", "two"])
            #expect(replayed.headers.contains { $0 == (name: "Set-Cookie", value: "theme=[FILTERED]") },
                    "through the cassette's filters")
            #expect(replayed.body == live.body)
        }

        @Test func withoutACassetteItReturnsWhatTheClientReturned() async throws {
            let client = MinimalClient()
            try await VCRCassetteLock.shared.withLock {
                #expect(VCR.cassette == nil)
                let answer = try await client.executeThroughVCR(
                    MinimalRequest(url: "http://parts.example.test/plain", headers: [(name: "Accept", value: "*/*")])
                )
                #expect(Self.fields(answer.headers)
                    == ["X-Multi: one", "Set-Cookie: theme=dark", "Content-Type: text/plain", "X-Multi: two"],
                    "every field, in the order the client had it")
                #expect(answer.status == 201 && answer.version == (2, 0))
                #expect(String(decoding: answer.body, as: UTF8.self) == "got: ")
                #expect(client.sent.withLock { $0.map(\.method) } == ["GET"])
            }
        }

        @Test func aURLThatIsNoneThrowsBeforeTheClientIsCalled() async throws {
            let client = MinimalClient()
            let error = await #expect(throws: URLError.self) {
                _ = try await client.executeThroughVCR(MinimalRequest(url: ""))
            }
            #expect(error?.code == .badURL)
            #expect(client.sent.withLock { $0.isEmpty })
        }
    }
}
