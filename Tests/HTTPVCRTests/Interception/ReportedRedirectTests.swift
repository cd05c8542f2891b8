import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import HTTPVCR
import HTTPBinTestSupport

/// The protocol as Apple platforms get it: Apple's loader around it (hops reported with `wasRedirectedTo` instead
/// of followed inside, every chunk handed on, cookies in the shared storage, client calls on the loader's thread).
final class AppleLoaderProtocol: VCRURLProtocol {
    override class var platform: any LoaderPlatform { ApplePlatform() }
}

/// The loaders ``LoaderDouble`` stands in for.
enum DoubledLoader: CaseIterable, CustomTestStringConvertible {
    /// Apple's, as ``AppleLoaderProtocol`` serves it.
    case apple
    /// swift-corelibs-foundation's, as ``VCRURLProtocol`` serves it here (a protocol with no task behind it).
    case corelibs

    var protocolClass: VCRURLProtocol.Type {
        switch self {
        case .apple: AppleLoaderProtocol.self
        case .corelibs: VCRURLProtocol.self
        }
    }

    var testDescription: String { "\(self)" }
}

/// Stands in for Apple's URL loading system, which corelibs cannot be here (its client traps on
/// `wasRedirectedTo`), or for corelibs' own. It does what Apple documents and what stub libraries rely on: on
/// `wasRedirectedTo` it either follows the hop (stops the protocol, ignores anything that protocol says after, and
/// starts a new one for the next request) or, like a delegate that refuses redirects, ignores the report and ends
/// the task with the 3xx that follows it. Protocols start where the loader starts them (a thread that runs a run
/// loop for Apple's, a serial queue for corelibs'); client calls may arrive from any thread, and those that do not
/// come from there are counted (Apple asks for that thread).
final class LoaderDouble: @unchecked Sendable {
    struct Hop: Equatable {
        let status: Int
        let from: String
        let to: String
        let method: String
    }

    struct Outcome {
        var hops: [Hop] = []
        var response: HTTPURLResponse?
        var body = Data()
        /// The body as the client was handed it, one element per `didLoad`.
        var chunks: [Data] = []
        var error: (any Error)?
        var protocolsStarted = 0
        /// Client calls made from another thread than the one that called `startLoading` (Apple asks for that one).
        var callsOffThread = 0
    }

    let followsRedirects: Bool
    let protocolClass: VCRURLProtocol.Type
    /// Where protocols start, as each loader starts them: a thread that runs a run loop (Apple), a serial work
    /// queue (corelibs).
    let thread: any LoaderThread
    private static let appleThread = RunLoopThread(name: "LoaderDouble.loader")
    private static let corelibsQueue = SerialQueue(label: "LoaderDouble.work")
    private let lock = NSLock()
    private var current: URLProtocol?
    private var outcome = Outcome()
    private var continuation: CheckedContinuation<Outcome, Never>?

    init(_ loader: DoubledLoader = .apple, followsRedirects: Bool = true) {
        self.followsRedirects = followsRedirects
        self.protocolClass = loader.protocolClass
        switch loader {
        case .apple: thread = Self.appleThread
        case .corelibs: thread = Self.corelibsQueue
        }
    }

    func load(_ request: URLRequest) async -> Outcome {
        await withCheckedContinuation { continuation in
            lock.lock()
            self.continuation = continuation
            lock.unlock()
            thread.async { self.start(request) }
        }
    }

    /// Loads `task`'s request with the protocol made for the task, as the loader makes it for a session's task
    /// (an upload task's body is then the task's: Apple's loader shows it to no protocol). The task is never
    /// resumed: nothing else loads it.
    func load(_ task: URLSessionTask) async -> Outcome {
        await withCheckedContinuation { continuation in
            lock.lock()
            self.continuation = continuation
            lock.unlock()
            thread.async {
                self.start(self.protocolClass.init(task: task, cachedResponse: nil, client: Client(loader: self)))
            }
        }
    }

    private func start(_ request: URLRequest) {
        start(protocolClass.init(request: request, cachedResponse: nil, client: Client(loader: self)))
    }

    private func start(_ instance: URLProtocol) {
        lock.lock()
        current = instance
        outcome.protocolsStarted += 1
        lock.unlock()
        instance.startLoading()
    }

