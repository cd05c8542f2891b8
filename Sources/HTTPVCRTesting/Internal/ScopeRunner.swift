import Foundation
import HTTPVCR
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Opening and closing scopes: shared by the trait, ``VCRTestCase`` and ``withVCRCassette(_:isolation:_:)``.
///
/// One flow, in an `async` and a blocking form: take ``VCRCassetteLock/shared`` (shared when the cassette is bound
/// to the test's task, exclusively when it is inserted for the process), get the cassette (waiting, while one that
/// code outside the lock inserted is still in, for ``VCR`` to say it was ejected), run the body, then ``finish``.
enum ScopeRunner {
    /// How long to wait for a cassette that code outside the lock inserted to be ejected.
    static let foreignCassetteTimeout: TimeInterval = 60

    /// The `async` form: the trait and ``withVCRCassette(_:isolation:_:)``. `failed` says, once the body is over,
    /// whether the test failed in a way the body did not throw.
    static func run<R>(
        _ requested: VCRCassetteScope,
        owner: String?,
        failed: () -> Bool = { false },
        isolation: isolated (any Actor)? = #isolation,
        _ body: () async throws -> R
    ) async throws -> R {
        try checkNotNested(requested)
        // Scopes whose cassettes are bound to their tasks run side by side; the others run alone.
        let isBound = bindsToTask(requested)
        if isBound { await VCRCassetteLock.shared.lockShared() } else { await VCRCassetteLock.shared.lock() }
        defer { if isBound { VCRCassetteLock.shared.unlockShared() } else { VCRCassetteLock.shared.unlock() } }
        let (scope, notice) = try BundleFallback.resolve(requested) {
            configuration(of: requested, extraConfigure: { _ in }).effectiveRecordMode
        }
        let cassette: Cassette
        if isBound {
            cassette = try load(scope)
        } else {
            let deadline = Date().addingTimeInterval(foreignCassetteTimeout)
            var inserted = try insert(scope, extraConfigure: { _ in }, giveUpAt: deadline)
            while inserted == nil {
                await VCR.waitForEjection(until: deadline)
                inserted = try insert(scope, extraConfigure: { _ in }, giveUpAt: deadline)
            }
            cassette = inserted!
        }
        let active = VCRActiveCassette(scope: scope, cassette: cassette, owner: owner)
        let warn = { (message: String) in reportVCRWarning(message, at: scope.sourceLocation) }
        if let notice { warn(notice) }
        warnIfExpired(active, warn: warn)
        let result: Result<R, any Error>
        do {
            func inScope() async throws -> R {
                try await VCRActiveCassette.$current.withValue(active) { try await body() }
            }
            result = .success(isBound ? try await VCR.withCassette(cassette, inScope) : try await inScope())
        } catch {
            result = .failure(error)
        }
        let testFailed = failed() || (try? result.get()) == nil
        let reported = finish(
            active, testFailed: testFailed, report: { reportVCRFailure($0, at: scope.sourceLocation) }, warn: warn
        )
        if case let .failure(error) = result, reported.contains(where: { $0.says(error) }) {
            throw ReportedFailure(error: error)
        }
        return try result.get()
    }

    /// What the body threw, when it was one of the failures the scope has just reported in full, with the test and
    /// the command: the trait does not hand it to Swift Testing, which would say it all again.
    struct ReportedFailure: Error {
        let error: any Error
    }

    /// The blocking form: ``VCRTestCase`` and the synchronous ``withVCRCassette(_:_:)``. Its cassette is always
    /// inserted for the process.
    static func runBlocking<R>(
        _ requested: VCRCassetteScope,
        owner: String?,
        prepare: () -> Void = {},
        restore: () -> Void = {},
        failsOnUnplayedInteractions: (() -> Bool)? = nil,
        recordsOnFailure: (() -> Bool)? = nil,
        failsOnDrift: (() -> Bool)? = nil,
        failed: () -> Bool = { false },
        extraConfigure: (inout VCRConfiguration) -> Void,
        report: (String) -> Void,
        warn: (String) -> Void,
        _ body: () throws -> R
    ) throws -> R {
        try checkNotNested(requested)
        tellsTestsApart
        VCRCassetteLock.shared.lockBlocking()
        defer { VCRCassetteLock.shared.unlock() }
        prepare()
        defer { restore() }
        // After `prepare`: the shared defaults it edits may set the record mode.
        let (scope, notice) = try BundleFallback.resolve(requested) {
            configuration(of: requested, extraConfigure: extraConfigure).effectiveRecordMode
        }
        let deadline = Date().addingTimeInterval(foreignCassetteTimeout)
        var inserted = try insert(scope, extraConfigure: extraConfigure, giveUpAt: deadline)
        while inserted == nil {
            VCR.waitForEjectionBlocking(until: deadline)
            inserted = try insert(scope, extraConfigure: extraConfigure, giveUpAt: deadline)
        }
        let active = VCRActiveCassette(scope: scope, cassette: inserted!, owner: owner)
        if let notice { warn(notice) }
        warnIfExpired(active, warn: warn)
        let result = Result { try VCRActiveCassette.$current.withValue(active) { try body() } }
        finish(
            active,
            failsOnUnplayedInteractions: failsOnUnplayedInteractions?(),
            recordsOnFailure: recordsOnFailure?(),
            failsOnDrift: failsOnDrift?(),
            testFailed: failed() || (try? result.get()) == nil,
            report: report,
            warn: warn
        )
        return try result.get()
    }

