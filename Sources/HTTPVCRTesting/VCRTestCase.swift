import Foundation
import HTTPVCR
import XCTest

/// An XCTest base class that gives every test its own cassette: `Cassettes.bundle/<Class>/<testMethod>.json` in the
/// package root, recorded on the first run and replayed after.
///
/// ```swift
/// import HTTPVCRTesting
///
/// final class SearchTests: VCRTestCase {
///     override func updateCassetteConfiguration(_ configuration: inout VCRConfiguration) {
///         configuration.matchers = [.method, .path, .query]
///     }
///
///     func testSearch() async throws {
///         let (data, _) = try await URLSession.shared.data(from: url)   // recorded once, replayed after
///     }
/// }
/// ```
///
/// The cassette is inserted before `setUp` and ejected after `tearDown` (the class wraps `invokeTest()`), so
/// requests made in `setUp` and `tearDown` are on it too, whichever `setUp` variant you override and whether or
/// not you call `super`. Then the test fails for every request the cassette refused, a save that failed, and, with
/// ``failsOnUnplayedInteractions``, interactions it never replayed.
///
/// **Finding the package root.** XCTest does not tell a test case which file declares it, so the package root is
/// looked for, in this order: above ``testFilePath`` when a subclass overrides it
/// (`override class var testFilePath: String? { #filePath }`, the one certain way); the folder the environment
/// variable `VCR_PACKAGE_ROOT` names (for Xcode: `$(SRCROOT)` in the scheme's test environment); above the test
/// bundle (with `swift test` the build folder is inside the package); above the current directory (`swift test`
/// runs there). When none holds a `Package.swift` (an Xcode project), the test fails and says to override
/// ``testFilePath`` or ``cassettesPath``, or to set `VCR_PACKAGE_ROOT`.
open class VCRTestCase: XCTestCase {
    /// Whether this test gets a cassette. Default `true`.
    open func shouldSetUpVCR() -> Bool { true }

    /// Edits the shared defaults (`VCR.setup`) before this test's cassette is inserted.
    open func updateVCRConfiguration(_ configuration: inout VCRConfiguration) {}

    /// Edits this test's cassette configuration, after its path is set, just before it is inserted.
    open func updateCassetteConfiguration(_ configuration: inout VCRConfiguration) {}

    /// Fail the test when its cassette still has recorded interactions it never replayed. Default `false`.
    open var failsOnUnplayedInteractions = false

    /// In ``RecordMode/verify`` (`VCR_RECORD_MODE=verify`), fail the test when its live answers differ from its
    /// recordings (``Cassette/drift``). Default `false`: drift is a warning. Read when the test is over.
    open var failsOnDrift = false

    /// Save what the test recorded even when it fails. Default `false`: a failed test's recording is discarded
    /// (a partial tape would replay as the whole story), and the test is told. Read when the test is over.
    open var recordsOnFailure = false

    /// The file that declares this class, when a subclass says so: `override class var testFilePath: String? {
    /// #filePath }`. Its package root holds the cassettes, and failures are reported in it.
    open class var testFilePath: String? { nil }

    /// The suite's name: the class name. Names the folder of its cassettes.
    open var suiteName: String { String(describing: type(of: self)) }

    /// The test method as written, `testSearch`, from XCTest's `name` on every platform.
    open var testMethodName: String { CassetteNaming.xcTestMethodName(fromTestName: name) }

    /// Where this suite's cassettes live: `<package root>/Cassettes.bundle/<Class>`. Empty when the package root
    /// cannot be found.
    open var cassettesPath: String {
        guard let root = Self.packageRoot else { return "" }
        return CassetteNaming.defaultCassettesPath(packageRoot: root, suiteName: suiteName)
    }

    /// The bundle whose `Cassettes.bundle` holds copies of the cassettes, read where the sources cannot be (a device,
    /// a sandboxed app's tests, Xcode Cloud). Nil (the default): the class's bundle (`Bundle(for:)`), then the
    /// resource bundles beside it, are looked in. Override it to name one: `Bundle.module` of a SwiftPM test target.
    ///
    /// ```swift
    /// override var cassettesBundle: Bundle? { .module }
    /// ```
    open var cassettesBundle: Bundle? { nil }

    /// This test's cassette, relative to ``cassettesPath``: the test method's name, sanitized.
    open var cassetteName: String { CassetteNaming.sanitize(testMethodName) }

    /// This test's cassette file.
    open var cassettePath: String { CassetteNaming.cassetteURL(folder: cassettesPath, name: cassetteName).path }

    /// The cassette inserted for the running test, while it runs.
    public var cassette: Cassette? { insertedCassette.value }

    /// The `swift test --filter` pattern that runs only this test: `SearchTests/testSearch`.
    open var testFilter: String { CassetteNaming.filterPattern([suiteName, testMethodName]) }

    private let insertedCassette = CassetteBox()

    override open class func setUp() {
        super.setUp()
        _ = VCR.configuration  // registers the URL protocol before URLSession.shared is first used
    }

