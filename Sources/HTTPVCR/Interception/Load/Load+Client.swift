import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCRCassettes

/// The client end of a load: what the player, the recorder and the load's own decisions produce is told to the URL
/// loading system's client here, once, in order, on the queue it must be told on (``ClientQueue``, captured from the
/// platform), and nothing once the load stopped or its task is being cancelled (``isTaskLive``).
///
/// Each event becomes the client calls the loader's own protocol would make, along the load's ``BodyRoute``: to the
/// client, and to whoever else listens to the task (``ListenerCalls``), or into a download's file. A redirect hop is
/// reported only where the loader takes hops (``RedirectHandling/reportToClient``); the rest of the chapter then goes
/// to the load of the protocol the loader starts for the next request, through a ``RedirectRelay``.
extension Load {
    /// What the client end keeps, in the load's state.
    struct ClientEnd {
        /// What of a run the client is told now: its events up to the end, and at the end the body held back
        /// until then and whether the load ends on a challenge.
        struct Told {
            var events: ArraySlice<ClientEvent>
            var body: Data?
            var endsOnChallenge = false
        }

        var protocolInstance: VCRURLProtocol?
        var isStopped = false
        /// A body held back until the end (``BodyRoute/whole``); whether the end was told.
        var bufferedBody = Data()
        var hasEnded = false
        /// The last response asked for credentials that the app's session did not give: its client must not start
        /// asking for them itself when the load finishes.
        var endsOnChallenge = false
        /// Called when the client is gone, to stop a recording in flight.
        var onStop: (@Sendable () -> Void)?
        /// The end is to be (or was) delivered from a block sent to the client's queue after the caller was seen
        /// cancelled.
        var hasYieldedBeforeEnding = false
        /// Where a reported hop leaves the rest of its chapter. nil: hops are not reported for this request.
        var handoffs: RedirectHandoffs?
        /// Set once this load reported a hop: what comes after belongs to the next request's load.
        var relay: RedirectRelay?

        /// What to tell the client of `events` now: nothing once the end was told, else the events up to the end.
        /// The body is held back for one `didLoad` just before the end (``BodyRoute/whole``), or goes chunk by chunk,
        /// or into a download's file; what body there is goes before an error; a later response (a retry with
        /// credentials) replaces the body of an earlier one. ``Load/make(_:_:on:from:)`` leaves out redirects and
        /// what the route holds back.
        @inline(__always)
        mutating func take(_ events: ArraySlice<ClientEvent>, route: BodyRoute) -> Told {
            guard !hasEnded else { return Told(events: events.prefix(0)) }
            var end = events.endIndex
            scan: for index in events.indices {
                switch events[index] {
                case let .data(data):
                    switch route {
                    case .whole, .wholeAndChunksToListener:
                        if bufferedBody.isEmpty { bufferedBody = data } else { bufferedBody.append(data) }
                    case .chunks, .file:
                        break
                    }
                case let .response(response, _):
                    bufferedBody = Data()
                    endsOnChallenge = response.statusCode == 401 && LoaderRules.protectionSpace(of: response) != nil
                case .finish, .fail:
                    hasEnded = true
                    end = index + 1
                    break scan
                case .redirect, .sentBody:
                    break
                }
            }
            var told = Told(events: events[..<end])
            if hasEnded {
                // Moved out, not copied.
                var body = Data()
                swap(&body, &bufferedBody)
                told.body = body.isEmpty ? nil : body
                told.endsOnChallenge = endsOnChallenge
            }
            return told
        }
    }

    // MARK: The client end

    /// Whether the client may still be told about the load: not once its task is being cancelled. corelibs'
    /// `cancel()` tells the client itself, later, on the task's queue; a completion from us in between would
    /// have the task finished and unregistered before that, and its cancellation then traps ("a task that is not
    /// in the registry"). Read on the task's queue, where `cancel()` cannot change it meanwhile.
    private var isTaskLive: Bool {
        platform.isLive(task)
    }

    /// The client's protocol and the client, unless the load was stopped or its task is being cancelled.
    private var endpoint: (VCRURLProtocol, any URLProtocolClient)? {
        let instance = withLock { $0.client.isStopped ? nil : $0.client.protocolInstance }
        guard let instance, let client = instance.client, isTaskLive else { return nil }
        return (instance, client)
    }

