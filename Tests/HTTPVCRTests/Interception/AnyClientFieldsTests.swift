import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import HTTPVCR
import HTTPBinTestSupport
import TestSupport

extension VCRTests {
    /// `VCR.dataKeepingFields(for:sending:)` and `VCR.bytesKeepingFields(for:sending:)`: the door for clients that
    /// keep every header field, repeated names included, which `HTTPURLResponse` would join into one.
    @Suite struct AnyClientFieldsTests {
        /// httpbin answers with `X-Multi: one`, `X-Multi: two` and two `Set-Cookie`, whose values are secrets.
        static let repeatedFields = "/response-headers?X-Multi=one&X-Multi=two"
            + "&Set-Cookie=session%3Ds3cr3t-one%3B%20Path%3D%2F&Set-Cookie=theme%3Dd4rk-two"

        /// A client that keeps fields apart (``FieldsClient``), counting how often it was asked.
        final class Sender: @unchecked Sendable {
            let calls = Locked(0)
            var count: Int { calls.withLock { $0 } }

            func send(_ request: URLRequest) async throws -> (Data, RecordedResponse) {
                calls.withLock { $0 += 1 }
                return try await FieldsClient.get(try #require(request.url))
            }
        }

        /// Out of order, names in mixed case, repeated apart from each other: what a client may hand over.
        static let oddResponse = RecordedResponse(
            url: "http://fields.example.test/odd?a=1", statusCode: 207, httpVersion: "HTTP/2",
            headers: [
                RecordedHeader("x-multi", "one"), RecordedHeader("Set-Cookie", "a=1; Path=/"),
                RecordedHeader("X-Multi", "two"), RecordedHeader("Content-Type", "text/plain"),
                RecordedHeader("set-cookie", "b=2"), RecordedHeader("X-Multi", "three"),
            ]
        )

        /// Repeated and out of order, as a server may send them.
        static let repeatedResponse = RecordedResponse(
            url: "http://fields.example.test/repeated", statusCode: 207, httpVersion: "HTTP/2",
            headers: [
                RecordedHeader("X-Multi", "one"), RecordedHeader("Set-Cookie", "a=1; Path=/"),
                RecordedHeader("X-Multi", "two"), RecordedHeader("Content-Type", "text/plain"),
                RecordedHeader("Set-Cookie", "b=2"), RecordedHeader("X-Multi", "three"),
            ]
        )

        static func values(_ name: String, in response: RecordedResponse) -> [String] {
            response.headers.filter { $0.name.equalsIgnoringASCIICase(name) }.map(\.value)
        }

        static func responseOnTape(_ file: URL) throws -> RecordedResponse? {
            try CassetteFile.read(at: file).tape.interactions.first?.response
        }

        @Test func recordsEveryFieldTheServerSentThenReplaysThemInOrder() async throws {
            let folder = try TemporaryFolder()
            let request = URLRequest(url: try HTTPBin.url(Self.repeatedFields))
            let sender = Sender()
            let (liveBody, live) = try await withCassette("fields", in: folder.path) { _ in
                try await VCR.dataKeepingFields(for: request, sending: sender.send)
            }
            #expect(sender.count == 1)
            #expect(Self.values("X-Multi", in: live) == ["one", "two"])
            #expect(Self.values("Set-Cookie", in: live) == ["session=s3cr3t-one; Path=/", "theme=d4rk-two"],
                    "the caller gets what the server sent")

            let file = folder.url.appendingPathComponent("fields.json")
            let taped = try #require(try Self.responseOnTape(file))
            #expect(Self.values("X-Multi", in: taped) == ["one", "two"])
            #expect(Self.values("Set-Cookie", in: taped) == ["session=[FILTERED]; Path=/", "theme=[FILTERED]"],
                    "each Set-Cookie's secret is filtered, its name and attributes kept")
            let text = try String(contentsOf: file, encoding: .utf8)
            #expect(!text.contains("s3cr3t-one") && !text.contains("d4rk-two"), "not in the body httpbin echoed either")

