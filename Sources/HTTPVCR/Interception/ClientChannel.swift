import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Hands what the player or the recorder produces to the URL loading system's client, once, in order.
///
/// On Linux the body is handed over in one `didLoad` just before the end, because swift-corelibs-foundation
/// keeps only the last chunk for completion-handler and async callers, and redirect hops are followed here
/// (``RedirectHandling/followInProtocol``): corelibs cannot take `wasRedirectedTo` from a protocol. Where the
/// loader can (``RedirectHandling/reportToClient``), each hop is reported and the rest of the request's chapter is
/// relayed to the channel of the protocol the loader starts for the next request.
final class ClientChannel: SceneReceiver, @unchecked Sendable {
    private let lock = NSLock()
    private var protocolInstance: VCRURLProtocol?
    private let originalURL: URL?
    private var isStopped = false
    private var bufferedBody = Data()
    private var heldRedirect: HTTPURLResponse?
    private var redirectsFollowed = 0
    /// Created in `startLoading`, on the queue client callbacks must use.
    let clientQueue = ClientQueue()
    /// The Swift task that started the request, if known: while it is being cancelled, the end waits its turn.
    private let caller: CallerTask?
    /// The end is to be (or was) delivered from a block sent to the client's queue after the caller was seen
    /// cancelled.
    private var hasYieldedBeforeEnding = false
    /// Called when the client is gone, to stop a recording in flight.
    private var onStop: (@Sendable () -> Void)?

    let redirectHandling: RedirectHandling
    /// Where a reported hop leaves the rest of its chapter. nil: hops are followed here, even when reported
    /// ones could be (a request that bypasses the cassette).
    private var handoffs: RedirectHandoffs?
    /// Set once this channel reported a hop: what comes after belongs to the next request's channel. Made only
    /// then, so that a request without reported hops pays for no second lock.
    private var relay: Relay?

    private final class Relay {
        /// Held while relaying, so that what was relayed reaches the next channel in order.
        let lock = NSLock()
        var successor: ClientChannel?
        var pending: [Input] = []
    }

    /// What a channel is handed, in the form it is relayed in.
    private enum Input {
        case response(HTTPURLResponse, isRecorded: Bool)
        case redirect(HTTPURLResponse, to: URL, method: String?)
        case data(Data)
        case finish
        case fail(any Error)
    }

    init(protocolInstance: VCRURLProtocol, redirectHandling: RedirectHandling, caller: CallerTask?) {
        self.protocolInstance = protocolInstance
        self.originalURL = protocolInstance.request.url
        self.redirectHandling = redirectHandling
        self.caller = caller
    }

    /// The client's protocol and the client, unless the load was stopped or its task is being cancelled.
    private var endpoint: (VCRURLProtocol, any URLProtocolClient)? {
        lock.lock()
        let instance = isStopped ? nil : protocolInstance
        lock.unlock()
        guard let instance, let client = instance.client, instance.isTaskLive else { return nil }
        return (instance, client)
    }

    func stop() {
        lock.lock()
        isStopped = true
        protocolInstance = nil
        // Handed off: the next request's protocol goes on with the load, and its own stop ends it.
        if relay != nil { return lock.unlock() }
        let onStop = self.onStop
        self.onStop = nil
        lock.unlock()
        onStop?()
    }

    func whenStopped(_ action: @escaping @Sendable () -> Void) {
        lock.lock()
        let stopped = isStopped && relay == nil
        if !stopped { onStop = action }
        lock.unlock()
        if stopped { action() }
    }

    // MARK: Replay

    var isOnClientQueue: Bool { clientQueue.isCurrent }

    func onClientQueue(_ body: @escaping @Sendable () -> Void) {
        clientQueue.async(body)
    }

    func yieldsBeforeEnding() -> Bool {
        guard caller?.isCancelled == true else { return false }
        lock.lock()
        defer { lock.unlock() }
        if hasYieldedBeforeEnding { return false }
        hasYieldedBeforeEnding = true
        return true
    }

