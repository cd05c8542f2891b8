import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The forwarder: an inner URLSession does the real request, and its delegate callbacks become scenes as they
/// happen while the client gets the real response.
final class Recorder: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    static let shared = Recorder()

    /// Made once, thread-safely (a static `let`): two sessions would number their tasks independently, and a
    /// recording looked up by the other session's task would get the wrong body.
    private static let session: URLSession = {
        // Credentials are the app's to give (``Load``): this session is never to answer a challenge itself.
        let configuration = URLSessionConfiguration.verbatim
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        queue.name = "HTTPVCR.Recorder"
        return URLSession(configuration: configuration, delegate: shared, delegateQueue: queue)
    }()

    /// Keyed by the task object, which the entry keeps alive: its identity cannot be reused while it is here.
    private let recordings = Locked<[ObjectIdentifier: Entry]>([:])

    private struct Entry {
        let task: URLSessionTask
        let recording: Recording
        /// The origins the task talks to (its request's, then each hop's), which the network guard lets pass.
        var origins: [NetworkOrigin]
        let startedAt = DispatchTime.now().uptimeNanoseconds
    }

    /// Sends the recording's request. Hops off the calling queue first: starting a task from inside
    /// `startLoading` deadlocks, as every session shares one work queue.
    func start(_ recording: Recording) {
        // Bridge: in a process connected to a test's bridge, the bridge is the network (BridgeConnection+Sending).
        if let bridge = BridgeConnection.current { return bridge.send(recording) }
        DispatchQueue.global().async { [self] in
            // Marked through NSMutableURLRequest (the only way to set a protocol property), but sent as a
            // URLRequest: corelibs ignores an NSMutableURLRequest's timeoutInterval.
            let marked = NSMutableURLRequest(url: recording.live.url ?? URL(string: "about:blank")!)
            URLProtocol.setProperty(true, forKey: VCRURLProtocol.passThroughKey, in: marked)
            var request = marked as URLRequest
            request.httpMethod = recording.live.httpMethod ?? "GET"
            request.allHTTPHeaderFields = recording.live.allHTTPHeaderFields
            request.httpBody = recording.live.httpBody
            request.timeoutInterval = recording.timeout
            request.cachePolicy = .reloadIgnoringLocalCacheData
            // The network guard's proxy knows it by its mark, and takes it off (https: by its origin, for a while).
            if NetworkGuard.isActive { request.setValue(NetworkGuard.markToken, forHTTPHeaderField: NetworkGuard.markField) }
            let task = Self.session.dataTask(with: request)
            let origins = NetworkGuard.recording(request.url, onlyTunnels: true).map { [$0] } ?? []
            recordings.withLock { $0[ObjectIdentifier(task)] = Entry(task: task, recording: recording, origins: origins) }
            recording.part?.whenStopped { [task] in
                // The client went away (a stream it cancelled): what it got so far is recorded now, ending in the
                // cancellation, before the client hears of it (corelibs stops the protocol first).
                recording.completed(error: URLError.cancelled(recording.live.url))
                // Cancelling waits on the session's queue, which stopLoading is running on: hop off it first.
                DispatchQueue.global().async { task.cancel() }
            }
            task.resume()
        }
    }

    private func recording(for task: URLSessionTask) -> Recording? {
        recordings.withLock { $0[ObjectIdentifier(task)]?.recording }
    }

    // MARK: URLSessionDataDelegate

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        guard let recording = recording(for: task) else { return completionHandler(request) }
        // The hop's request as the app's session would send it: without the network guard's mark, which goes back
        // on the request this session sends.
        var proposed = request
        proposed.setValue(nil, forHTTPHeaderField: NetworkGuard.markField)
        recording.redirected(response, to: proposed) { [self] next in
            if let origin = NetworkGuard.recording(next?.url, onlyTunnels: true) {
                recordings.withLock { $0[ObjectIdentifier(task)]?.origins.append(origin) }
            }
            var marked = next
            if NetworkGuard.isActive { marked?.setValue(NetworkGuard.markToken, forHTTPHeaderField: NetworkGuard.markField) }
            completionHandler(marked)
        }
    }

    /// This session asks only when a load ends on a 401 that asks for credentials (it holds none, and its own
    /// delegate queue has told the whole 401 by then): the recording ends with it, and the app's session decides
    /// whether to send the request again with credentials (``Load``). Cancelling keeps corelibs from waiting for
    /// credentials forever (before 6.3.2, with none to offer, it does).
    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        guard (challenge.failureResponse as? HTTPURLResponse)?.statusCode == 401 else {
            return completionHandler(.performDefaultHandling, nil)
        }
        recording(for: task)?.completed(error: nil)
        completionHandler(.cancelAuthenticationChallenge, nil)
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didSendBodyData bytesSent: Int64,
        totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        recording(for: task)?.part?.send(.sentBody(bytesSent, total: totalBytesSent, expected: totalBytesExpectedToSend))
    }

    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        if let response = response as? HTTPURLResponse { recording(for: dataTask)?.received(response) }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        recording(for: dataTask)?.received(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let entry = recordings.withLock({ $0.removeValue(forKey: ObjectIdentifier(task)) }) else { return }
        entry.origins.forEach(NetworkGuard.finished)
        entry.recording.completed(
            error: error.map { NetworkGuard.asTheServerWouldFail($0, url: task.currentRequest?.url, since: entry.startedAt) }
        )
    }
}