            let before = try HTTPBin.settledRequestCount()
            let (replayedBody, replayed) = try await withCassette("fields", in: folder.path, { $0.recordMode = .never }) { _ in
                try await VCR.dataKeepingFields(for: request, sending: sender.send)
            }
            #expect(sender.count == 1, "replaying never calls the client")
            #expect(replayed == taped)
            #expect(Self.values("X-Multi", in: replayed) == ["one", "two"])
            #expect(Self.values("Set-Cookie", in: replayed).count == 2)
            #expect(replayed.statusCode == 200 && !replayed.url.contains("s3cr3t-one"), "the URL echoes no secret either")
            #expect(replayedBody.json?["X-Multi"] as? [String] == ["one", "two"])
            #expect(liveBody.text.contains("s3cr3t-one") && !replayedBody.text.contains("s3cr3t-one"))
            #expect(try HTTPBin.requests(since: before, to: ["/response-headers"]).isEmpty)
        }

        @Test func withoutACassetteItReturnsExactlyWhatTheClientReturned() async throws {
            let body = Data("as the client had it".utf8)
            try await VCRCassetteLock.shared.withLock {
                #expect(VCR.cassette == nil)
                let request = URLRequest(url: try #require(URL(string: Self.oddResponse.url)))
                let (data, response) = try await VCR.dataKeepingFields(for: request) { _ in (body, Self.oddResponse) }
                #expect(data == body)
                #expect(response == Self.oddResponse, "same fields, same order, same case, same version")

                let (streamed, chunks) = try await VCR.bytesKeepingFields(for: request) { _ in
                    (Self.oddResponse, Self.stream(["as the ", "client ", "had it"]))
                }
                #expect(streamed == Self.oddResponse)
                #expect(try await Self.collect(chunks) == ["as the ", "client ", "had it"].map { Data($0.utf8) })
            }
        }

        @Test func aHostTheCassetteLeavesOutGetsExactlyWhatTheClientReturned() async throws {
            let folder = try TemporaryFolder()
            let request = URLRequest(url: try #require(URL(string: Self.oddResponse.url)))
            let configure = { (configuration: inout VCRConfiguration) in configuration.hostFilter = ["127.0.0.1"] }
            let (_, response) = try await withCassette("fields-other-host", in: folder.path, configure) { _ in
                try await VCR.dataKeepingFields(for: request) { _ in (Data(), Self.oddResponse) }
            }
            #expect(response == Self.oddResponse)
            let file = folder.url.appendingPathComponent("fields-other-host.json")
            #expect(!FileManager.default.fileExists(atPath: file.path), "nothing recorded")
        }

        @Test func streamsEveryFieldAndChunkThenReplaysThem() async throws {
            let folder = try TemporaryFolder()
            let request = URLRequest(url: try #require(URL(string: Self.repeatedResponse.url)))
            let parts = ["first ", "second ", "third"]
            let recorded = try await withCassette("fields-stream", in: folder.path) { _ in
                let (response, chunks) = try await VCR.bytesKeepingFields(for: request) { _ in
                    (Self.repeatedResponse, Self.stream(parts))
                }
                #expect(response == Self.repeatedResponse)
                return try await Self.collect(chunks)
            }
            #expect(recorded == parts.map { Data($0.utf8) })
            let file = folder.url.appendingPathComponent("fields-stream.json")
            let tape = try CassetteFile.read(at: file).tape
            #expect(tape.interactions.first?.chunks == recorded, "every chunk on the tape, as it came")
            let taped = try #require(tape.interactions.first?.response)
            #expect(Self.values("X-Multi", in: taped) == ["one", "two", "three"])
            #expect(Self.values("Set-Cookie", in: taped) == ["a=[FILTERED]; Path=/", "b=[FILTERED]"])

            let replayed = try await withCassette("fields-stream", in: folder.path, { $0.recordMode = .never }) { _ in
                let (response, chunks) = try await VCR.bytesKeepingFields(for: request) { _ in
                    Issue.record("the client was called")
                    throw URLError(.badServerResponse)
                }
                #expect(response == taped)
                #expect(response.httpVersion == "HTTP/2" && response.statusCode == 207)
                return try await Self.collect(chunks)
            }
            #expect(replayed == recorded)
        }

        /// URLSession joins repeated fields before HTTPVCR sees them: its cassette holds one, and replays one
        /// through this form too.
        @Test func aCassetteURLSessionRecordedReplaysAsItWasRecorded() async throws {
            let folder = try TemporaryFolder()
            let url = try HTTPBin.url("/response-headers?X-Multi=one&X-Multi=two")
            let (recordedBody, _) = try await withCassette("fields-urlsession", in: folder.path) { _ in
                try await vcrSession().data(from: url)
            }
            let file = folder.url.appendingPathComponent("fields-urlsession.json")
            let taped = try #require(try Self.responseOnTape(file))
            #expect(Self.values("X-Multi", in: taped) == ["one, two"])
            let (body, replayed) = try await withCassette("fields-urlsession", in: folder.path, { $0.recordMode = .never }) { _ in
                try await VCR.dataKeepingFields(for: URLRequest(url: url)) { _ in
                    Issue.record("the client was called")
                    throw URLError(.badServerResponse)
                }
            }
            #expect(body == recordedBody)
            #expect(replayed == taped)
            #expect(Self.values("X-Multi", in: replayed) == ["one, two"])
        }

        /// `beforeRecordResponse` sees Foundation's response; handing the same one back keeps every field.
        @Test func beforeRecordResponseKeepsTheFieldsWhenItReturnsWhatItWasGiven() async throws {
            let folder = try TemporaryFolder()
            let request = URLRequest(url: try #require(URL(string: Self.repeatedResponse.url)))
            let seen = Locked<String?>(nil)
            _ = try await withCassette("fields-before-record", in: folder.path, { configuration in
                configuration.beforeRecordResponse = { _, response, body in
                    seen.withLock { $0 = response.value(forHTTPHeaderField: "X-Multi") }
                    return (response, body)
                }
            }) { _ in
                try await VCR.dataKeepingFields(for: request) { _ in (Data("x".utf8), Self.repeatedResponse) }
            }
            #expect(seen.withLock { $0 } == "one, two, three", "Foundation's view: one value per name")
            let taped = try #require(try Self.responseOnTape(folder.url.appendingPathComponent("fields-before-record.json")))
            #expect(Self.values("X-Multi", in: taped) == ["one", "two", "three"])
            #expect(Self.values("Set-Cookie", in: taped) == ["a=[FILTERED]; Path=/", "b=[FILTERED]"])
        }

        /// The forms have names of their own: a closure of several statements, or one that only throws, needs no
        /// type annotation to pick one, and the HTTPURLResponse forms' call sites stay as they were. (This test's
        /// point is that it compiles; it runs the closures with no cassette inserted.)
        @Test func callSitesNeedNoAnnotations() async throws {
            struct Broke: Error {}
            try await VCRCassetteLock.shared.withLock {
                let request = URLRequest(url: try #require(URL(string: Self.oddResponse.url)))
                let (_, fields) = try await VCR.dataKeepingFields(for: request) { request in
                    let url = request.url?.absoluteString ?? ""
                    return (Data(), RecordedResponse(url: url, statusCode: 204))
                }
                #expect(fields.statusCode == 204)
                let (_, foundation) = try await VCR.data(for: request) { request in
                    let url = try #require(request.url)
                    return (Data(), HTTPURLResponse(url: url, statusCode: 204, httpVersion: nil, headerFields: nil)!)
                }
                #expect(foundation.statusCode == 204)
                let (streamed, _) = try await VCR.bytesKeepingFields(for: request) { request in
                    let url = request.url?.absoluteString ?? ""
                    return (RecordedResponse(url: url, statusCode: 204), Self.stream([]))
                }
                #expect(streamed.statusCode == 204)
                await #expect(throws: Broke.self) { try await VCR.dataKeepingFields(for: request) { _ in throw Broke() } }
                await #expect(throws: Broke.self) { try await VCR.data(for: request) { _ in throw Broke() } }
                await #expect(throws: Broke.self) { try await VCR.bytesKeepingFields(for: request) { _ in throw Broke() } }
                await #expect(throws: Broke.self) { try await VCR.bytes(for: request) { _ in throw Broke() } }
            }
        }

        static func stream(_ parts: [String]) -> AsyncThrowingStream<Data, any Error> {
            AsyncThrowingStream { continuation in
                for part in parts { continuation.yield(Data(part.utf8)) }
                continuation.finish()
            }
        }

        static func collect(_ chunks: AsyncThrowingStream<Data, any Error>) async throws -> [Data] {
            var collected: [Data] = []
            for try await chunk in chunks { collected.append(chunk) }
            return collected
        }
    }
}