    func stop() {
        let onStop: (@Sendable () -> Void)? = withLock { state in
            state.client.isStopped = true
            state.client.protocolInstance = nil
            // Handed off: the next request's protocol goes on with the load, and its own stop ends it.
            guard state.client.relay == nil else { return nil }
            defer { state.client.onStop = nil }
            return state.client.onStop
        }
        onStop?()
    }

    /// Stores the cookies a hop or a held response sets, as the loader does before it goes on.
    func storeCookies(of response: HTTPURLResponse) {
        guard CookieJar.setsCookies(response), let instance = withLock({ $0.client.protocolInstance }) else {
            return
        }
        CookieJar(for: instance, on: platform)?.store(response)
    }

    /// `request` with the cookies the session stored for its URL: a hop followed while recording.
    func addingCookies(to request: URLRequest) -> URLRequest {
        guard let instance = withLock({ $0.client.protocolInstance }),
              let jar = CookieJar(for: instance, on: platform)
        else {
            return request
        }
        return jar.addingCookies(to: request)
    }

    func whenStopped(_ action: @escaping @Sendable () -> Void) {
        let stopped = withLock { state in
            let stopped = state.client.isStopped && state.client.relay == nil
            if !stopped { state.client.onStop = action }
            return stopped
        }
        if stopped { action() }
    }

    /// Tells the client `event`, or passes it on to the next request's load once a hop was reported.
    func tellClient(_ event: ClientEvent) {
        tellClient([event])
    }

    /// Tells the client `events`, in order: those between hops in one go on the client's queue.
    func tellClient(_ events: [ClientEvent]) {
        var rest = events[...]
        while let hop = rest.firstIndex(where: { if case .redirect = $0 { true } else { false } }) {
            tellBetweenHops(rest[..<hop])
            guard case let .redirect(response, target, method) = rest[hop] else { break }
            if let relay = withLock({ $0.client.relay }) {
                relay.pass(rest[hop])
            } else {
                // Stored now, whether the hop is reported or followed here: the next request must carry them.
                storeCookies(of: response)
                reportRedirect(response, to: target, method: method)
            }
            rest = rest[rest.index(after: hop)...]
        }
        tellBetweenHops(rest)
    }

    /// Events with no hop among them, told on the client's queue: right here when this is it.
    @inline(__always)
    private func tellBetweenHops(_ events: ArraySlice<ClientEvent>) {
        guard !events.isEmpty else { return }
        if let relay = withLock({ $0.client.relay }) { return events.forEach(relay.pass) }
        tellOnClientQueue(events, ending: events.contains { $0.isEnd })
    }

    /// An end whose caller is being cancelled is sent once more to the back of the queue first (see CallerTask).
    private func tellOnClientQueue(_ events: ArraySlice<ClientEvent>, ending: Bool) {
        guard clientQueue.isCurrent, !(ending && yieldsBeforeEnding()) else {
            return clientQueue.async { [self] in tellOnClientQueue(events, ending: ending) }
        }
        // One lock: worked out even when the task turns out not to be live, which it never is again.
        // Bound straight from the lock's result: a named optional is copied into the bindings, then destroyed.
        guard let (instance, told) = withLock({ state -> (VCRURLProtocol, ClientEnd.Told)? in
            guard !state.client.isStopped, let instance = state.client.protocolInstance else { return nil }
            if ending { state.client.protocolInstance = nil }
            return (instance, state.client.take(events, route: route))
        }), let client = instance.client, isTaskLive else { return }
        // Each event is read in place rather than copied out first.
        told.events.withUnsafeBufferPointer { events in
            for event in events.indices { make(events[checked: event], told, on: client, from: instance) }
        }
    }

