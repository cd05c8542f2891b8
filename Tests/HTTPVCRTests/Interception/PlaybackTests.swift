import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import HTTPVCR
import HTTPBinTestSupport

extension VCRTests {
    /// Chronological and momentary playback on tapes written by hand: no server involved.
    @Suite struct PlaybackTests {
        let session = vcrSession()
        let slow = URL(string: "http://replay.test/slow")!
        let fast = URL(string: "http://replay.test/fast")!

        /// /slow starts first and finishes last; /fast runs inside it.
        func writeInterleavedTape(in folder: borrowing TemporaryFolder) throws {
            func response(_ url: URL) -> RecordedResponse {
                RecordedResponse(url: url.absoluteString, statusCode: 200, headers: [RecordedHeader("Content-Type", "text/plain")])
            }
            let tape = Tape(scenes: [
                Scene(chapter: 1, time: 0, event: .request(RecordedRequest(method: "GET", url: slow.absoluteString))),
                Scene(chapter: 2, time: 0, event: .request(RecordedRequest(method: "GET", url: fast.absoluteString))),
                Scene(chapter: 2, time: 0.01, event: .response(response(fast))),
                Scene(chapter: 2, time: 0.01, event: .data(Data("fast".utf8))),
                Scene(chapter: 2, time: 0.01, event: .completion),
                Scene(chapter: 1, time: 1, event: .response(response(slow))),
                Scene(chapter: 1, time: 1, event: .data(Data("sl".utf8))),
                Scene(chapter: 1, time: 1, event: .data(Data("ow".utf8))),
                Scene(chapter: 1, time: 1, event: .completion),
            ])
            try CassetteFile.write(tape, to: folder.url.appendingPathComponent("interleaved.json"), as: .json)
        }

        @Test(arguments: CompletionObserver.allCases)
        func chronologicalPlaybackKeepsTheRecordedCompletionOrder(observer: CompletionObserver) async throws {
            let folder = try TemporaryFolder()
            try writeInterleavedTape(in: folder)
            for _ in 0..<20 {
                let order = try await withCassette("interleaved", in: folder.path) { cassette in
                    let order = await completionOrder([slow, fast], observedBy: observer)
                    #expect(cassette.allPlayed)
                    return order
                }
                #expect(order == ["fast", "slow"])
            }
        }

        /// Chapters one after the other on the tape, requested together in either order: the first on the tape is
        /// handed over whole, the second waits for it in the delivery queue, and they finish in tape order.
        @Test(arguments: CompletionObserver.allCases)
        func chronologicalPlaybackFinishesBackToBackChaptersInTapeOrder(observer: CompletionObserver) async throws {
            let folder = try TemporaryFolder()
            var scenes: [Scene] = []
            for (chapter, url) in [(1, slow), (2, fast)] {
                scenes += [
                    Scene(chapter: chapter, event: .request(RecordedRequest(method: "GET", url: url.absoluteString))),
                    Scene(chapter: chapter, event: .response(RecordedResponse(url: url.absoluteString, statusCode: 200))),
                    Scene(chapter: chapter, event: .data(Data(url.lastPathComponent.utf8))),
                    Scene(chapter: chapter, event: .completion),
                ]
            }
            try CassetteFile.write(Tape(scenes: scenes), to: folder.url.appendingPathComponent("back-to-back.json"), as: .json)
            for fastFirst in Array(repeating: [false, true], count: 10).joined() {
                let order = try await withCassette("back-to-back", in: folder.path) { cassette in
                    let order = await completionOrder(fastFirst ? [fast, slow] : [slow, fast], observedBy: observer)
                    #expect(cassette.allPlayed)
                    return order
                }
                #expect(order == ["slow", "fast"], "requested \(fastFirst ? "fast" : "slow") first")
            }
        }