    func receive(_ event: Scene.Event) {
        switch event {
        case .request:
            break
        case let .redirect(hop, next):
            // Followed when recorded: the client gets the final response, unless hops are reported.
            guard redirectHandling == .reportToClient, let url = URL(string: next.url),
                  let response = hop.httpURLResponse(fallbackURL: originalURL)
            else { break }
            redirected(response, to: url, method: next.method)
        case let .response(recorded):
            guard let response = recorded.httpURLResponse(fallbackURL: originalURL) else {
                return fail(VCRError.unusableResponseURL(recorded))
            }
            deliver(response: response)
        case let .data(data):
            deliver(data: data)
        case let .error(recorded):
            fail(recorded.foundationError)
        case .completion:
            finish()
        }
    }

    // MARK: Delivery

    /// While recording, the recorder's session has followed the hops already: a 3xx is final.
    func deliver(response: HTTPURLResponse, isRecorded: Bool = false) {
        if relayed(.response(response, isRecorded: isRecorded)) { return }
        if !isRecorded, Self.isRedirect(response), let target = redirectTarget(of: response) {
            // A hop a foreign tape holds as a request of its own.
            switch redirectHandling {
            case .followInProtocol:
                lock.lock()
                heldRedirect = response
                lock.unlock()
                return
            case .reportToClient:
                // The loader asks the delegate, then loads the next request (matched on the tape like any
                // other) or ends with this 3xx, its body and the finish that follow.
                guard let original = liveRequest else { return }
                let next = original.followingRedirect(status: response.statusCode, to: target)
                return toClient { instance, client in
                    client.urlProtocol(instance, wasRedirectedTo: next, redirectResponse: response)
                    client.urlProtocol(instance, didReceive: response, cacheStoragePolicy: .notAllowed)
                }
            }
        }
        toClient { instance, client in
            client.urlProtocol(instance, didReceive: response, cacheStoragePolicy: .notAllowed)
        }
    }

    func deliver(data: Data) {
        if relayed(.data(data)) { return }
        lock.lock()
        if heldRedirect != nil {
            lock.unlock()
            return  // a hop's body is not what the client ends with
        }
        #if canImport(FoundationNetworking)
        if bufferedBody.isEmpty { bufferedBody = data } else { bufferedBody.append(data) }
        lock.unlock()
        #else
        lock.unlock()
        toClient { instance, client in client.urlProtocol(instance, didLoad: data) }
        #endif
    }

    /// A hop of a chapter: reported to the client when hops are reported, else nothing to do (the client gets
    /// the final response). The rest of the chapter waits for the protocol that loads `target`.
    func redirected(_ hop: HTTPURLResponse, to target: URL, method: String?) {
        guard redirectHandling == .reportToClient else { return }
        if relayed(.redirect(hop, to: target, method: method)) { return }
        lock.lock()
        let handoffs = self.handoffs
        let original = isStopped ? nil : protocolInstance?.request
        if handoffs != nil, original != nil { relay = Relay() }
        lock.unlock()
        guard let handoffs, let original else { return }
        let next = original.followingRedirect(status: hop.statusCode, to: target, recordedMethod: method)
        handoffs.expect(next, continuing: self)
        toClient(ending: true) { instance, client in
            client.urlProtocol(instance, wasRedirectedTo: next, redirectResponse: hop)
            // Ignored once the loader follows the hop; the task's outcome when the delegate refuses it.
            client.urlProtocol(instance, didReceive: hop, cacheStoragePolicy: .notAllowed)
            client.urlProtocolDidFinishLoading(instance)
        }
    }

    func finish() {
        if relayed(.finish) { return }
        lock.lock()
        let redirect = heldRedirect
        heldRedirect = nil
        let body = bufferedBody
        bufferedBody = Data()
        lock.unlock()
        if let redirect, follow(redirect) { return }
        toClient(ending: true) { instance, client in
            if let redirect {
                client.urlProtocol(instance, didReceive: redirect, cacheStoragePolicy: .notAllowed)
            }
            if !body.isEmpty { client.urlProtocol(instance, didLoad: body) }
            client.urlProtocolDidFinishLoading(instance)
        }
    }

    func fail(_ error: any Error) {
        if relayed(.fail(error)) { return }
        lock.lock()
        let body = bufferedBody
        bufferedBody = Data()
        heldRedirect = nil
        lock.unlock()
        toClient(ending: true) { instance, client in
            if !body.isEmpty { client.urlProtocol(instance, didLoad: body) }
            client.urlProtocol(instance, didFailWithError: error)
        }
    }