    /// Makes the calls for one event of a run `told` (whose body and challenge go with its end), on the client's
    /// queue.
    @inline(__always)
    private func make(
        _ event: ClientEvent, _ told: ClientEnd.Told, on client: any URLProtocolClient, from instance: URLProtocol
    ) {
        switch event {
        case let .response(response, setsCookies):
            // Cookies first: a completion handler may make the next request as soon as it is told.
            if setsCookies { CookieJar(for: instance, on: platform)?.store(response) }
            if case let .file(file) = route { file.expected = response.expectedContentLength }
            client.urlProtocol(instance, didReceive: response, cacheStoragePolicy: .notAllowed)
        case let .data(data):
            switch route {
            case .chunks: client.urlProtocol(instance, didLoad: data)
            case .wholeAndChunksToListener: listener?.received(data)
            case let .file(file):
                file.append(data)
                listener?.wrote(Int64(data.count), total: file.written, expected: file.expected)
            case .whole: break
            }
        case let .sentBody(bytes, total, expected):
            listener?.sent(bytes, total: total, expected: expected)
        case .redirect:
            break
        case .finish:
            if let body = told.body { client.urlProtocol(instance, didLoad: body) }
            if case let .file(file) = route {
                if let error = file.finish() {
                    return client.urlProtocol(instance, didFailWithError: VCRError.downloadNotWritten(file, error))
                }
                platform.setDownloadedFile(file.url, of: instance)
            }
            guard told.endsOnChallenge, let task = instance.task,
                  let response = task.response as? HTTPURLResponse,
                  let session
            else { return client.urlProtocolDidFinishLoading(instance) }
            platform.finishWithoutChallenge(task, session: session, response: response) {
                client.urlProtocolDidFinishLoading(instance)
            }
        case let .fail(error):
            if let body = told.body { client.urlProtocol(instance, didLoad: body) }
            if case let .file(file) = route { _ = file.finish() }
            if let task = instance.task { platform.setError(error, on: task) }
            client.urlProtocol(instance, didFailWithError: error)
        }
    }

    /// Talks to the client on the queue it must be talked to on, unless the load was stopped by then.
    /// An end whose caller is being cancelled is sent once more to the back of the queue first (see CallerTask).
    private func toClient(ending: Bool, _ body: @escaping (VCRURLProtocol, any URLProtocolClient) -> Void) {
        if clientQueue.isCurrent, !(ending && yieldsBeforeEnding()) {
            guard let (instance, client) = endpoint else { return }
            body(instance, client)
            if ending { withLock { $0.client.protocolInstance = nil } }
        } else {
            clientQueue.async { [self] in toClient(ending: ending, body) }
        }
    }

    // MARK: Where the client is told

    var isOnClientQueue: Bool { clientQueue.isCurrent }

    func onClientQueue(_ body: @escaping @Sendable () -> Void) {
        clientQueue.async(body)
    }

    func yieldsBeforeEnding() -> Bool {
        guard caller?.isCancelled == true else { return false }
        return withLock { state in
            defer { state.client.hasYieldedBeforeEnding = true }
            return !state.client.hasYieldedBeforeEnding
        }
    }

    // MARK: Reported hops (Apple's loader)

    /// Hops of this request's chapter are reported to the client and continued through `handoffs`.
    func reportRedirects(to handoffs: RedirectHandoffs) {
        guard redirectHandling == .reportToClient else { return }
        withLock { $0.client.handoffs = handoffs }
    }

    /// Reports a hop, as Apple's loader expects: `wasRedirectedTo`, the 3xx and the end in one client block. The
    /// loader asks the delegate, then starts a protocol for the next request, which takes the rest of the chapter
    /// from `handoffs`; or, refused, ends the task with the 3xx. Where hops are not reported there is nothing to do:
    /// the client gets the final response.
    private func reportRedirect(_ hop: HTTPURLResponse, to target: URL, method: String?) {
        guard redirectHandling == .reportToClient else { return }
        let reported: (RedirectHandoffs, URLRequest)? = withLock { state in
            guard let handoffs = state.client.handoffs, !state.client.isStopped,
                  let original = state.client.protocolInstance?.request
            else { return nil }
            state.client.relay = RedirectRelay()
            return (handoffs, original)
        }
        guard let (handoffs, original) = reported else { return }
        let next = original.followingRedirect(status: hop.statusCode, to: target, recordedMethod: method)
        handoffs.expect(next, continuing: self)
        toClient(ending: true) { instance, client in
            client.urlProtocol(instance, wasRedirectedTo: next, redirectResponse: hop)
            // Ignored once the loader follows the hop; the task's outcome when the delegate refuses it.
            client.urlProtocol(instance, didReceive: hop, cacheStoragePolicy: .notAllowed)
            client.urlProtocolDidFinishLoading(instance)
        }
    }

    /// `successor` serves the request this load's reported hop led to: it gets what was held back, then
    /// everything that follows, and stopping it stops what this load would have stopped.
    func handOff(to successor: Load) {
        let (onStop, relay) = withLock { state in
            defer { state.client.onStop = nil }
            return (state.client.onStop, state.client.relay)
        }
        if let onStop { successor.whenStopped(onStop) }
        relay?.hand(to: successor)
    }
}
