import Foundation
import HTTPVCR
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// Everything one test's cassette scope needs: which file, how to configure it, where failures go and how to
/// re-record it. The `.cassette` trait and ``VCRTestCase`` work one out for each test; pass your own to
/// ``withVCRCassette(_:isolation:_:)`` to open a scope by hand.
public struct VCRCassetteScope: Sendable {
    /// The suite (test class or type) the test belongs to: the folder of its cassette by default.
    public var suiteName: String
    /// The test, as written (`testSearch`, `search`), plus the argument for parameterized tests.
    public var testName: String
    /// The folder of the suite's cassettes.
    public var cassettesPath: String
    /// The cassette file, relative to ``cassettesPath`` (or absolute). `.json` is added when it has no extension.
    public var cassetteName: String
    /// A `swift test --filter` pattern that selects this test (`SearchTests/search`), for the re-record
    /// command in failure messages.
    public var testFilter: String?
    /// Said after the re-record command: what it cannot select (one argument of a parameterized test).
    public var testFilterNote: String?
    /// Fail the test when its cassette still has recorded interactions it never replayed.
    public var failsOnUnplayedInteractions: Bool
    /// Save what a failed test recorded. Off by default: interactions recorded before a failure are a partial,
    /// misleading tape, so a failed test's recording is discarded (and the test is told).
    public var recordsOnFailure: Bool
    /// In ``RecordMode/verify`` (`VCR_RECORD_MODE=verify`), fail the test when its live answers differ from its
    /// recordings (``Cassette/drift``: changed, new or unused requests). Off by default: drift is a warning on the
    /// test, naming the cassette, each request and the command that re-records the test.
    public var failsOnDrift = false
    /// Insert the cassette for the whole process and run alone: no other cassette scope runs while this one does,
    /// and every request the process makes meanwhile goes to this cassette. For code that makes requests outside the
    /// test's Swift task (`resume()` from a DispatchQueue block, `Task.detached`). Off by default: the cassette is
    /// bound to the test's task, and scopes run in parallel. Synchronous scopes (``VCRTestCase``, the synchronous
    /// ``withVCRCassette(_:_:)``) and Apple platforms always run alone.
    public var isExclusive = false
    /// Whether the test is expected to make requests: when none reaches its cassette while it records, the test is
    /// told they most likely went around HTTPVCR. True for a cassette the test asked for itself (a `.cassette` trait
    /// of its own, `withVCRCassette`); false where every test of a suite gets one (a suite's `.cassette` trait,
    /// ``VCRTestCase``), since some of them make no request at all. A cassette that holds recordings none of which
    /// were replayed is always told.
    public var expectsRequests = true
    /// Where failures are reported.
    public var sourceLocation: VCRSourceLocation
    /// Applied to the cassette's configuration after ``cassettesPath`` and ``cassetteName`` are set.
    public var configure: @Sendable (inout VCRConfiguration) -> Void
    /// The bundle whose `Cassettes.bundle` holds copies of the cassettes, read where the sources cannot be (a device,
    /// a sandboxed app's tests, Xcode Cloud): `Bundle.module` of a SwiftPM test target, or `Bundle(for:)` a test
    /// class. Nil (the default): the test's bundle is looked for (see "Cassettes on devices, in sandboxes and in
    /// Xcode Cloud" in Docs/Apple.md).
    public var cassettesBundle: Bundle?

    /// The folder that must be readable for the sources to be in reach: the test file's folder, or
    /// ``VCRTestCase``'s package root. Nil: only ``cassettesPath`` is looked at.
    var sourceFolder: String?
    /// The test's module, which names its SwiftPM resource bundle (`<Package>_<Module>`).
    var moduleName: String?
    /// The bundle of a ``VCRTestCase`` class, where its cassettes' copies are looked for first.
    var testBundle: Bundle?
    /// ``cassettesPath`` and ``cassetteName`` name the test bundle's copy: read it, never write it.
    var readsBundleCopy = false

