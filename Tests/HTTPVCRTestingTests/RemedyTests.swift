import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPBinTestSupport
@testable import HTTPVCRTesting
import Testing

/// Every remedy a failure message gives does what it says: each test follows it as a user would (runs the command
/// the message prints, with the record mode and filter it names; applies the setting it names) and checks the
/// outcome. The trait's scope is opened by hand, as in CassetteFailureMessageTests, so that what it reports can be
/// read; `Tests/Fixtures/VCRFixturePackage` (FixturePackageTests) runs the printed commands with `swift test`.
@Suite struct RemedyTests {
    /// The trait's scope for the cassette `name` in `folder`, run with `body`; what it reported, and its cassette.
    static func run(
        _ name: String,
        in folder: TemporaryFolder,
        recordMode: RecordMode? = nil,
        matchers: [Matcher]? = nil,
        _ body: @escaping @Sendable () async throws -> Void
    ) async throws -> (issues: [Issue], cassette: Cassette?) {
        let test = try #require(Test.current)
        let inserted = Box<Cassette>()
        let trait = _CassetteTrait.cassette(name, cassettesPath: folder.path) { configuration in
            DogfoodServer.configure(&configuration)
            if let recordMode { configuration.recordMode = recordMode }
            if let matchers { configuration.matchers = matchers }
            configuration.chronologicalWait = 0.05
        }
        let issues = try await issuesRecorded {
            try await trait.provideScope(for: test, testCase: Test.Case.current) {
                inserted.set(VCRActiveCassette.current?.cassette)
                try await body()
            }
        }
        return (issues, inserted.value)
    }

    static func get(_ pathAndQuery: String) async throws {
        _ = try await DogfoodServer.session().data(from: DogfoodServer.url(pathAndQuery))
    }

    /// `VCR_RECORD_MODE=all swift test --filter Suite/test` in `text`: the record mode and the filter.
    static func command(in text: String) -> (recordMode: RecordMode?, filter: String)? {
        guard let match = text.firstMatch(of: /(VCR_RECORD_MODE=(\w+) )?swift test --filter (\S+)/) else { return nil }
        return (match.output.2.flatMap { RecordMode(rawValue: String($0)) }, String(match.output.3))
    }

    /// The test's two requests: the first with `query`, then one that stays the same. Chronological replay delivers
    /// the second after every recording before it on the tape.
    static func requests(_ query: String) async throws {
        try await get("/get?remedy=\(query)")
        try await get("/anything/remedy-after")
    }