/// One request being recorded: its events in the order they came, each stamped with when it happened and
/// where the playhead was, written to the cassette when the request ends (filters need the whole body).
final class Recording: @unchecked Sendable {
    /// What is sent to the server.
    let live: URLRequest
    /// What matching saw, and what goes on the tape.
    let filtered: URLRequest
    /// nil: forward without recording.
    let cassette: Cassette?
    /// The request of a URLSession load it is: where the app hears of it as it happens, and decides at its hops. nil
    /// when the caller gets the outcome itself (``VCR/data(for:sending:)``).
    let part: Load.Part?
    /// How long the app's session lets the request wait.
    let timeout: TimeInterval

    private let startedAt = DispatchTime.now().uptimeNanoseconds
    /// When it was sent, for the tape (``RecordedRequest/recordedAt``).
    private let recordedAt = RecordingTime.now
    private let requestAnchor: Int
    private let state = Locked(State())

    /// What came so far, behind the recording's one lock (taken with no other held).
    private struct State {
        var events: [(event: Event, anchor: Int, order: UInt64)] = []
        var hasCompleted = false
    }

    private enum Event {
        /// `next` is what the loader proposed until the app answers.
        case redirect(HTTPURLResponse, next: URLRequest)
        case response(ResponseFilter.Received)
        case data(Data)
        case error(any Error)
        case completion
    }

    init(live: URLRequest, filtered: URLRequest, cassette: Cassette?, part: Load.Part?) {
        self.live = live
        self.filtered = filtered
        // Bridge: what a bridge's cassette takes is forwarded, never taped (the test process tapes it).
        self.cassette = BridgeConnection.isBridgeCassette(cassette) ? nil : cassette
        self.part = part
        self.timeout = part?.timeout(of: live) ?? live.timeoutInterval
        self.requestAnchor = self.cassette?.playhead ?? 0
        self.cassette?.beginRecording(self)
    }

    /// Returns where the event is.
    @discardableResult
    private func append(_ event: Event) -> Int {
        let anchor = cassette?.playhead ?? 0
        let order = DispatchTime.now().uptimeNanoseconds
        return state.withLock { state in
            state.events.append((event, anchor, order))
            return state.events.count - 1
        }
    }

    /// A hop: `answer` gets the request to send next, as the app's session decides (``Load``), or nil to end with the
    /// hop. Taped as it happens, so that a hop the app never answers is on the tape as far as it went.
    func redirected(
        _ response: HTTPURLResponse, to request: URLRequest, _ answer: @escaping @Sendable (URLRequest?) -> Void
    ) {
        let position = append(.redirect(response, next: request))
        guard let part else { return answer(request) }
        part.redirected(response, proposed: request) { [self] next in
            state.withLock { state in
                if let next {
                    state.events[position].event = .redirect(response, next: next)
                } else {
                    // Refused: the 3xx comes next as the outcome.
                    state.events.remove(at: position)
                }
            }
            answer(next)
        }
    }

