import Foundation
import HTTPVCR
import Testing

/// The `.cassette` trait: gives every test it applies to its own cassette, inserted for the test's whole scope and
/// ejected after it. Use the factories on `Trait` rather than this type.
///
/// ```swift
/// @Suite(.cassette) struct SearchTests {                  // every test in the suite gets its own cassette
///     @Test func search() async throws { … }              // Cassettes.bundle/SearchTests/search.json
///     @Test(.cassette(recordMode: .never)) func offline() async throws { … }
///     @Test(.cassette("shared-login")) func login() async throws { … }
///     @Test(.cassette { $0.playbackMode = .momentary }) func burst() async throws { … }
/// }
/// ```
///
/// On a suite it applies to every test in it, nested suites included. When a suite and a test both carry it, the
/// test gets one cassette, with the suite's settings overridden by the test's (closures run suite first).
public struct _CassetteTrait: SuiteTrait, TestTrait, TestScoping {
    /// Tells this trait apart from the test's other `.cassette` traits when merging them.
    let id = UUID()
    /// The cassette's name, instead of the test's.
    var name: String?
    /// The folder of the suite's cassettes, instead of `<package root>/Cassettes.bundle/<Suite>`.
    var cassettesPath: String?
    /// The bundle whose `Cassettes.bundle` holds copies of the cassettes (``VCRCassetteScope/cassettesBundle``).
    var cassettesBundle: Bundle?
    var recordMode: RecordMode?
    var matchers: [Matcher]?
    var failsOnUnplayedInteractions: Bool?
    var recordsOnFailure: Bool?
    var failsOnDrift: Bool?
    /// Insert the cassette for the whole process and run alone (``VCRCassetteScope/isExclusive``).
    var isExclusive: Bool?
    var configure: (@Sendable (inout VCRConfiguration) -> Void)?

    /// On a suite, the trait applies to every test in it, nested suites included.
    public var isRecursive: Bool { true }

    /// Registers HTTPVCR's URL protocol before any test runs, so that `URLSession.shared` picks it up. Notes a
    /// suite's trait as such: its tests inherit it, and some of them may make no request at all.
    public func prepare(for test: Test) async throws {
        _ = VCR.configuration
        if test.isSuite { Self.suiteTraits.withLock { _ = $0.insert(id) } }
    }

    /// The traits written on suites (a test inherits the same trait value).
    private static let suiteTraits = Locked<Set<UUID>>([], level: .testing)

    /// Whether the test asked for this cassette itself (a `.cassette` trait of its own), rather than inheriting a
    /// suite's.
    private static func isOwn(_ trait: _CassetteTrait) -> Bool {
        !suiteTraits.withLock { $0.contains(trait.id) }
    }

