import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import HTTPVCRTesting
import HTTPBinTestSupport
import Testing

/// The test integrations' side of a cassette's life: a failed test's recording, expiry warnings, the live switch.
///
/// As in ``CassetteFailureMessageTests``, each test opens the trait's scope itself; the issues it records are
/// collected here (and kept from failing this test) so that what they say can be checked.
@Suite struct CassetteLifecycleTests {
    struct PlannedFailure: Error {}

    /// Runs `body` and returns the issues it recorded, none of which reach this test.
    func issues(of body: @Sendable () async throws -> Void) async throws -> [Issue] {
        try await issuesRecorded { do { try await body() } catch is PlannedFailure {} }
    }

    func trait(_ name: String, in folder: TemporaryFolder, recordsOnFailure: Bool? = nil) -> _CassetteTrait {
        .cassette(name, cassettesPath: folder.path, recordsOnFailure: recordsOnFailure, configure: DogfoodServer.configure)
    }

    @Test func aTestThatThrowsLeavesNoRecordingBehindAndSaysSo() async throws {
        let test = try #require(Test.current)
        let folder = TemporaryFolder()
        let issues = try await issues {
            try await trait("thrown", in: folder).provideScope(for: test, testCase: Test.Case.current) {
                _ = try await DogfoodServer.session().data(from: DogfoodServer.url("/get?lifecycle=thrown"))
                throw PlannedFailure()
            }
        }
        #expect(!FileManager.default.fileExists(atPath: folder.path + "/thrown.json"))
        let notice = try #require(issues.first { $0.text.contains("The test failed") })
        #expect(notice.text.contains("so the interaction it recorded was discarded, not saved to \(folder.path)/thrown.json"))
        #expect(notice.text.contains("recordsOnFailure: true"))
        #expect(notice.severity == .warning, "the test has failed already: this only says what became of its tape")
    }

    @Test func aFailedExpectationCountsToo() async throws {
        let test = try #require(Test.current)
        let folder = TemporaryFolder()
        let issues = try await issues {
            try await trait("expectation", in: folder).provideScope(for: test, testCase: Test.Case.current) {
                _ = try await DogfoodServer.session().data(from: DogfoodServer.url("/get?lifecycle=expectation"))
                Issue.record("a failed expectation")
            }
        }
        #expect(issues.contains { $0.text.contains("a failed expectation") })
        #expect(issues.contains { $0.text.contains("The test failed") })
        #expect(!FileManager.default.fileExists(atPath: folder.path + "/expectation.json"))
    }

    @Test func recordsOnFailureKeepsTheRecording() async throws {
        let test = try #require(Test.current)
        let folder = TemporaryFolder()
        let issues = try await issues {
            try await trait("kept", in: folder, recordsOnFailure: true).provideScope(
                for: test, testCase: Test.Case.current
            ) {
                _ = try await DogfoodServer.session().data(from: DogfoodServer.url("/get?lifecycle=kept"))
                throw PlannedFailure()
            }
        }
        #expect(FileManager.default.fileExists(atPath: folder.path + "/kept.json"))
        #expect(!issues.contains { $0.text.contains("The test failed") })
    }

    @Test func anExpiredCassetteWarnsTheTest() async throws {
        let test = try #require(Test.current)
        let folder = TemporaryFolder()
        let url = DogfoodServer.url("/get?lifecycle=aged")
        try CassetteFile.write(Tape(interactions: [Interaction(
            chapter: 1,
            request: RecordedRequest(method: "GET", url: url.absoluteString, recordedAt: Date(timeIntervalSinceNow: -90 * 86_400)),
            response: RecordedResponse(url: url.absoluteString, statusCode: 200)
        )]), to: folder.url.appendingPathComponent("aged.json"), as: .json)
        let trait = _CassetteTrait.cassette("aged", recordMode: .never, cassettesPath: folder.path) { configuration in
            DogfoodServer.configure(&configuration)
            configuration.reRecordInterval = 30 * 86_400
        }
        let issues = try await issues {
            try await trait.provideScope(for: test, testCase: Test.Case.current) {
                _ = try await DogfoodServer.session().data(from: url)
            }
        }
        let warning = try #require(issues.first)
        #expect(issues.count == 1)
        #expect(warning.severity == .warning)
        #expect(warning.text.contains("is older than it should be: its oldest interaction was recorded 90 days ago"))
        #expect(warning.text.contains("test: CassetteLifecycleTests/anExpiredCassetteWarnsTheTest"))
    }

