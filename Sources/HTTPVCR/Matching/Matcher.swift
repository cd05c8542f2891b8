import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCRCassettes

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
///
/// > Note: On Apple platforms the body of an upload task (`upload(for:from:)`, `uploadTask(with:from:)`) never
/// > reaches HTTPVCR. Such an upload still replays when the cassette's matchers do not read the body; with
/// > ``body`` among them it is refused, saying so. A matcher of your own is not asked whether it reads the body: it
/// > gets the request with `httpBody` nil, as HTTPVCR sees it, so one that compares bodies finds no match.
public struct Matcher: Sendable, CustomStringConvertible {
    /// The name it goes by in ``VCR/matchers`` and in the explanation of a request that matched nothing; a
    /// built-in's is what it compares (`"path"`).
    public let name: String
    let comparison: Comparison
    /// The key depends on nothing but the method and the URL's text: two requests with the same method and URL
    /// text have the same key. Lets the match index skip taking the URL apart.
    let readsOnlyMethodAndURL: Bool
    /// The key depends on the body: an upload whose body the loader hides (Apple platforms) cannot be matched by
    /// it. Only built-ins say so; a predicate of the app's is taken to leave the body alone (see the type's note).
    let readsBody: Bool

    enum Comparison: Sendable {
        /// Two requests match when their keys are equal. Keys let a cassette index its chapters, so that
        /// finding the next match does not scan the tape.
        case key(@Sendable (RequestParts) -> String)
        case predicate(@Sendable (URLRequest, URLRequest) -> Bool)
        /// Looked up in the registry when used.
        case named
    }

    /// A matcher from a comparison of the live request with a recorded one.
    ///
    /// `request` is the live request as HTTPVCR sees it, filtered as it would be recorded. An upload task's body is
    /// not in it on Apple platforms (`httpBody` is nil there: the loader keeps it from URL protocols), and HTTPVCR
    /// does not refuse the upload on this matcher's account: compare bodies here only for requests that carry theirs
    /// in `httpBody` (`data(for:)`), or use the built-in ``body``, which refuses such an upload saying why.
    public init(name: String, matches: @escaping @Sendable (_ request: URLRequest, _ recorded: URLRequest) -> Bool) {
        self.init(name: name, comparison: .predicate(matches))
    }

    init(
        name: String,
        readsOnlyMethodAndURL: Bool = true,
        readsBody: Bool = false,
        key: @escaping @Sendable (RequestParts) -> String
    ) {
        self.init(name: name, comparison: .key(key), readsOnlyMethodAndURL: readsOnlyMethodAndURL, readsBody: readsBody)
    }

    /// The matcher registered under `name` (a built-in or one added with ``VCR/registerMatcher(_:_:)``).
    public static func named(_ name: String) -> Matcher {
        Matcher(name: name, comparison: .named)
    }

    private init(name: String, comparison: Comparison, readsOnlyMethodAndURL: Bool = false, readsBody: Bool = false) {
        self.name = name
        self.comparison = comparison
        self.readsOnlyMethodAndURL = readsOnlyMethodAndURL
        self.readsBody = readsBody
    }

    /// Whether `request` matches `recorded` for this matcher. An unknown `.named` matcher matches nothing.
    public func matches(_ request: URLRequest, _ recorded: URLRequest) -> Bool {
        matches(RequestParts(request), RequestParts(recorded))
    }

    func matches(_ request: RequestParts, _ recorded: RequestParts) -> Bool {
        switch comparison {
        case let .key(key):
            return key(request) == key(recorded)
        case let .predicate(predicate):
            checkNoLockHeld(running: "a matcher's comparison")
            return predicate(request.urlRequest, recorded.urlRequest)
        case .named:
            return VCR.matchers[name].map { $0.comparison.isNamed ? false : $0.matches(request, recorded) } ?? false
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

extension Matcher {
    /// A comparison of the app's own (``init(name:matches:)``): what it reads of a request cannot be told.
    var isAppsOwn: Bool {
        if case .predicate = comparison { return true }
        return false
    }
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
    ///
    /// > Note: On Apple platforms an upload task's body never reaches HTTPVCR: with this matcher such an upload is
    /// > refused, with a message that says so. Set the body on the request and send it with `data(for:)` instead.
    public static let body = Matcher(name: "body", readsOnlyMethodAndURL: false, readsBody: true) {
        BodyNormalization.key(for: $0)
    }

    /// The built-ins, by name.
    static let builtIn: [String: Matcher] = Dictionary(
        uniqueKeysWithValues: [method, uri, scheme, host, port, path, query, headers, body].map { ($0.name, $0) }
    )
}
