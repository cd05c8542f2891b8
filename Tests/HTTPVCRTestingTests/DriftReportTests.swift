import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import HTTPVCRTesting
import Testing

/// `VCR_RECORD_MODE=verify` in the test integrations: drift is a warning on the test, or a failure with
/// `failsOnDrift`, naming the cassette, each request and the command that records the test anew.
@Suite struct DriftReportTests {
    /// Records `/get?drift=1` and `/json` on a cassette named `name`, then changes the status recorded for the first
    /// and drops the second, so that verifying reports a changed request and a new one.
    static func recordAndEdit(_ name: String, in folder: TemporaryFolder) async throws {
        let scope = VCRCassetteScope(name, cassettesPath: folder.path, recordMode: .once, configure: DogfoodServer.configure)
        try await withVCRCassette(scope) {
            _ = try await DogfoodServer.session().data(from: DogfoodServer.url("/get?drift=1"))
            _ = try await DogfoodServer.session().data(from: DogfoodServer.url("/json"))
        }
        let file = folder.url.appendingPathComponent("\(name).json")
        let tape = try CassetteFile.read(at: file).tape
        let first = try #require(tape.interactions.first).chapter
        try CassetteFile.write(Tape(scenes: tape.scenes.compactMap { scene -> Tape.Scene? in
            if scene.chapter != first { return nil }
            guard case var .response(response) = scene.event else { return scene }
            response.statusCode = 202
            return Tape.Scene(chapter: scene.chapter, time: scene.time, event: .response(response))
        }), to: file, as: .json)
    }