    override open func invokeTest() {
        guard shouldSetUpVCR() else { return super.invokeTest() }
        let folder = cassettesPath
        let scope = scope(cassettesPath: folder)
        // Found only when there is something to report: it may read the test sources.
        let report: (String) -> Void = { [self] message in
            reportVCRFailure(message, at: self.failureLocation, in: self)
        }
        // Without a package root, a copy in the test bundle is the only cassette there is.
        guard !folder.isEmpty || BundleFallback.hasCopy(scope) else {
            report(Self.missingRootMessage(
                for: suiteName, test: testMethodName, pathInCopy: BundledCassettes.pathInCopy(scope)
            ))
            return
        }
        var sharedDefaults: VCRConfiguration?
        do {
            try ScopeRunner.runBlocking(
                scope,
                owner: nil,
                // The shared defaults are edited for this test only, and restored after it.
                prepare: {
                    sharedDefaults = VCR.configuration
                    VCR.setup { self.updateVCRConfiguration(&$0) }
                },
                restore: { if let sharedDefaults { VCR.setup { $0 = sharedDefaults } } },
                // Read when the test is over: setUp or the test itself may have turned it on.
                failsOnUnplayedInteractions: { self.failsOnUnplayedInteractions },
                recordsOnFailure: { self.recordsOnFailure },
                failsOnDrift: { self.failsOnDrift },
                // XCTest keeps count of the failures of the test case's run.
                failed: { (self.testRun?.totalFailureCount ?? 0) > 0 },
                extraConfigure: { self.updateCassetteConfiguration(&$0) },
                report: report,
                warn: { message in self.warnTest(message) }
            ) {
                insertedCassette.value = VCRActiveCassette.current?.cassette
                defer { insertedCassette.value = nil }
                super.invokeTest()
            }
        } catch {
            report("\(error)")
        }
    }

    private func scope(cassettesPath: String) -> VCRCassetteScope {
        var scope = VCRCassetteScope(
            suiteName: suiteName,
            testName: testMethodName,
            cassettesPath: cassettesPath,
            cassetteName: cassetteName,
            testFilter: testFilter,
            failsOnUnplayedInteractions: failsOnUnplayedInteractions,
            recordsOnFailure: recordsOnFailure,
            sourceLocation: VCRSourceLocation()  // unused: failures go through `report`, at `failureLocation`
        )
        // Every test of the class gets a cassette, whether it makes requests or not.
        scope.expectsRequests = false
        scope.sourceFolder = Self.packageRoot?.path
        scope.moduleName = String(reflecting: type(of: self)).split(separator: ".").first.map(String.init)
        scope.testBundle = Bundle(for: type(of: self))
        scope.cassettesBundle = cassettesBundle
        return scope
    }

    /// Tells the test something that is not a failure (a `warning:` line on standard error).
    #if !canImport(ObjectiveC)
    /// Says each of the cassette's failures once. XCTest records a test that throws a request's failure as `threw
    /// error "…"`, the whole message again: the scope reports that failure when the test ends, at the test method,
    /// with the test and the command, so XCTest's copy is left out. An assertion that prints the failure (say
    /// `XCTAssertNil(error)`) still fails the test, quoting only the failure's first line.
    override open func recordFailure(
        withDescription description: String, inFile filePath: String, atLine lineNumber: Int, expected: Bool
    ) {
        let pending = insertedCassette.value?.failures ?? []
        guard let said = pending.first(where: { description.contains($0.message) }) else {
            return super.recordFailure(
                withDescription: description, inFile: filePath, atLine: lineNumber, expected: expected
            )
        }
        if !expected, description == "threw error \"\(said.message)\"" { return }
        let firstLine = said.message.prefix { $0 != "\n" }
        super.recordFailure(
            withDescription: description.replacingOccurrences(
                of: said.message, with: firstLine + " (said in full when the test ends)"
            ),
            inFile: filePath, atLine: lineNumber, expected: expected
        )
    }
    #endif

    func warnTest(_ message: String) {
        reportVCRWarning(message, at: failureLocation)
    }

    // MARK: Package root and source location

    /// The package root of this class: see the class documentation.
    static var packageRoot: URL? {
        PackageRoots.shared.root(for: self, testFilePath: testFilePath)
    }

    /// Where failures are reported: this test method in the file that declares the class, when it can be found.
    var failureLocation: VCRSourceLocation {
        PackageRoots.shared.location(
            ofMethod: testMethodName,
            inClass: suiteName,
            testFilePath: Self.testFilePath,
            packageRoot: Self.packageRoot
        )
    }

    static func missingRootMessage(for suite: String, test: String, pathInCopy: String) -> String {
        """
        HTTPVCRTesting cannot tell where \(suite)'s cassettes go: no Package.swift above the test bundle \
        (\(Bundle.main.bundleURL.path)) or the current directory (\(FileManager.default.currentDirectoryPath)).
          test: \(suite)/\(test)
          Say which file declares the class: override class var testFilePath: String? { #filePath }
          or choose the folder: override var cassettesPath: String { "/path/to/Cassettes.bundle/\(suite)" }
          or, under Xcode, set VCR_PACKAGE_ROOT to $(SRCROOT) in the scheme's test environment
          or, where the sources are out of reach (a device, Xcode Cloud), add Cassettes.bundle to the test target's \
        resources: its Cassettes.bundle/\(pathInCopy) is replayed
        """
    }
}
