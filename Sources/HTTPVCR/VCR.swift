import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The facade: shared configuration, the inserted cassette, and the matcher registry.
///
/// ```swift
/// VCR.setup { configuration in
///     configuration.cassettesPath = "/path/to/Cassettes"
/// }
/// let cassette = try VCR.insertCassette("Search")
/// let (data, _) = try await URLSession.shared.data(from: url)   // recorded the first time, replayed after
/// try VCR.ejectCassette()
/// ```
///
/// > Note: `URLSession.shared` copies the registered protocol classes when it is first used. Call any `VCR`
/// > function (``setup(_:)`` is enough) before anything touches `URLSession.shared`. Sessions you create from a
/// > configuration need ``install(in:)``.
public enum VCR {
    private static let state = Locked(State())

    // MARK: Configuration

    /// Edits the shared defaults every later cassette starts from.
    public static func setup(_ update: (inout VCRConfiguration) -> Void) {
        VCRURLProtocol.register()
        state.withLock { update(&$0.configuration) }
    }

    /// The shared defaults.
    public static var configuration: VCRConfiguration {
        VCRURLProtocol.register()
        return state.withLock { $0.configuration }
    }

    // MARK: Cassettes

    /// The cassette currently inserted, if any.
    public static var cassette: Cassette? {
        state.withLock { $0.cassette }
    }

    /// Inserts the cassette at `path`, relative to ``VCRConfiguration/cassettesPath`` (or absolute). Without an
    /// extension `.json` is used; `.plist` stores a property list.
    ///
    /// - Throws: ``VCRError`` when a cassette is already inserted, the file is malformed, or it is missing in
    ///   `.none` mode.
    @discardableResult
    public static func insertCassette(_ path: String) throws(VCRError) -> Cassette {
        try insertCassette { $0.cassettePath = path }
    }

    /// Inserts a cassette with a configuration made from the shared defaults and `update`. The shared defaults
    /// do not change.
    ///
    /// ```swift
    /// try VCR.insertCassette { configuration in
    ///     configuration.cassettePath = "Search"
    ///     configuration.playbackMode = .momentary
    /// }
    /// ```
    @discardableResult
    public static func insertCassette(_ update: (inout VCRConfiguration) -> Void) throws(VCRError) -> Cassette {
        VCRURLProtocol.register()
        var configuration = self.configuration
        update(&configuration)
        guard let url = configuration.cassetteURL else {
            throw VCRError(.cassetteState, "insertCassette needs a cassettePath")
        }
        if !VCRURLProtocol.sharedSessionIsIntercepted && !configuration.allowsUninterceptedSharedSession {
            throw .sharedSessionNotIntercepted(cassettePath: url.path)
        }
        if let inserted = cassette {
            throw VCRError(
                .cassetteState,
                "Cannot insert \(url.path): \(inserted.url.path) is still inserted. Eject it first.",
                cassettePath: url.path
            )
        }
        let cassette = try Cassette(configuration: configuration, url: url)
        try state.withLock { (state) throws(VCRError) in
            if let inserted = state.cassette {
                throw VCRError(.cassetteState, "Cannot insert \(url.path): \(inserted.url.path) is still inserted.")
            }
            state.cassette = cassette
        }
        return cassette
    }

    /// Stops intercepting, then saves the cassette if anything was recorded. Does nothing when no cassette is
    /// inserted.
    ///
    /// - Throws: ``VCRError`` when saving fails. The cassette is ejected all the same, and the file that was
    ///   on disk is left as it was.
    public static func ejectCassette() throws(VCRError) {
        let cassette = state.withLock { state in
            defer { state.cassette = nil }
            return state.cassette
        }
        try cassette?.saveIfChanged()
    }

    // MARK: Failures

    /// What went wrong with requests since the last ``takeFailures()``: unmatched requests on write-protected
    /// cassettes, requests HTTPVCR cannot serve, and requests that could not reach the server while recording
    /// (kept off the tape unless ``VCRConfiguration/recordsConnectionErrors``). Test integrations report these on
    /// the test that caused them.
    public static var failures: [VCRError] {
        state.withLock { $0.failures }
    }

    /// Returns ``failures`` and forgets them.
    public static func takeFailures() -> [VCRError] {
        state.withLock { state in
            defer { state.failures.removeAll() }
            return state.failures
        }
    }

    static func recordFailure(_ error: VCRError) {
        state.withLock { $0.failures.append(error) }
    }

    // MARK: Matchers

    /// Every matcher by name: the built-ins and those registered with ``registerMatcher(_:_:)``.
    public static var matchers: [String: Matcher] {
        state.withLock { $0.customMatchers }.merging(Matcher.builtIn) { _, builtIn in builtIn }
    }

    /// Registers a matcher, to be used as `.named(name)`. Built-in names cannot be replaced.
    public static func registerMatcher(
        _ name: String,
        _ matches: @escaping @Sendable (_ request: URLRequest, _ recorded: URLRequest) -> Bool
    ) {
        guard Matcher.builtIn[name] == nil else { return }
        state.withLock { $0.customMatchers[name] = Matcher(name: name, matches: matches) }
    }

    /// Removes a registered matcher. Built-in matchers cannot be unregistered.
    public static func unregisterMatcher(_ name: String) {
        _ = state.withLock { $0.customMatchers.removeValue(forKey: name) }
    }

    // MARK: Sessions

    /// Makes sessions created from `configuration` go through HTTPVCR while a cassette is inserted.
    ///
    /// `URLSession.shared` is covered already; sessions made from `.default` or `.ephemeral` configurations
    /// never consult registered protocol classes, so they need this:
    ///
    /// ```swift
    /// let configuration = URLSessionConfiguration.ephemeral
    /// VCR.install(in: configuration)
    /// let session = URLSession(configuration: configuration)
    /// ```
    public static func install(in configuration: URLSessionConfiguration) {
        VCRURLProtocol.register()
        var classes = configuration.protocolClasses ?? []
        classes.removeAll { $0 == VCRURLProtocol.self }
        configuration.protocolClasses = [VCRURLProtocol.self] + classes
    }

    /// The configuration and cassette behind one lock.
    private struct State {
        var configuration = VCRConfiguration()
        var cassette: Cassette?
        var customMatchers: [String: Matcher] = [:]
        var failures: [VCRError] = []
    }
}

extension VCRError {
    static func sharedSessionNotIntercepted(cassettePath: String) -> VCRError {
        VCRError(
            .sharedSessionNotIntercepted,
            "Cannot insert \(cassettePath): URLSession.shared was made before HTTPVCR registered itself (something "
                + "used URLSession.shared before the first VCR call), so on this platform its requests would go to "
                + "the network, neither replayed nor recorded. Call VCR.setup { _ in } before anything uses "
                + "URLSession.shared (the .cassette trait and VCRTestCase do when tests are discovered). If every "
                + "request goes through sessions made with VCR.install(in:), set "
                + "configuration.allowsUninterceptedSharedSession = true.",
            cassettePath: cassettePath
        )
    }
}
