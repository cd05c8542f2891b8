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

/// ``StableRerecording/arranged(_:previous:)`` on tapes made by hand: which order a re-recording is written in.
@Suite struct StableRerecordingArrangementTests {
    /// A chapter's scenes for `path`: request, response, its path as the body, completion.
    static func scenes(_ chapter: Int, _ path: String, status: Int = 200) -> [Scene] {
        let url = "http://order.example.test/\(path)"
        return [
            Scene(chapter: chapter, event: .request(RecordedRequest(method: "GET", url: url))),
            Scene(chapter: chapter, time: 0.01, event: .response(RecordedResponse(url: url, statusCode: status))),
            Scene(chapter: chapter, time: 0.01, event: .data(Data(path.utf8))),
            Scene(chapter: chapter, time: 0.02, event: .completion),
        ]
    }

    /// Scenes as the recorder hands them over: at playhead 0 (`.all` erased the tape), in the order given.
    static func recorded(_ scenes: [Scene]) -> [StableRerecording.Entry] {
        scenes.enumerated().map { (anchor: 0, order: UInt64($0.offset), scene: $0.element) }
    }

    /// Three requests that overlapped, the first answered before the last was sent this time.
    static let previous: [Scene] = {
        let (a, b, c) = (scenes(1, "a"), scenes(2, "b"), scenes(3, "c"))
        return [a[0], b[0], a[1], a[2], c[0], a[3], c[1], c[2], b[1], b[2], b[3], c[3]]
    }()

    @Test func unchangedOverlappingRequestsKeepThePreviousOrderAndNumbers() {
        // This time a ended before b and c were sent, b came back last, and the chapters were numbered anew.
        let (a, b, c) = (Self.scenes(7, "a"), Self.scenes(5, "b"), Self.scenes(6, "c"))
        let now = Self.recorded(a + [c[0], b[0], c[1], c[2], c[3]] + b.dropFirst())
        let arranged = StableRerecording.arranged(now, previous: PreviousRecordings(Tape(scenes: Self.previous)))
        #expect(arranged.map(\.scene) == Self.previous)
    }

    @Test func requestsThatFollowedOneAnotherKeepTheirRealOrder() {
        let previous = Self.scenes(1, "a") + Self.scenes(2, "b")
        let now = Self.recorded(Self.scenes(1, "b") + Self.scenes(2, "a"))
        let arranged = StableRerecording.arranged(now, previous: PreviousRecordings(Tape(scenes: previous)))
        #expect(arranged.map(\.scene) == Self.scenes(2, "b") + Self.scenes(1, "a"), "b first, as it was sent first")
    }

    @Test func aGroupWithAChangedAnswerIsWrittenAsItHappened() {
        let (a, b) = (Self.scenes(1, "a", status: 500), Self.scenes(2, "b"))
        let now = Self.recorded([a[0], b[0], b[1], b[2], b[3], a[1], a[2], a[3]])
        let previous = Self.scenes(2, "a") + Self.scenes(1, "b")
        let arranged = StableRerecording.arranged(now, previous: PreviousRecordings(Tape(scenes: previous)))
        // b is unchanged and keeps its chapter number (1), so the changed a, recorded as 1 too, gets the next one.
        let changed = Self.scenes(2, "a", status: 500)
        let unchanged = Self.scenes(1, "b")
        #expect(arranged.map(\.scene)
            == [changed[0], unchanged[0], unchanged[1], unchanged[2], unchanged[3], changed[1], changed[2], changed[3]])
    }

    @Test func withoutAPreviousTapeItIsTheRealOrder() {
        let now = Self.recorded(Self.scenes(2, "b") + Self.scenes(1, "a"))
        #expect(StableRerecording.arranged(Array(now.reversed()), previous: .none).map(\.scene)
            == Self.scenes(2, "b") + Self.scenes(1, "a"))
    }
}