    @Test(arguments: [false, true])
    func theTraitReportsDriftAsAWarningOrAFailure(failsOnDrift: Bool) async throws {
        let test = try #require(Test.current)
        let folder = TemporaryFolder()
        let name = "trait-\(failsOnDrift)"
        try await Self.recordAndEdit(name, in: folder)
        let file = folder.url.appendingPathComponent("\(name).json")
        let before = try Data(contentsOf: file)
        let trait = _CassetteTrait.cassette(
            name, recordMode: .verify, cassettesPath: folder.path, failsOnDrift: failsOnDrift,
            configure: DogfoodServer.configure
        )
        let issues = try await issuesRecorded {
            try await trait.provideScope(for: test, testCase: Test.Case.current) {
                let (_, response) = try await DogfoodServer.session().data(from: DogfoodServer.url("/get?drift=1"))
                #expect((response as? HTTPURLResponse)?.statusCode == 200, "the live answer, not the recorded 202")
                _ = try await DogfoodServer.session().data(from: DogfoodServer.url("/json"))
            }
        }
        #expect(try Data(contentsOf: file) == before, "verify never writes the cassette")
        let notice = try #require(issues.first { $0.text.contains("VCR_RECORD_MODE=verify") })
        #expect(issues.count == 1, "\(issues.map(\.text))")
        #expect(notice.severity == (failsOnDrift ? .error : .warning))
        let lines = notice.comments.map(\.rawValue).joined().components(separatedBy: "\n")
        #expect(lines.count == 8 && lines[7].hasPrefix("    (Swift Testing runs a parameterized test's arguments together"))
        #expect(lines.prefix(7) == [
            "The live answers differ from the recordings in \(file.path) (VCR_RECORD_MODE=verify): 1 changed, 1 new.",
            "  ~ GET \(DogfoodServer.url("/get?drift=1"))",
            "      status: 202 → 200",
            "  + GET \(DogfoodServer.url("/json")) (new: no recording)",
            "  cassette: \(file.path)",
            "  test: DriftReportTests/theTraitReportsDriftAsAWarningOrAFailure-\(failsOnDrift)",
            "  If the service changed on purpose, record this test anew: VCR_RECORD_MODE=all swift test --filter "
                + "DriftReportTests/theTraitReportsDriftAsAWarningOrAFailure",
        ], "\(notice.text)")
    }

    @Test func anUntouchedCassetteTellsTheTestNothing() async throws {
        let test = try #require(Test.current)
        let folder = TemporaryFolder()
        let scope = VCRCassetteScope("untouched", cassettesPath: folder.path, recordMode: .once, configure: DogfoodServer.configure)
        try await withVCRCassette(scope) {
            _ = try await DogfoodServer.session().data(from: DogfoodServer.url("/json"))
        }
        let trait = _CassetteTrait.cassette(
            "untouched", recordMode: .verify, cassettesPath: folder.path, failsOnDrift: true,
            configure: DogfoodServer.configure
        )
        let issues = try await issuesRecorded {
            try await trait.provideScope(for: test, testCase: Test.Case.current) {
                _ = try await DogfoodServer.session().data(from: DogfoodServer.url("/json"))
            }
        }
        #expect(issues.isEmpty, "\(issues.map(\.text))")
    }

    /// The path ``VCRTestCase`` takes (the blocking scope), with its `failsOnDrift` read when the test is over.
    @Test(arguments: [false, true])
    func theBlockingScopeOfVCRTestCaseReportsDrift(failsOnDrift: Bool) async throws {
        let folder = TemporaryFolder()
        let name = "blocking-\(failsOnDrift)"
        try await Self.recordAndEdit(name, in: folder)
        let scope = VCRCassetteScope(name, cassettesPath: folder.path, configure: DogfoodServer.configure)
        let reported = Locked<[String]>([])
        let warned = Locked<[String]>([])
        // On a thread of its own, as XCTest runs a test: the blocking scope waits, which a pool thread must not.
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            Thread.detachNewThread {
                continuation.resume(with: Result { try Self.runBlocking(scope, failsOnDrift, reported, warned) })
            }
        }
        let messages = failsOnDrift ? reported.withLock { $0 } : warned.withLock { $0 }
        let other = failsOnDrift ? warned.withLock { $0 } : reported.withLock { $0 }
        #expect(other.isEmpty, "\(other)")
        let message = try #require(messages.first)
        #expect(message.contains("(VCR_RECORD_MODE=verify): 1 changed.\n"), "\(message)")
        #expect(message.contains("      status: 202 → 200"), "\(message)")
        #expect(message.contains("VCR_RECORD_MODE=all swift test --filter"), "\(message)")
    }

    static func runBlocking(
        _ scope: VCRCassetteScope, _ failsOnDrift: Bool, _ reported: Locked<[String]>, _ warned: Locked<[String]>
    ) throws {
            try ScopeRunner.runBlocking(
                scope,
                owner: nil,
                failsOnDrift: { failsOnDrift },
                extraConfigure: { $0.recordMode = .verify },
                report: { message in reported.withLock { $0.append(message) } },
                warn: { message in warned.withLock { $0.append(message) } }
            ) {
                let done = DispatchSemaphore(value: 0)
                DogfoodServer.session().dataTask(with: DogfoodServer.url("/get?drift=1")) { _, _, _ in done.signal() }.resume()
                done.wait()
            }
    }

    @Test func theRunSummaryListsDriftedCassettesWithTheirCommands() {
        let entries = [
            DriftReport.Entry(
                test: "A/quiet", cassette: "Cassettes.bundle/A/quiet.json", drift: [], command: nil, library: .xcTest
            ),
            DriftReport.Entry(
                test: "B/loud",
                cassette: "Cassettes.bundle/B/loud.json",
                drift: [
                    CassetteDrift(.changed, request: "GET https://api.example.com/items", differences: [
                        .init(.typeChanged, at: "$.items[*].price", recorded: "number", live: "string"),
                    ]),
                    CassetteDrift(.unused, request: "GET https://api.example.com/old"),
                ],
                command: "VCR_RECORD_MODE=all swift test --filter B/loud"
            ),
        ]
        #expect(DriftReport.summaryText(entries) == """
            HTTPVCR verify: 2 cassettes of XCTest and Swift Testing tests checked against the live service, 1 drifted (1 changed, 1 unused)
              B/loud: Cassettes.bundle/B/loud.json
                ~ GET https://api.example.com/items
                    $.items[*].price: number → string
                - GET https://api.example.com/old (unused: not requested)
                record anew: VCR_RECORD_MODE=all swift test --filter B/loud
            """)
        #expect(DriftReport.summaryText(Array(entries.prefix(1)))
            == "HTTPVCR verify: 1 cassette of XCTest tests checked against the live service, none drifted.")
    }
}
