import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import HTTPVCR
import HTTPBinTestSupport

extension VCRTests {
    /// `VCR.data(for:sending:)` and `VCR.bytes(for:sending:)`: the door for clients that are not URLSession, driven
    /// here by a closure over a session HTTPVCR does not intercept.
    @Suite struct AnyClientTests {
        /// A session of its own, without HTTPVCR: the "other client".
        static let client = URLSession(configuration: .ephemeral)

        /// Sends through the other client and counts how often it was asked.
        final class Sender: @unchecked Sendable {
            let calls = Locked(0)
            var count: Int { calls.withLock { $0 } }

            func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
                calls.withLock { $0 += 1 }
                let (data, response) = try await AnyClientTests.client.data(for: request)
                return (data, response as! HTTPURLResponse)
            }
        }

        @Test func recordsThenReplaysOfflineWithoutCallingTheClient() async throws {
            let folder = try TemporaryFolder()
            var request = URLRequest(url: try HTTPBin.url("/anything/any-client?n=1"))
            request.httpMethod = "POST"
            request.httpBody = Data(#"{"door": true}"#.utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            let sender = Sender()
            let recorded = try await withCassette("door", in: folder.path) { _ in
                try await VCR.data(for: request, sending: sender.send)
            }
            #expect(sender.count == 1)
            #expect(recorded.1.statusCode == 200)
            #expect(recorded.0.json?["json"] as? [String: Bool] == ["door": true])
            let tape = try CassetteFile.read(at: folder.url.appendingPathComponent("door.json")).tape
            #expect(tape.interactions.map(\.request.method) == ["POST"])
            #expect(tape.interactions.first?.request.body == request.httpBody)

            let before = try HTTPBin.settledRequestCount()
            let replayed = try await withCassette("door", in: folder.path, { $0.recordMode = .never }) { cassette in
                let replayed = try await VCR.data(for: request, sending: sender.send)
                #expect(cassette.allPlayed)
                return replayed
            }
            #expect(sender.count == 1, "replaying never calls the client")
            #expect(replayed.0 == recorded.0)
            #expect(replayed.1.statusCode == 200)
            #expect(replayed.1.value(forHTTPHeaderField: "Content-Type") == "application/json")
            #expect(try HTTPBin.requests(since: before, to: ["/anything/any-client"]).isEmpty)
        }

        @Test func anUnmatchedRequestOnAProtectedCassetteFailsWithoutCallingTheClient() async throws {
            let folder = try TemporaryFolder()
            let sender = Sender()
            _ = try await withCassette("door-protected", in: folder.path) { _ in
                try await VCR.data(for: URLRequest(url: try HTTPBin.url("/get?door=recorded")), sending: sender.send)
            }
            try await withCassette("door-protected", in: folder.path, { $0.recordMode = .never }) { _ in
                let error = await #expect(throws: VCRError.self) {
                    try await VCR.data(for: URLRequest(url: try HTTPBin.url("/get?door=other")), sending: sender.send)
                }
                #expect(error?.code == .noMatch)
                #expect(VCR.takeFailures().map(\.code) == [.noMatch], "reported like URLSession's")
            }
            #expect(sender.count == 1)
        }

