import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCRCassettes

/// What the URL loading system does by itself between a request and its outcome, written down once: which responses
/// lead to another request of the same load (a redirect, a 401 asking for credentials) and what that request is. The
/// app's delegate may decide otherwise; ``Load`` asks it. These are swift-corelibs-foundation's rules (its
/// `HTTPURLProtocol` and `URLSessionTask`), which agree with Apple's for every case a test meets.
enum LoaderRules {
    /// The most hops one load follows; the next fails with `NSURLErrorHTTPTooManyRedirects`.
    static let redirectLimit = 20

    /// The request the loader proposes after `response` to `request`: nil when `response` is no redirect it
    /// follows (300 and 304 are final; a 3xx without a readable `Location` too). 301 and 302 after a POST, and every
    /// 303, become a GET without a body (``RedirectRule``); a relative `Location` is resolved against the request's
    /// URL.
    static func redirect(from request: URLRequest, by response: HTTPURLResponse) -> URLRequest? {
        guard [301, 302, 303, 305, 306, 307, 308].contains(response.statusCode),
              let location = response.value(forHTTPHeaderField: "Location"),
              let target = URL(string: location),
              let url = resolve(target, against: request.url)
        else { return nil }
        return request.followingRedirect(status: response.statusCode, to: url)
    }

    /// Whether `response` ends a load only once the app's session has had its say: a redirect it may follow, or a
    /// challenge it may answer.
    static func leadsFurther(_ response: HTTPURLResponse, after request: URLRequest) -> Bool {
        if response.statusCode == 401 { return protectionSpace(of: response) != nil }
        return (300...399).contains(response.statusCode) && redirect(from: request, by: response) != nil
    }

    /// The same, for a response on the tape: read without building an `HTTPURLResponse` (most chapters end in a
    /// plain 200, and this runs for each one replayed).
    static func leadsFurther(_ response: RecordedResponse) -> Bool {
        switch response.statusCode {
        case 401: response.headers[field: "WWW-Authenticate"].flatMap(challengeScheme) != nil
        case 301, 302, 303, 305, 306, 307, 308: response.headers[field: "Location"] != nil
        default: false
        }
    }

    private static func resolve(_ target: URL, against base: URL?) -> URL? {
        if target.scheme != nil, target.host != nil { return target }
        guard let base, var components = URLComponents(url: base, resolvingAgainstBaseURL: false) else { return nil }
        if target.host != nil {
            components.host = target.host
            components.port = target.port
        }
        components.path = target.path.hasPrefix("/") ? target.path : "/" + target.path
        components.percentEncodedQuery = target.query
        components.percentEncodedFragment = target.fragment
        return components.url
    }

    // MARK: Challenges

    /// What a 401 asks credentials for, read from its first `WWW-Authenticate` challenge; nil when it asks for none
    /// the loader can read (then the 401 is just the outcome).
    static func protectionSpace(of response: HTTPURLResponse) -> URLProtectionSpace? {
        guard response.statusCode == 401,
              let header = response.value(forHTTPHeaderField: "WWW-Authenticate"),
              let scheme = challengeScheme(header),
              let url = response.url, let host = url.host,
              let protocolName = url.scheme?.lowercased(), protocolName == "http" || protocolName == "https"
        else { return nil }
        let method = switch scheme.lowercased() {
        case "basic": NSURLAuthenticationMethodHTTPBasic
        case "digest": NSURLAuthenticationMethodHTTPDigest
        default: NSURLAuthenticationMethodDefault
        }
        return URLProtectionSpace(
            host: host,
            port: url.port ?? (protocolName == "http" ? 80 : 443),
            protocol: protocolName,
            realm: parameter("realm", in: header),
            authenticationMethod: method
        )
    }

    /// The auth-scheme a `WWW-Authenticate` value opens with (RFC 7235: a token), if it opens with one.
    private static func challengeScheme(_ header: String) -> String? {
        let token = header.drop { $0 == " " || $0 == "\t" }.prefix { character in
            character.isASCII && (character.isLetter || character.isNumber || "!#$%&'*+-.^_`|~".contains(character))
        }
        return token.isEmpty ? nil : String(token)
    }

    /// The value of the auth-param `name` (quoted or not) in a challenge.
    private static func parameter(_ name: String, in header: String) -> String? {
        guard let range = header.range(of: name + "=", options: .caseInsensitive) else { return nil }
        let rest = header[range.upperBound...]
        if rest.first == "\"" {
            return String(rest.dropFirst().prefix { $0 != "\"" })
        }
        return String(rest.prefix { $0 != "," && $0 != " " })
    }

    /// `request` carrying `credential` for `space`, as the loader retries it; nil for a scheme it cannot answer
    /// (corelibs answers Basic only: it traps on Digest and on schemes it does not know).
    static func authorizing(
        _ request: URLRequest,
        with credential: URLCredential,
        for space: URLProtectionSpace
    ) -> URLRequest? {
        guard space.authenticationMethod == NSURLAuthenticationMethodHTTPBasic else { return nil }
        let token = Data("\(credential.user ?? ""):\(credential.password ?? "")".utf8).base64EncodedString()
        var request = request
        request.setValue("Basic \(token)", forHTTPHeaderField: "Authorization")
        return request
    }

    /// The credential the session's storage offers for `space`, as the loader proposes it to the delegate: the
    /// first by user name, else the default one.
    static func storedCredential(for space: URLProtectionSpace, in storage: URLCredentialStorage?) -> URLCredential? {
        guard let storage else { return nil }
        if let credentials = storage.credentials(for: space), let first = credentials.keys.sorted().first {
            return credentials[first]
        }
        return storage.defaultCredential(for: space)
    }
}

/// The sender a challenge must name. Session delegates answer through their completion handler, which is what
/// HTTPVCR reads; nothing is sent this way.
final class DelegateAnsweredChallenge: NSObject, URLAuthenticationChallengeSender, @unchecked Sendable {
    func use(_ credential: URLCredential, for challenge: URLAuthenticationChallenge) {}
    func continueWithoutCredential(for challenge: URLAuthenticationChallenge) {}
    func cancel(_ challenge: URLAuthenticationChallenge) {}
    func performDefaultHandling(for challenge: URLAuthenticationChallenge) {}
    func rejectProtectionSpaceAndContinue(with challenge: URLAuthenticationChallenge) {}
}

extension URLError {
    /// The error the loader ends a load with after ``LoaderRules/redirectLimit`` hops.
    static func tooManyRedirects(_ url: URL?) -> URLError {
        var info: [String: Any] = [NSLocalizedDescriptionKey: "too many HTTP redirects"]
        if let url { info[NSURLErrorFailingURLErrorKey] = url }
        return URLError(.httpTooManyRedirects, userInfo: info)
    }
}
