import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCRCassettes

/// What the two ends of a bridge agree on: the environment that names the bridge, the fields a bridged request and
/// its answer carry besides the app's own, and how a failure travels as an answer.
///
/// A bridged request is the app's request sent to `http://127.0.0.1:PORT/path?query` with three fields added:
/// the token, and the scheme, host and port it was meant for (`X-VCR-Bridge-Origin`). The answer is the cassette's
/// (or the server's) status, fields and body, plus `X-VCR-Bridge-URL`, the URL it came from. A failure is a 5xx with
/// `X-VCR-Error` naming its kind, the error's domain and code in fields, and its message as the body.
enum BridgeWire {
    /// The bridge's base URL, `http://127.0.0.1:PORT`.
    static let urlVariable = "HTTPVCR_BRIDGE_URL"
    /// The per-bridge token every request must carry.
    static let tokenVariable = "HTTPVCR_BRIDGE_TOKEN"

    static let tokenField = "X-VCR-Bridge-Token"
    static let originField = "X-VCR-Bridge-Origin"
    static let urlField = "X-VCR-Bridge-URL"
    static let errorField = "X-VCR-Error"
    /// A launched process's pid, said once when it connects: the bridge then knows the server the test runs, and
    /// what the test sends to the ports it listens on goes to it, untaped (``ServersUnderTest``).
    static let processField = "X-VCR-Bridge-Process"
    static let errorDomainField = "X-VCR-Error-Domain"
    static let errorCodeField = "X-VCR-Error-Code"
    /// The error's message, percent-encoded: a loader hands the response over before its body.
    static let errorMessageField = "X-VCR-Error-Message"

    /// Fields only the bridge uses: never passed on to the cassette, the server or the app.
    static let ownFields = [
        tokenField, originField, urlField, processField, errorDomainField, errorCodeField, errorMessageField,
    ]

    /// Whether `name` is one of ``ownFields``, in any case: they all begin with `X`, and are compared in place (a
    /// lowercased copy looked up in a set cost a twentieth of the bridge's answer).
    static func isOwnField(_ name: String) -> Bool {
        name.utf8.first.map { $0 | 0x20 == UInt8(ascii: "x") } == true
            && ownFields.contains { name.equalsIgnoringASCIICase($0) }
    }

    /// `X-VCR-Error` of a failure that is an `NSError` to rebuild in the app (a `VCRError`, a recorded `URLError`).
    static let errorKind = "bridged-error"