    /// A scope with every field given: for test integrations of your own. `VCRCassetteScope("name")` works the
    /// names and the folder out from the caller instead.
    ///
    /// ```swift
    /// let scope = VCRCassetteScope(
    ///     suiteName: "SearchTests",
    ///     testName: "search",
    ///     cassettesPath: "/path/to/MyPackage/Cassettes.bundle/SearchTests",
    ///     sourceLocation: VCRSourceLocation()
    /// )
    /// ```
    ///
    /// - Parameters:
    ///   - suiteName: The suite, for messages.
    ///   - testName: The test, for messages; sanitized, the cassette's name when `cassetteName` is nil.
    ///   - cassettesPath: The folder of the cassettes.
    ///   - cassetteName: The cassette file, relative to `cassettesPath` (or absolute).
    ///   - testFilter: The `swift test --filter` pattern of the test, for the re-record command.
    ///   - failsOnUnplayedInteractions: Fail when the cassette still has interactions it never replayed.
    ///   - recordsOnFailure: Save what was recorded even when the test fails.
    ///   - cassettesBundle: The bundle whose `Cassettes.bundle` holds copies of the cassettes (``cassettesBundle``).
    ///   - sourceLocation: Where failures are reported; its file's folder is where the sources are looked for.
    ///   - configure: Edits the cassette's configuration after its path is set.
    public init(
        suiteName: String,
        testName: String,
        cassettesPath: String,
        cassetteName: String? = nil,
        testFilter: String? = nil,
        failsOnUnplayedInteractions: Bool = false,
        recordsOnFailure: Bool = false,
        cassettesBundle: Bundle? = nil,
        sourceLocation: VCRSourceLocation,
        configure: @escaping @Sendable (inout VCRConfiguration) -> Void = { _ in }
    ) {
        self.suiteName = suiteName
        self.testName = testName
        self.cassettesPath = cassettesPath
        self.cassetteName = cassetteName ?? CassetteNaming.sanitize(testName)
        self.testFilter = testFilter
        self.failsOnUnplayedInteractions = failsOnUnplayedInteractions
        self.recordsOnFailure = recordsOnFailure
        self.sourceLocation = sourceLocation
        self.configure = configure
        self.cassettesBundle = cassettesBundle
        if sourceLocation.filePath.hasPrefix("/") {
            sourceFolder = URL(fileURLWithPath: sourceLocation.filePath).deletingLastPathComponent().path
        }
        if let slash = sourceLocation.fileID.firstIndex(of: "/") {
            moduleName = String(sourceLocation.fileID[..<slash])
        }
    }

    /// A scope for a cassette named by hand, kept with the caller's package:
    /// `<package root>/Cassettes.bundle/<suite>/<name>.json`, where the package root is the nearest folder above
    /// `filePath` holding `Package.swift`, and the suite is the current Swift Testing suite or else the file's
    /// name.
    ///
    /// ```swift
    /// try await withVCRCassette(VCRCassetteScope("search-by-hand")) { … }
    /// try await withVCRCassette(VCRCassetteScope("offline", recordMode: .never)) { … }
    /// try await withVCRCassette(VCRCassetteScope("login") { $0.matchers = [.method, .path] }) { … }
    /// ```
    ///
    /// > Note: `recordMode` is not optional, so that `recordMode: .none`, written before the replay-only mode was
    /// > renamed `RecordMode.never`, still means that mode (with a deprecation warning) instead of `Optional.none`,
    /// > "no mode". Its default, `.configured`, is no mode of its own: it leaves the configured one.
    ///
    /// - Parameters:
    ///   - name: The cassette's name (`"search"`, or `"Search/by-hand"` for a subfolder), in the suite's folder.
    ///   - cassettesPath: The folder of the cassettes instead of `<package root>/Cassettes.bundle/<suite>`;
    ///     relative paths are resolved against the package root.
    ///   - cassettesBundle: The bundle whose `Cassettes.bundle` holds copies of the cassettes, read where the sources
    ///     cannot be (``cassettesBundle``); left out, the test's bundle is looked for.
    ///   - recordMode: The record mode; left out, the configured one. `VCR_RECORD_MODE` still overrides it.
    ///   - failsOnUnplayedInteractions: Fail when the cassette still has interactions it never replayed.
    ///   - recordsOnFailure: Save what was recorded even when the test fails.
    ///   - fileID: Where failures are reported; leave the default.
    ///   - filePath: Where failures are reported, and where the package root is looked for; leave the default.
    ///   - line: Where failures are reported; leave the default.
    ///   - column: Where failures are reported; leave the default.
    ///   - configure: Edits the cassette's configuration after its path and record mode are set.
    public init(
        _ name: String,
        cassettesPath: String? = nil,
        cassettesBundle: Bundle? = nil,
        recordMode: RecordMode = .configured,
        failsOnUnplayedInteractions: Bool = false,
        recordsOnFailure: Bool = false,
        fileID: String = #fileID,
        filePath: StaticString = #filePath,
        line: Int = #line,
        column: Int = #column,
        configure: @escaping @Sendable (inout VCRConfiguration) -> Void = { _ in }
    ) {
        let location = VCRSourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
        let root = CassetteNaming.packageRoot(ofSourceFile: location.filePath)
        var suite = URL(fileURLWithPath: location.filePath).deletingPathExtension().lastPathComponent
        var test = name
        var filter: String?
        var filterNote: String?
        if let current = Test.current {
            let names = TestNames(test: current, testCase: Test.Case.current)
            suite = names.suiteName
            test = names.testName
            filter = names.filter
            filterNote = names.filterNote
        }
        self.init(
            suiteName: suite,
            testName: test,
            cassettesPath: cassettesPath.map { CassetteNaming.resolve($0, against: root) }
                ?? CassetteNaming.defaultCassettesPath(packageRoot: root, suiteName: suite),
            cassetteName: CassetteNaming.sanitizePath(name),
            testFilter: filter,
            failsOnUnplayedInteractions: failsOnUnplayedInteractions,
            recordsOnFailure: recordsOnFailure,
            cassettesBundle: cassettesBundle,
            sourceLocation: location,
            configure: { configuration in
                if recordMode != .configured { configuration.recordMode = recordMode }
                configure(&configuration)
            }
        )
        testFilterNote = filterNote
    }

