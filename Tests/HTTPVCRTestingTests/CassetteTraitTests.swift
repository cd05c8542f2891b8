import Foundation
@testable import HTTPVCRTesting
import Testing
import HTTPBinTestSupport

/// What the `.cassette` trait inserts for each test: names, folders, merged settings. No request is made, so no
/// cassette file is written.
@Suite(.cassette(recordMode: .new, cassettesPath: TraitTestsFolder.folder.path) { configuration in
    configuration.playbackMode = .momentary
    configuration.chronologicalWait = 0.11
})
struct CassetteTraitTests {
    @Test func namesTheCassetteAfterTheTestInTheSuiteFolder() throws {
        let active = try #require(VCRActiveCassette.current)
        #expect(active.scope.suiteName == "CassetteTraitTests")
        #expect(active.scope.testName == "namesTheCassetteAfterTheTestInTheSuiteFolder")
        #expect(active.cassette.url.path == TraitTestsFolder.folder.path + "/namesTheCassetteAfterTheTestInTheSuiteFolder.json")
        #expect(active.scope.rerecordCommand
            == "VCR_RECORD_MODE=new swift test --filter CassetteTraitTests/namesTheCassetteAfterTheTestInTheSuiteFolder")
        #expect(VCR.cassette === active.cassette)
        #expect(active.scope.sourceLocation.filePath == #filePath)
    }

    @Test func test_names_are_kept_as_written() throws {
        let active = try #require(VCRActiveCassette.current)
        #expect(active.cassette.url.lastPathComponent == "test_names_are_kept_as_written.json")
    }

    @Test(.cassette("Shared/explicit-name", matchers: [.method, .path]) { $0.chronologicalWait = 0.22 })
    func suiteAndTestTraitsMergeIntoOneCassette() throws {
        // Two `.cassette` traits apply (the suite's and the test's), and one cassette is inserted: a second would
        // have been refused as nested.
        let cassette = try #require(VCRActiveCassette.current?.cassette)
        #expect(cassette.url.path == TraitTestsFolder.folder.path + "/Shared/explicit-name.json",
                "the test's name, the suite's folder")
        #expect(cassette.configuration.matchers.map(\.name) == ["method", "path"], "the test's matchers")
        #expect(cassette.configuration.playbackMode == .momentary, "the suite's closure")
        #expect(cassette.configuration.chronologicalWait == 0.22, "the test's closure runs after the suite's")
        if RecordMode.fromEnvironment == nil {
            #expect(cassette.recordMode == .new, "the suite's record mode")
        }
    }

    @Test(.cassette(recordMode: .all)) func theTestsRecordModeWins() throws {
        let cassette = try #require(VCRActiveCassette.current?.cassette)
        #expect(cassette.configuration.recordMode == (RecordMode.fromEnvironment ?? .all))
    }

    @Test(arguments: ["alice", "bob smith", "c/d", "example.com"], [1])
    func parameterized(user: String, number: Int) throws {
        let expected = [
            "alice": "parameterized-alice-1", "bob smith": "parameterized-bob_smith-1", "c/d": "parameterized-c_d-1",
            // A dot in the name is no extension: the file still ends in .json, and `vcr lint` sees it.
            "example.com": "parameterized-example.com-1",
        ]
        let active = try #require(VCRActiveCassette.current)
        #expect(active.scope.testName == expected[user])
        #expect(active.cassette.url.lastPathComponent == "\(expected[user]!).json")
        #expect(active.scope.testFilter == "CassetteTraitTests/parameterized")
        // No filter selects one argument: the command says so.
        let command = try #require(active.scope.rerecordCommand)
        #expect(command.hasPrefix("VCR_RECORD_MODE=new swift test --filter CassetteTraitTests/parameterized\n"))
        #expect(command.contains("no --filter selects one argument"))
        #expect(command.contains("this runs every argument of parameterized"))
    }

    @Suite struct Nested {
        @Test func nestedSuitesInheritTheTrait() throws {
            let active = try #require(VCRActiveCassette.current)
            #expect(active.scope.suiteName == "CassetteTraitTests.Nested")
            #expect(active.scope.testFilter == "CassetteTraitTests/Nested/nestedSuitesInheritTheTrait")
            #expect(active.cassette.url.path == TraitTestsFolder.folder.path + "/nestedSuitesInheritTheTrait.json")
                #expect(active.scope.rerecordCommand
                == "VCR_RECORD_MODE=new swift test --filter CassetteTraitTests/Nested/nestedSuitesInheritTheTrait",
                "a test without arguments needs no note")
    }
    }
}

