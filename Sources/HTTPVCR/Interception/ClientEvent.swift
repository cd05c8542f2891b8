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
    /// Request body sent so far: `bytes` now, `total` in all, of `expected` (`didSendBodyData`).
    case sentBody(Int64, total: Int64, expected: Int64)
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
}

/// Makes the calls for a load's events, on the client's queue, whichever way they came (scenes replayed, a
/// recording in flight), along the load's ``BodyRoute``: to the client, and to whoever else listens to the task as
/// the loader's own protocol would tell it. What is held back until the end is the load's
/// (``Load/ClientEnd/calls(for:route:)``).
struct ClientCalls {
    /// The client calls for one event: a body held back until the end, then the event; either may be nil.
    struct Delivered {
        var body: Data?
        var event: ClientEvent?
        var endsOnChallenge = false
    }

    let route: BodyRoute
    /// Who hears of progress and chunks besides the client, if anyone.
    let listener: ListenerCalls?
    let platform: any LoaderPlatform

    /// The calls for a load of `app`'s task, which `listener` listens to. Made in `startLoading`.
    init(_ app: AppSession, listener: TaskListener) {
        self.route = app.platform.bodyRoute(for: app.task, listener: listener)
        self.listener = ListenerCalls(app, listener: listener)
        self.platform = app.platform
    }

    /// Stores the cookies a response or hop sets in the session's storage, as the native loader would.
    func storeCookies(of response: HTTPURLResponse, from protocolInstance: URLProtocol) {
        CookieJar(for: protocolInstance, on: platform)?.store(response)
    }

    func perform(
        _ delivered: Delivered, on client: any URLProtocolClient, from protocolInstance: URLProtocol
    ) {
        guard let event = delivered.event else { return }
        switch event {
        case let .response(response, setsCookies):
            // Cookies first: a completion handler may make the next request as soon as it is told.
            if setsCookies { storeCookies(of: response, from: protocolInstance) }
            if case let .file(file) = route { file.expected = response.expectedContentLength }
            client.urlProtocol(protocolInstance, didReceive: response, cacheStoragePolicy: .notAllowed)
        case let .data(data):
            switch route {
            case .chunks: client.urlProtocol(protocolInstance, didLoad: data)
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
            if let body = delivered.body { client.urlProtocol(protocolInstance, didLoad: body) }
            if case let .file(file) = route {
                if let error = file.finish() {
                    return client.urlProtocol(protocolInstance, didFailWithError: VCRError.downloadNotWritten(file, error))
                }
                platform.setDownloadedFile(file.url, of: protocolInstance)
            }
            guard delivered.endsOnChallenge, let task = protocolInstance.task,
                  let response = task.response as? HTTPURLResponse, let session = listener?.session
                    ?? platform.session(of: task)
            else { return client.urlProtocolDidFinishLoading(protocolInstance) }
            platform.finishWithoutChallenge(task, session: session, response: response) {
                client.urlProtocolDidFinishLoading(protocolInstance)
            }
        case let .fail(error):
            if let body = delivered.body { client.urlProtocol(protocolInstance, didLoad: body) }
            if case let .file(file) = route { _ = file.finish() }
            if let task = protocolInstance.task { platform.setError(error, on: task) }
            client.urlProtocol(protocolInstance, didFailWithError: error)
        }
    }
}

extension VCRError {
    static func downloadNotWritten(_ file: DownloadFile, _ error: any Error) -> VCRError {
        VCRError(
            .unsupportedRequest,
            "HTTPVCR could not write the downloaded body to \(file.url.path): \(error.localizedDescription)"
        )
    }

    static func unusableResponseURL(_ recorded: RecordedResponse) -> VCRError {
        VCRError(.malformedCassette, "A recorded response has no usable URL: \(recorded.url)")
    }
}