        @Test func errorsAreRecordedAndReplayedAsErrors() async throws {
            struct ClientBroke: Error {}
            let folder = try TemporaryFolder()
            let request = URLRequest(url: try HTTPBin.url("/get?door=error"))
            _ = try await withCassette("door-error", in: folder.path) { _ in
                await #expect(throws: ClientBroke.self) {
                    try await VCR.data(for: request) { _ in throw ClientBroke() }
                }
            }
            try await withCassette("door-error", in: folder.path, { $0.recordMode = .never }) { _ in
                let error = await #expect(throws: (any Error).self) {
                    try await VCR.data(for: request) { _ in Issue.record("the client was called"); throw ClientBroke() }
                }
                #expect((error as? NSError)?.domain.contains("ClientBroke") == true, "\(String(describing: error))")
            }
            // A URL error keeps its code.
            let timeout = URLRequest(url: try HTTPBin.url("/get?door=timeout"))
            try await withCassette("door-timeout", in: folder.path) { _ in
                _ = try? await VCR.data(for: timeout) { _ in throw URLError(.timedOut) }
            }
            try await withCassette("door-timeout", in: folder.path, { $0.recordMode = .never }) { _ in
                let error = await #expect(throws: URLError.self) {
                    try await VCR.data(for: timeout) { _ in throw URLError(.badServerResponse) }
                }
                #expect(error?.code == .timedOut)
            }
        }

        /// A client that itself sends through an intercepted URLSession (an OpenAPI URLSession transport) is not
        /// intercepted a second time: the request is on the tape once.
        @Test func aClientThatUsesURLSessionIsTapedOnce() async throws {
            let folder = try TemporaryFolder()
            let session = vcrSession()
            let request = URLRequest(url: try HTTPBin.url("/get?door=urlsession"))
            _ = try await withCassette("door-urlsession", in: folder.path) { _ in
                try await VCR.data(for: request) { request in
                    let (data, response) = try await session.data(for: request)
                    return (data, response as! HTTPURLResponse)
                }
            }
            let tape = try CassetteFile.read(at: folder.url.appendingPathComponent("door-urlsession.json")).tape
            #expect(tape.interactions.count == 1)
        }

        @Test func withoutACassetteItJustSends() async throws {
            #expect(VCR.cassette == nil || CassetteLockScope.isHeld == false)
            let sender = Sender()
            try await VCRCassetteLock.shared.withLock {
                #expect(VCR.cassette == nil)
                let (data, _) = try await VCR.data(for: URLRequest(url: try HTTPBin.url("/get?door=bare")), sending: sender.send)
                #expect(data.json?["args"] as? [String: String] == ["door": "bare"])
            }
            #expect(sender.count == 1)
        }

        @Test func streamsChunksAsTheyComeThenReplaysThem() async throws {
            let folder = try TemporaryFolder()
            let request = URLRequest(url: try HTTPBin.url("/stream/5"))
            let send: @Sendable (URLRequest) async throws -> (HTTPURLResponse, AsyncThrowingStream<Data, any Error>) = {
                try await StreamingClient().send($0)
            }
            let recorded = try await withCassette("door-stream", in: folder.path) { _ in
                let (response, chunks) = try await VCR.bytes(for: request, sending: send)
                #expect(response.statusCode == 200)
                var lines: [Data] = []
                for try await chunk in chunks { lines.append(chunk) }
                return lines
            }
            #expect(recorded.count > 1, "httpbin sends /stream/5 in several chunks")
            #expect(String(decoding: recorded.reduce(Data(), +), as: UTF8.self).split(separator: "\n").count == 5)
            let tape = try CassetteFile.read(at: folder.url.appendingPathComponent("door-stream.json")).tape
            #expect(tape.interactions.first?.chunks == recorded, "every chunk on the tape, as it came")
            let replayed = try await withCassette("door-stream", in: folder.path, { $0.recordMode = .never }) { _ in
                let (_, chunks) = try await VCR.bytes(for: request) { _ in
                    Issue.record("the client was called")
                    throw URLError(.badServerResponse)
                }
                var lines: [Data] = []
                for try await chunk in chunks { lines.append(chunk) }
                return lines
            }
            #expect(replayed == recorded)
        }
    }
}

/// A streaming client for the tests: a delegate session that hands the response over first, then each chunk as
/// URLSession delivers it (Linux's URLSession has no `bytes(for:)`).
final class StreamingClient: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let state = Locked<(
        response: CheckedContinuation<(HTTPURLResponse, AsyncThrowingStream<Data, any Error>), any Error>?,
        chunks: AsyncThrowingStream<Data, any Error>.Continuation?
    )>((nil, nil))

    func send(_ request: URLRequest) async throws -> (HTTPURLResponse, AsyncThrowingStream<Data, any Error>) {
        let session = URLSession(configuration: .ephemeral, delegate: self, delegateQueue: nil)
        return try await withCheckedThrowingContinuation { continuation in
            state.withLock { $0.response = continuation }
            session.dataTask(with: request).resume()
        }
    }

    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        let (stream, chunks) = AsyncThrowingStream<Data, any Error>.makeStream()
        let waiting = state.withLock { state in
            state.chunks = chunks
            defer { state.response = nil }
            return state.response
        }
        waiting?.resume(returning: (response as! HTTPURLResponse, stream))
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        _ = state.withLock { $0.chunks }?.yield(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let (waiting, chunks) = state.withLock { state in
            defer { state.response = nil }
            return (state.response, state.chunks)
        }
        if let error {
            waiting?.resume(throwing: error)
            chunks?.finish(throwing: error)
        } else {
            chunks?.finish()
        }
        session.finishTasksAndInvalidate()
    }
}
