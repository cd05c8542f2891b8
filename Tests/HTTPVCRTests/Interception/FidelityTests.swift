import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import HTTPVCR
import HTTPBinTestSupport
import TestSupport

extension VCRTests {
    /// Under a cassette the app sees what the server gave it.
    @Suite struct FidelityTests {
        let session = vcrSession()

        enum SessionKind: String, CaseIterable, CustomTestStringConvertible {
            case installed, delegate, shared
            var testDescription: String { rawValue }
        }

        /// What `GET /cookies` returns after `GET /cookies/set?flavour=…` (which redirects to `/cookies`), then
        /// after a plain response sets another cookie.
        func cookieFlow(_ kind: SessionKind) async throws -> (afterSet: [String: String], after: [String: String]) {
            let configuration = URLSessionConfiguration.ephemeral
            VCR.install(in: configuration)
            let session = switch kind {
            case .installed: URLSession(configuration: configuration)
            case .delegate: URLSession(configuration: configuration, delegate: FinishLog(Locked([])), delegateQueue: nil)
            case .shared: URLSession.shared
            }
            defer { if kind != .shared { session.finishTasksAndInvalidate() } }
            // The shared storage outlives the test: start and leave it without these cookies.
            func forgetCookies() {
                guard kind == .shared, let url = try? HTTPBin.baseURL() else { return }
                for cookie in HTTPCookieStorage.shared.cookies(for: url) ?? [] where ["flavour", "size"].contains(cookie.name) {
                    HTTPCookieStorage.shared.deleteCookie(cookie)
                }
            }
            forgetCookies()
            defer { forgetCookies() }
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
            try await holdingCassettes {
                // What the same session gets from the server with no cassette in: corelibs sends a cookie a hop set
                // on to the next hop only where no delegate takes the redirect (a delegate's answer goes as it is).
                let live = try await cookieFlow(kind)
                #expect(live.afterSet == (kind == .delegate ? [:] : ["flavour": "oat"]))
                #expect(live.after == ["flavour": "oat", "size": "large"])
                let recorded = try await withCassette("cookies", in: folder.path) { _ in try await cookieFlow(kind) }
                #expect(recorded.afterSet == live.afterSet)
                #expect(recorded.after == live.after)
                let replayed = try await withCassette("cookies", in: folder.path, { $0.recordMode = .never }) { cassette in
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
                let hopSent = tape.interactions[0].redirects.first?.request.headers[field: "Cookie"]
                #expect(hopSent == (kind == .delegate ? nil : "flavour=[FILTERED]"))
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

        @Test func timingReplaysARecordedSecondInASecondOrAtOnce() async throws {
            let folder = try TemporaryFolder()
            let url = try HTTPBin.url("/delay/1")
            func elapsed(_ body: () async throws -> Void) async rethrows -> TimeInterval {
                let start = Date()
                try await body()
                return Date().timeIntervalSince(start)
            }
            try await holdingCassettes {
                try await withCassette("slow", in: folder.path) { _ in _ = try await session.data(from: url) }
                func replay(_ timing: ReplayTiming) async throws -> TimeInterval {
                    try await withCassette("slow", in: folder.path, {
                        $0.recordMode = .never
                        $0.replayTiming = timing
                    }) { _ in try await elapsed { _ = try await session.data(from: url) } }
                }
                let recorded = try await replay(.recorded)
                let instant = try await replay(.instant)
                let halved = try await replay(.scaled(0.5))
                // Lower bounds are what timing guarantees; upper bounds only say it did not wait for nothing.
                #expect(recorded >= 0.95, "\(recorded) s")
                #expect(recorded < 3, "\(recorded) s")
                #expect(instant < 0.5, "\(instant) s")
                #expect(halved >= 0.45 && halved < recorded, "\(halved) s")
            }
        }

        /// A data delegate that notes each chunk and when it came, and can cancel its task after some.
        final class ChunkLog: NSObject, URLSessionDataDelegate, @unchecked Sendable {
            let started = Date()
            private let log = Locked<[(data: Data, at: TimeInterval)]>([])
            private let cancelsAfter: Int?
            private let done: CheckedContinuation<Error?, Never>

            init(cancelsAfter: Int? = nil, done: CheckedContinuation<Error?, Never>) {
                self.cancelsAfter = cancelsAfter
                self.done = done
            }

            var chunks: [(data: Data, at: TimeInterval)] { log.withLock { $0 } }

            func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
                let count = log.withLock { log in
                    log.append((data, Date().timeIntervalSince(started)))
                    return log.count
                }
                if let cancelsAfter, count == cancelsAfter { dataTask.cancel() }
            }

            func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
                done.resume(returning: error)
            }
        }

        /// The chunks a data delegate gets for `url`, and how the task ended.
        func chunks(
            of url: URL, through installed: Bool = true, cancellingAfter: Int? = nil
        ) async -> (chunks: [(data: Data, at: TimeInterval)], error: Error?) {
            let configuration = URLSessionConfiguration.ephemeral
            if installed { VCR.install(in: configuration) }
            var log: ChunkLog?
            let error = await withCheckedContinuation { (done: CheckedContinuation<Error?, Never>) in
                let delegate = ChunkLog(cancelsAfter: cancellingAfter, done: done)
                log = delegate
                let session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
                let task = session.dataTask(with: url)
                task.resume()
                session.finishTasksAndInvalidate()
                // A stream that never gets its chunks through must fail the test, not hang it.
                DispatchQueue.global().asyncAfter(deadline: .now() + 20) { task.cancel() }
            }
            return (log?.chunks ?? [], error)
        }

        @Test func aDelegateGetsEveryChunkRecordingAndReplaying() async throws {
            let folder = try TemporaryFolder()
            let url = try HTTPBin.url("/stream/20")
            let live = await chunks(of: url, through: false)
            #expect(live.chunks.count > 1, "httpbin sent /stream/20 in \(live.chunks.count) chunk(s)")
            try await holdingCassettes {
                let recorded = try await withCassette("stream", in: folder.path) { _ in await chunks(of: url) }
                let tape = try CassetteFile.read(at: folder.url.appendingPathComponent("stream.json")).tape
                #expect(recorded.chunks.count == tape.interactions[0].chunks.count)
                #expect(recorded.chunks.count > 1)
                let replayed = try await withCassette("stream", in: folder.path, { $0.recordMode = .never }) { _ in
                    await chunks(of: url)
                }
                #expect(replayed.chunks.map(\.data) == tape.interactions[0].chunks)
                // Completion-handler and async callers still get the whole body.
                let whole = try await withCassette("stream", in: folder.path, { $0.recordMode = .never }) { _ in
                    try await session.data(from: url).0
                }
                #expect(whole == tape.interactions[0].body)
            }
        }

        @Test func aDripReachesTheDelegateAsItComesWhileRecording() async throws {
            let folder = try TemporaryFolder()
            let url = try HTTPBin.url("/drip?duration=1.5&numbytes=4&delay=0")
            try await holdingCassettes {
                let recorded = try await withCassette("drip", in: folder.path) { _ in await chunks(of: url) }
                #expect(recorded.chunks.count == 4)
                let first = try #require(recorded.chunks.first).at
                let last = try #require(recorded.chunks.last).at
                #expect(last >= 1.0, "the drip ended at \(last) s")
                #expect(first < last - 0.5, "the first chunk came at \(first) s, the last at \(last) s")
                let replayed = try await withCassette("drip", in: folder.path, {
                    $0.recordMode = .never
                    $0.replayTiming = .recorded
                }) { _ in await chunks(of: url) }
                #expect(replayed.chunks.count == 4)
                let replayedLast = try #require(replayed.chunks.last).at
                #expect(replayedLast >= 1.0, "with recorded timing the drip ended at \(replayedLast) s")
            }
        }

        @Test func anEndlessStreamIsRecordedUntilTheClientCancelsAndReplaysAsItSaw() async throws {
            let server = try EventStreamServer()
            let folder = try TemporaryFolder()
            try await holdingCassettes {
                let recorded = try await withCassette("events", in: folder.path) { _ in
                    await chunks(of: server.url, cancellingAfter: 3)
                }
                #expect(recorded.chunks.count == 3)
                #expect((recorded.error as? URLError)?.code == .cancelled)
                let tape = try CassetteFile.read(at: folder.url.appendingPathComponent("events.json")).tape
                let recordedEvents = tape.interactions[0].chunks.map { String(decoding: $0, as: UTF8.self) }
                #expect(recordedEvents.prefix(3) == ["data: 1\n\n", "data: 2\n\n", "data: 3\n\n"])
                #expect(tape.interactions[0].error?.code == NSURLErrorCancelled)

                let replayed = try await withCassette("events", in: folder.path, { $0.recordMode = .never }) { _ in
                    await chunks(of: server.url, cancellingAfter: 3)
                }
                #expect(replayed.chunks.map(\.data) == recorded.chunks.map(\.data))
                #expect((replayed.error as? URLError)?.code == .cancelled)
            }
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
                let replayed = try await withCassette("head", in: folder.path, { $0.recordMode = .never }) { _ in
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