    /// The cassette file.
    public var cassetteURL: URL {
        CassetteNaming.cassetteURL(folder: cassettesPath, name: cassetteName)
    }

    /// The cassette file's path.
    public var cassettePath: String { cassetteURL.path }

    /// `VCR_RECORD_MODE=new swift test --filter <testFilter>`, when the filter is known, and what it cannot select.
    public var rerecordCommand: String? {
        rerecordCommand(recordMode: "new")
    }

    /// The same command with another record mode: `all` records the test anew, every request of it (`new` records
    /// only what does not match, and replays the rest as it was).
    public func rerecordCommand(recordMode: String) -> String? {
        testFilter.map { filter in
            CassetteNaming.rerecordCommand(filter: filter, recordMode: recordMode)
                + (testFilterNote.map { "\n    (\($0))" } ?? "")
        }
    }
}

/// The cassette of the test scope the current task runs in.
///
/// ```swift
/// @Test(.cassette) func search() async throws {
///     let cassette = try #require(VCRActiveCassette.current?.cassette)
///     …
///     #expect(cassette.allPlayed)
/// }
/// ```
public struct VCRActiveCassette: Sendable {
    /// What the scope was opened with.
    public let scope: VCRCassetteScope
    /// The inserted cassette.
    public let cassette: Cassette
    /// Who opened the scope (a Swift Testing test ID for the trait), so that a second `.cassette` trait on the
    /// same test does not open another one.
    let owner: String?

    /// The cassette inserted for the current test, if it has one. Set for the whole scope of the trait and of
    /// ``withVCRCassette(_:isolation:_:)``, and around `invokeTest()` of ``VCRTestCase``.
    @TaskLocal public static var current: VCRActiveCassette?
}

/// Why a cassette scope could not start: its cassette could not be inserted, or the test already has one.
public struct VCRTestingError: Error, Sendable, CustomStringConvertible, LocalizedError {
    /// The whole explanation, with the command that records the test's cassette when there is one.
    public var message: String
    /// The underlying HTTPVCR error, if there is one.
    public var underlying: VCRError?

    public init(_ message: String, underlying: VCRError? = nil) {
        self.message = message
        self.underlying = underlying
    }

    public var description: String { message }
    public var errorDescription: String? { message }
}

// MARK: - Scopes

/// Runs `body` with the scope's cassette inserted, then ejects it and reports, as failures of the current test at
/// the scope's source location: every request the cassette refused, a failed save, and (with
/// ``VCRCassetteScope/failsOnUnplayedInteractions``) the interactions never replayed.
///
/// In a Swift Testing test (on Linux) the cassette is bound to the current task: requests started from it, and from
/// the tasks it starts, go to this cassette, while other tests' scopes run beside it. A scope with
/// ``VCRCassetteScope/isExclusive``, or outside Swift Testing, inserts its cassette for the process and runs alone
/// (``VCRCassetteLock/shared``).
///
/// ```swift
/// @Test func search() async throws {
///     try await withVCRCassette(VCRCassetteScope("search-by-hand", recordMode: .never)) {
///         let (data, _) = try await URLSession.shared.data(from: url)   // replayed
///         #expect(!data.isEmpty)
///     }
/// }
/// ```
///
/// - Parameters:
///   - scope: The cassette and how to report; `VCRCassetteScope("name")` keeps it with the caller's package.
///   - body: The code whose requests go to the cassette.
/// - Throws: ``VCRTestingError`` when the cassette cannot be inserted (missing in `.never` mode, malformed, …);
///   `body` does not run then. Errors `body` throws are rethrown after the cassette is ejected.
public func withVCRCassette<R>(
    _ scope: VCRCassetteScope,
    isolation: isolated (any Actor)? = #isolation,
    _ body: () async throws -> R
) async throws -> R {
    do {
        return try await ScopeRunner.run(scope, owner: nil, body)
    } catch let reported as ScopeRunner.ReportedFailure {
        throw reported.error
    }
}

/// The synchronous form of ``withVCRCassette(_:isolation:_:)``, for XCTest and other synchronous code. It blocks the
/// thread while another scope holds the lock: under Swift Testing prefer the `async` form or the trait (in `async`
/// code the `async` form is chosen even for a closure that does not `await`).
@_disfavoredOverload
public func withVCRCassette<R>(_ scope: VCRCassetteScope, _ body: () throws -> R) throws -> R {
    try ScopeRunner.runBlocking(
        scope,
        owner: nil,
        extraConfigure: { _ in },
        report: { reportVCRFailure($0, at: scope.sourceLocation) },
        warn: { reportVCRWarning($0, at: scope.sourceLocation) },
        body
    )
}