    func received(_ response: HTTPURLResponse) {
        append(.response(.foundation(response)))
        part?.send(.response(response, setsCookies: CookieJar.setsCookies(response)))
    }

    /// A response with every field as the server sent it, in order: the door's
    /// (``VCR/dataKeepingFields(for:sending:)``), which has no load to tell.
    func received(_ response: RecordedResponse) {
        append(.response(.fields(response)))
    }

    func received(_ data: Data) {
        append(.data(data))
        part?.send(.data(data))
    }

    /// Ends the recording, once: a later call (a stream cancelled as it ends) is ignored.
    func completed(error: (any Error)?) {
        guard state.withLock({ state in defer { state.hasCompleted = true }; return !state.hasCompleted }) else { return }
        append(error.map(Event.error) ?? .completion)
        if let error, let cassette, !cassette.configuration.recordsConnectionErrors,
           ConnectionError.isUnreachable(error) {
            // A cassette would replay the outage forever: report it instead, and keep it off the tape.
            VCR.recordFailure(
                .connectionErrorNotRecorded(filtered, error: error, cassettePath: cassette.path), on: cassette
            )
            cassette.finishRecording(self, scenes: nil)
        } else {
            commit()
        }
        part?.send(error.map(ClientEvent.fail) ?? .finish)
    }

    /// Builds the chapter's scenes so far through the filters and writes them to the cassette: when the request
    /// ends, or when the cassette is saved while it is still in flight (a stream nobody stopped, a hop the app never
    /// answered), so that the tape holds what the app got. Only the first call writes.
    func commit() {
        guard let cassette else { return }
        let events = state.withLock { $0.events }
        let configuration = cassette.configuration
        // What the filters took out of the request, and out of what this cassette recorded before: none of it may
        // come back anywhere in this interaction.
        // Grows as the interaction goes: a cookie a redirect hop set is hidden in the final response too.
        var learned = RequestFilter.secrets(of: live, with: configuration)
        let earlierSecrets = cassette.recordedSecrets
        learned.formUnion(earlierSecrets)
        let chapter = cassette.reserveChapter()
        var recordedRequest = RecordedRequest(RequestFilter.replacingEchoes(of: earlierSecrets, in: filtered))
        recordedRequest.recordedAt = recordedAt
        var scenes = [(
            scene: Scene(chapter: chapter, time: 0, event: .request(recordedRequest)),
            anchor: requestAnchor,
            order: startedAt
        )]
        var response: ResponseFilter.Received?
        var chunks: [Data] = []
        var bodyStamps: [(anchor: Int, order: UInt64)] = []
        for (event, anchor, order) in events {
            let time = seconds(since: order)
            switch event {
            case let .redirect(hop, next):
                let (recordedHop, recordedNext) = ResponseFilter.filterRedirect(
                    hop, to: next, request: filtered, configuration: configuration, requestSecrets: learned,
                    removed: &learned
                )
                scenes.append((Scene(chapter: chapter, time: time, event: .redirect(recordedHop, to: recordedNext)), anchor, order))
            case let .response(received):
                response = received
                bodyStamps.append((anchor, order))
            case let .data(data):
                chunks.append(data)
                bodyStamps.append((anchor, order))
            case let .error(error):
                if let response {
                    appendResponse(
                        response, chunks: chunks, stamps: bodyStamps, secrets: learned, learned: &learned,
                        to: &scenes, chapter: chapter
                    )
                }
                response = nil
                let recorded = ResponseFilter.filterError(
                    error, request: filtered, configuration: configuration, requestSecrets: learned
                )
                scenes.append((Scene(chapter: chapter, time: time, event: .error(recorded)), anchor, order))
            case .completion:
                if let response {
                    guard appendResponse(
                        response, chunks: chunks, stamps: bodyStamps, secrets: learned, learned: &learned,
                        to: &scenes, chapter: chapter
                    ) else { return }  // beforeRecordResponse said not to record it
                }
                response = nil
                scenes.append((Scene(chapter: chapter, time: time, event: .completion), anchor, order))
            }
        }
        if let response {
            // Still in flight: the response and the body so far.
            appendResponse(
                response, chunks: chunks, stamps: bodyStamps, secrets: learned, learned: &learned, to: &scenes,
                chapter: chapter
            )
        }
        cassette.finishRecording(self, scenes: scenes, secrets: learned)
    }

