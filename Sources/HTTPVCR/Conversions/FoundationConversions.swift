import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCRCassettes

extension RecordedRequest {
    /// The request as URLSession would send it: method, URL, per-request headers and the body.
    init(_ request: URLRequest) {
        self.init(
            method: (request.httpMethod ?? "GET").uppercased(),
            url: request.url?.absoluteString ?? "",
            headers: [RecordedHeader](request.allHTTPHeaderFields ?? [:]),
            body: request.httpBody
        )
    }

    var urlRequest: URLRequest {
        var request = URLRequest(url: URL(string: url) ?? URL(string: "about:blank")!)
        request.httpMethod = method
        for header in headers { request.addValue(header.value, forHTTPHeaderField: header.name) }
        request.httpBody = body
        return request
    }
}

extension RecordedResponse {
    init(_ response: HTTPURLResponse, httpVersion: String = "HTTP/1.1") {
        // Names are unique already: straight into the list, without a dictionary in between. They are always
        // strings in practice; interpolation would describe them through reflection.
        let fields = response.allHeaderFields
        var headers: [RecordedHeader] = []
        headers.reserveCapacity(fields.count)
        for (name, value) in fields {
            headers.append(RecordedHeader(name as? String ?? "\(name)", value as? String ?? "\(value)"))
        }
        self.init(
            url: response.url?.absoluteString ?? "",
            statusCode: response.statusCode,
            httpVersion: httpVersion,
            headers: headers.sortedByName()
        )
    }

    /// - Parameter fallbackURL: the request's URL: used when the recorded one is not a URL, and instead of
    ///   parsing the recorded one again when they are the same.
    func httpURLResponse(fallbackURL: URL?) -> HTTPURLResponse? {
        let parsed = fallbackURL.flatMap { $0.absoluteString == url ? $0 : nil } ?? URL(string: url)
        guard let url = parsed ?? fallbackURL else { return nil }
        return HTTPURLResponse(url: url, statusCode: statusCode, httpVersion: httpVersion, headerFields: headers.dictionary)
    }
}

extension RecordedError {
    /// The domain, code and the user info entries that can be written as text (the failing URL among them).
    init(_ error: any Error) {
        let nsError = error as NSError
        var userInfo: [String: String] = [:]
        for (key, value) in nsError.userInfo {
            switch value {
            case let text as String: userInfo[key] = text
            case let url as URL: userInfo[key] = url.absoluteString
            case let number as NSNumber: userInfo[key] = number.stringValue
            default: continue
            }
        }
        if userInfo[NSLocalizedDescriptionKey] == nil { userInfo[NSLocalizedDescriptionKey] = nsError.localizedDescription }
        self.init(domain: nsError.domain, code: nsError.code, userInfo: userInfo)
    }

    /// The error a client gets on replay: same domain and code, the failing URL as a URL again, and a
    /// `URLError` for URL loading errors, as URLSession itself throws.
    var foundationError: any Error {
        var info: [String: Any] = userInfo
        if let text = userInfo[NSURLErrorFailingURLErrorKey], let url = URL(string: text) {
            info[NSURLErrorFailingURLErrorKey] = url
        }
        // Optional on Linux, not on Apple platforms: the annotation makes both compile.
        let urlErrorCode: URLError.Code? = URLError.Code(rawValue: code)
        if domain == NSURLErrorDomain, let urlErrorCode { return URLError(urlErrorCode, userInfo: info) }
        return NSError(domain: domain, code: code, userInfo: info)
    }
}