    /// Whether `instance` is the protocol the loader listens to.
    private func isCurrent(_ instance: URLProtocol) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return current === instance
    }

    /// What the loader would have done with a request no registered protocol takes: send it to the network.
    struct WouldReachTheNetwork: Error {
        let request: URLRequest
    }

    fileprivate func redirected(_ instance: URLProtocol, to request: URLRequest, by response: URLResponse) {
        guard isCurrent(instance), followsRedirects, let hop = response as? HTTPURLResponse else { return }
        guard protocolClass.canInit(with: request) else {
            return ended(instance, error: WouldReachTheNetwork(request: request))
        }
        lock.lock()
        outcome.hops.append(Hop(
            status: hop.statusCode,
            from: hop.url?.absoluteString ?? "",
            to: request.url?.absoluteString ?? "",
            method: request.httpMethod ?? "GET"
        ))
        current = nil
        lock.unlock()
        instance.stopLoading()
        thread.async { self.start(request) }
    }

    /// Cancels the task, as `URLSessionTask.cancel()` does: the protocol loading it now is stopped.
    func cancel() {
        thread.async {
            self.lock.lock()
            let instance = self.current
            self.lock.unlock()
            guard let instance else { return }
            self.ended(instance, error: URLError(.cancelled))
        }
    }

    fileprivate func received(_ instance: URLProtocol, _ response: URLResponse) {
        guard isCurrent(instance) else { return }
        lock.lock()
        outcome.response = response as? HTTPURLResponse
        lock.unlock()
    }

    fileprivate func loaded(_ instance: URLProtocol, _ data: Data) {
        guard isCurrent(instance) else { return }
        lock.lock()
        outcome.body.append(data)
        outcome.chunks.append(data)
        lock.unlock()
    }

    fileprivate func ended(_ instance: URLProtocol, error: (any Error)?) {
        guard isCurrent(instance) else { return }
        lock.lock()
        outcome.error = error
        current = nil
        let continuation = self.continuation
        self.continuation = nil
        let outcome = self.outcome
        lock.unlock()
        instance.stopLoading()
        continuation?.resume(returning: outcome)
    }

    fileprivate func noteCall() {
        guard !thread.isCurrent else { return }
        lock.lock()
        outcome.callsOffThread += 1
        lock.unlock()
    }

    private final class Client: NSObject, URLProtocolClient {
        let loader: LoaderDouble
        init(loader: LoaderDouble) { self.loader = loader }

        func urlProtocol(_ p: URLProtocol, wasRedirectedTo request: URLRequest, redirectResponse: URLResponse) {
            loader.noteCall()
            loader.redirected(p, to: request, by: redirectResponse)
        }
        func urlProtocol(_ p: URLProtocol, cachedResponseIsValid cachedResponse: CachedURLResponse) {}
        func urlProtocol(_ p: URLProtocol, didReceive response: URLResponse, cacheStoragePolicy: URLCache.StoragePolicy) {
            loader.noteCall()
            loader.received(p, response)
        }
        func urlProtocol(_ p: URLProtocol, didLoad data: Data) {
            loader.noteCall()
            loader.loaded(p, data)
        }
        func urlProtocolDidFinishLoading(_ p: URLProtocol) {
            loader.noteCall()
            loader.ended(p, error: nil)
        }
        func urlProtocol(_ p: URLProtocol, didFailWithError error: any Error) {
            loader.noteCall()
            loader.ended(p, error: error)
        }
        func urlProtocol(_ p: URLProtocol, didReceive challenge: URLAuthenticationChallenge) {}
        func urlProtocol(_ p: URLProtocol, didCancel challenge: URLAuthenticationChallenge) {}
    }
}

extension VCRTests {
    /// Redirect hops reported to the client one by one, as HTTPVCR does on Apple platforms, driven here through
    /// ``LoaderDouble``: replayed from our own tapes (hops inside one chapter) and from VCR.py's (hops as
    /// requests of their own), recorded against httpbin, and refused by the delegate.
    @Suite struct ReportedRedirectTests {
        static let cassettes = packageRoot.appendingPathComponent("Cassettes.bundle").path
        static let committedBase = "http://127.0.0.1:18080"

        /// Every cassette here asks for hops to be reported (``VCRConfiguration/reportsRedirectHops``, off by
        /// default).
        func withCassette<T>(
            _ name: String,
            in folder: String,
            _ configure: (inout VCRConfiguration) -> Void = { _ in },
            _ body: (Cassette) async throws -> T
        ) async throws -> T {
            try await HTTPVCRTests.withCassette(name, in: folder, {
                $0.reportsRedirectHops = true
                configure(&$0)
            }, body)
        }