    /// Whether the scope's cassette is bound to the test's task, beside other scopes, rather than inserted for the
    /// process while the scope runs alone: in a Swift Testing test (where tests run in parallel, and a task-less
    /// request can be told from a test's), on a platform where a request can be traced to its task, unless the
    /// scope asks to run alone.
    static func bindsToTask(_ scope: VCRCassetteScope) -> Bool {
        tellsTestsApart
        return VCR.attributesRequestsToTasks && !scope.isExclusive && Test.current != nil
    }

    /// Lets HTTPVCR tell which test a request comes from, so that a cassette one test inserts for the process never
    /// takes another test's requests, and a request of no test is never given to a test's cassette.
    static let tellsTestsApart: Void = {
        VCR.currentTest = currentTestID
    }()

    /// The Swift Testing test the current task runs, as HTTPVCR tells tests apart.
    @Sendable static func currentTestID() -> String? {
        Test.current.map { String(describing: $0.id) }
    }

    /// A scope's cassette folder and file, then its own configuration.
    private static func configure(_ configuration: inout VCRConfiguration, for scope: VCRCassetteScope) {
        configuration.cassettesPath = scope.cassettesPath
        configuration.cassettePath = scope.cassetteName
        checkNoLockHeld(running: "a scope's configure")
        scope.configure(&configuration)
    }

    /// The test bundle's copy is set last, so that no closure points the cassette elsewhere or lets it record.
    private static func pinBundleCopy(_ configuration: inout VCRConfiguration, for scope: VCRCassetteScope) {
        guard scope.readsBundleCopy else { return }
        configuration.cassettesPath = scope.cassettesPath
        configuration.cassettePath = scope.cassetteName
        configuration.isReadOnlyCopy = true
    }

    /// The configuration a scope's cassette would be inserted with.
    private static func configuration(
        of scope: VCRCassetteScope,
        extraConfigure: (inout VCRConfiguration) -> Void
    ) -> VCRConfiguration {
        var configuration = VCR.configuration
        configure(&configuration, for: scope)
        extraConfigure(&configuration)
        return configuration
    }

    static func checkNotNested(_ scope: VCRCassetteScope) throws {
        if let active = VCRActiveCassette.current {
            throw VCRTestingError(
                "Cannot insert \(scope.cassettePath): this test already has \(active.cassette.path) inserted. "
                    + "One cassette per test scope: remove the extra .cassette trait or withVCRCassette call."
            )
        }
    }

    /// Loads the scope's cassette, to be bound to the test's task.
    private static func load(_ scope: VCRCassetteScope) throws(VCRTestingError) -> Cassette {
        do {
            return try VCR.loadCassette { configuration in
                configure(&configuration, for: scope)
                pinBundleCopy(&configuration, for: scope)
            }
        } catch {
            throw VCRTestingError(insertionMessage(error, scope: scope), underlying: error)
        }
    }

    /// Inserts the scope's cassette for the process (the lock is held). Nil while a cassette that code outside the
    /// lock inserted is still in: wait for its ejection (``VCR/waitForEjection(until:)``) and try again. Past
    /// `deadline`, that is an error.
    static func insert(
        _ scope: VCRCassetteScope,
        extraConfigure: (inout VCRConfiguration) -> Void,
        giveUpAt deadline: Date
    ) throws(VCRTestingError) -> Cassette? {
        if VCR.cassette == nil {
            do {
                // A cassette for the whole process, yet no other Swift Testing test's: outside one (XCTest), it is
                // still no Swift Testing test's.
                let test = currentTestID() ?? "a test outside Swift Testing"
                return try VCR.insertCassette(forTest: test) { configuration in
                    configure(&configuration, for: scope)
                    extraConfigure(&configuration)
                    pinBundleCopy(&configuration, for: scope)
                }
            } catch {
                // Unless someone inserted one in between: then it is waited for like any other.
                guard error.code == .cassetteState, VCR.cassette != nil else {
                    throw VCRTestingError(insertionMessage(error, scope: scope), underlying: error)
                }
            }
        }
        guard let foreign = VCR.cassette, Date() >= deadline else { return nil }
        throw VCRTestingError(
            "Cannot insert \(scope.cassettePath): \(foreign.path) has been inserted for "
                + "\(Int(foreignCassetteTimeout)) s by code that does not hold VCRCassetteLock.shared. Eject it, "
                + "or insert cassettes by hand inside VCRCassetteLock.shared.withLock { … }."
        )
    }