        /// Async callers get every body whole, whatever order their tasks resume in.
        @Test func concurrentAsyncCallersGetTheirOwnBodies() async throws {
            let folder = try TemporaryFolder()
            try writeInterleavedTape(in: folder)
            let bodies = try await withCassette("interleaved", in: folder.path) { _ in
                try await withThrowingTaskGroup(of: (URL, String).self) { group in
                    for url in [slow, fast] {
                        group.addTask { (url, String(decoding: try await session.data(from: url).0, as: UTF8.self)) }
                    }
                    var bodies: [URL: String] = [:]
                    for try await (url, body) in group { bodies[url] = body }
                    return bodies
                }
            }
            #expect(bodies == [slow: "slow", fast: "fast"])
        }

        @Test func chronologicalPlaybackDoesNotWaitForeverForARequestNobodyMakes() async throws {
            let folder = try TemporaryFolder()
            try writeInterleavedTape(in: folder)
            let started = Date()
            let body = try await withCassette("interleaved", in: folder.path, { $0.chronologicalWait = 0.2 }) { cassette in
                let body = try await session.data(from: slow).0
                #expect(!cassette.allPlayed && cassette.playCount == 1)
                #expect(cassette.unplayedRequests.map(\.url) == [fast])
                return body
            }
            #expect(body == Data("slow".utf8))
            #expect(Date().timeIntervalSince(started) >= 0.2, "it waited for /fast, which comes first on the tape")
        }

        @Test func momentaryPlaybackDeliversAtOnce() async throws {
            let folder = try TemporaryFolder()
            try writeInterleavedTape(in: folder)
            let started = Date()
            let body = try await withCassette("interleaved", in: folder.path, {
                $0.playbackMode = .momentary
                $0.chronologicalWait = 5
            }) { _ in try await session.data(from: slow).0 }
            #expect(body == Data("slow".utf8))
            #expect(Date().timeIntervalSince(started) < 2)
        }

        @Test func recordedErrorsComeBackWithTheirDomainAndCode() async throws {
            let folder = try TemporaryFolder()
            let url = URL(string: "http://replay.test/offline")!
            let tape = Tape(interactions: [Interaction(
                chapter: 1, request: RecordedRequest(method: "GET", url: url.absoluteString), response: nil,
                error: RecordedError(domain: NSURLErrorDomain, code: NSURLErrorNotConnectedToInternet,
                                     userInfo: [NSURLErrorFailingURLErrorKey: url.absoluteString])
            )])
            try CassetteFile.write(tape, to: folder.url.appendingPathComponent("error.json"), as: .json)
            try await withCassette("error", in: folder.path) { _ in
                let error = await #expect(throws: URLError.self) { try await session.data(from: url) }
                #expect(error?.code == .notConnectedToInternet)
            }
        }

        @Test func redirectHopsStoredAsSeparateRequestsAreFollowed() async throws {
            // VCR.py stores each hop of /redirect/2 as its own interaction.
            let fixture = ForeignFormatTests.vcrpyFixture
            let base = ForeignFormatTests.vcrpyBase
            let replayOnly: (inout VCRConfiguration) -> Void = { $0.recordMode = .never }
            let (data, response) = try await withCassette(fixture.path, in: "/", replayOnly) { cassette in
                #expect(cassette.format == .vcrpy && cassette.isWriteProtected)
                return try await session.data(from: URL(string: "\(base)/redirect/2")!)
            }
            #expect(response.url?.path == "/get")
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            #expect(data.json?["url"] as? String == "\(base)/get")
        }

        @Test func foreignCassettesCannotBeRecordedInto() async throws {
            let fixture = ForeignFormatTests.vcrpyFixture
            try #require(FileManager.default.fileExists(atPath: fixture.path), "missing fixture \(fixture.path)")
            await VCRCassetteLock.shared.lock()
            defer { VCRCassetteLock.shared.unlock() }
            do {
                try VCR.insertCassette { $0 = VCRConfiguration(); $0.cassettePath = fixture.path; $0.recordMode = .new }
                Issue.record("a VCR.py cassette was inserted for recording")
                try VCR.ejectCassette()
            } catch {
                #expect(error.code == .foreignCassetteIsReadOnly)
                #expect(error.message.contains("vcr convert \(fixture.path)"))
            }
        }
    }

    /// YAHTTPVCR cassettes (`Tests/Fixtures/yahttpvcr`), replayed: each does what its file name says.
    @Suite struct YAHTTPVCRReplayTests {
        let session = vcrSession(timeout: 5)

