import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The client end of one load: tells the URL loading system's client what the player or the recorder produces,
/// once, in order, on the queue it must be told on (``ClientQueue``, captured from the platform), and nothing once
/// the load stopped or its task is being cancelled (``VCRURLProtocol/isTaskLive``).
///
/// How events become client calls is ``ClientDelivery``'s and ``ClientCalls``'. A redirect hop is reported only
/// where the loader takes hops (``RedirectHandling/reportToClient``); the rest of the chapter then goes to the
/// channel of the protocol the loader starts for the next request, through a ``RedirectRelay``.
final class ClientChannel: @unchecked Sendable {
    /// Captured in `startLoading`, on the queue client callbacks must use.
    let clientQueue: any ClientQueue
    let redirectHandling: RedirectHandling
    private let calls: ClientCalls
    /// The Swift task that started the request, if known: while it is being cancelled, the end waits its turn.
    private let caller: CallerTask?
    private let state: Locked<State>

    private struct State {
        var protocolInstance: VCRURLProtocol?
        var isStopped = false
        var delivery: ClientDelivery
        /// Called when the client is gone, to stop a recording in flight.
        var onStop: (@Sendable () -> Void)?
        /// The end is to be (or was) delivered from a block sent to the client's queue after the caller was seen
        /// cancelled.
        var hasYieldedBeforeEnding = false
        /// Where a reported hop leaves the rest of its chapter. nil: hops are not reported for this request.
        var handoffs: RedirectHandoffs?
        /// Set once this channel reported a hop: what comes after belongs to the next request's channel.
        var relay: RedirectRelay?
    }

    /// Make in `startLoading`: it captures where the client is to be called.
    init(
        protocolInstance: VCRURLProtocol,
        redirectHandling: RedirectHandling,
        caller: CallerTask?,
        calls: ClientCalls
    ) {
        self.clientQueue = calls.platform.clientQueue()
        self.redirectHandling = redirectHandling
        self.caller = caller
        self.calls = calls
        self.state = Locked(State(protocolInstance: protocolInstance, delivery: ClientDelivery(route: calls.route)))
    }

    // MARK: The client end

    /// The client's protocol and the client, unless the load was stopped or its task is being cancelled.
    private var endpoint: (VCRURLProtocol, any URLProtocolClient)? {
        let instance = state.withLock { $0.isStopped ? nil : $0.protocolInstance }
        guard let instance, let client = instance.client, instance.isTaskLive else { return nil }
        return (instance, client)
    }

    func stop() {
        let onStop: (@Sendable () -> Void)? = state.withLock { state in
            state.isStopped = true
            state.protocolInstance = nil
            // Handed off: the next request's protocol goes on with the load, and its own stop ends it.
            guard state.relay == nil else { return nil }
            defer { state.onStop = nil }
            return state.onStop
        }
        onStop?()
    }

    /// Stores the cookies a hop or a held response sets, as the loader does before it goes on.
    func storeCookies(of response: HTTPURLResponse) {
        guard CookieJar.setsCookies(response), let instance = state.withLock({ $0.protocolInstance }) else { return }
        calls.storeCookies(of: response, from: instance)
    }

    /// `request` with the cookies the session stored for its URL: a hop followed while recording.
    func addingCookies(to request: URLRequest) -> URLRequest {
        guard let instance = state.withLock({ $0.protocolInstance }),
              let jar = CookieJar(for: instance, on: calls.platform)
        else {
            return request
        }
        return jar.addingCookies(to: request)
    }

    func whenStopped(_ action: @escaping @Sendable () -> Void) {
        let stopped = state.withLock { state in
            let stopped = state.isStopped && state.relay == nil
            if !stopped { state.onStop = action }
            return stopped
        }
        if stopped { action() }
    }

    /// Tells the client `event`, or passes it on to the next request's channel once a hop was reported.
    func send(_ event: ClientEvent) {
        send([event])
    }

