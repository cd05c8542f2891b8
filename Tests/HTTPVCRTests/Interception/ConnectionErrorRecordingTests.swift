import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import HTTPVCR
import HTTPBinTestSupport

extension VCRTests {
    /// A recording made while the server was down: reported, and kept off the tape unless asked for.
    @Suite struct ConnectionErrorRecordingTests {
        let session = vcrSession(timeout: 10)

        @Test func aRequestThatCannotReachTheServerIsReportedAndNotRecorded() async throws {
            let folder = try TemporaryFolder()
            let url = URL(string: "http://127.0.0.1:\(try HTTPBin.closedPort())/down")!
            let failures = try await withCassette("down", in: folder.path) { cassette in
                let error = await #expect(throws: URLError.self) { try await session.data(from: url) }
                #expect(error?.code == .cannotConnectToHost, "the live error still reaches the caller")
                #expect(!cassette.hasUnsavedChanges)
                return VCR.takeFailures()
            }
            #expect(failures.map(\.code) == [.connectionErrorNotRecorded])
            let message = try #require(failures.first?.message)
            #expect(message.contains("GET \(url.absoluteString) could not reach the server while recording"))
            #expect(message.contains("so it was not written to \(folder.url.appendingPathComponent("down.json").path)"))
            #expect(message.contains("configuration.recordsConnectionErrors = true"))
            #expect(failures.first?.cassettePath == folder.url.appendingPathComponent("down.json").path)
            #expect(!FileManager.default.fileExists(atPath: folder.url.appendingPathComponent("down.json").path),
                    "nothing else was recorded, so no cassette is written: the next run records again")
        }

        @Test func theOthersAreRecordedBesideIt() async throws {
            let folder = try TemporaryFolder()
            let down = URL(string: "http://127.0.0.1:\(try HTTPBin.closedPort())/down")!
            let up = try HTTPBin.url("/get?beside=down")
            try await withCassette("mixed", in: folder.path) { _ in
                _ = try await session.data(from: up)
                _ = try? await session.data(from: down)
                #expect(VCR.takeFailures().map(\.code) == [.connectionErrorNotRecorded])
            }
            let (tape, _) = try CassetteFile.read(at: folder.url.appendingPathComponent("mixed.json"))
            #expect(tape.interactions.map(\.request.url) == [up.absoluteString])
        }

        @Test func recordsConnectionErrorsOnPurposeAndReplaysThem() async throws {
            let folder = try TemporaryFolder()
            let url = URL(string: "http://127.0.0.1:\(try HTTPBin.closedPort())/outage")!
            try await withCassette("outage", in: folder.path, { $0.recordsConnectionErrors = true }) { _ in
                _ = try? await session.data(from: url)
                #expect(VCR.takeFailures().isEmpty)
            }
            try await withCassette("outage", in: folder.path, { $0.recordMode = .never }) { _ in
                let error = await #expect(throws: URLError.self) { try await session.data(from: url) }
                #expect(error?.code == .cannotConnectToHost, "the outage replays")
            }
        }

        @Test func whichErrorsCountAsUnreachable() {
            #expect(ConnectionError.isUnreachable(URLError(.cannotConnectToHost)))
            #expect(ConnectionError.isUnreachable(URLError(.cannotFindHost)))
            #expect(ConnectionError.isUnreachable(URLError(.notConnectedToInternet)))
            #expect(!ConnectionError.isUnreachable(URLError(.timedOut)), "a slow server is what it did")
            #expect(!ConnectionError.isUnreachable(URLError(.cancelled)), "the client's doing")
            #expect(!ConnectionError.isUnreachable(VCRError(.noMatch, "x")))
        }
    }
}
