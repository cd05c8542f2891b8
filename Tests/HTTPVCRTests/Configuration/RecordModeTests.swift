import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import HTTPVCR
import HTTPBinTestSupport

extension VCRTests {
    /// The four record modes, each against the real server, checking what the server saw.
    @Suite struct RecordModeTests {
        let session = vcrSession()

        @Test func onceRecordsANewCassetteThenOnlyReplays() async throws {
            try await holdingCassettes {
                let folder = try TemporaryFolder()
                let url = try HTTPBin.url("/uuid")
                let recorded = try await withCassette("once", in: folder.path) { cassette in
                    #expect(cassette.isNew && !cassette.isWriteProtected)
                    return try await session.data(from: url).0
                }
                let before = try HTTPBin.settledRequestCount()
                let replayed = try await withCassette("once", in: folder.path) { cassette in
                    #expect(!cassette.isNew && cassette.isWriteProtected)
                    let data = try await session.data(from: url).0
                    let error = await #expect(throws: (any Error).self) {
                        try await session.data(from: try HTTPBin.url("/get?unrecorded=1"))
                    }
                    #expect((error as? VCRError)?.code == .noMatch, "got \(String(describing: error))")
                    #expect(error.map { ($0 as NSError).domain } == VCRError.errorDomain)
                    let failures = VCR.takeFailures()
                    #expect(failures.count == 1)
                    #expect(failures.first?.message.contains("GET \(try HTTPBin.url("/get?unrecorded=1"))") == true)
                    #expect(failures.first?.message.contains(folder.url.appendingPathComponent("once.json").path) == true)
                    #expect(failures.first?.message.contains("closest recorded request: #1 GET") == true)
                    #expect(failures.first?.message.contains("path: − \"/uuid\"  + \"/get\"") == true)
                    return data
                }
                #expect(recorded == replayed)
                #expect(try HTTPBin.requests(since: before, to: ["/uuid", "/get"]).isEmpty, "a write-protected cassette sent a request")
            }
        }

        @Test func newReplaysWhatMatchesAndRecordsTheRest() async throws {
            try await holdingCassettes {
                let folder = try TemporaryFolder()
                let first = try HTTPBin.url("/get?n=1")
                let second = try HTTPBin.url("/get?n=2")
                let original = try await withCassette("new", in: folder.path) { _ in try await session.data(from: first).0 }
                let before = try HTTPBin.settledRequestCount()
                try await withCassette("new", in: folder.path, { $0.recordMode = .new }) { cassette in
                    #expect(!cassette.isWriteProtected)
                    #expect(try await session.data(from: first).0 == original)
                    _ = try await session.data(from: second)
                }
                // gunicorn logs a request just after answering it: wait for the line.
                try HTTPBin.waitForRequestCount(atLeast: before + 1)
                #expect(try HTTPBin.requests(since: before, to: ["/get"]) == ["GET /get?n=2"])
                let (tape, _) = try CassetteFile.read(at: folder.url.appendingPathComponent("new.json"))
                #expect(tape.interactions.map(\.request.url) == [first.absoluteString, second.absoluteString])
            }
        }

