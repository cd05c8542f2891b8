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
