import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import HTTPVCRTesting
import Testing
import HTTPBinTestSupport

/// Failures reach the test that caused them, as Swift Testing issues at the test's declaration, with messages that
/// say what to do next.
///
/// Each test opens the `.cassette` trait's scope itself, inside `withKnownIssue`, with `Test.current` and
/// `Test.Case.current`: exactly what Swift Testing does for `@Test(.cassette(…))`, except that the issues it
/// reports when the scope ends can be caught and their text checked (the trait's are reported after the body,
/// out of reach of a `withKnownIssue` in it). `Tests/Fixtures/VCRFixturePackage` checks the attribute form.
///
/// The tests replay `Cassettes.bundle/CassetteFailureMessageTests/recorded-get.json`, which ``recordedGet()`` records
/// when it is missing (one request, `GET /get?failure-tests=recorded`) and which is committed.
@Suite struct CassetteFailureMessageTests {
    static let recordedURL = DogfoodServer.url("/get?failure-tests=recorded")
    static let cassette = packageRoot.appendingPathComponent("Cassettes.bundle/CassetteFailureMessageTests/recorded-get.json")

    /// Replays (records on the first run) the cassette the tests below use.
    @Test(.cassette("recorded-get", configure: DogfoodServer.configure))
    func recordedGet() async throws {
        let (data, _) = try await URLSession.shared.data(from: Self.recordedURL)
        #expect(data.json?["args"] as? [String: String] == ["failure-tests": "recorded"])
    }

    @Test func unmatchedRequestNamesTheCassetteTheClosestRecordingAndTheCommand() async throws {
        let test = try #require(Test.current)
        let unrecorded = DogfoodServer.url("/get?failure-tests=unrecorded")
        let trait = _CassetteTrait.cassette("recorded-get", recordMode: .never, configure: DogfoodServer.configure)
        let inserted = Box<Cassette>()
        try await withKnownIssue {
            try await trait.provideScope(for: test, testCase: Test.Case.current) {
                inserted.set(VCRActiveCassette.current?.cassette)
                let (replayed, _) = try await URLSession.shared.data(from: Self.recordedURL)
                #expect(replayed.json?["args"] as? [String: String] == ["failure-tests": "recorded"])
                await #expect(throws: (any Error).self) { try await URLSession.shared.data(from: unrecorded) }
            }
        } matching: { issue in
            let text = issue.text
            return issue.sourceLocation == test.sourceLocation
                && text.contains("No recorded request matches GET \(unrecorded.absoluteString)")
                && text.contains("  cassette: \(Self.cassette.path)")
                && text.contains("  record mode: .never (write-protected: the request was not sent)")
                && text.contains("  matchers: .method, .path, .query")
                && text.contains("  closest recorded request: #1 GET http://localhost:")
                && text.contains("    query: − \"failure-tests=recorded\"  + \"failure-tests=unrecorded\"")
                && text.contains("  test: CassetteFailureMessageTests/"
                    + "unmatchedRequestNamesTheCassetteTheClosestRecordingAndTheCommand")
                // The closest recording is this request as it was (another query): VCR_RECORD_MODE=new would
                // keep that one, stale, beside the new one.
                && text.contains("  To record this test anew (VCR_RECORD_MODE=new would keep the recording this request "
                    + "replaces, never played again): VCR_RECORD_MODE=all swift test --filter "
                    + "CassetteFailureMessageTests/unmatchedRequestNamesTheCassetteTheClosestRecordingAndTheCommand")
        }
        #expect(inserted.value != nil && VCR.cassette !== inserted.value, "ejected")
        #expect(VCR.failures.allSatisfy { $0.cassettePath != Self.cassette.path }, "reported failures are taken")
    }

