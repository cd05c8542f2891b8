import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the URL loading system's client is told of a load: the one vocabulary the player and the recorder both
/// speak to it.
enum ClientEvent {
    /// `setsCookies`: whether it has a `Set-Cookie` to store (known from the tape for free; asking an
    /// `HTTPURLResponse` costs as much as a tenth of a replayed request).
    case response(HTTPURLResponse, setsCookies: Bool)
    /// A hop: reported where the loader takes hops (``RedirectHandling/reportToClient``), else nothing to tell.
    case redirect(HTTPURLResponse, to: URL, method: String?)
    case data(Data)
    case finish
    case fail(any Error)

    /// Whether nothing follows it.
    var isEnd: Bool {
        switch self {
        case .finish, .fail: true
        default: false
        }
    }

    /// What a recorded scene tells the client; nil for the request, which the client made. `fallbackURL` is the
    /// live request's URL, for recorded responses that have none.
    init?(_ event: Scene.Event, fallbackURL: URL?) {
        switch event {
        case .request:
            return nil
        case let .redirect(hop, next):
            guard let response = hop.httpURLResponse(fallbackURL: fallbackURL), let url = URL(string: next.url) else {
                return nil
            }
            self = .redirect(response, to: url, method: next.method)
        case let .response(recorded):
            guard let response = recorded.httpURLResponse(fallbackURL: fallbackURL) else {
                self = .fail(VCRError.unusableResponseURL(recorded))
                return
            }
            self = .response(response, setsCookies: recorded.headers.contains {
                $0.name.equalsIgnoringASCIICase("Set-Cookie")
            })
        case let .data(data):
            self = .data(data)
        case let .error(recorded):
            self = .fail(recorded.foundationError)
        case .completion:
            self = .finish
        }
    }

    /// Tells the client. A redirect is never sent this way: reporting one takes a hand-off (``ClientChannel``).
    func send(to client: any URLProtocolClient, from protocolInstance: URLProtocol) {
        switch self {
        case let .response(response, _):
            client.urlProtocol(protocolInstance, didReceive: response, cacheStoragePolicy: .notAllowed)
        case .redirect:
            break
        case let .data(data):
            client.urlProtocol(protocolInstance, didLoad: data)
        case .finish:
            client.urlProtocolDidFinishLoading(protocolInstance)
        case let .fail(error):
            client.urlProtocol(protocolInstance, didFailWithError: error)
        }
    }
}

/// Turns a load's events into the client calls that convey them, whichever way they came (a chapter handed over
/// whole, scenes delivered one by one, a recording in flight):
/// - Each chunk goes as it comes where the client takes chunks (``takesChunks(_:)``). Elsewhere the body goes in
///   one `didLoad`, just before the end: swift-corelibs-foundation keeps only the last chunk for completion-handler
///   and async callers.
/// - What body there is goes before an error.
/// - Nothing goes after the end; redirects are left to the caller.
struct ClientDelivery {
    private var bufferedBody = Data()
    private(set) var hasEnded = false
    /// Whether chunks go to the client one by one.
    let streamsChunks: Bool

    init(streamsChunks: Bool) {
        self.streamsChunks = streamsChunks
    }

    /// What to tell the client of `event` now: a body held back until the end, then the event itself; either may
    /// be nil.
    mutating func deliver(_ event: ClientEvent) -> (body: Data?, event: ClientEvent?) {
        guard !hasEnded else { return (nil, nil) }
        switch event {
        case .redirect:
            return (nil, nil)
        case let .data(data):
            if streamsChunks { return (nil, event) }
            if bufferedBody.isEmpty { bufferedBody = data } else { bufferedBody.append(data) }
            return (nil, nil)
        case .finish, .fail:
            hasEnded = true
            defer { bufferedBody = Data() }
            return (bufferedBody.isEmpty ? nil : bufferedBody, event)
        case .response:
            return (nil, event)
        }
    }
}

extension ClientDelivery {
    /// Whether the client of a load hears of every `didLoad`: on Apple platforms always; with
    /// swift-corelibs-foundation only for a task that calls its session's data delegate (made without a
    /// completion handler, not through `data(for:)`), which it tells only from its session's task registry. That
    /// registry is internal (read with `Mirror`) and must be read on the session's work queue: call from
    /// `startLoading`. When it cannot be read, one `didLoad`, which every client takes.
    static func takesChunks(_ protocolInstance: URLProtocol) -> Bool {
        #if canImport(FoundationNetworking) && !HTTPVCR_APPLE_PATHS
        guard let task = protocolInstance.task, let session = URLSessionInternals.session(of: task),
              session.delegate is URLSessionDataDelegate,
              let registry = URLSessionInternals.child("taskRegistry", of: session),
              let behaviours = URLSessionInternals.child("behaviours", of: registry) as? [Int: Any],
              let behaviour = behaviours[task.taskIdentifier]
        else { return false }
        return "\(behaviour)" == "callDelegate"
        #else
        return true
        #endif
    }
}

extension URLProtocolClient {
    /// Tells the client what ``ClientDelivery/deliver(_:)`` said to.
    func receive(_ delivered: (body: Data?, event: ClientEvent?), from protocolInstance: URLProtocol) {
        // Cookies first: a completion handler may make the next request as soon as it is told.
        if case let .response(response, setsCookies: true)? = delivered.event {
            protocolInstance.storeCookies(of: response)
        }
        if let body = delivered.body { ClientEvent.data(body).send(to: self, from: protocolInstance) }
        delivered.event?.send(to: self, from: protocolInstance)
    }
}

extension VCRError {
    static func unusableResponseURL(_ recorded: RecordedResponse) -> VCRError {
        VCRError(.malformedCassette, "A recorded response has no usable URL: \(recorded.url)")
    }
}