        /// The committed cassette, replayed only (never re-recorded from here).
        func withCommittedCassette<T>(
            _ playbackMode: PlaybackMode = .chronological,
            _ body: (Cassette) async throws -> T
        ) async throws -> T {
            try await withCassette("Core/httpbin-traffic", in: Self.cassettes, {
                $0.matchers = [.method, .path, .query]
                $0.recordMode = .never
                $0.playbackMode = playbackMode
            }, body)
        }

        @Test(arguments: [PlaybackMode.chronological, .momentary])
        func eachRecordedHopIsReportedThenTheChapterPlaysOn(_ mode: PlaybackMode) async throws {
            let base = Self.committedBase
            let outcome = try await withCommittedCassette(mode) { cassette in
                let outcome = await LoaderDouble().load(URLRequest(url: URL(string: "\(base)/redirect/2")!))
                #expect(cassette.playCount == 1, "one chapter, played across three protocols")
                return outcome
            }
            #expect(outcome.hops == [
                .init(status: 302, from: "\(base)/redirect/2", to: "\(base)/relative-redirect/1", method: "GET"),
                .init(status: 302, from: "\(base)/relative-redirect/1", to: "\(base)/get", method: "GET"),
            ])
            #expect(outcome.protocolsStarted == 3)
            #expect(outcome.error == nil)
            #expect(outcome.response?.statusCode == 200)
            #expect(outcome.response?.url?.absoluteString == "\(base)/get")
            #expect(outcome.body.json?["url"] as? String == "\(base)/get")
        }

        @Test func hopsAreFollowedInsideUnlessTheCassetteAsksForThemReported() async throws {
            let base = Self.committedBase
            // The global `withCassette`, without this suite's `reportsRedirectHops = true`: the default.
            let outcome = try await HTTPVCRTests.withCassette("Core/httpbin-traffic", in: Self.cassettes, {
                $0.matchers = [.method, .path, .query]
                $0.recordMode = .never
            }) { cassette in
                let outcome = await LoaderDouble().load(URLRequest(url: URL(string: "\(base)/redirect/2")!))
                #expect(cassette.playCount == 1)
                return outcome
            }
            #expect(outcome.hops.isEmpty)
            #expect(outcome.protocolsStarted == 1)
            #expect(outcome.response?.statusCode == 200)
            #expect(outcome.response?.url?.absoluteString == "\(base)/get")
        }

        @Test func reportedHopsEndWithTheBytesFollowedHopsEndWith() async throws {
            let url = URL(string: "\(Self.committedBase)/redirect/2")!
            let reported = try await withCommittedCassette { _ in await LoaderDouble().load(URLRequest(url: url)) }
            // Through a real session: hops followed inside (corelibs cannot take a reported one).
            let followed = try await HTTPVCRTests.withCassette("Core/httpbin-traffic", in: Self.cassettes, {
                $0.matchers = [.method, .path, .query]
                $0.recordMode = .never
            }) { _ in try await vcrSession().data(from: url) }
            #expect(reported.body == followed.0)
            #expect(reported.response?.url == followed.1.url)
            #expect(reported.response?.allHeaderFields as? [String: String]
                == (followed.1 as? HTTPURLResponse)?.allHeaderFields as? [String: String])
        }

        @Test func aRefusedHopEndsTheTaskWithTheRedirectResponse() async throws {
            let base = Self.committedBase
            let outcome = try await withCommittedCassette { _ in
                await LoaderDouble(followsRedirects: false).load(URLRequest(url: URL(string: "\(base)/redirect/2")!))
            }
            #expect(outcome.hops.isEmpty)
            #expect(outcome.protocolsStarted == 1)
            #expect(outcome.error == nil)
            #expect(outcome.response?.statusCode == 302)
            #expect(outcome.response?.url?.absoluteString == "\(base)/redirect/2")
            #expect(outcome.response?.value(forHTTPHeaderField: "Location") == "/relative-redirect/1")
        }

        @Test func hopsStoredAsRequestsOfTheirOwnAreReportedAndMatched() async throws {
            let base = ForeignFormatTests.vcrpyBase
            let folder = ForeignFormatTests.vcrpyFixture.deletingLastPathComponent().path
            let outcome = try await withCassette("httpbin-basics.json", in: folder, { $0.recordMode = .never }) { cassette in
                let outcome = await LoaderDouble().load(URLRequest(url: URL(string: "\(base)/redirect/2")!))
                #expect(cassette.playCount == 1, "the reader folds the two 302s and the 200 into one chapter")
                return outcome
            }
            #expect(outcome.hops.map(\.to) == ["\(base)/relative-redirect/1", "\(base)/get"])
            #expect(outcome.protocolsStarted == 3)
            #expect(outcome.response?.statusCode == 200)
            #expect(outcome.response?.url?.absoluteString == "\(base)/get")
            #expect(outcome.body.json?["url"] as? String == "\(base)/get")
        }

        @Test func aHopToAHostOutsideTheFilterStillPlaysFromTheTape() async throws {
            let folder = try TemporaryFolder()
            let start = RecordedRequest(method: "GET", url: "http://api.test/start")
            let end = RecordedRequest(method: "GET", url: "http://cdn.test/end")
            let tape = Tape(scenes: [
                Scene(chapter: 1, event: .request(start)),
                Scene(chapter: 1, time: 0.01, event: .redirect(
                    RecordedResponse(url: start.url, statusCode: 302, headers: [RecordedHeader("Location", end.url)]),
                    to: end
                )),
                Scene(chapter: 1, time: 0.02, event: .response(RecordedResponse(url: end.url, statusCode: 200))),
                Scene(chapter: 1, time: 0.03, event: .data(Data("landed".utf8))),
                Scene(chapter: 1, time: 0.03, event: .completion),
            ])
            try CassetteFile.write(tape, to: folder.url.appendingPathComponent("cross-host.json"), as: .json)
            let outcome = try await withCassette("cross-host", in: folder.path, {
                $0.recordMode = .never
                $0.hostFilter = ["api.test"]
            }) { cassette in
                #expect(AppleLoaderProtocol.canInit(with: URLRequest(url: URL(string: end.url)!)) == false)
                let outcome = await LoaderDouble().load(URLRequest(url: URL(string: start.url)!))
                #expect(cassette.allPlayed)
                return outcome
            }
            #expect(outcome.error == nil)
            #expect(outcome.hops.map(\.to) == [end.url])
            #expect(outcome.response?.url?.absoluteString == end.url)
            #expect(outcome.body == Data("landed".utf8))
        }

        @Test func cancellingTheTaskAfterAHopCancelsTheRecordingInFlight() async throws {
            try await holdingCassettes {
                let folder = try TemporaryFolder()
                let slow = try HTTPBin.url("/delay/3")
                let url = try HTTPBin.url("/redirect-to?url=\(slow.absoluteString)")
                let start = Date()
                let outcome = try await withCassette("cancelled", in: folder.path) { cassette in
                    let loader = LoaderDouble()
                    async let outcome = loader.load(URLRequest(url: url))
                    try await Task.sleep(nanoseconds: 500_000_000)
                    loader.cancel()
                    let result = await outcome
                    // The protocol that took the recording over was stopped: the recording's own task is
                    // cancelled and written as such, long before the server would have answered.
                    let deadline = Date().addingTimeInterval(2)
                    while cassette.tape.interactions.isEmpty, Date() < deadline {
                        try await Task.sleep(nanoseconds: 10_000_000)
                    }
                    return result
                }
                #expect(Date().timeIntervalSince(start) < 2.5, "the recording ran on to the server's answer")
                #expect(outcome.hops.map(\.status) == [302])
                #expect((outcome.error as? URLError)?.code == .cancelled)
                let (tape, _) = try CassetteFile.read(at: folder.url.appendingPathComponent("cancelled.json"))
                let interaction = try #require(tape.interactions.first)
                #expect(interaction.redirects.count == 1)
                #expect(interaction.error?.code == URLError.cancelled.rawValue)
            }
        }

        @Test(arguments: [(307, "POST"), (303, "GET")])
        func aReportedHopKeepsThePostOnlyWhereHTTPSaysSo(_ status: Int, _ method: String) async throws {
            try await holdingCassettes {
                let folder = try TemporaryFolder()
                let target = try HTTPBin.url("/anything/landed")
                let url = try HTTPBin.url("/redirect-to?url=\(target.absoluteString)&status_code=\(status)")
                var request = URLRequest(url: url)
                request.httpMethod = "POST"
                request.httpBody = Data("name=Ada".utf8)
                request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
                let recorded = try await withCassette("post", in: folder.path) { _ in await LoaderDouble().load(request) }
                let replayed = try await withCassette("post", in: folder.path) { _ in await LoaderDouble().load(request) }
                for outcome in [recorded, replayed] {
                    #expect(outcome.hops.map(\.status) == [status])
                    #expect(outcome.hops.map(\.method) == [method])
                    #expect(outcome.response?.url?.path == "/anything/landed")
                    let echoed = outcome.body.json
                    #expect(echoed?["method"] as? String == method)
                    // The recorder's session is corelibs', which sends a 307's POST on without its body (plain
                    // URLSession on Linux does the same): only the 303's GET is known to carry none.
                    if method == "GET" { #expect((echoed?["form"] as? [String: Any])?.isEmpty == true) }
                }
                #expect(replayed.body == recorded.body)
            }
        }

        @Test func aRecordingReportsEachHopAndGoesOnUnderTheNextProtocol() async throws {
            try await holdingCassettes {
                let folder = try TemporaryFolder()
                let url = try HTTPBin.url("/redirect/3")
                let before = try HTTPBin.settledRequestCount()
                let recorded = try await withCassette("hops", in: folder.path) { _ in
                    await LoaderDouble().load(URLRequest(url: url))
                }
                #expect(recorded.error == nil)
                #expect(recorded.hops.map(\.status) == [302, 302, 302])
                #expect(recorded.hops.last?.to.hasSuffix("/get") == true)
                #expect(recorded.protocolsStarted == 4)
                #expect(recorded.response?.statusCode == 200)
                #expect(recorded.response?.url?.path == "/get")

                // One chapter on the tape, every hop in it; and the server saw each hop once, not twice.
                let (tape, _) = try CassetteFile.read(at: folder.url.appendingPathComponent("hops.json"))
                #expect(tape.interactions.count == 1)
                #expect(tape.interactions.first?.redirects.count == 3)
                let paths = ["/redirect/3", "/relative-redirect/2", "/relative-redirect/1", "/get"]
                let afterRecording = try HTTPBin.requestCount(onceLogged: paths, since: before)
                let sent = try HTTPBin.requests(since: before, to: paths)
                #expect(sent.sorted() == paths.map { "GET \($0)" }.sorted(), "each hop requested once: \(sent)")

                let replayed = try await withCassette("hops", in: folder.path) { cassette in
                    #expect(cassette.isWriteProtected)
                    return await LoaderDouble().load(URLRequest(url: url))
                }
                #expect(replayed.hops == recorded.hops)
                #expect(replayed.body == recorded.body)
                let followed = try await HTTPVCRTests.withCassette("hops", in: folder.path) { _ in
                    try await vcrSession().data(from: url).0
                }
                #expect(followed == recorded.body)
                let replaySent = try HTTPBin.requests(since: afterRecording, to: paths)
                #expect(replaySent.isEmpty, "replay reached the server: \(replaySent)")
            }
        }
    }
}