    /// The request as the client sent it, unless the load was stopped.
    private var liveRequest: URLRequest? {
        lock.lock()
        defer { lock.unlock() }
        return isStopped ? nil : protocolInstance?.request
    }

    /// Talks to the client on the queue it must be talked to on, unless the load was stopped by then.
    /// An end whose caller is being cancelled is sent once more to the back of the queue first (see CallerTask).
    private func toClient(ending: Bool = false, _ body: @escaping (VCRURLProtocol, any URLProtocolClient) -> Void) {
        if clientQueue.isCurrent, !(ending && yieldsBeforeEnding()) {
            callClient(ending: ending, body)
        } else {
            clientQueue.async { [self] in toClient(ending: ending, body) }
        }
    }

    private func callClient(ending: Bool, _ body: (VCRURLProtocol, any URLProtocolClient) -> Void) {
        guard let (instance, client) = endpoint else { return }
        body(instance, client)
        if ending {
            lock.lock()
            protocolInstance = nil
            lock.unlock()
        }
    }

    // MARK: Reported hops

    /// Hops of this request's chapter are reported to the client and continued through `handoffs`.
    func reportRedirects(to handoffs: RedirectHandoffs) {
        guard redirectHandling == .reportToClient else { return }
        lock.lock()
        self.handoffs = handoffs
        lock.unlock()
    }

    /// `successor` serves the request this channel's reported hop led to: it gets what was held back, then
    /// everything that follows, and stopping it stops what this channel would have stopped.
    func handOff(to successor: ClientChannel) {
        lock.lock()
        let onStop = self.onStop
        self.onStop = nil
        lock.unlock()
        if let onStop { successor.whenStopped(onStop) }
        guard let relay = currentRelay else { return }
        relay.lock.lock()
        defer { relay.lock.unlock() }
        let pending = relay.pending
        relay.pending = []
        relay.successor = successor
        for input in pending { successor.accept(input) }
    }

    private var currentRelay: Relay? {
        guard redirectHandling == .reportToClient else { return nil }
        lock.lock()
        defer { lock.unlock() }
        return relay
    }

    /// Relays `input` to the next request's channel, or holds it until there is one. False when this channel
    /// has reported no hop and handles `input` itself.
    private func relayed(_ input: Input) -> Bool {
        guard let relay = currentRelay else { return false }
        relay.lock.lock()
        defer { relay.lock.unlock() }
        if let successor = relay.successor { successor.accept(input) } else { relay.pending.append(input) }
        return true
    }

    private func accept(_ input: Input) {
        switch input {
        case let .response(response, isRecorded): deliver(response: response, isRecorded: isRecorded)
        case let .redirect(hop, target, method): redirected(hop, to: target, method: method)
        case let .data(data): deliver(data: data)
        case .finish: finish()
        case let .fail(error): fail(error)
        }
    }

    // MARK: Redirects recorded as separate requests, followed here

    private static func isRedirect(_ response: HTTPURLResponse) -> Bool {
        HTTPRedirect.isRedirect(status: response.statusCode)
    }

    private func redirectTarget(of response: HTTPURLResponse) -> URL? {
        guard let location = response.value(forHTTPHeaderField: "Location"), let base = response.url else { return nil }
        return URL(string: location, relativeTo: base)?.absoluteURL
    }

    /// Plays the next hop from the cassette to this same client. Returns false when there is no such hop on
    /// the cassette (the client then gets the 3xx itself, as it would from a server it does not follow).
    private func follow(_ redirect: HTTPURLResponse) -> Bool {
        lock.lock()
        redirectsFollowed += 1
        let tooMany = redirectsFollowed > 16
        let original = protocolInstance?.request
        lock.unlock()
        guard !tooMany, let original, let target = redirectTarget(of: redirect), let cassette = VCR.cassette else {
            return false
        }
        let next = original.followingRedirect(status: redirect.statusCode, to: target)
        guard let filtered = cassette.filtered(next) else { return false }
        return cassette.replayIfMatched(filtered, to: self)
    }
}