        @Test func neverModeNeitherWritesNorSends() async throws {
            try await holdingCassettes {
                let folder = try TemporaryFolder()
                #expect(throws: VCRError.self) {
                    try VCR.insertCassette { $0.cassettesPath = folder.path; $0.cassettePath = "missing"; $0.recordMode = .never }
                }
                do {
                    try VCR.insertCassette { $0 = VCRConfiguration(); $0.cassettesPath = folder.path; $0.cassettePath = "missing"; $0.recordMode = .never }
                    Issue.record("inserting a missing cassette in .never mode did not throw")
                } catch {
                    #expect((error as? VCRError)?.code == .cassetteNotFound)
                    #expect((error as? VCRError)?.message.contains("missing.json") == true)
                }
                let url = try HTTPBin.url("/get?never=1")
                _ = try await withCassette("never", in: folder.path) { _ in try await session.data(from: url) }
                let file = folder.url.appendingPathComponent("never.json")
                let bytes = try Data(contentsOf: file)
                let before = try HTTPBin.settledRequestCount()
                try await withCassette("never", in: folder.path, { $0.recordMode = .never }) { cassette in
                    #expect(cassette.isWriteProtected)
                    _ = try await session.data(from: url)
                    await #expect(throws: (any Error).self) { try await session.data(from: try HTTPBin.url("/get?never=2")) }
                    _ = VCR.takeFailures()
                }
                #expect(try HTTPBin.requests(since: before, to: ["/get"]).isEmpty)
                #expect(try Data(contentsOf: file) == bytes)
            }
        }

        @Test func allErasesAndRecordsEverythingAgain() async throws {
            try await holdingCassettes {
                let folder = try TemporaryFolder()
                let url = try HTTPBin.url("/uuid")
                let first = try await withCassette("all", in: folder.path) { _ in try await session.data(from: url).0 }
                let before = try HTTPBin.settledRequestCount()
                let second = try await withCassette("all", in: folder.path, { $0.recordMode = .all }) { cassette in
                    #expect(cassette.requests.isEmpty, "inserting in .all mode erases the tape")
                    return try await session.data(from: url).0
                }
                #expect(first != second, "a /uuid replayed in .all mode")
                try HTTPBin.waitForRequestCount(atLeast: before + 1)
                #expect(try HTTPBin.requests(since: before, to: ["/uuid"]) == ["GET /uuid"])
                let (tape, _) = try CassetteFile.read(at: folder.url.appendingPathComponent("all.json"))
                #expect(tape.interactions.count == 1)
                #expect(tape.interactions.first?.body == second)
            }
        }

        @Test func environmentVariableOverridesTheConfiguredMode() async throws {
            try await holdingCassettes {
                let folder = try TemporaryFolder()
                let url = try HTTPBin.url("/uuid")
                let first = try await withCassette("env", in: folder.path) { _ in try await session.data(from: url).0 }
                setenv(RecordMode.environmentVariable, "all", 1)
                defer { unsetenv(RecordMode.environmentVariable) }
                let second = try await withCassette("env", in: folder.path, { $0.recordMode = .never }) { cassette in
                    #expect(cassette.recordMode == .all)
                    return try await session.data(from: url).0
                }
                #expect(first != second)
            }
        }

        @Test func xcodebuildsPrefixedVariableCountsWhenThePlainOneIsNotSet() {
            #expect(RecordMode.from(environment: ["TEST_RUNNER_VCR_RECORD_MODE": "new"]) == .new)
            #expect(RecordMode.from(environment: ["VCR_RECORD_MODE": "never", "TEST_RUNNER_VCR_RECORD_MODE": "new"]) == .never)
            #expect(RecordMode.from(environment: ["TEST_RUNNER_VCR_RECORD_MODE": "sometimes"]) == nil)
            #expect(RecordMode.from(environment: [:]) == nil)
        }

        @Test func theVariableTakesTheReplayOnlyModeByBothItsNames() {
            for name in ["never", "none", "NONE", " Never "] {
                #expect(RecordMode.from(environment: ["VCR_RECORD_MODE": name]) == .never, "VCR_RECORD_MODE=\(name)")
                #expect(RecordMode.from(environment: ["TEST_RUNNER_VCR_RECORD_MODE": name]) == .never)
            }
            #expect(RecordMode.from(environment: ["VCR_RECORD_MODE": "nothing"]) == nil)
        }

        @Test func noneIsTheFormerNameOfNever() {
            let parsed = RecordMode(rawValue: "none")
            #expect(parsed == .never)
            #expect(parsed?.rawValue == "never", "one mode: it has the new name however it was named")
            #expect(parsed?.description == ".never")
            #expect(RecordMode(rawValue: RecordMode.never.rawValue) == .never)
            #expect(RecordMode.never.description == ".never")
            #expect(deprecatedNone == .never, "RecordMode.none == .never")
            #expect(Set([deprecatedNone, .never]).count == 1)
        }

        @Test func everyModeIsNamedByItsRawValue() {
            for mode in [RecordMode.once, .new, .never, .all, .passthrough] {
                #expect(RecordMode(rawValue: mode.rawValue) == mode)
                #expect(mode.description == "." + mode.rawValue)
            }
        }

        @Test func identicalRequestsReplayInRecordedOrder() async throws {
            try await holdingCassettes {
                let folder = try TemporaryFolder()
                let url = try HTTPBin.url("/uuid")
                let recorded = try await withCassette("uuid", in: folder.path) { _ in
                    [try await session.data(from: url).0, try await session.data(from: url).0]
                }
                #expect(recorded[0] != recorded[1])
                let replayed = try await withCassette("uuid", in: folder.path) { cassette in
                    let result = [try await session.data(from: url).0, try await session.data(from: url).0]
                    #expect(cassette.allPlayed && cassette.playCount == 2)
                    return result
                }
                #expect(replayed == recorded)
            }
        }
    }
}

/// `RecordMode.none`, the deprecated spelling, as users wrote it. Only a deprecated member may use it without a
/// warning, and reached through a protocol that member warns nowhere: the build stays free of deprecation warnings.
private var deprecatedNone: RecordMode {
    (FormerSpelling.self as any FormerSpellings.Type).deprecatedNone
}

private protocol FormerSpellings {
    static var deprecatedNone: RecordMode { get }
}

private enum FormerSpelling: FormerSpellings {
    @available(*, deprecated, message: "spells the deprecated RecordMode.none on purpose")
    static var deprecatedNone: RecordMode { .none }
}