        func replay(
            _ name: String,
            _ configure: @escaping (inout VCRConfiguration) -> Void = { _ in },
            _ body: () async throws -> Void
        ) async throws {
            let path = ForeignFormatTests.yahttpvcrFixture(name + ".json").path
            // .never: a missing fixture fails with its path instead of recording from the network.
            try await withCassette(path, in: "/", { $0.recordMode = .never; configure(&$0) }) { cassette in
                #expect(cassette.format == .yahttpvcr)
                try await body()
            }
        }

        @Test func stubbedResponses() async throws {
            try await replay("get-json-response") {
                let url = URL(string: "https://httpbin.org/get?lang=swift&page=2")!
                let (data, response) = try await session.data(from: url)
                #expect((response as? HTTPURLResponse)?.statusCode == 200)
                #expect((data.json?["args"] as? [String: Any])?["lang"] as? String == "swift")
            }
            try await replay("post-json-body") {
                var request = URLRequest(url: URL(string: "https://httpbin.org/post")!)
                request.httpMethod = "POST"
                request.httpBody = Data(#"{"title":"Mixtape","tracks":12}"#.utf8)
                let (data, _) = try await session.data(for: request)
                #expect((data.json?["json"] as? [String: Any])?["title"] as? String == "Mixtape")
            }
            try await replay("get-followed-redirects") {
                let (data, response) = try await session.data(from: URL(string: "https://httpbin.org/redirect/3")!)
                #expect((response as? HTTPURLResponse)?.statusCode == 200)
                #expect(data.json?["url"] as? String == "https://httpbin.org/get")
            }
            try await replay("get-timed-out") {
                let error = await #expect(throws: URLError.self) {
                    try await session.data(from: URL(string: "https://httpbin.org/delay/10")!)
                }
                #expect(error?.code == .timedOut)
            }
        }

        @Test func emptyDataAndCancellation() async throws {
            try await replay("get-empty-body") {
                let (data, response) = try await session.data(from: URL(string: "https://httpbin.org/bytes/0")!)
                #expect((response as? HTTPURLResponse)?.statusCode == 200 && data.isEmpty)
            }
            try await replay("get-cancelled") {
                let error = await #expect(throws: URLError.self) {
                    try await session.data(from: URL(string: "https://httpbin.org/delay/10")!)
                }
                #expect(error?.code == .cancelled)
            }
        }

        @Test(arguments: [PlaybackMode.chronological, PlaybackMode.momentary])
        func interleavedRequests(mode: PlaybackMode) async throws {
            try await replay("interleaved-slow-and-fast", { $0.playbackMode = mode }) {
                let urls = ["/delay/2", "/get"].map { URL(string: "https://httpbin.org" + $0)! }
                let order = await completionOrder(urls, observedBy: .completionHandlers).map { body in
                    body.contains("\"url\": \"https://httpbin.org/get\"") ? "get" : "delay"
                }
                #expect(Set(order) == ["delay", "get"])
                if mode == .chronological { #expect(order == ["get", "delay"]) }
            }
        }

        /// Left to the network: the loader's (canInit says no), or, while the network guard routes sessions to its
        /// proxy, HTTPVCR's forwarder's, with no cassette (canInit claims it only for that).
        @Test func ignoredRequestsAreNotReplayed() async throws {
            let url = URL(string: "https://httpbin.org/get?lang=swift&page=2")!
            try await replay("get-json-response", { $0.hostFilter = ["example.com"] }) {
                #expect(VCRURLProtocol.canInit(with: URLRequest(url: url)) == NetworkGuard.isRouting)
            }
            try await replay("get-json-response", {
                $0.beforeRecordRequest = { $0.url?.path == "/get" ? nil : $0 }
            }) {
                #expect(NetworkGuard.isRouting, "a cassette is in force")
                #expect(VCRURLProtocol.canInit(with: URLRequest(url: url)) == NetworkGuard.isRouting)
                #expect(VCRURLProtocol.canInit(with: URLRequest(url: URL(string: "https://httpbin.org/post")!)))
            }
        }
    }
}