    /// The request the test makes changed (another query): the message says to record the test anew with `all`, and
    /// running that command leaves no stale recording behind, so the next replay is silent and does not wait.
    @Test func aChangedRequestIsRecordedAnewWithTheCommandItsMessagePrints() async throws {
        let folder = TemporaryFolder()
        _ = try await Self.run("changed", in: folder, recordMode: .once) { try await Self.requests("old") }

        let (refused, _) = try await Self.run("changed", in: folder) { try await Self.requests("new") }
        // Said once: the trait reports the request's failure, and the error the test threw is not said again.
        #expect(refused.count == 1, "\(refused.map(\.text))")
        let message = try #require(refused.first { $0.text.contains("No recorded request matches GET") }).text
        #expect(message.contains("record the cassette anew with VCR_RECORD_MODE=all"), "\(message)")
        #expect(message.contains("  To record this test anew (VCR_RECORD_MODE=new would keep the recording this "
            + "request replaces, never played again): VCR_RECORD_MODE=all swift test --filter "
            + "RemedyTests/aChangedRequestIsRecordedAnewWithTheCommandItsMessagePrints"), "\(message)")
        #expect(!message.contains("VCR_RECORD_MODE=new swift test"), "\(message)")

        // Run the printed command: its record mode, for the test its filter names (this one).
        let command = try #require(Self.command(in: message))
        #expect(command.recordMode == .all)
        #expect(command.filter == "RemedyTests/aChangedRequestIsRecordedAnewWithTheCommandItsMessagePrints")
        let (recording, _) = try await Self.run("changed", in: folder, recordMode: command.recordMode) {
            try await Self.requests("new")
        }
        #expect(recording.isEmpty, "\(recording.map(\.text))")
        let file = try String(contentsOf: folder.url.appendingPathComponent("changed.json"), encoding: .utf8)
        #expect(file.contains("remedy=new") && !file.contains("remedy=old"), "the stale recording is gone: \(file)")

        let (replayed, cassette) = try await Self.run("changed", in: folder) { try await Self.requests("new") }
        #expect(replayed.isEmpty, "\(replayed.map(\.text))")
        #expect(cassette?.playCount == 2 && cassette?.unplayedRequestsWithWaits.isEmpty == true, "nothing waited for")
    }

    /// Recording anew with `all`, a value changed but kept its shape (a Unix time): the test is told it looks
    /// volatile, with the line that declares it; with that line, the next run's value replays.
    @Test func recordingAnewNamesTheValuesThatLookVolatile() async throws {
        let folder = TemporaryFolder()
        _ = try await Self.run("busted", in: folder, recordMode: .once) { try await Self.get("/get?page=2&ts=1732800000") }
        let (told, _) = try await Self.run("busted", in: folder, recordMode: .all) {
            try await Self.get("/get?page=2&ts=1732875300")
        }
        let warning = try #require(told.first { $0.text.contains("they look volatile") }, "\(told.map(\.text))")
        #expect(told.count == 1 && warning.severity == .warning, "\(told.map(\.text))")
        #expect(warning.text.contains(#"To match them by shape: configuration.volatileValues += [.query("ts")]"#))
        #expect(!warning.text.contains("page"), "a value that kept its text is no candidate")
    }

    /// What `new` leaves: the stale recording stays on the cassette. The run that recorded beside it, and every
    /// replay after, says so at the end of the test, and how long chronological replay waited for it.
    @Test func aStaleRecordingIsReportedWithTheWaitItCost() async throws {
        let folder = TemporaryFolder()
        _ = try await Self.run("stale", in: folder, recordMode: .once) { try await Self.requests("old") }
        // Recorded where the test had got to on the tape: before the stale recording, which the second request's
        // recording now comes after.
        let (recording, _) = try await Self.run("stale", in: folder, recordMode: .new) {
            try await Self.requests("new")
        }
        let told = try #require(recording.first, "the run with new names what it left unplayed")
        #expect(recording.count == 1 && told.severity == .warning, "\(recording.map(\.text))")
        #expect(told.text.contains("1 recorded interaction was never replayed"), "\(told.text)")

        let (replayed, _) = try await Self.run("stale", in: folder) { try await Self.requests("new") }
        let warning = try #require(replayed.first, "a replay that waits for a request that never came says so")
        #expect(replayed.count == 1 && warning.severity == .warning, "\(replayed.map(\.text))")
        let text = warning.text
        #expect(text.contains("1 recorded interaction was never replayed (failsOnUnplayedInteractions: true fails "
            + "the test)"), "\(text)")
        let stale = try #require(text.components(separatedBy: "\n").first { $0.contains("remedy=old") })
        let waited = try #require(stale.firstMatch(of: /replay waited (\d+\.\d\d) s for it before going on/))
        #expect((Double(waited.output.1) ?? 0) >= 0.05, "\(stale)")
        #expect(text.contains("record the cassette anew: VCR_RECORD_MODE=all swift test --filter "
            + "RemedyTests/aStaleRecordingIsReportedWithTheWaitItCost"), "\(text)")
    }

    /// A request that differs from its recording only in the port of the server it goes to: the message says so,
    /// and that recording again would not help; leaving the port out of the matchers, as it says, replays it.
    @Test func aRequestOnAnotherPortIsToldToMatchWithoutThePort() async throws {
        let folder = TemporaryFolder()
        let recordedPort = try #require(DogfoodServer.url("/").port)
        let otherPort = try HTTPBin.closedPort()
        let other = URL(string: "http://localhost:\(otherPort)/get?remedy=port")!
        let defaults = VCRConfiguration().matchers
        _ = try await Self.run("port", in: folder, recordMode: .once, matchers: defaults) {
            try await Self.get("/get?remedy=port")
        }
        let (refused, _) = try await Self.run("port", in: folder, matchers: defaults) {
            _ = try await DogfoodServer.session().data(from: other)
        }
        let message = try #require(refused.first).text
        #expect(refused.count == 1, "\(refused.map(\.text))")
        #expect(message.contains("    port: − \"\(recordedPort)\"  + \"\(otherPort)\""), "\(message)")
        #expect(message.contains("  It differs only in its port (\(recordedPort) recorded, \(otherPort) now): the "
            + "server listens on a port chosen anew each run, so recording it again would not help."), "\(message)")
        #expect(message.contains("  To replay it: start the server on a fixed port, or leave the port out of "
            + "matching: matchers = [.method, .scheme, .host, .path, .query]."), "\(message)")
        #expect(!message.contains("To record it") && !message.contains("swift test --filter"), "\(message)")

        // Apply the setting the message names.
        let (replayed, cassette) = try await Self.run(
            "port", in: folder, matchers: [.method, .scheme, .host, .path, .query]
        ) {
            _ = try await DogfoodServer.session().data(from: other)
        }
        #expect(replayed.isEmpty, "\(replayed.map(\.text))")
        #expect(cassette?.playCount == 1)
    }

    /// A request to an endpoint the cassette never held, in a test that replayed others: recorded anew too (`new`
    /// would replay the other answers as they were). Alone, it is recorded with `new`.
    @Test func aNewRequestIsRecordedWithNewUnlessOtherAnswersWereReplayed() async throws {
        let folder = TemporaryFolder()
        _ = try await Self.run("new", in: folder, recordMode: .once) { try await Self.get("/get?remedy=kept") }
        let (alone, _) = try await Self.run("new", in: folder) { try await Self.get("/anything/remedy") }
        #expect(alone.count == 1 && alone[0].text.contains("  To re-record this test: VCR_RECORD_MODE=new swift test "
            + "--filter RemedyTests/aNewRequestIsRecordedWithNewUnlessOtherAnswersWereReplayed"),
                "\(alone.map(\.text))")
        let (after, _) = try await Self.run("new", in: folder) {
            try await Self.get("/get?remedy=kept")
            try await Self.get("/anything/remedy")
        }
        #expect(after.count == 1 && after[0].text.contains("(VCR_RECORD_MODE=new would replay its other answers as "
            + "they were): VCR_RECORD_MODE=all swift test --filter"), "\(after.map(\.text))")
    }
}
