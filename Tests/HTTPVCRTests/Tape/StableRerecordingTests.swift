import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import HTTPVCR
import HTTPBinTestSupport

extension VCRTests {
    /// Re-recording what came back unchanged leaves the file as it was, for requests made together too: the order in
    /// which overlapping requests happened to be sent and answered is not written anew each time.
    @Suite struct StableRerecordingTests {
        /// Five requests in a task group, answered the same way each time (httpbin's `/anything` echoes the request).
        static func requestTogether(_ urls: [URL], on session: URLSession) async throws {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for url in urls { group.addTask { _ = try await session.data(from: url) } }
                try await group.waitForAll()
            }
        }

        @Test func parallelRequestsReRecordedFiveTimesLeaveTheBytesAsTheyWere() async throws {
            let folder = try TemporaryFolder()
            let file = folder.url.appendingPathComponent("parallel.json")
            let urls = try (1...5).map { try HTTPBin.url("/anything/\($0)") }
            let session = vcrSession(timeout: 10)
            try await holdingCassettes {
                var saves: [String] = []
                for _ in 1...5 {
                    try await withCassette("parallel", in: folder.path, { $0.recordMode = .all }) { _ in
                        try await Self.requestTogether(urls, on: session)
                    }
                    saves.append(try String(contentsOf: file, encoding: .utf8))
                }
                let first = try #require(saves.first)
                for (number, save) in saves.enumerated().dropFirst() {
                    #expect(save == first, "recording \(number + 1) changed the file")
                }
                let tape = try CassetteFile.read(at: file).tape
                #expect(Set(tape.interactions.map(\.request.url)) == Set(urls.map(\.absoluteString)))

                // It replays in chronological order: the session hears of the requests finishing in tape order,
                // and no chapter holds the others up.
                let finishing = tape.scenes.compactMap { scene in
                    scene.event == .completion
                        ? tape.interactions.first { $0.chapter == scene.chapter }.map { String(decoding: $0.body, as: UTF8.self) }
                        : nil
                }
                for observer in CompletionObserver.allCases {
                    try await withCassette("parallel", in: folder.path, { $0.recordMode = .never }) { cassette in
                        let order = await completionOrder(urls, observedBy: observer)
                        #expect(order == finishing, "\(observer)")
                        #expect(cassette.allPlayed)
                        #expect(cassette.playback.chaptersWaitedFor == 0)
                    }
                }
                #expect(try String(contentsOf: file, encoding: .utf8) == first)
            }
        }
    }
}
