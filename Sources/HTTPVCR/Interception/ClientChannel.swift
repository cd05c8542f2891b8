import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Hands what the player or the recorder produces to the URL loading system's client, once, in order.
///
/// On Linux the body is handed over in one `didLoad` just before the end, because swift-corelibs-foundation
/// keeps only the last chunk for completion-handler and async callers. Redirect hops recorded as separate
/// requests (3xx responses) are followed here, by matching the next hop on the cassette, because corelibs
/// cannot take `wasRedirectedTo` from a protocol.
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
    /// Called when the client is gone, to stop a recording in flight.
    private var onStop: (@Sendable () -> Void)?

    init(protocolInstance: VCRURLProtocol) {
        self.protocolInstance = protocolInstance
        self.originalURL = protocolInstance.request.url
    }

    /// The client's protocol and the client, unless the load was stopped.
    private var endpoint: (VCRURLProtocol, any URLProtocolClient)? {
        lock.lock()
        defer { lock.unlock() }
        guard !isStopped, let protocolInstance, let client = protocolInstance.client else { return nil }
        return (protocolInstance, client)
    }

    func stop() {
        lock.lock()
        isStopped = true
        protocolInstance = nil
        let onStop = self.onStop
        self.onStop = nil
        lock.unlock()
        onStop?()
    }

    func whenStopped(_ action: @escaping @Sendable () -> Void) {
        lock.lock()
        let stopped = isStopped
        if !stopped { onStop = action }
        lock.unlock()
        if stopped { action() }
    }

    // MARK: Replay

    func receive(_ event: Scene.Event) {
        switch event {
        case .request, .redirect:
            break  // the hops were followed when recorded; the client gets the final response
        case let .response(recorded):
            guard let response = recorded.httpURLResponse(fallbackURL: originalURL) else {
                return fail(VCRError(.malformedCassette, "A recorded response has no usable URL: \(recorded.url)"))
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
        if !isRecorded, Self.isRedirect(response), redirectTarget(of: response) != nil {
            lock.lock()
            heldRedirect = response
            lock.unlock()
            return
        }
        toClient { instance, client in
            client.urlProtocol(instance, didReceive: response, cacheStoragePolicy: .notAllowed)
        }
    }

    func deliver(data: Data) {
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

    func finish() {
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

    /// Talks to the client on the queue it must be talked to on, unless the load was stopped by then.
    private func toClient(ending: Bool = false, _ body: @escaping (VCRURLProtocol, any URLProtocolClient) -> Void) {
        if clientQueue.isDirect {
            callClient(ending: ending, body)
        } else {
            clientQueue.async { [self] in callClient(ending: ending, body) }
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

    // MARK: Redirects recorded as separate requests

    private static func isRedirect(_ response: HTTPURLResponse) -> Bool {
        [301, 302, 303, 307, 308].contains(response.statusCode)
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
        var next = original
        next.url = target
        let method = (original.httpMethod ?? "GET").uppercased()
        if redirect.statusCode == 303 || ((redirect.statusCode == 301 || redirect.statusCode == 302) && method == "POST") {
            next.httpMethod = "GET"
            next.httpBody = nil
            next.setValue(nil, forHTTPHeaderField: "Content-Type")
            next.setValue(nil, forHTTPHeaderField: "Content-Length")
        }
        guard let filtered = cassette.filtered(next) else { return false }
        return cassette.replayIfMatched(filtered, to: self)
    }
}
