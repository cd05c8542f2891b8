import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCRCassettes

/// A request as the matchers see it: its URL parsed once, however many matchers read it, and built straight
/// from the tape for recorded requests (no `URLRequest` needed to index a cassette).
struct RequestParts {
    let method: String
    let url: String
    let scheme: String
    let host: String
    /// The URL's port, or the scheme's default.
    let port: String
    /// The percent-encoded path; `/` when empty.
    let path: String
    /// The percent-encoded query, as written.
    let query: String
    private let source: Source

    private enum Source {
        case live(URLRequest)
        case recorded(RecordedRequest)
    }

    init(_ request: URLRequest) {
        self.init(method: request.httpMethod ?? "GET", url: request.url, source: .live(request))
    }

    /// Every recorded request of a cassette is taken apart when it is loaded: a URL in the plain shape nearly all
    /// have is read off its text, anything else parsed by `URL`. The parts are the same either way
    /// (`RequestPartsTests`).
    init(_ recorded: RecordedRequest) {
        guard let plain = PlainURL(recorded.url) else {
            self.init(parsing: recorded)
            return
        }
        self.init(
            method: recorded.method.uppercasedIfNeeded,
            url: recorded.url,
            scheme: plain.scheme,
            host: plain.host,
            port: plain.port.map(String.init) ?? Self.defaultPort(of: plain.scheme),
            path: plain.path.isEmpty ? "/" : plain.path,
            query: plain.query,
            source: .recorded(recorded)
        )
    }

    private init(
        method: String, url: String, scheme: String, host: String, port: String, path: String, query: String,
        source: Source
    ) {
        self.method = method
        self.url = url
        self.scheme = scheme
        self.host = host
        self.port = port
        self.path = path
        self.query = query
        self.source = source
    }

    /// A recorded request's parts as `URL` parses them.
    init(parsing recorded: RecordedRequest) {
        self.init(method: recorded.method, url: URL(string: recorded.url), source: .recorded(recorded))
    }

    private static func defaultPort(of scheme: String) -> String {
        scheme == "https" ? "443" : scheme == "http" ? "80" : ""
    }

    /// Reads the parts off the already parsed URL: a second parse with URLComponents cost more than all the
    /// rest of matching.
    private init(method: String, url: URL?, source: Source) {
        self.method = method.uppercasedIfNeeded
        self.url = url?.absoluteString ?? ""
        let scheme = url?.scheme?.lowercasedIfNeeded ?? ""
        self.scheme = scheme
        self.host = url?.decodedHost?.lowercasedIfNeeded ?? ""
        if let port = url?.port {
            self.port = String(port)
        } else {
            self.port = Self.defaultPort(of: scheme)
        }
        let path = url?.path(percentEncoded: true) ?? ""
        self.path = path.isEmpty ? "/" : path
        self.query = url?.query(percentEncoded: true) ?? ""
        self.source = source
    }

    var headers: [String: String] {
        switch source {
        case let .live(request): request.allHTTPHeaderFields ?? [:]
        case let .recorded(recorded): recorded.headers.dictionary
        }
    }

    var body: Data? {
        switch source {
        case let .live(request): request.httpBody
        case let .recorded(recorded): recorded.body
        }
    }

    func header(_ name: String) -> String? {
        switch source {
        case let .live(request): request.value(forHTTPHeaderField: name)
        case let .recorded(recorded): recorded.headers[field: name]
        }
    }

    /// The request as a tape holds it: for comparisons that read the whole request.
    var recordedRequest: RecordedRequest {
        switch source {
        case let .live(request): RecordedRequest(request)
        case let .recorded(recorded): recorded
        }
    }

    /// For matchers written against `URLRequest` (registered ones).
    var urlRequest: URLRequest {
        switch source {
        case let .live(request): request
        case let .recorded(recorded): recorded.urlRequest
        }
    }
}
