import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCRCassettes

/// The cookie storage of the session a load belongs to, used as its native loader would: `Set-Cookie` of every
/// response and redirect hop (recorded or replayed) is stored before the client hears of it, and a followed hop's
/// request carries the cookies stored for its URL.
///
/// A custom protocol's responses never reach the session's storage by themselves: swift-corelibs-foundation
/// stores cookies in its libcurl handle, and adds the `Cookie` header only when a task is created (so the first
/// request of a load has it already). Which storage is the platform's say (``LoaderPlatform/cookieStorage(for:)``),
/// looked up only once a response has a cookie to store: corelibs' session's own, read from the task; on Apple
/// platforms, where the protocol cannot see its session, the shared storage, as other stubbing libraries use
/// (unverified: no Mac has run it yet).
struct CookieJar {
    private let storage: HTTPCookieStorage
    private let setsCookies: Bool

    /// nil when the session keeps no cookies (no storage, or an accept policy of `.never`).
    init?(for protocolInstance: URLProtocol, on platform: any LoaderPlatform) {
        guard protocolInstance.request.httpShouldHandleCookies,
              let (storage, setsCookies) = platform.cookieStorage(for: protocolInstance)
        else { return nil }
        self.storage = storage
        self.setsCookies = setsCookies
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