/// A folder that is never created: these tests make no request, so their cassettes are never saved.
enum TraitTestsFolder {
    static let folder = FileManager.default.temporaryDirectory
        .appendingPathComponent("HTTPVCRTesting-traits-\(UUID().uuidString)")
}

/// Without `cassettesPath`, cassettes go to `Cassettes.bundle/<Suite>/` at the root of the test's package.
@Suite struct DefaultCassettePathTests {
    @Test(.cassette(recordMode: .new)) func goesToThePackagesCassettesBundle() throws {
        let cassette = try #require(VCRActiveCassette.current?.cassette)
        let expected = packageRoot.appendingPathComponent(
            "Cassettes.bundle/DefaultCassettePathTests/goesToThePackagesCassettesBundle.json"
        )
        #expect(cassette.url.path == expected.path)
    }

    @Test func testsWithoutTheTraitHaveNoCassetteAndDoNotTakeTheLock() {
        #expect(VCRActiveCassette.current == nil)
    }

    @Test func aScopeByHandUsesTheCallersPackageAndTheCurrentSuite() async throws {
        try await withVCRCassette(VCRCassetteScope("by-hand", recordMode: .new)) {
            let active = try #require(VCRActiveCassette.current)
            #expect(active.cassette.url.path
                == packageRoot.appendingPathComponent("Cassettes.bundle/DefaultCassettePathTests/by-hand.json").path)
            #expect(active.scope.testFilter == "DefaultCassettePathTests/aScopeByHandUsesTheCallersPackageAndTheCurrentSuite")
        }
        #expect(VCR.cassette?.url.lastPathComponent != "by-hand.json")
    }
}

/// A global test function: its file names the folder.
@Test(.cassette(recordMode: .new)) func globalTestFunctionsUseTheirFileName() throws {
    let active = try #require(VCRActiveCassette.current)
    #expect(active.scope.suiteName == "CassetteTraitTests")
    #expect(active.scope.testFilter == "HTTPVCRTestingTests\\.globalTestFunctionsUseTheirFileName")
}