    /// A scope for each test case; none for suites (their tests get one each).
    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        test.isSuite || testCase == nil ? nil : self
    }

    /// Inserts the test case's cassette, runs it, ejects the cassette and reports what went wrong, holding
    /// ``VCRCassetteLock/shared`` all along. For a suite, or when the test's outer `.cassette` trait already did it,
    /// just runs `function`.
    public func provideScope(
        for test: Test,
        testCase: Test.Case?,
        performing function: @Sendable () async throws -> Void
    ) async throws {
        guard let testCase, !test.isSuite else { return try await function() }
        let owner = String(describing: test.id)
        // A second `.cassette` on the same test (suite and test both carry one): the outer scope has already
        // merged every cassette trait of the test.
        if VCRActiveCassette.current?.owner == owner { return try await function() }
        let scope = scope(for: test, testCase: testCase)
        let watch = FailureWatch()
        do {
            try await ScopeRunner.run(scope, owner: owner, failed: { watch.failed }) {
                try await watch.watching(test: test, testCase: testCase, function)
            }
        } catch is ScopeRunner.ReportedFailure {
            // The test threw a request's failure, which the scope reported (an issue that fails the test) with the
            // test and the command: rethrown, Swift Testing would record the same message again.
        }
    }

    /// The scope for one test case: every `.cassette` trait of the test merged, later (the test's own) winning.
    /// This trait is among them (last) even when it was not applied to the test but called directly.
    func scope(for test: Test, testCase: Test.Case?) -> VCRCassetteScope {
        var traits = test.traits.compactMap { $0 as? _CassetteTrait }
        if !traits.contains(where: { $0.id == id }) { traits.append(self) }
        var merged = _CassetteTrait()
        var closures: [@Sendable (inout VCRConfiguration) -> Void] = []
        for trait in traits {
            if let name = trait.name { merged.name = name }
            if let path = trait.cassettesPath { merged.cassettesPath = path }
            if let bundle = trait.cassettesBundle { merged.cassettesBundle = bundle }
            if let mode = trait.recordMode { merged.recordMode = mode }
            if let matchers = trait.matchers { merged.matchers = matchers }
            if let strict = trait.failsOnUnplayedInteractions { merged.failsOnUnplayedInteractions = strict }
            if let keeps = trait.recordsOnFailure { merged.recordsOnFailure = keeps }
            if let fails = trait.failsOnDrift { merged.failsOnDrift = fails }
            if let exclusive = trait.isExclusive { merged.isExclusive = exclusive }
            if let configure = trait.configure { closures.append(configure) }
        }
        let names = TestNames(test: test, testCase: testCase)
        let root = CassetteNaming.packageRoot(ofSourceFile: test.sourceLocation.pathOfFile)
        let cassettesPath = merged.cassettesPath.map { CassetteNaming.resolve($0, against: root) }
            ?? CassetteNaming.defaultCassettesPath(packageRoot: root, suiteName: names.suiteName)
        let recordMode = merged.recordMode
        let matchers = merged.matchers
        var scope = VCRCassetteScope(
            suiteName: names.suiteName,
            testName: names.testName,
            cassettesPath: cassettesPath,
            cassetteName: merged.name.map(CassetteNaming.sanitizePath) ?? CassetteNaming.sanitize(names.testName),
            testFilter: names.filter,
            failsOnUnplayedInteractions: merged.failsOnUnplayedInteractions ?? false,
            recordsOnFailure: merged.recordsOnFailure ?? false,
            cassettesBundle: merged.cassettesBundle,
            sourceLocation: VCRSourceLocation(test.sourceLocation),
            configure: { [closures] configuration in
                if let recordMode { configuration.recordMode = recordMode }
                if let matchers { configuration.matchers = matchers }
                checkNoLockHeld(running: "a trait's configure")
                for configure in closures { configure(&configuration) }
            }
        )
        scope.testFilterNote = names.filterNote
        scope.isExclusive = merged.isExclusive ?? false
        scope.failsOnDrift = merged.failsOnDrift ?? false
        scope.expectsRequests = traits.contains(where: Self.isOwn)
        return scope
    }
}

extension Trait where Self == _CassetteTrait {
    /// A cassette for each test, named after it: `Cassettes.bundle/<Suite>/<test>.json` in the test's package.
    ///
    /// ```swift
    /// @Suite(.cassette) struct SearchTests { … }
    /// ```
    public static var cassette: Self { _CassetteTrait() }