    static func insertionMessage(_ error: VCRError, scope: VCRCassetteScope) -> String {
        var lines = [error.message]
        lines.append("  test: \(scope.suiteName)/\(scope.testName)")
        if let command = scope.rerecordCommand {
            switch error.code {
            case .cassetteNotFound:
                lines.append("  To record this test's cassette: \(command)")
            case .malformedCassette:
                let path = error.cassettePath ?? scope.cassettePath
                lines.append("  To record it again: delete \(path), then run \(command)")
            default:
                break
            }
        }
        return lines.joined(separator: "\n")
    }

    /// Tells the test its cassette is older than `reRecordInterval` (or is being recorded anew for it).
    static func warnIfExpired(_ active: VCRActiveCassette, warn: (String) -> Void) {
        guard let expiry = active.cassette.expiry else { return }
        warn(expiry.message + "\n  test: \(active.scope.suiteName)/\(active.scope.testName)")
    }

    /// Ejects the cassette and reports what went wrong while it was in. A failed test's recording is discarded
    /// first, unless the scope keeps it (`recordsOnFailure`). Returns the requests' failures it reported.
    @discardableResult
    static func finish(
        _ active: VCRActiveCassette,
        failsOnUnplayedInteractions: Bool? = nil,
        recordsOnFailure: Bool? = nil,
        failsOnDrift: Bool? = nil,
        testFailed: Bool,
        report: (String) -> Void,
        warn: (String) -> Void
    ) -> [VCRError] {
        let cassette = active.cassette
        let scope = active.scope
        // Bridges started for the cassette stop now, ending their processes: what they report is the test's.
        cassette.runEjectionHandlers()
        let strict = failsOnUnplayedInteractions ?? scope.failsOnUnplayedInteractions
        let untouched = untouchedMessage(cassette, scope: scope)
        // Every request's failure is kept on its cassette: taken while it is still inserted (once ejected, what is
        // left goes to VCR.failures).
        let failures = cassette.takeFailures()
        let unplayed = untouched == nil && reportsUnplayed(cassette, strict: strict, testFailed: testFailed,
                                                            failures: failures)
            ? cassette.unplayedRequestsWithWaits : []
        // The failures reported below fail the test too.
        let keepsRecording = recordsOnFailure ?? scope.recordsOnFailure
        let discarded = (testFailed || !failures.isEmpty) && !keepsRecording ? cassette.discardRecordings() : 0
        var saveError: VCRError?
        do {
            if cassette.isBoundToTask {
                try VCR.saveBoundCassette(cassette)
            } else {
                try VCR.ejectCassette()
            }
        } catch {
            saveError = error
        }
        let replayed = cassette.playCount
        for failure in failures {
            report(failureMessage(failure, scope: scope, replayedSome: replayed > 0))
        }
        if testFailed, failures.isEmpty, replayed > 0, let command = scope.rerecordCommand(recordMode: "all") {
            warn(staleMessage(replayed: replayed, cassette: cassette, scope: scope, command: command))
        }
        if let saveError {
            report(saveError.message + "\n  test: \(scope.suiteName)/\(scope.testName) (its recordings were not saved)")
        }
        if let untouched {
            (strict ? report : warn)(untouched)
        }
        if !unplayed.isEmpty {
            (strict ? report : warn)(unplayedMessage(unplayed, strict: strict, cassette: cassette, scope: scope))
        }
        if discarded > 0 {
            warn(discardedMessage(count: discarded, cassette: cassette, scope: scope))
        }
        if saveError == nil, discarded == 0, let message = volatileMessage(cassette, scope: scope) { warn(message) }
        // Read once ejected: requests still in flight were compared when it was saved.
        let failsOnDrift = failsOnDrift ?? scope.failsOnDrift
        DriftReport.report(cassette, scope: scope, fails: failsOnDrift, report: report, warn: warn)
        return failures
    }
}
