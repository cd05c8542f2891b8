import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCRCassettes

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
    /// live request's URL, for recorded responses that have none (read only for responses and hops). A function
    /// rather than an initializer: it borrows the scene's event, which an initializer would take a copy of.
    @inline(__always)
    static func replaying(_ event: Scene.Event, fallbackURL: @autoclosure () -> URL?) -> ClientEvent? {
        switch event {
        case .request:
            return nil
        case let .redirect(hop, next):
            guard let response = hop.httpURLResponse(fallbackURL: fallbackURL()), let url = URL(string: next.url) else {
                return nil
            }
            return .redirect(response, to: url, method: next.method)
        case let .response(recorded):
            guard let response = recorded.httpURLResponse(fallbackURL: fallbackURL()) else {
                return .fail(VCRError.unusableResponseURL(recorded))
            }
            return .response(response, setsCookies: recorded.headers.contains {
                $0.name.equalsIgnoringASCIICase("Set-Cookie")
            })
        case let .data(data):
            return .data(data)
        case let .error(recorded):
            return .fail(recorded.foundationError)
        case .completion:
            return .finish
        }
    }
}

extension VCRError {
    static func unusableResponseURL(_ recorded: RecordedResponse) -> VCRError {
        VCRError(.malformedCassette, "A recorded response has no usable URL: \(recorded.url)")
    }
}
