import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCRCassettes

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
    private static let state = Locked(State(), level: .vcr)

    // MARK: Configuration

    /// Edits the shared defaults every later cassette starts from.
    public static func setup(_ update: (inout VCRConfiguration) -> Void) {
        VCRURLProtocol.register()
        state.withLock { update(&$0.configuration) }
        NetworkGuard.cassettesChanged()
    }

    /// The shared defaults.
    public static var configuration: VCRConfiguration {
        VCRURLProtocol.register()
        return state.withLock { $0.configuration }
    }

    /// The shared configuration's ``VCRConfiguration/allowsNetworkWithoutCassette`` and
    /// ``VCRConfiguration/allowsLoopbackWithoutCassette``, read without copying the rest.
    static var networkWithoutCassette: (allows: Bool, allowsLoopback: Bool) {
        state.withLock { ($0.configuration.allowsNetworkWithoutCassette, $0.configuration.allowsLoopbackWithoutCassette) }
    }

    // MARK: Cassettes

    /// The cassette requests made here go to, if any: the one a test scope bound to the current task (a `.cassette`
    /// test's own), else the one inserted for the process.
    public static var cassette: Cassette? {
        boundCassette ?? state.withLock { $0.cassette }
    }

    /// Inserts the cassette at `path`, relative to ``VCRConfiguration/cassettesPath`` (or absolute). Without an
    /// extension `.json` is used; `.plist` stores a property list.
    ///
    /// - Throws: ``VCRError`` when a cassette is already inserted, the file is malformed, or it is missing in
    ///   `.never` mode.
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
        try insertCassette(forTest: testOfCurrentTask(), update)
    }

    /// Inserts a cassette for the process on behalf of a test (`test`, as ``currentTest`` names it): requests from
    /// other tests' tasks pass it by. A test integration that is no Swift Testing test (XCTest) passes a name of its
    /// own, so that no Swift Testing test's request reaches its cassette.
    package static func insertCassette(
        forTest test: String?,
        _ update: (inout VCRConfiguration) -> Void
    ) throws(VCRError) -> Cassette {
        let (configuration, file) = try cassetteConfiguration(update)
        if let inserted = state.withLock({ $0.cassette }) {
            throw VCRError(
                .cassetteState,
                "Cannot insert \(file.path): \(inserted.path) is still inserted. Eject it first.",
                cassettePath: file.path
            )
        }
        let cassette = Cassette(try LoadedCassette.load(configuration: configuration, file: file))
        try state.withLock { (state) throws(VCRError) in
            if let inserted = state.cassette {
                throw VCRError(.cassetteState, "Cannot insert \(file.path): \(inserted.path) is still inserted.")
            }
            state.cassette = cassette
            state.insertedByTest = test
        }
        NetworkGuard.cassettesChanged()
        return cassette
    }

    // MARK: Cassettes bound to a task

    /// The cassette a test scope bound to the current Swift task (and the tasks it starts), if any.
    @TaskLocal static var boundCassette: Cassette?

    /// Whether a request can be traced back to the Swift task that made it, so that tests with task-bound cassettes
    /// may run in parallel: where `canInit` runs in the caller's task and ``CanInitNotes`` carries what it found to
    /// `startLoading` (swift-corelibs-foundation). Elsewhere scopes insert their cassette for the whole process and
    /// take turns.
    package static var attributesRequestsToTasks: Bool {
        VCRURLProtocol.platform.attributesRequestsToTasks
    }

    /// Keeps what `canInit` found for a request until its `startLoading` takes it, by the task's queue: the
    /// attribution is this state's answer, so it is kept under the same lock, one a request fewer.
    static func keep(_ notes: CanInitNotes, on queue: OpaquePointer) {
        state.withLock { $0.notesByQueue.keep(notes, on: queue) }
    }

    /// What ``keep(_:on:)`` kept for the request whose `startLoading` runs on `queue`, taken.
    static func takeNotes(on queue: OpaquePointer) -> CanInitNotes? {
        state.withLock { $0.notesByQueue.take(on: queue) }
    }

    /// Set by the test integrations: which test the current task runs (Swift Testing's `Test.current`), nil outside
    /// every test: in a `Task.detached` (which drops task-local values, and so its test's cassette), a DispatchQueue
    /// block, or code that is not a test.
    package static var currentTest: (@Sendable () -> String?)? {
        get { state.withLock { $0.currentTest } }
        set { state.withLock { $0.currentTest = newValue } }
    }

    /// Called outside the lock: it asks Swift Testing.
    private static func testOfCurrentTask() -> String? {
        checkNoLockHeld(running: "the test integrations' currentTest")
        return currentTest?()
    }

    /// Loads a cassette for ``withCassette(_:isolation:_:)``, without inserting it for the process.
    package static func loadCassette(_ update: (inout VCRConfiguration) -> Void) throws(VCRError) -> Cassette {
        let (configuration, file) = try cassetteConfiguration(update)
        return Cassette(try LoadedCassette.load(configuration: configuration, file: file), isBoundToTask: true)
    }

    /// A cassette's configuration (the shared defaults, then `update`) and file, once checked that it can be used.
    private static func cassetteConfiguration(
        _ update: (inout VCRConfiguration) -> Void
    ) throws(VCRError) -> (VCRConfiguration, CassetteLocation) {
        VCRURLProtocol.register()
        var configuration = self.configuration
        update(&configuration)
        guard let file = configuration.cassetteFile else {
            throw VCRError(.cassetteState, "insertCassette needs a cassettePath")
        }
        // A NUL ends a file name where the system reads it: the file read and the file written would differ.
        if (configuration.cassettePath ?? "").contains("\0") || configuration.cassettesPath.contains("\0") {
            let shown = (configuration.cassettePath ?? "").replacingOccurrences(of: "\0", with: "\\0")
            throw VCRError(
                .cassetteState,
                "Cannot insert the cassette \"\(shown)\": a cassette path cannot hold a NUL byte (\\0), which no file "
                    + "name can. Name the cassette without it.",
                reason: "NUL in the cassette path"
            )
        }
        if !VCRURLProtocol.sharedSessionIsIntercepted && !configuration.allowsUninterceptedSharedSession {
            throw .sharedSessionNotIntercepted(cassettePath: file.path)
        }
        return (configuration, file)
    }

    /// Runs `body` with `cassette` bound to the current task: requests made from it, and from the tasks it starts
    /// (not detached ones), go to `cassette`, whatever is inserted for the process. Requests of other tasks never
    /// do. Save it afterwards with ``saveBoundCassette(_:)``.
    package static func withCassette<R>(
        _ cassette: Cassette,
        isolation: isolated (any Actor)? = #isolation,
        _ body: () async throws -> R
    ) async rethrows -> R {
        state.withLock { $0.bound.append(cassette) }
        NetworkGuard.cassettesChanged()
        defer {
            cassette.runEjectionHandlers()
            state.withLock { state in
                if let index = state.bound.firstIndex(where: { $0 === cassette }) { state.bound.remove(at: index) }
            }
            NetworkGuard.cassettesChanged()
        }
        return try await $boundCassette.withValue(cassette) { try await body() }
    }

    /// Saves a task-bound cassette if anything was recorded, as ``ejectCassette()`` does for an inserted one.
    package static func saveBoundCassette(_ cassette: Cassette) throws(VCRError) {
        try cassette.saveIfChanged()
    }

    /// Where a request made in the current context goes. Never a guess:
    /// - to the cassette bound to this task, if any;
    /// - to the cassette inserted for the process, unless a test inserted it and the request is another test's
    ///   (that one goes to the network, as if HTTPVCR were not there);
    /// - refused when it comes from no test while task-bound cassettes are in use: it may be any of theirs.
    static func attribution() -> RequestAttribution {
        if let bound = boundCassette { return .cassette(bound) }
        let (inserted, insertedByTest, boundCount, currentTest) = state.withLock {
            ($0.cassette, $0.insertedByTest, $0.bound.count, $0.currentTest)
        }
        // No task-bound cassettes, and none or one inserted by code that is no test: whoever asks, the answer is
        // the same, so the test is not looked up (on every request of a cassette inserted by hand).
        if boundCount == 0 && insertedByTest == nil { return inserted.map(RequestAttribution.cassette) ?? .none }
        let test = currentTest?()
        if let test {
            guard let inserted, insertedByTest == nil || insertedByTest == test else { return .none }
            return .cassette(inserted)
        }
        guard boundCount == 0 else {
            if CallerTask.current == nil {
                return .unattributed(why: "it was started outside any Swift task (resume() called from a "
                    + "DispatchQueue block or a thread)")
            }
            return .unattributed(why: "it was started from a task outside every test (a Task.detached, which "
                + "leaves its test's cassette behind)")
        }
        return inserted.map(RequestAttribution.cassette) ?? .none
    }

    /// Where a request goes on behalf of `test` (``currentTest`` where a ``VCRBridge`` was started) when no cassette
    /// is bound to its task: ``attribution()``'s rules for the cassette inserted for the process, with that test in
    /// place of the current one.
    static func attribution(forTest test: String?) -> RequestAttribution {
        let (inserted, insertedByTest, boundCount) = state.withLock {
            ($0.cassette, $0.insertedByTest, $0.bound.count)
        }
        if let test {
            guard let inserted, insertedByTest == nil || insertedByTest == test else { return .none }
            return .cassette(inserted)
        }
        // Started outside every test: unambiguous only while no cassette is bound to a test's task.
        if boundCount == 0 { return inserted.map(RequestAttribution.cassette) ?? .none }
        return .unattributed(why: "its bridge was started outside every test (a Task.detached, a thread)")
    }

    /// Every cassette in force: the one inserted for the process and those bound to tests' tasks.
    static var cassettesInForce: [Cassette] {
        state.withLock { state in
            guard let inserted = state.cassette else { return state.bound }
            return state.bound.contains { $0 === inserted } ? state.bound : [inserted] + state.bound
        }
    }

    /// Stops intercepting, then saves the cassette if anything was recorded. Does nothing when no cassette is
    /// inserted.
    ///
    /// - Throws: ``VCRError`` when saving fails. The cassette is ejected all the same, and the file that was
    ///   on disk is left as it was.
    public static func ejectCassette() throws(VCRError) {
        state.withLock { $0.cassette }?.runEjectionHandlers()
        let (cassette, waiters) = state.withLock { state in
            let ejected = (state.cassette, state.ejectionWaiters.values)
            // What went wrong on it stays in `failures`, where what still comes goes too (recordFailure).
            state.ejectedFailures += state.cassette?.takeFailures() ?? []
            (state.cassette, state.insertedByTest, state.ejectionWaiters) = (nil, nil, [:])
            return ejected
        }
        for waiter in waiters { waiter.resume() }
        NetworkGuard.cassettesChanged()
        try cassette?.saveIfChanged()
    }

    // MARK: Waiting for an ejection

    /// Waits (suspended) until no cassette is inserted for the process, or until `deadline`: woken by
    /// ``ejectCassette()``. Returns at once when none is inserted.
    package static func waitForEjection(until deadline: Date) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            if !waitForEjection(.task(continuation), until: deadline) { continuation.resume() }
        }
    }

    /// Waits (blocking the calling thread) until no cassette is inserted for the process, or until `deadline`.
    package static func waitForEjectionBlocking(until deadline: Date) {
        let semaphore = DispatchSemaphore(value: 0)
        if waitForEjection(.thread(semaphore), until: deadline) { semaphore.wait() }
    }

    /// Told, in the waiter's task, once it waits for an ejection: lets a test eject exactly then.
    @TaskLocal package static var whenWaitingForEjection: (@Sendable () -> Void)?

    /// Has `wakeup` woken by the next ejection, or at `deadline`, whichever comes first. False, and nothing to wait
    /// for, when no cassette is inserted.
    private static func waitForEjection(_ wakeup: Wakeup, until deadline: Date) -> Bool {
        let waiter = state.withLock { state -> Int? in
            guard state.cassette != nil else { return nil }
            state.nextEjectionWaiter += 1
            state.ejectionWaiters[state.nextEjectionWaiter] = wakeup
            return state.nextEjectionWaiter
        }
        guard let waiter else { return false }
        DispatchQueue.global().asyncAfter(deadline: .now() + max(0, deadline.timeIntervalSinceNow)) {
            state.withLock { $0.ejectionWaiters.removeValue(forKey: waiter) }?.resume()
        }
        checkNoLockHeld(running: "whenWaitingForEjection")
        whenWaitingForEjection?()
        return true
    }

    // MARK: Failures

    /// What went wrong with requests since the last ``takeFailures()``: unmatched requests on write-protected
    /// cassettes, requests HTTPVCR cannot serve, and requests that could not reach the server while recording
    /// (kept off the tape unless ``VCRConfiguration/recordsConnectionErrors``). Test integrations report these on
    /// the test that caused them. Failures on a cassette a test scope bound to its task are kept on that cassette
    /// instead, for its scope to report.
    public static var failures: [VCRError] {
        state.withLock { $0.ejectedFailures + ($0.cassette?.failures ?? []) }
    }

    /// Returns ``failures`` and forgets them.
    public static func takeFailures() -> [VCRError] {
        state.withLock { state in
            defer { state.ejectedFailures.removeAll() }
            return state.ejectedFailures + (state.cassette?.takeFailures() ?? [])
        }
    }

    /// Keeps a request's failure on the cassette it happened on, for the test that made it: a scope reports its
    /// cassette's, and ``failures`` holds those of the cassette inserted for the process. Once that one is ejected,
    /// what it kept, and what still comes, is kept here.
    static func recordFailure(_ error: VCRError, on cassette: Cassette) {
        if cassette.isBoundToTask { return cassette.keepFailure(error) }
        state.withLock { state in
            if state.cassette === cassette {
                cassette.keepFailure(error)
            } else {
                state.ejectedFailures.append(error)
            }
        }
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

    /// The configuration, the inserted cassette, the requests given to it until they start, and the matchers behind
    /// one lock. A cassette's lock may be taken
    /// while it is held (failures), never the other way round.
    private struct State {
        var configuration = VCRConfiguration()
        var cassette: Cassette?
        /// The test that inserted ``cassette``, if a test did: requests of other tests pass it by.
        var insertedByTest: String?
        /// The task-bound cassettes in use now.
        var bound: [Cassette] = []
        var customMatchers: [String: Matcher] = [:]
        /// Failures on cassettes inserted for the process and ejected since, not taken yet (the inserted one keeps
        /// its own).
        var ejectedFailures: [VCRError] = []
        /// ``VCR/currentTest``.
        var currentTest: (@Sendable () -> String?)?
        /// Who waits for ``cassette`` to be ejected (``VCR/waitForEjection(until:)``), by number.
        var ejectionWaiters: [Int: Wakeup] = [:]
        var nextEjectionWaiter = 0
        /// Requests between `canInit` and `startLoading` (``keep(_:on:)``).
        var notesByQueue = CanInitNotes.ByQueue()
    }
}

/// Where a request goes (``VCR/attribution()``).
enum RequestAttribution {
    /// Not HTTPVCR's: to the network as if HTTPVCR were not there.
    case none
    case cassette(Cassette)
    /// Task-bound cassettes are in use and none can be told to be this request's: refused.
    case unattributed(why: String)
    /// No cassette is in force and the network is off without one (``VCRConfiguration/allowsNetworkWithoutCassette``):
    /// refused, naming `test` when the test integrations tell it.
    case withoutCassette(test: String?)
}

extension VCRError {
    static func unattributed(_ request: URLRequest, why: String) -> VCRError {
        let described = Mismatch.describe(request)
        return VCRError(
            .unattributedRequest,
            "HTTPVCR cannot tell which test made \(described): \(why), while tests with cassettes run in parallel. "
                + "It was refused rather than sent to another test's cassette or to the network. Start it from the "
                + "test's own task (async/await, or a Task { } inside the test, which keeps the test's cassette), or "
                + "run the test's cassette alone for the whole process: .cassette(exclusive: true), or "
                + "VCRCassetteScope.isExclusive = true for withVCRCassette.",
            request: described
        )
    }

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