    /// Appends the response and its chunks, filtered. Returns false when the response is not to be recorded.
    @discardableResult
    private func appendResponse(
        _ response: ResponseFilter.Received,
        chunks: [Data],
        stamps: [(anchor: Int, order: UInt64)],
        secrets: SecretValues,
        learned: inout SecretValues,
        to scenes: inout [(scene: Scene, anchor: Int, order: UInt64)],
        chapter: Int
    ) -> Bool {
        guard let cassette else { return false }
        guard let outcome = ResponseFilter.filter(
            response: response, chunks: chunks, request: filtered, configuration: cassette.configuration,
            requestSecrets: secrets
        ) else { return false }
        learned.formUnion(outcome.removed)
        let responseStamp = stamps.first ?? (cassette.playhead, DispatchTime.now().uptimeNanoseconds)
        scenes.append((
            Scene(chapter: chapter, time: seconds(since: responseStamp.order), event: .response(outcome.response)),
            responseStamp.anchor, responseStamp.order
        ))
        for (position, chunk) in outcome.chunks.enumerated() {
            let stamp = position + 1 < stamps.count ? stamps[position + 1] : (stamps.last ?? responseStamp)
            scenes.append((Scene(chapter: chapter, time: seconds(since: stamp.order), event: .data(chunk)), stamp.anchor, stamp.order))
        }
        return true
    }

    /// Seconds since the request was sent, to the millisecond: enough for latency replay, and stable in diffs.
    private func seconds(since order: UInt64) -> TimeInterval {
        let nanoseconds = order >= startedAt ? order - startedAt : 0
        return (Double(nanoseconds) / 1_000_000).rounded() / 1000
    }
}

extension URLError {
    /// The error URLSession gives a task its client cancelled.
    static func cancelled(_ url: URL?) -> URLError {
        var info: [String: Any] = [NSLocalizedDescriptionKey: "cancelled"]
        if let url {
            info[NSURLErrorFailingURLErrorKey] = url
            // NSURLErrorFailingURLStringErrorKey, which URLSession still sets (the constant is deprecated).
            info["NSErrorFailingURLStringKey"] = url.absoluteString
        }
        return URLError(.cancelled, userInfo: info)
    }
}

/// Errors that say the server could not be reached at all, as opposed to what it did (a status, a slow answer)
/// or what the client did (a cancellation, its own timeout).
enum ConnectionError {
    static func isUnreachable(_ error: any Error) -> Bool {
        let error = error as NSError
        guard error.domain == NSURLErrorDomain else { return false }
        switch error.code {
        case NSURLErrorCannotFindHost, NSURLErrorCannotConnectToHost, NSURLErrorNetworkConnectionLost,
             NSURLErrorDNSLookupFailed, NSURLErrorNotConnectedToInternet, NSURLErrorSecureConnectionFailed,
             NSURLErrorInternationalRoamingOff, NSURLErrorDataNotAllowed:
            return true
        default:
            return false
        }
    }
}

extension VCRError {
    static func connectionErrorNotRecorded(_ request: URLRequest, error: any Error, cassettePath: String) -> VCRError {
        let error = error as NSError
        return VCRError(
            .connectionErrorNotRecorded,
            "\(Mismatch.describe(request)) could not reach the server while recording (\(error.domain) "
                + "\(error.code): \(error.localizedDescription)), so it was not written to \(cassettePath): the "
                + "cassette would replay that outage forever. Start the server and record again, or set "
                + "configuration.recordsConnectionErrors = true to record connection errors on purpose.",
            cassettePath: cassettePath,
            request: Mismatch.describe(request)
        )
    }
}

extension URLSessionConfiguration {
    /// For sessions that send exactly what they are given (the recorder's, the bridge's): no cache, no cookies, no
    /// credentials of their own.
    static var verbatim: URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.httpCookieAcceptPolicy = .never
        configuration.urlCredentialStorage = nil
        configuration.httpMaximumConnectionsPerHost = 16
        return configuration
    }
}
