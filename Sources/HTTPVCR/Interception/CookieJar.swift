import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The cookie storage of the session a load belongs to, used as its native loader would: `Set-Cookie` of every
/// response and redirect hop (recorded or replayed) is stored before the client hears of it, and a followed hop's
/// request carries the cookies stored for its URL.
///
/// A custom protocol's responses never reach the session's storage by themselves: swift-corelibs-foundation
/// stores cookies in its libcurl handle, and adds the `Cookie` header only when a task is created (so the first
/// request of a load has it already). Its session is internal to the task (``LoaderInternals``), looked up only once
/// a response has a cookie to store. Elsewhere the protocol cannot see the session; the shared storage is used, as
/// other stubbing libraries do (unverified: no Mac has run it yet).
struct CookieJar {
    private let storage: HTTPCookieStorage
    private let setsCookies: Bool

    /// nil when the session keeps no cookies (no storage, or an accept policy of `.never`).
    init?(for protocolInstance: URLProtocol) {
        guard protocolInstance.request.httpShouldHandleCookies else { return nil }
        #if canImport(FoundationNetworking) && !HTTPVCR_APPLE_PATHS
        guard let task = protocolInstance.task, let session = LoaderInternals.session(of: task) else { return nil }
        let configuration = session.configuration
        guard configuration.httpCookieAcceptPolicy != .never, let storage = configuration.httpCookieStorage else {
            return nil
        }
        self.storage = storage
        self.setsCookies = configuration.httpShouldSetCookies
        #else
        self.storage = HTTPCookieStorage.shared
        self.setsCookies = true
        #endif
    }

    /// Whether `response` sets a cookie: the common case, none, costs no session lookup.
    static func setsCookies(_ response: HTTPURLResponse) -> Bool {
        response.allHeaderFields.keys.contains { ($0 as? String)?.equalsIgnoringASCIICase("Set-Cookie") == true }
    }

    /// Stores the cookies `response` sets, for its URL.
    func store(_ response: HTTPURLResponse) {
        guard let url = response.url, let fields = response.allHeaderFields as? [String: String] else { return }
        let cookies = HTTPCookie.cookies(withResponseHeaderFields: fields, for: url)
        guard !cookies.isEmpty else { return }
        storage.setCookies(cookies, for: url, mainDocumentURL: nil)
    }

    /// `request` with the `Cookie` header the loader would send to its URL, replacing the one it had.
    func addingCookies(to request: URLRequest) -> URLRequest {
        guard setsCookies, request.httpShouldHandleCookies, let url = request.url,
              let cookies = storage.cookies(for: url), !cookies.isEmpty,
              let header = HTTPCookie.requestHeaderFields(with: cookies)["Cookie"], !header.isEmpty
        else { return request }
        var request = request
        request.setValue(header, forHTTPHeaderField: "Cookie")
        return request
    }

}

extension URLProtocol {
    /// Stores the cookies a response or hop sets in the session's storage, as the native loader would.
    func storeCookies(of response: HTTPURLResponse) {
        CookieJar(for: self)?.store(response)
    }
}