    @Test func missingCassetteInNeverModeFailsBeforeTheBodyAndSaysHowToRecordIt() async throws {
        let test = try #require(Test.current)
        let folder = TemporaryFolder()
        let trait = _CassetteTrait.cassette("never-recorded", recordMode: .never, cassettesPath: folder.path)
        let ran = Flag()
        try await withKnownIssue {
            try await trait.provideScope(for: test, testCase: Test.Case.current) { ran.set() }
        } matching: { issue in
            let text = issue.text
            return text.contains("No cassette at \(folder.path)/never-recorded.json, and record mode .never does not record")
                && text.contains("  test: CassetteFailureMessageTests/"
                    + "missingCassetteInNeverModeFailsBeforeTheBodyAndSaysHowToRecordIt")
                && text.contains("  To record this test's cassette: VCR_RECORD_MODE=new swift test --filter "
                    + "CassetteFailureMessageTests/missingCassetteInNeverModeFailsBeforeTheBodyAndSaysHowToRecordIt")
        }
        #expect(!ran.value, "the test body does not run without its cassette")
    }

    @Test func aMalformedCassetteFailsBeforeTheBodyAndSaysHowToRecordItAgain() async throws {
        let test = try #require(Test.current)
        let folder = TemporaryFolder()
        let file = folder.url.appendingPathComponent("broken.json")
        try Data(#"{"format": "HTTPVCR", "version": 1, "scenes": [{"chapter": 1"#.utf8).write(to: file)
        let trait = _CassetteTrait.cassette("broken", cassettesPath: folder.path)
        let ran = Flag()
        try await withKnownIssue {
            try await trait.provideScope(for: test, testCase: Test.Case.current) { ran.set() }
        } matching: { issue in
            let text = issue.text
            return text.contains("Malformed cassette \(file.path)")
                && text.contains("  To record it again: delete \(file.path), then run VCR_RECORD_MODE=new swift test "
                    + "--filter CassetteFailureMessageTests/aMalformedCassetteFailsBeforeTheBodyAndSaysHowToRecordItAgain")
        }
        #expect(!ran.value)
    }

    @Test func aSecretInClearFailsTheTestThatRecordedItAndNothingIsWritten() async throws {
        let test = try #require(Test.current)
        let folder = TemporaryFolder()
        // A JWT, with the secure defaults turned off: nothing takes it out, the save-time check finds it.
        let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZGEifQ.c2lnbmF0dXJlLXZhbHVl"
        let trait = _CassetteTrait.cassette("leaky", cassettesPath: folder.path) { configuration in
            DogfoodServer.configure(&configuration)
            configuration.filtersSecrets = false
        }
        try await withKnownIssue {
            try await trait.provideScope(for: test, testCase: Test.Case.current) {
                _ = try await DogfoodServer.session().data(from: DogfoodServer.url("/get?note=\(jwt)"))
            }
        } matching: { issue in
            let text = issue.text
            return issue.sourceLocation == test.sourceLocation
                && text.contains("Not saving \(folder.path)/leaky.json: what was recorded holds 2 secrets in clear.")
                && text.contains("request 1: request URL: JWT")
                && text.contains("sensitiveData")
                && text.contains("filtersSecrets is off for this cassette")
                && text.contains("  test: CassetteFailureMessageTests/"
                    + "aSecretInClearFailsTheTestThatRecordedItAndNothingIsWritten")
        }
        #expect(!FileManager.default.fileExists(atPath: folder.url.appendingPathComponent("leaky.json").path))
    }

    @Test func unplayedInteractionsFailTheTestWhenStrict() async throws {
        let test = try #require(Test.current)
        let trait = _CassetteTrait.cassette(
            "recorded-get", recordMode: .never, failsOnUnplayedInteractions: true, configure: DogfoodServer.configure
        )
        try await withKnownIssue {
            try await trait.provideScope(for: test, testCase: Test.Case.current) {}
        } matching: { issue in
            // Nothing was replayed at all: the likely cause first, then re-recording.
            let text = issue.text
            return issue.sourceLocation == test.sourceLocation
                && text.contains("No request of this test reached HTTPVCR, yet its cassette holds 1 recorded interaction")
                && text.contains("VCR.install(in:)")
                && text.contains("  cassette: \(Self.cassette.path)")
                && text.contains("record it anew: VCR_RECORD_MODE=all swift test --filter "
                    + "CassetteFailureMessageTests/unplayedInteractionsFailTheTestWhenStrict")
        }
    }

    @Test func unplayedInteractionsPassWhenNotStrict() async throws {
        let test = try #require(Test.current)
        let trait = _CassetteTrait.cassette("recorded-get", recordMode: .never, configure: DogfoodServer.configure)
        try await trait.provideScope(for: test, testCase: Test.Case.current) {
            #expect(VCRActiveCassette.current?.cassette.allPlayed == false)
        }
    }

    @Test func aCassetteThatCannotBeSavedFailsTheTest() async throws {
        let test = try #require(Test.current)
        let folder = TemporaryFolder()
        let suite = folder.url.appendingPathComponent("Suite")
        try FileManager.default.createDirectory(at: suite, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: Self.cassette, to: suite.appendingPathComponent("recorded-get.json"))
        // `.all` erases the tape on insertion, so the cassette has something to save even with no request.
        let trait = _CassetteTrait.cassette("recorded-get", recordMode: .all, cassettesPath: suite.path)
        try await withKnownIssue {
            try await trait.provideScope(for: test, testCase: Test.Case.current) {
                // The folder becomes a file: saving into it must fail.
                try FileManager.default.removeItem(at: suite)
                _ = FileManager.default.createFile(atPath: suite.path, contents: Data("not a folder".utf8))
            }
        } matching: { issue in
            let text = issue.text
            return issue.sourceLocation == test.sourceLocation
                && text.contains("\(suite.path)/recorded-get.json")
                && text.contains("  test: CassetteFailureMessageTests/aCassetteThatCannotBeSavedFailsTheTest "
                    + "(its recordings were not saved)")
        }
        #expect(VCR.cassette?.url.path.hasPrefix(suite.path) != true, "ejected even though saving failed")
    }

    @Test func aRecordingThatCannotReachTheServerFailsTheTestAndIsNotSaved() async throws {
        let test = try #require(Test.current)
        let folder = TemporaryFolder()
        let down = URL(string: "http://localhost:\(try HTTPBin.closedPort())/down")!
        let trait = _CassetteTrait.cassette("server-down", cassettesPath: folder.path, configure: DogfoodServer.configure)
        try await withKnownIssue {
            try await trait.provideScope(for: test, testCase: Test.Case.current) {
                await #expect(throws: URLError.self) { try await DogfoodServer.session().data(from: down) }
            }
        } matching: { issue in
            let text = issue.text
            return issue.sourceLocation == test.sourceLocation
                && text.contains("GET \(down.absoluteString) could not reach the server while recording")
                && text.contains("so it was not written to \(folder.path)/server-down.json")
                && text.contains("configuration.recordsConnectionErrors = true")
                && text.contains("  test: CassetteFailureMessageTests/"
                    + "aRecordingThatCannotReachTheServerFailsTheTestAndIsNotSaved")
        }
        #expect(!FileManager.default.fileExists(atPath: folder.path + "/server-down.json"))
    }

    @Test(.cassette("nested-outer", recordMode: .new, configure: DogfoodServer.configure))
    func nestedScopesAreRefused() async throws {
        let outer = try #require(VCRActiveCassette.current?.cassette)
        let error = await #expect(throws: VCRTestingError.self) {
            try await withVCRCassette(VCRCassetteScope("nested-inner")) {}
        }
        #expect(error?.message.contains("this test already has \(outer.url.path) inserted") == true)
        #expect(VCR.cassette === outer)
    }
}

extension Issue {
    /// Everything an issue says: its description (which holds a caught error's) and its comments.
    var text: String {
        ([description] + comments.map(\.rawValue)).joined(separator: "\n")
    }
}

/// A value set from a `@Sendable` closure.
final class Box<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value?

    func set(_ value: Value?) { lock.lock(); stored = value; lock.unlock() }
    var value: Value? { lock.lock(); defer { lock.unlock() }; return stored }
}

/// A flag set from a `@Sendable` closure.
final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var isSet = false

    func set() { lock.lock(); isSet = true; lock.unlock() }
    var value: Bool { lock.lock(); defer { lock.unlock() }; return isSet }
}