    /// A cassette for each test, with some of its settings changed.
    ///
    /// Every argument can be left out: what is left out stays as configured (by `VCR.setup`, or by a suite's
    /// `.cassette` when this one is on a test). `configure` runs last, after the other arguments are applied, and a
    /// suite's closure runs before its test's.
    ///
    /// ```swift
    /// @Test(.cassette(recordMode: .never)) func offline() async throws { … }
    /// @Test(.cassette("shared-login")) func login() async throws { … }
    /// @Test(.cassette("login", recordMode: .new, matchers: [.method, .path])) func logIn() async throws { … }
    /// @Test(.cassette { $0.playbackMode = .momentary }) func burst() async throws { … }
    /// @Suite(.cassette(cassettesPath: "Fixtures/Search", configure: SearchTests.configure)) struct SearchTests { … }
    /// @Suite(.cassette(cassettesBundle: .module)) struct DeviceTests { … }   // copies for a device, Xcode Cloud
    /// @Suite(.cassette(failsOnDrift: true)) struct ContractTests { … }   // fail on drift in verify mode
    /// ```
    ///
    /// > Note: `recordMode` is not optional, so that `.cassette(recordMode: .none)`, written before the replay-only
    /// > mode was renamed `RecordMode.never`, still means that mode (with a deprecation warning) instead of
    /// > `Optional.none`, "no mode". Its default, `.configured`, is no mode of its own: it leaves the configured one.
    ///
    /// - Parameters:
    ///   - name: The cassette's name instead of the test's (`"shared-login"`, or `"Login/alice"` for a
    ///     subfolder), in the suite's folder. Tests that name the same cassette share it.
    ///   - recordMode: The record mode; left out, the configured one. `VCR_RECORD_MODE` still overrides it.
    ///   - matchers: What must be equal for a request to replay a recorded one.
    ///   - cassettesPath: The folder of the suite's cassettes instead of `<package root>/Cassettes.bundle/<Suite>`;
    ///     relative paths are resolved against the package root.
    ///   - cassettesBundle: The bundle whose `Cassettes.bundle` holds copies of the cassettes, read where the sources
    ///     cannot be (a device, a sandboxed app's tests, Xcode Cloud): `Bundle.module` of a SwiftPM test target.
    ///     Left out, the test's bundle is looked for.
    ///   - failsOnUnplayedInteractions: Fail a test whose cassette still has interactions it never replayed.
    ///   - recordsOnFailure: Save what the test recorded even when it fails (by default a failed test's recording
    ///     is discarded, and the test is told).
    ///   - failsOnDrift: In ``RecordMode/verify`` (`VCR_RECORD_MODE=verify`), fail a test whose live answers
    ///     differ from its recordings (``Cassette/drift``) instead of warning.
    ///   - exclusive: Insert the test's cassette for the whole process, with no other cassette test running
    ///     meanwhile, for code that makes requests outside the test's Swift task (`resume()` from a DispatchQueue,
    ///     `Task.detached`). By default a test's cassette is bound to its task, and tests run in parallel.
    ///   - configure: Edits the cassette's configuration after its name, path and the other arguments are set: any
    ///     setting the arguments do not cover (`playbackMode`, filters, `hostFilter`, …).
    public static func cassette(
        _ name: String? = nil,
        recordMode: RecordMode = .configured,
        matchers: [Matcher]? = nil,
        cassettesPath: String? = nil,
        cassettesBundle: Bundle? = nil,
        failsOnUnplayedInteractions: Bool? = nil,
        recordsOnFailure: Bool? = nil,
        failsOnDrift: Bool? = nil,
        exclusive: Bool? = nil,
        configure: (@Sendable (inout VCRConfiguration) -> Void)? = nil
    ) -> Self {
        _CassetteTrait(
            name: name,
            cassettesPath: cassettesPath,
            cassettesBundle: cassettesBundle,
            recordMode: recordMode == .configured ? nil : recordMode,
            matchers: matchers,
            failsOnUnplayedInteractions: failsOnUnplayedInteractions,
            recordsOnFailure: recordsOnFailure,
            failsOnDrift: failsOnDrift,
            isExclusive: exclusive,
            configure: configure
        )
    }

    /// A cassette for each test, configured by `configure`: the former spelling of `cassette(configure:)`, kept so
    /// that code written before the factories became one still builds, with a fix-it.
    ///
    /// ```swift
    /// @Suite(.cassette(configure: SearchTests.configure)) struct SearchTests { … }   // write this instead
    /// ```
    ///
    /// - Parameters:
    ///   - configure: Edits the cassette's configuration after its name and path are set.
    @available(*, deprecated, renamed: "cassette(configure:)")
    @_disfavoredOverload
    public static func cassette(_ configure: @escaping @Sendable (inout VCRConfiguration) -> Void) -> Self {
        cassette(configure: configure)
    }
}