    /// 32 random bytes as 64 hex digits, from the system's generator.
    static func makeToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in String(format: "%02x", UInt8.random(in: .min ... .max, using: &generator)) }
            .joined()
    }

    /// Compares in time that does not depend on where they differ.
    static func tokensMatch(_ presented: String?, _ expected: String) -> Bool {
        guard var presented, presented.utf8.count == expected.utf8.count else { return false }
        var expected = expected
        // In place: copying both into arrays cost more than comparing them.
        return presented.withUTF8 { left in
            expected.withUTF8 { right in
                var difference: UInt8 = 0
                for index in left.indices { difference |= left[index] ^ right[index] }
                return difference == 0
            }
        }
    }

    /// `scheme://host[:port]` of `url`, as `X-VCR-Bridge-Origin` carries it.
    static func origin(of url: URL) -> String? {
        if let (origin, _) = split(url.absoluteString) { return origin }
        guard let scheme = url.scheme?.lowercased(), let host = URLComponents(url: url, resolvingAgainstBaseURL: true)?
            .percentEncodedHost, !host.isEmpty
        else { return nil }
        return "\(scheme)://\(host)" + (url.port.map { ":\($0)" } ?? "")
    }

    /// ``origin(of:)`` and ``target(of:)`` of `url`, its text read once.
    static func originAndTarget(of url: URL) -> (origin: String, target: String)? {
        if let parts = split(url.absoluteString) { return parts }
        return origin(of: url).map { ($0, target(of: url)) }
    }

    /// `/path?query` of `url` (the path `/` when it has none).
    static func target(of url: URL) -> String {
        if let (_, target) = split(url.absoluteString) { return target }
        guard let parts = URLComponents(url: url, resolvingAgainstBaseURL: true) else { return "/" }
        let path = parts.percentEncodedPath.isEmpty ? "/" : parts.percentEncodedPath
        return path + (parts.percentEncodedQuery.map { "?" + $0 } ?? "")
    }

    /// Whether `text` is an origin as ``origin(of:)`` writes one: an http or https scheme, a host, nothing after.
    /// Read off the bytes: it is asked of every bridged request, and ``split(_:)`` makes two strings.
    static func isOrigin(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            let authorityStart = bytes.starts(with: "https://".utf8) ? 8 : bytes.starts(with: "http://".utf8) ? 7 : nil
            guard let authorityStart, authorityStart < bytes.count else { return false }
            // The path, query, fragment or user info would start here. Literals: a string's bytes searched for
            // each byte cost more than the rest of the check.
            return !bytes[authorityStart...].contains { $0 == 0x2F || $0 == 0x3F || $0 == 0x23 || $0 == 0x40 }
        }
    }

    /// An http(s) URL's text cut after its authority: the origin (scheme lowercased) and the target without the
    /// fragment, read off the text (URLComponents costs more than the rest of a bridged request). Nil for anything
    /// else, and for an authority with user info, left to URLComponents.
    private static func split(_ text: String) -> (origin: String, target: String)? {
        // Byte by byte: String's slicing, prefix test and lowercasing took a tenth of a bridged request's own work.
        var text = text
        return text.withUTF8 { bytes -> (origin: String, target: String)? in
            guard let colon = bytes.firstIndex(of: Byte.colon), colon == 4 || colon == 5,
                  bytes[colon...].starts(with: "://".utf8)
            else { return nil }
            // `| 0x20` lowers an ASCII letter, and these names are letters only.
            let scheme = colon == 4 ? "http" : "https"
            guard bytes[..<colon].elementsEqual(scheme.utf8, by: { $0 | 0x20 == $1 }) else { return nil }
            let authorityStart = colon + 3
            let authorityEnd = bytes[authorityStart...].firstIndex { $0 == Byte.slash || $0 == UInt8(ascii: "?")
                || $0 == UInt8(ascii: "#") } ?? bytes.endIndex
            guard authorityEnd > authorityStart, !bytes[authorityStart..<authorityEnd].contains(UInt8(ascii: "@"))
            else { return nil }
            let fragment = bytes[authorityEnd...].firstIndex(of: UInt8(ascii: "#")) ?? bytes.endIndex
            let origin = scheme + "://" + String(decoding: bytes[authorityStart..<authorityEnd], as: UTF8.self)
            let rest = String(decoding: bytes[authorityEnd..<fragment], as: UTF8.self)
            return (origin, authorityEnd < fragment && bytes[authorityEnd] == Byte.slash ? rest : "/" + rest)
        }
    }

    // MARK: Failures as answers

    /// The answer that carries `error` to the app: a `VCRError` (no match, a refused request) as 500, any other
    /// error (a recorded or live transport error) as 502, each rebuilt there as the same `NSError`.
    static func answer(for error: any Error) -> WireResponse {
        let nsError = error as NSError
        let status = error is VCRError ? 500 : 502
        let message = (error as? VCRError)?.message ?? nsError.localizedDescription
        var response = WireResponse.text(status, message, error: errorKind)
        response.fields.append(WireField(errorDomainField, nsError.domain))
        response.fields.append(WireField(errorCodeField, String(nsError.code)))
        let encoded = message.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed) ?? ""
        response.fields.append(WireField(errorMessageField, encoded))
        return response
    }

    /// The error a bridge's answer carries, if it is a failure: the same `VCRError` or `NSError` the test process
    /// had. A bridge refusing the request (a wrong token, a malformed one) is a `VCRError` too.
    static func error(in status: Int, fields: (String) -> String?, body: Data, url: URL?) -> (any Error)? {
        guard let kind = fields(errorField) else { return nil }
        let message = fields(errorMessageField).flatMap { $0.removingPercentEncoding }
            ?? String(decoding: body, as: UTF8.self).trimmingCharacters(in: .newlines)
        let domain = fields(errorDomainField) ?? ""
        let code = fields(errorCodeField).flatMap { Int($0) }
        if kind == errorKind, domain == VCRError.errorDomain, let code, let vcrCode = VCRError.Code(rawValue: code) {
            return VCRError(vcrCode, message, request: url.map { "\($0)" })
        }
        if kind == errorKind, !domain.isEmpty, let code {
            var info: [String: Any] = [NSLocalizedDescriptionKey: message]
            if let url {
                info[NSURLErrorFailingURLErrorKey] = url
                info["NSErrorFailingURLStringKey"] = url.absoluteString
            }
            return NSError(domain: domain, code: code, userInfo: info)
        }
        return VCRError(
            .unsupportedRequest,
            "The HTTPVCR bridge refused the request (\(status), \(kind)): \(message)",
            request: url.map { "\($0)" }
        )
    }
}

/// A URLSession delegate that never follows a redirect: the 3xx is the answer, for the client to decide on.
final class RedirectRefusal: NSObject, URLSessionTaskDelegate, Sendable {
    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }

    /// A session that sends exactly what it is given: no cookies, no cache, no credentials, no redirects.
    static func session() -> URLSession {
        URLSession(configuration: .verbatim, delegate: RedirectRefusal(), delegateQueue: nil)
    }
}
