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
                RecordedResponse(url: url.absoluteString, statusCode: 200, headers: [HTTPHeader("Content-Type", "text/plain")])
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

        func completionOrder() async throws -> [String] {
            try await withThrowingTaskGroup(of: String.self) { group in
                group.addTask { String(decoding: try await session.data(from: slow).0, as: UTF8.self) }
                group.addTask { String(decoding: try await session.data(from: fast).0, as: UTF8.self) }
                var order: [String] = []
                for try await body in group { order.append(body) }
                return order
            }
        }

        @Test func chronologicalPlaybackKeepsTheRecordedCompletionOrder() async throws {
            let folder = try TemporaryFolder()
            try writeInterleavedTape(in: folder)
            for _ in 0..<5 {
                let order = try await withCassette("interleaved", in: folder.path) { cassette in
                    let order = try await completionOrder()
                    #expect(cassette.allPlayed)
                    return order
                }
                #expect(order == ["fast", "slow"])
            }
        }

        /// Chapters one after the other on the tape, requested together in either order: the first on the tape is
        /// handed over whole, the second waits for it in the delivery queue, and they finish in tape order.
        @Test func chronologicalPlaybackFinishesBackToBackChaptersInTapeOrder() async throws {
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
            for fastFirst in [false, true, false, true, false, true] {
                let order = try await withCassette("back-to-back", in: folder.path) { cassette in
                    let order = try await withThrowingTaskGroup(of: String.self) { group in
                        for url in fastFirst ? [fast, slow] : [slow, fast] {
                            group.addTask { String(decoding: try await session.data(from: url).0, as: UTF8.self) }
                        }
                        var order: [String] = []
                        for try await body in group { order.append(body) }
                        return order
                    }
                    #expect(cassette.allPlayed)
                    return order
                }
                #expect(order == ["slow", "fast"], "requested \(fastFirst ? "fast" : "slow") first")
            }
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
            let fixture = packageRoot.appendingPathComponent("../shared/fixtures/vcrpy/httpbin-basics.json").standardizedFileURL
            let (data, response) = try await withCassette(fixture.path, in: "/") { cassette in
                #expect(cassette.format == .vcrpy && cassette.isWriteProtected)
                return try await session.data(from: URL(string: "http://127.0.0.1:18765/redirect/2")!)
            }
            #expect(response.url?.path == "/get")
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            #expect(data.json?["url"] as? String == "http://127.0.0.1:18765/get")
        }

        @Test func foreignCassettesCannotBeRecordedInto() async throws {
            let fixture = packageRoot.appendingPathComponent("../shared/fixtures/vcrpy/httpbin-basics.json").standardizedFileURL
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

    /// YAHTTPVCR's own cassettes, replayed: each does what its file name says.
    @Suite struct YAHTTPVCRReplayTests {
        let session = vcrSession(timeout: 5)
        static let folder = packageRoot.appendingPathComponent("../shared/fixtures/yahttpvcr").standardizedFileURL
        static let query = "?queryField3=queryValue3&queryField1=secret-query-value"

        func replay(_ name: String, _ configure: @escaping (inout VCRConfiguration) -> Void = { _ in }, _ body: () async throws -> Void) async throws {
            try await withCassette(Self.folder.appendingPathComponent(name + ".json").path, in: "/", configure) { cassette in
                #expect(cassette.format == .yahttpvcr)
                try await body()
            }
        }

        @Test(arguments: ["NSURLSession", "NSURLConnectionAsynchronous", "NSURLConnectionSynchronous"])
        func stubbedResponses(prefix: String) async throws {
            try await replay(prefix + "PlaybackGETShouldReturnStubbedResponse") {
                let (data, response) = try await session.data(from: URL(string: "https://httpbin.org/get" + Self.query)!)
                #expect((response as? HTTPURLResponse)?.statusCode == 200)
                #expect(data.json?["queryField1"] as? String == "secret-query-value")
            }
            try await replay(prefix + "PlaybackPOSTShouldReturnStubbedResponse") {
                var request = URLRequest(url: URL(string: "https://httpbin.org/post")!)
                request.httpMethod = "POST"
                request.httpBody = Data(#"{"postBodyField2":"postBodyValue2","postBodyField1":"secret-post-body-value"}"#.utf8)
                let (data, _) = try await session.data(for: request)
                #expect(data.json?["postBodyField1"] as? String == "secret-post-body-value")
            }
            try await replay(prefix + "PlaybackGETShouldReturnStubbedResponseWhenRecordedRedirects") {
                let (data, response) = try await session.data(from: URL(string: "https://httpbin.org/absolute-redirect/3" + Self.query)!)
                #expect((response as? HTTPURLResponse)?.statusCode == 200)
                #expect(data == Data("{}".utf8))
            }
            try await replay(prefix + "PlaybackGETShouldReturnStubbedErrorWhenRemoteDoesntRespondInTime") {
                let error = await #expect(throws: URLError.self) {
                    try await session.data(from: URL(string: "https://httpbin.org/delay/6" + Self.query)!)
                }
                #expect(error?.code == .timedOut)
            }
        }

        @Test func emptyDataAndCancellation() async throws {
            try await replay("NSURLSessionPlaybackGETShouldReturnStubbedResponseWhenStubRecordedWithEmptyData") {
                let (data, response) = try await session.data(from: URL(string: "https://httpbin.org/get" + Self.query)!)
                #expect((response as? HTTPURLResponse)?.statusCode == 200 && data.isEmpty)
            }
            try await replay("NSURLSessionPlaybackGETShouldReturnStubbedErrorWhenRequestCancelled") {
                let error = await #expect(throws: URLError.self) {
                    try await session.data(from: URL(string: "https://httpbin.org/delay/6" + Self.query)!)
                }
                #expect(error?.code == .cancelled)
            }
        }

        @Test(arguments: [("Chronologically", PlaybackMode.chronological), ("Momentary", PlaybackMode.momentary)])
        func fewRequests(name: String, mode: PlaybackMode) async throws {
            try await replay("NSURLSessionPlaybackGETShouldReturnStubbedResponses\(name)WhenFewRequestStubbed", { $0.playbackMode = mode }) {
                let order = try await withThrowingTaskGroup(of: String.self) { group in
                    group.addTask { _ = try await session.data(from: URL(string: "https://httpbin.org/delay/2" + Self.query)!); return "delay" }
                    group.addTask { _ = try await session.data(from: URL(string: "https://httpbin.org/get" + Self.query)!); return "get" }
                    var order: [String] = []
                    for try await name in group { order.append(name) }
                    return order
                }
                #expect(Set(order) == ["delay", "get"])
                if mode == .chronological { #expect(order == ["get", "delay"]) }
            }
        }

        @Test func ignoredRequestsAreNotReplayed() async throws {
            let url = URL(string: "https://httpbin.org/get" + Self.query)!
            try await replay("NSURLSessionPlaybackGETShouldIgnoreAdditionalRequestWhenHostFilterConfigured", { $0.hostFilter = ["example.com"] }) {
                #expect(VCRURLProtocol.canInit(with: URLRequest(url: url)) == false)
            }
            try await replay("NSURLSessionPlaybackGETShouldIgnoreAdditionalRequestWhenIgnoredInBeforeRecordRequest", {
                $0.beforeRecordRequest = { $0.url?.path == "/get" ? nil : $0 }
            }) {
                #expect(VCRURLProtocol.canInit(with: URLRequest(url: url)) == false)
                #expect(VCRURLProtocol.canInit(with: URLRequest(url: URL(string: "https://httpbin.org/post")!)))
            }
        }
    }
}