    /// Tells the client `events`, in order: those between hops in one go on the client's queue.
    func send(_ events: [ClientEvent]) {
        var rest = events[...]
        while let hop = rest.firstIndex(where: { if case .redirect = $0 { true } else { false } }) {
            tell(rest[..<hop])
            guard case let .redirect(response, target, method) = rest[hop] else { break }
            if let relay = state.withLock({ $0.relay }) {
                relay.pass(rest[hop])
            } else {
                // Stored now, whether the hop is reported or followed here: the next request must carry them.
                storeCookies(of: response)
                reportRedirect(response, to: target, method: method)
            }
            rest = rest[rest.index(after: hop)...]
        }
        tell(rest)
    }

    /// Events with no hop among them, told on the client's queue: right here when this is it.
    private func tell(_ events: ArraySlice<ClientEvent>) {
        guard !events.isEmpty else { return }
        if let relay = state.withLock({ $0.relay }) { return events.forEach(relay.pass) }
        tellOnClientQueue(events, ending: events.contains { $0.isEnd })
    }

    /// An end whose caller is being cancelled is sent once more to the back of the queue first (see CallerTask).
    private func tellOnClientQueue(_ events: ArraySlice<ClientEvent>, ending: Bool) {
        guard clientQueue.isCurrent, !(ending && yieldsBeforeEnding()) else {
            return clientQueue.async { [self] in tellOnClientQueue(events, ending: ending) }
        }
        tellHere(events, ending: ending)
    }

    /// Tells the client `events`, unless the load was stopped or its task is being cancelled.
    private func tellHere(_ events: ArraySlice<ClientEvent>, ending: Bool) {
        guard let (instance, client) = endpoint else { return }
        for event in events {
            calls.perform(state.withLock { $0.delivery.deliver(event) }, on: client, from: instance)
        }
        if ending { state.withLock { $0.protocolInstance = nil } }
    }

    /// Talks to the client on the queue it must be talked to on, unless the load was stopped by then.
    /// An end whose caller is being cancelled is sent once more to the back of the queue first (see CallerTask).
    private func toClient(ending: Bool, _ body: @escaping (VCRURLProtocol, any URLProtocolClient) -> Void) {
        if clientQueue.isCurrent, !(ending && yieldsBeforeEnding()) {
            guard let (instance, client) = endpoint else { return }
            body(instance, client)
            if ending { state.withLock { $0.protocolInstance = nil } }
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
        return state.withLock { state in
            defer { state.hasYieldedBeforeEnding = true }
            return !state.hasYieldedBeforeEnding
        }
    }

    // MARK: Reported hops (Apple's loader)

    /// Hops of this request's chapter are reported to the client and continued through `handoffs`.
    func reportRedirects(to handoffs: RedirectHandoffs) {
        guard redirectHandling == .reportToClient else { return }
        state.withLock { $0.handoffs = handoffs }
    }

    /// Reports a hop, as Apple's loader expects: `wasRedirectedTo`, the 3xx and the end in one client block. The
    /// loader asks the delegate, then starts a protocol for the next request, which takes the rest of the chapter
    /// from `handoffs`; or, refused, ends the task with the 3xx. Where hops are not reported there is nothing to do:
    /// the client gets the final response.
    private func reportRedirect(_ hop: HTTPURLResponse, to target: URL, method: String?) {
        guard redirectHandling == .reportToClient else { return }
        let reported: (RedirectHandoffs, URLRequest)? = state.withLock { state in
            guard let handoffs = state.handoffs, !state.isStopped, let original = state.protocolInstance?.request else {
                return nil
            }
            state.relay = RedirectRelay()
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

    /// `successor` serves the request this channel's reported hop led to: it gets what was held back, then
    /// everything that follows, and stopping it stops what this channel would have stopped.
    func handOff(to successor: ClientChannel) {
        let (onStop, relay) = state.withLock { state in
            defer { state.onStop = nil }
            return (state.onStop, state.relay)
        }
        if let onStop { successor.whenStopped(onStop) }
        relay?.hand(to: successor)
    }
}