    /// A session the app made from `.ephemeral` without `VCR.install(in:)`: only the network guard sees its requests.
    static func uninstalledSession() -> URLSession {
        URLSession(configuration: .ephemeral)
    }

    @Test func aTestWhoseRequestsGoAroundHTTPVCRIsToldWhyAndHowToFixIt() async throws {
        let test = try #require(Test.current)
        let folder = TemporaryFolder()
        // Its own URL: the guard cannot tell parallel tests' sessions apart, and gives the failure to the cassettes
        // that hold the URL.
        let url = DogfoodServer.url("/get?lifecycle=bypass")
        try CassetteFile.write(Tape(interactions: [Interaction(
            chapter: 1,
            request: RecordedRequest(method: "GET", url: url.absoluteString),
            response: RecordedResponse(url: url.absoluteString, statusCode: 200)
        )]), to: folder.url.appendingPathComponent("bypass.json"), as: .json)
        let trait = _CassetteTrait.cassette(
            "bypass", recordMode: .never, cassettesPath: folder.path, configure: DogfoodServer.configure
        )
        let issues = try await issues {
            try await trait.provideScope(for: test, testCase: Test.Case.current) {
                // With a .never cassette, the network guard refuses it: the app never gets the server's answer.
                let (data, response) = try await Self.uninstalledSession().data(from: url)
                #expect((response as? HTTPURLResponse)?.statusCode == 403)
                #expect(String(decoding: data, as: UTF8.self).hasPrefix("HTTPVCR refused GET \(url.absoluteString)"))
            }
        }
        // One failure: the refusal as it happened, not a later guess that no request reached the cassette.
        let notice = try #require(issues.first)
        #expect(issues.count == 1, "\(issues.map(\.text))")
        #expect(notice.severity == .error)
        let text = notice.text
        #expect(text.contains("HTTPVCR refused GET \(url.absoluteString): it came from a URLSession HTTPVCR is not "
            + "installed in (one made from URLSessionConfiguration.default or .ephemeral without VCR.install(in:))"))
        #expect(text.contains("Fix: pass that session's configuration to VCR.install(in:)"))
        #expect(text.contains("\(folder.path)/bypass.json"))
        #expect(text.contains("test: CassetteLifecycleTests/aTestWhoseRequestsGoAroundHTTPVCRIsToldWhyAndHowToFixIt"))
    }

    @Test func aTestThatFailsAfterReplayingIsToldHowToRecordItAnew() async throws {
        let test = try #require(Test.current)
        let folder = TemporaryFolder()
        let url = DogfoodServer.url("/get?lifecycle=stale")
        try CassetteFile.write(Tape(interactions: [Interaction(
            chapter: 1,
            request: RecordedRequest(method: "GET", url: url.absoluteString),
            response: RecordedResponse(url: url.absoluteString, statusCode: 200)
        )]), to: folder.url.appendingPathComponent("stale.json"), as: .json)
        let trait = _CassetteTrait.cassette("stale", recordMode: .never, cassettesPath: folder.path,
                                            configure: DogfoodServer.configure)
        let issues = try await issues {
            try await trait.provideScope(for: test, testCase: Test.Case.current) {
                _ = try await DogfoodServer.session().data(from: url)
                throw PlannedFailure()  // an expectation on a stale answer
            }
        }
        let warning = try #require(issues.first { $0.severity == .warning })
        let text = warning.comments.map(\.rawValue).joined()
        #expect(text.hasPrefix("The test failed after replaying 1 recorded interaction of \(folder.path)/stale.json."))
        // `new` would replay the same answer again: the command records the test anew.
        #expect(text.contains("VCR_RECORD_MODE=all swift test --filter CassetteLifecycleTests/"
            + "aTestThatFailsAfterReplayingIsToldHowToRecordItAnew"))
    }

    @Test func aRecordingTestWhoseRequestsGoAroundHTTPVCRIsToldWhy() async throws {
        let test = try #require(Test.current)
        let folder = TemporaryFolder()
        let issues = try await issues {
            try await trait("unseen", in: folder).provideScope(for: test, testCase: Test.Case.current) {
                _ = try await Self.uninstalledSession().data(from: DogfoodServer.url("/get?lifecycle=unseen"))
            }
        }
        let warning = try #require(issues.first)
        #expect(issues.count == 1)
        #expect(warning.severity == .warning)
        #expect(warning.comments.map(\.rawValue).joined().hasPrefix(
            "No request of this test reached HTTPVCR while its cassette was recording, so "
            + "nothing was recorded and no cassette was written."))
        #expect(warning.text.contains("VCR.install(in:)"))
        #expect(warning.text.contains("If it makes none, it needs no cassette"))
        #expect(!FileManager.default.fileExists(atPath: folder.path + "/unseen.json"))
    }

    @Test func passthroughGoesLiveAndWritesNothing() async throws {
        let test = try #require(Test.current)
        let folder = TemporaryFolder()
        let id = UUID().uuidString
        let url = DogfoodServer.url("/anything/lifecycle-live-\(id)")
        let before = try HTTPBin.settledRequestCount()
        let trait = _CassetteTrait.cassette("live", recordMode: .passthrough, cassettesPath: folder.path,
                                            configure: DogfoodServer.configure)
        try await trait.provideScope(for: test, testCase: Test.Case.current) {
            let (data, _) = try await DogfoodServer.session().data(from: url)
            #expect(data.json?["url"] as? String == url.absoluteString)
        }
        try HTTPBin.waitForRequestCount(atLeast: before + 1)
        #expect(try HTTPBin.requests(since: before).filter { $0.contains(id) }.count == 1)
        #expect(!FileManager.default.fileExists(atPath: folder.path + "/live.json"))
    }

    /// What `VCRTestCase` does with XCTest's failure count: a scope told its test failed keeps no recording.
    @Test func theXCTestPathDiscardsAFailedTestsRecording() async throws {
        let folder = TemporaryFolder()
        let scope = VCRCassetteScope(
            suiteName: "XCTestLike", testName: "testFails", cassettesPath: folder.path,
            sourceLocation: VCRSourceLocation(), configure: DogfoodServer.configure
        )
        let warnings = Box<[String]>()
        let failures = Box<[String]>()
        let outcome = Box<String>()
        let url = DogfoodServer.url("/get?lifecycle=xctest")
        // A thread of its own: the blocking form must not run on Swift concurrency's threads.
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            Thread.detachNewThread {
                do {
                    try ScopeRunner.runBlocking(
                        scope, owner: nil, failed: { true }, extraConfigure: { _ in },
                        report: { failures.set((failures.value ?? []) + [$0]) },
                        warn: { warnings.set((warnings.value ?? []) + [$0]) }
                    ) {
                        let done = DispatchSemaphore(value: 0)
                        DogfoodServer.session().dataTask(with: url) { _, response, error in
                            outcome.set("\((response as? HTTPURLResponse)?.statusCode ?? 0) \(String(describing: error))")
                            done.signal()
                        }.resume()
                        done.wait()
                    }
                    continuation.resume()
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
        #expect(!FileManager.default.fileExists(atPath: folder.path + "/testFails.json"))
        #expect(warnings.value?.contains { $0.contains("so the interaction it recorded was discarded") } == true,
                "request: \(outcome.value ?? "no answer"), warnings: \(warnings.value ?? []), failures: \(failures.value ?? [])")
        #expect(failures.value == nil)
    }
}
