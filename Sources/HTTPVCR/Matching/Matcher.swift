import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Decides whether a live request may replay a recorded one.
///
/// Built-in matchers compare one part of the request each; they are also registered by name in
/// ``VCR/matchers``. Register your own with ``VCR/registerMatcher(_:_:)`` and use it as `.named("…")`:
///
/// ```swift
/// VCR.registerMatcher("hostAndPort") { request, recorded in
///     VCR.matchers["host"]!.matches(request, recorded) && VCR.matchers["port"]!.matches(request, recorded)
/// }
/// configuration.matchers = [.method, .named("hostAndPort")]
/// ```
public struct Matcher: Sendable, CustomStringConvertible {
    /// The name it goes by in ``VCR/matchers`` and in the explanation of a request that matched nothing; a
    /// built-in's is what it compares (`"path"`).
    public let name: String
    let comparison: Comparison
    /// The key depends on nothing but the method and the URL's text: two requests with the same method and URL
    /// text have the same key. Lets the match index skip taking the URL apart.
    let readsOnlyMethodAndURL: Bool

    enum Comparison: Sendable {
        /// Two requests match when their keys are equal. Keys let a cassette index its chapters, so that
        /// finding the next match does not scan the tape.
        case key(@Sendable (RequestParts) -> String)
        case predicate(@Sendable (URLRequest, URLRequest) -> Bool)
        /// Looked up in the registry when used.
        case named
    }

    /// A matcher from a comparison of the live request with a recorded one.
    public init(name: String, matches: @escaping @Sendable (_ request: URLRequest, _ recorded: URLRequest) -> Bool) {
        self.init(name: name, comparison: .predicate(matches))
    }

    init(name: String, readsOnlyMethodAndURL: Bool = true, key: @escaping @Sendable (RequestParts) -> String) {
        self.init(name: name, comparison: .key(key), readsOnlyMethodAndURL: readsOnlyMethodAndURL)
    }

    /// The matcher registered under `name` (a built-in or one added with ``VCR/registerMatcher(_:_:)``).
    public static func named(_ name: String) -> Matcher {
        Matcher(name: name, comparison: .named)
    }

    private init(name: String, comparison: Comparison, readsOnlyMethodAndURL: Bool = false) {
        self.name = name
        self.comparison = comparison
        self.readsOnlyMethodAndURL = readsOnlyMethodAndURL
    }

    /// Whether `request` matches `recorded` for this matcher. An unknown `.named` matcher matches nothing.
    public func matches(_ request: URLRequest, _ recorded: URLRequest) -> Bool {
        matches(RequestParts(request), RequestParts(recorded))
    }

    func matches(_ request: RequestParts, _ recorded: RequestParts) -> Bool {
        switch comparison {
        case let .key(key): key(request) == key(recorded)
        case let .predicate(predicate): predicate(request.urlRequest, recorded.urlRequest)
        case .named: VCR.matchers[name].map { $0.comparison.isNamed ? false : $0.matches(request, recorded) } ?? false
        }
    }

    /// This matcher with `.named` looked up, or nil when no matcher has that name.
    func resolved() -> Matcher? {
        guard case .named = comparison else { return self }
        guard let registered = VCR.matchers[name], !registered.comparison.isNamed else { return nil }
        return registered
    }

    /// What this matcher compares in `request`, for explanations ("path: /get").
    func component(of request: RequestParts) -> String? {
        if case let .key(key) = comparison { return key(request) }
        return nil
    }

    public var description: String { ".\(name)" }
}

extension Matcher.Comparison {
    var isNamed: Bool {
        if case .named = self { return true }
        return false
    }
}

// MARK: Built-in matchers

extension Matcher {
    /// The HTTP method, case-insensitively.
    public static let method = Matcher(name: "method") { $0.method }
    /// The whole URL, as written.
    public static let uri = Matcher(name: "uri") { $0.url }
    /// The URL's scheme, case-insensitively.
    public static let scheme = Matcher(name: "scheme") { $0.scheme }
    /// The URL's host, case-insensitively.
    public static let host = Matcher(name: "host") { $0.host }
    /// The port, with the scheme's default when the URL names none (so `http://h` matches `http://h:80`).
    public static let port = Matcher(name: "port") { $0.port }
    /// The percent-encoded path; an empty path is `/`.
    public static let path = Matcher(name: "path") { $0.path }
    /// The query parameters, in any order.
    public static let query = Matcher(name: "query") { parts in
        // Zero or one parameter: nothing to put in order (the common case, kept cheap).
        guard parts.query.containsByte(where: { $0 == UInt8(ascii: "&") }) else { return parts.query }
        return parts.query.split(separator: "&", omittingEmptySubsequences: true).sorted().joined(separator: "&")
    }
    /// Every header field, names case-insensitively, values exactly.
    public static let headers = Matcher(name: "headers", readsOnlyMethodAndURL: false) { parts in
        parts.headers.map { "\($0.key.lowercased()): \($0.value)" }.sorted().joined(separator: "\n")
    }
    /// The body: JSON and form bodies compared structurally, gzip and deflate bodies decoded first, anything
    /// else byte for byte.
    public static let body = Matcher(name: "body", readsOnlyMethodAndURL: false) { BodyNormalization.key(for: $0) }

    /// The built-ins, by name.
    static let builtIn: [String: Matcher] = Dictionary(
        uniqueKeysWithValues: [method, uri, scheme, host, port, path, query, headers, body].map { ($0.name, $0) }
    )
}