/// The one `.cassette` factory: each argument reaches the test's cassette, and what is left out stays as configured.
/// No request is made, and the scopes are only worked out, never opened, except where a missing cassette is refused.
@Suite struct CassetteTraitFactoryTests {
    /// The scope `trait` gives the running test, and what it makes of a configuration whose record mode is `.new`
    /// and whose matchers are `[.method]`.
    func applying(_ trait: _CassetteTrait) throws -> (scope: VCRCassetteScope, configuration: VCRConfiguration) {
        let scope = trait.scope(for: try #require(Test.current), testCase: Test.Case.current)
        var configuration = VCRConfiguration()
        configuration.recordMode = .new
        configuration.matchers = [.method]
        scope.configure(&configuration)
        return (scope, configuration)
    }

    @Test func argumentsLeftOutLeaveTheConfigurationAsItIs() throws {
        for trait in [_CassetteTrait.cassette, .cassette()] {
            #expect(trait.name == nil && trait.recordMode == nil && trait.matchers == nil && trait.configure == nil)
            let (scope, configuration) = try applying(trait)
            #expect(configuration.recordMode == .new)
            #expect(configuration.matchers.map(\.name) == ["method"])
            #expect(configuration.playbackMode == VCRConfiguration().playbackMode)
            #expect(scope.cassetteName == "argumentsLeftOutLeaveTheConfigurationAsItIs")
            #expect(!scope.failsOnUnplayedInteractions && !scope.recordsOnFailure && !scope.isExclusive)
        }
    }

    @Test(arguments: [RecordMode.once, .new, .never, .all, .passthrough])
    func aRecordModeGivenIsSet(mode: RecordMode) throws {
        let trait = _CassetteTrait.cassette(recordMode: mode)
        #expect(trait.recordMode == mode)
        #expect(try applying(trait).configuration.recordMode == mode)
    }

    @Test func everyOtherArgumentReachesTheScope() throws {
        let trait = _CassetteTrait.cassette(
            "Login/alice",
            matchers: [.method, .path],
            cassettesPath: "Fixtures/Login",
            failsOnUnplayedInteractions: true,
            recordsOnFailure: true,
            exclusive: true
        )
        let (scope, configuration) = try applying(trait)
        #expect(scope.cassetteName == "Login/alice")
        #expect(scope.cassettesPath == packageRoot.appendingPathComponent("Fixtures/Login").path)
        #expect(configuration.matchers.map(\.name) == ["method", "path"])
        #expect(configuration.recordMode == .new, "no record mode given: the configured one")
        #expect(scope.failsOnUnplayedInteractions && scope.recordsOnFailure && scope.isExclusive)
    }

    @Test func theClosureRunsAfterTheOtherArguments() throws {
        let trait = _CassetteTrait.cassette("login", recordMode: .all, matchers: [.path]) { configuration in
            #expect(configuration.recordMode == .all)
            configuration.matchers.append(.query)
            configuration.playbackMode = .momentary
        }
        let (scope, configuration) = try applying(trait)
        #expect(scope.cassetteName == "login")
        #expect(configuration.recordMode == .all)
        #expect(configuration.matchers.map(\.name) == ["path", "query"])
        #expect(configuration.playbackMode == .momentary)
    }

    @Test func aClosureAloneConfiguresTrailingOrLabeled() throws {
        @Sendable func momentary(_ configuration: inout VCRConfiguration) { configuration.playbackMode = .momentary }
        for trait in [_CassetteTrait.cassette { $0.playbackMode = .momentary }, .cassette(configure: momentary)] {
            #expect(trait.name == nil && trait.recordMode == nil)
            let configuration = try applying(trait).configuration
            #expect(configuration.playbackMode == .momentary)
            #expect(configuration.recordMode == .new)
        }
    }

    @Test func theDeprecatedUnlabeledClosureStillConfigures() throws {
        let trait = formerSpellings.cassetteWithUnlabeledClosure { $0.playbackMode = .momentary }
        #expect(try applying(trait).configuration.playbackMode == .momentary)
    }

    @Test func recordModeNoneWrittenBeforeTheRenameStillMeansNever() throws {
        let trait = formerSpellings.cassetteWithRecordModeNone(nil, cassettesPath: nil)
        #expect(trait.recordMode == .never, "RecordMode.none, not Optional.none (no mode)")
        #expect(try applying(trait).configuration.recordMode == .never)
    }

    /// The old spelling keeps the old meaning where it matters: on a missing cassette the test is refused rather
    /// than recorded (`.once`, the configured mode, would record it).
    @Test func aTraitWrittenWithRecordModeNoneStillRefusesToRecord() async throws {
        let test = try #require(Test.current)
        let folder = TemporaryFolder()
        let trait = formerSpellings.cassetteWithRecordModeNone("never-recorded", cassettesPath: folder.path)
        let ran = Flag()
        try await withKnownIssue {
            try await trait.provideScope(for: test, testCase: Test.Case.current) { ran.set() }
        } matching: { issue in
            issue.text.contains(
                "No cassette at \(folder.path)/never-recorded.json, and record mode .never does not record"
            )
        }
        #expect(!ran.value, "the test body does not run without its cassette")
        #expect(!FileManager.default.fileExists(atPath: folder.path + "/never-recorded.json"))
    }
}
