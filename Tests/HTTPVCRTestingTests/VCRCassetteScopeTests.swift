import Foundation
@testable import HTTPVCRTesting
import Testing
import HTTPBinTestSupport

/// `VCRCassetteScope`'s initialiser for a cassette named by hand: what each argument sets. The scopes are worked out,
/// not opened, except where a missing cassette is refused.
@Suite struct VCRCassetteScopeTests {
    /// What `scope` makes of a configuration whose record mode is `.new`.
    func configuration(of scope: VCRCassetteScope) -> VCRConfiguration {
        var configuration = VCRConfiguration()
        configuration.recordMode = .new
        scope.configure(&configuration)
        return configuration
    }

    @Test func withoutARecordModeTheConfiguredOneStays() {
        #expect(configuration(of: VCRCassetteScope("by-hand")).recordMode == .new)
        #expect(configuration(of: VCRCassetteScope("by-hand") { $0.playbackMode = .momentary }).recordMode == .new)
    }

    @Test(arguments: [RecordMode.once, .new, .never, .all, .passthrough])
    func aRecordModeGivenIsSetBeforeTheClosureRuns(mode: RecordMode) {
        let scope = VCRCassetteScope("by-hand", recordMode: mode) { configuration in
            #expect(configuration.recordMode == mode)
            configuration.playbackMode = .momentary
        }
        let configuration = configuration(of: scope)
        #expect(configuration.recordMode == mode)
        #expect(configuration.playbackMode == .momentary)
    }

    @Test func theOtherArgumentsReachTheScope() {
        let scope = VCRCassetteScope(
            "Search/by-hand",
            cassettesPath: "Fixtures/Search",
            failsOnUnplayedInteractions: true,
            recordsOnFailure: true
        )
        #expect(scope.cassetteName == "Search/by-hand")
        #expect(scope.cassettesPath == packageRoot.appendingPathComponent("Fixtures/Search").path)
        #expect(scope.failsOnUnplayedInteractions && scope.recordsOnFailure)
        #expect(scope.suiteName == "VCRCassetteScopeTests")
        #expect(scope.testFilter == "VCRCassetteScopeTests/theOtherArgumentsReachTheScope")
        #expect(scope.sourceLocation.filePath == #filePath)
    }

    @Test func recordModeNoneWrittenBeforeTheRenameStillMeansNever() {
        let scope = formerSpellings.scopeWithRecordModeNone("by-hand", cassettesPath: nil)
        #expect(configuration(of: scope).recordMode == .never, "RecordMode.none, not Optional.none (no mode)")
    }

    @Test func aScopeWrittenWithRecordModeNoneStillRefusesToRecord() async throws {
        let folder = TemporaryFolder()
        let scope = formerSpellings.scopeWithRecordModeNone("never-recorded", cassettesPath: folder.path)
        let error = await #expect(throws: VCRTestingError.self) {
            try await withVCRCassette(scope) { Issue.record("the body ran without its cassette") }
        }
        #expect(error?.underlying?.code == .cassetteNotFound)
        #expect(error?.message.contains("record mode .never does not record") == true)
        #expect(!FileManager.default.fileExists(atPath: folder.path + "/never-recorded.json"))
    }
}
