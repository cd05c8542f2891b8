import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import HTTPVCR
import HTTPBinTestSupport

extension VCRTests {
    /// What happens to a cassette over its life: repeats, unused interactions, expiry, and the live switch.
    @Suite struct LifecycleTests {
        let session = vcrSession()

        // MARK: Repeats

        @Test func identicalRequestsFailByDefaultAndReplayWithRepeats() async throws {
            let folder = try TemporaryFolder()
            let url = try HTTPBin.url("/uuid")
            let recorded = try await withCassette("uuid-once", in: folder.path) { _ in
                try await session.data(from: url).0
            }
            // Twice against one recording: the second fails, and the message names the option.
            try await withCassette("uuid-once", in: folder.path, { $0.recordMode = .never }) { _ in
                #expect(try await session.data(from: url).0 == recorded)
                await #expect(throws: VCRError.self) { try await session.data(from: url) }
                let failure = try #require(VCR.takeFailures().first)
                #expect(failure.message.contains("every matching recording was already played"))
                #expect(failure.message.contains("allowsPlaybackRepeats = true"))
            }
            let before = try HTTPBin.settledRequestCount()
            try await withCassette("uuid-once", in: folder.path, {
                $0.recordMode = .never
                $0.allowsPlaybackRepeats = true
            }) { cassette in
                for _ in 0..<3 {
                    let replayed = try await session.data(from: url).0
                    #expect(replayed == recorded)
                }
                #expect(cassette.playCount == 1)
                #expect(VCR.takeFailures().isEmpty)
            }
            #expect(try HTTPBin.requests(since: before, to: ["/uuid"]).isEmpty, "repeats never reach the server")
        }

        @Test func repeatsReplayTheLastOfSeveralMatches() async throws {
            let folder = try TemporaryFolder()
            let url = try HTTPBin.url("/uuid")
            let (first, second) = try await withCassette("uuid-twice", in: folder.path) { _ in
                (try await session.data(from: url).0, try await session.data(from: url).0)
            }
            #expect(first != second)
            try await withCassette("uuid-twice", in: folder.path, {
                $0.recordMode = .never
                $0.allowsPlaybackRepeats = true
                $0.playbackMode = .momentary
            }) { _ in
                let replayed = [
                    try await session.data(from: url).0,
                    try await session.data(from: url).0,
                    try await session.data(from: url).0,
                ]
                #expect(replayed == [first, second, second], "the last one again")
            }
        }

        // MARK: Unused interactions

        @Test func reRecordingInNewModeWithDropsKeepsOnlyWhatWasUsed() async throws {
            let folder = try TemporaryFolder()
            let (a, b, c) = (try HTTPBin.url("/get?used=a"), try HTTPBin.url("/get?used=b"), try HTTPBin.url("/get?used=c"))
            try await withCassette("drops", in: folder.path) { _ in
                _ = try await session.data(from: a)
                _ = try await session.data(from: b)
            }
            let file = folder.url.appendingPathComponent("drops.json")
            // Nothing recorded: nothing dropped, even with the option.
            try await withCassette("drops", in: folder.path, {
                $0.recordMode = .new
                $0.dropsUnusedInteractions = true
            }) { _ in _ = try await session.data(from: a) }
            #expect(try CassetteFile.read(at: file).tape.interactions.map(\.request.url) == [a, b].map(\.absoluteString))
            // Something recorded: only what was played or recorded stays, in tape order.
            try await withCassette("drops", in: folder.path, {
                $0.recordMode = .new
                $0.dropsUnusedInteractions = true
            }) { _ in
                _ = try await session.data(from: a)
                _ = try await session.data(from: c)
            }
            #expect(try CassetteFile.read(at: file).tape.interactions.map(\.request.url) == [a, c].map(\.absoluteString))
            // Without the option, `.new` keeps everything (what it records goes in at the playhead: first, here).
            try await withCassette("drops", in: folder.path, { $0.recordMode = .new }) { _ in
                _ = try await session.data(from: b)
            }
            #expect(try CassetteFile.read(at: file).tape.interactions.map(\.request.url)
                == [b, a, c].map(\.absoluteString))
        }

        // MARK: Expiry

        /// A one-interaction cassette recorded `age` seconds ago.
        func writeAgedCassette(_ name: String, in folder: borrowing TemporaryFolder, age: TimeInterval) throws -> URL {
            let url = try HTTPBin.url("/anything/aged?\(name)")
            let tape = Tape(interactions: [Interaction(
                chapter: 1,
                request: RecordedRequest(
                    method: "GET", url: url.absoluteString, recordedAt: RecordingTime.now.addingTimeInterval(-age)
                ),
                response: RecordedResponse(url: url.absoluteString, statusCode: 200),
                chunks: [Data("aged".utf8)]
            )])
            try CassetteFile.write(tape, to: folder.url.appendingPathComponent("\(name).json"), as: .json)
            return url
        }

        static let days: TimeInterval = 24 * 60 * 60