/// Where a loader double starts its protocols.
protocol LoaderThread: Sendable {
    var isCurrent: Bool { get }
    func async(_ body: @escaping @Sendable () -> Void)
}

/// A thread that runs a run loop, as Apple's URL loading thread does, taking blocks in order.
final class RunLoopThread: LoaderThread, @unchecked Sendable {
    private var runLoop: RunLoop?
    private var thread: Thread?

    init(name: String) {
        let ready = DispatchSemaphore(value: 0)
        let thread = Thread { [unowned self] in
            runLoop = RunLoop.current
            // A far timer keeps the run loop from finishing for want of sources.
            RunLoop.current.add(Timer(timeInterval: 1e9, repeats: true) { _ in }, forMode: .default)
            ready.signal()
            while true { _ = RunLoop.current.run(mode: .default, before: .distantFuture) }
        }
        thread.name = name
        self.thread = thread
        thread.start()
        ready.wait()
    }

    var isCurrent: Bool { Thread.current === thread }

    /// Runs `body` on the thread, after what was sent there before.
    func async(_ body: @escaping @Sendable () -> Void) {
        guard let runLoop else { return }
        runLoop.perform(inModes: [.common], block: body)
        runLoop.add(Timer(timeInterval: 0, repeats: false) { _ in }, forMode: .default)  // wakes it
    }
}

/// A serial queue, as corelibs' task work queue is, that knows when it is the current one.
final class SerialQueue: LoaderThread {
    private let queue: DispatchQueue
    private let key = DispatchSpecificKey<Bool>()

    init(label: String) {
        queue = DispatchQueue(label: label)
        queue.setSpecific(key: key, value: true)
    }

    var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == true }

    func async(_ body: @escaping @Sendable () -> Void) { queue.async(execute: body) }
}