        @Test func recordingsSayWhenTheyWereMadeAndReadBack() async throws {
            let folder = try TemporaryFolder()
            let before = RecordingTime.now
            try await withCassette("dated", in: folder.path) { _ in _ = try await session.data(from: HTTPBin.url("/get")) }
            let text = try String(contentsOf: folder.url.appendingPathComponent("dated.json"), encoding: .utf8)
            #expect(text.contains(#""recordedAt" : ""#) || text.contains(#""recordedAt": ""#))
            let recordedAt = try #require(
                try CassetteFile.read(at: folder.url.appendingPathComponent("dated.json")).tape.interactions.first?
                    .request.recordedAt
            )
            #expect(recordedAt >= before && recordedAt <= Date())
            #expect(RecordingTime.date(from: RecordingTime.text(of: recordedAt)) == recordedAt)
            #expect(RecordingTime.text(of: Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00Z")
            #expect(RecordingTime.date(from: "2026-11-23T22:00:00Z")?.timeIntervalSince1970 == 1_795_471_200)
            #expect(RecordingTime.date(from: "2026-11-23 22:00") == nil)
        }

        @Test func anExpiredCassetteWarnsByDefault() async throws {
            let folder = try TemporaryFolder()
            let url = try writeAgedCassette("warns", in: folder, age: 40 * Self.days)
            try await withCassette("warns", in: folder.path, { $0.reRecordInterval = 30 * Self.days }) { cassette in
                let expiry = try #require(cassette.expiry)
                #expect(expiry.action == .warn)
                #expect(expiry.message.contains("its oldest interaction was recorded 40 days ago"))
                #expect(expiry.message.contains("longer ago than reRecordInterval (30 days)"))
                let body = try await session.data(from: url).0
                #expect(body == Data("aged".utf8), "replayed as it is")
            }
            try await withCassette("warns", in: folder.path, { $0.reRecordInterval = 50 * Self.days }) { cassette in
                #expect(cassette.expiry == nil)
            }
        }

        @Test func anExpiredCassetteFailsWhenAskedTo() async throws {
            let folder = try TemporaryFolder()
            _ = try writeAgedCassette("fails", in: folder, age: 40 * Self.days)
            await #expect {
                try await withCassette("fails", in: folder.path, {
                    $0.reRecordInterval = 30 * Self.days
                    $0.expiryAction = .fail
                }) { _ in }
            } throws: { error in
                (error as? VCRError)?.code == .cassetteExpired
                    && (error as? VCRError)?.message.contains("has expired") == true
            }
        }

        @Test func anExpiredCassetteIsRecordedAnewWhenAskedTo() async throws {
            let folder = try TemporaryFolder()
            let url = try writeAgedCassette("rerecords", in: folder, age: 40 * Self.days)
            let before = try HTTPBin.settledRequestCount()
            try await withCassette("rerecords", in: folder.path, {
                $0.reRecordInterval = 30 * Self.days
                $0.expiryAction = .reRecord
            }) { cassette in
                #expect(cassette.expiry?.action == .reRecord)
                #expect(cassette.recordMode == .all)
                let body = try await session.data(from: url).0
                #expect(body != Data("aged".utf8), "from the server")
            }
            try HTTPBin.waitForRequestCount(atLeast: before + 1)
            #expect(try HTTPBin.requests(since: before, to: [url.path]).count == 1)
            let interaction = try #require(
                try CassetteFile.read(at: folder.url.appendingPathComponent("rerecords.json")).tape.interactions.first
            )
            #expect(try #require(interaction.request.recordedAt) > Date().addingTimeInterval(-60))
            // Where nothing may be recorded, an expired cassette only warns.
            _ = try writeAgedCassette("protected", in: folder, age: 40 * Self.days)
            try await withCassette("protected", in: folder.path, {
                $0.reRecordInterval = 30 * Self.days
                $0.expiryAction = .reRecord
                $0.recordMode = .never
            }) { cassette in
                #expect(cassette.expiry?.action == .warn)
                #expect(cassette.expiry?.message.contains("It is not re-recorded") == true)
            }
        }

        @Test func cassettesWithoutRecordingTimesNeverExpire() async throws {
            let folder = try TemporaryFolder()
            let url = "http://replay.test/old"
            try CassetteFile.write(Tape(interactions: [Interaction(
                chapter: 1, request: RecordedRequest(method: "GET", url: url),
                response: RecordedResponse(url: url, statusCode: 200)
            )]), to: folder.url.appendingPathComponent("undated.json"), as: .json)
            try await withCassette("undated", in: folder.path, {
                $0.reRecordInterval = 1
                $0.expiryAction = .fail
            }) { cassette in
                #expect(cassette.expiry == nil)
            }
        }

        // MARK: Passthrough

        @Test func passthroughReachesTheServerAndWritesNothing() async throws {
            let folder = try TemporaryFolder()
            let file = folder.url.appendingPathComponent("live.json")
            try Data("not a cassette at all".utf8).write(to: file)
            let url = try HTTPBin.url("/anything/passthrough-\(UUID().uuidString)")
            let before = try HTTPBin.settledRequestCount()
            try await withCassette("live", in: folder.path, { $0.recordMode = .passthrough }) { cassette in
                let (data, _) = try await session.data(from: url)
                #expect(data.json?["url"] as? String == url.absoluteString)
                #expect(!cassette.hasUnsavedChanges)
            }
            try HTTPBin.waitForRequestCount(atLeast: before + 1)
            #expect(try HTTPBin.requests(since: before, to: [url.path]).count == 1)
            #expect(try Data(contentsOf: file) == Data("not a cassette at all".utf8), "neither read nor written")
            #expect(RecordMode(rawValue: "passthrough") == .passthrough)
        }
    }
}
