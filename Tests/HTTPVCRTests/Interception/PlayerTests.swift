import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import HTTPVCR

/// The player on its own: which scenes it hands over, to whom and when, for tapes built by hand.
@Suite struct PlayerTests {
    /// Remembers what it is handed; the player never calls it (deliveries are returned, not sent).
    final class Receiver: SceneReceiver {
        let name: String
        init(_ name: String) { self.name = name }
        func receive(_ event: Scene.Event, part _: Int) {}
    }

    static func request(_ chapter: Int) -> Scene {
        Scene(chapter: chapter, event: .request(RecordedRequest(method: "GET", url: "http://h/\(chapter)")))
    }

    static func response(_ chapter: Int) -> Scene {
        Scene(chapter: chapter, event: .response(RecordedResponse(url: "http://h/\(chapter)", statusCode: 200)))
    }

    static func data(_ chapter: Int, _ text: String) -> Scene {
        Scene(chapter: chapter, event: .data(Data(text.utf8)))
    }

    static func completion(_ chapter: Int) -> Scene {
        Scene(chapter: chapter, event: .completion)
    }

    /// A player over `scenes`, chapters numbered by first appearance as `Cassette` numbers them.
    static func player(
        _ scenes: [Scene], mode: PlaybackMode = .chronological, wait: TimeInterval = 0.3, interchangeable: [Int]? = nil
    ) -> Player {
        Player(scenes: scenes, layout: ChapterLayout(scenes: scenes), mode: mode, wait: wait, interchangeable: interchangeable)
    }

    /// Each delivery as "receiver:scene position" ("receiver:end" for a completion the tape lacks).
    static func describe(_ deliveries: [Delivery]) -> [String] {
        deliveries.map { delivery in
            let name = (delivery.receiver as? Receiver)?.name ?? "?"
            return "\(name):\(delivery.scene.map(String.init) ?? "end")"
        }
    }

    @Test func sequentialRequestsGetTheirWholeChapterAtOnce() {
        var player = Self.player([
            Self.request(1), Self.response(1), Self.data(1, "a"), Self.completion(1),
            Self.request(2), Self.response(2), Self.completion(2),
        ])
        let first = player.start(chapter: 0, receiver: Receiver("a"))
        #expect(Self.describe(first) == ["a:1", "a:2", "a:3"])
        #expect(first.last?.isEnd == true)
        #expect(player.playhead == 4)
        #expect(player.nextWake == nil)
        let second = player.start(chapter: 1, receiver: Receiver("b"))
        #expect(Self.describe(second) == ["b:5", "b:6"])
        #expect(player.playhead == 7)
    }

    @Test func aChapterInterleavedWithAnUnrequestedOneWaitsForIt() {
        // Chapter 1 is cut by chapter 2's scenes: it plays up to them, then waits.
        var player = Self.player([
            Self.request(1), Self.response(1), Self.request(2), Self.response(2),
            Self.data(1, "a"), Self.completion(1), Self.completion(2),
        ])
        #expect(Self.describe(player.start(chapter: 0, receiver: Receiver("a"))) == ["a:1"])
        #expect(player.nextWake != nil, "a request is waiting on one nobody has made")
        #expect(Self.describe(player.start(chapter: 1, receiver: Receiver("b"))) == ["b:3", "a:4", "a:5", "b:6"])
        #expect(player.nextWake == nil)
    }

    @Test func aRequestWaitingBehindAnUnrequestedChapterItsLikeDoesNotWait() {
        // Three identical requests; the app makes the next one only once the one it started last has its answer.
        // Recording, the loader started them in another order than the app: the chapter the app's last request
        // gets here (2) ends on the tape after the next request (3), which the app has not made yet.
        let scenes = [
            Self.request(0), Self.request(1), Self.response(0), Self.completion(0), Self.response(1),
            Self.completion(1), Self.request(2), Self.request(3), Self.response(2), Self.completion(2),
            Self.response(3), Self.completion(3),
        ]
        var waiting = Self.player(scenes)
        var alike = Self.player(scenes, interchangeable: [0, 0, 0, 0])
        for player in [0, 1] {
            func start(_ chapter: Int, _ name: String) -> [String] {
                let receiver = Receiver(name)
                return Self.describe(player == 0
                    ? waiting.start(chapter: chapter, receiver: receiver)
                    : alike.start(chapter: chapter, receiver: receiver))
            }
            if player == 0 {
                #expect(start(0, "a") == [])
                #expect(start(1, "b") == ["a:2", "a:3", "b:4", "b:5"])
                #expect(start(2, "c") == [], "held up by chapter 3, until the wait runs out")
                #expect(waiting.nextWake != nil)
            } else {
                // Each chapter reached at its request while its like waits behind it plays when asked for.
                #expect(start(0, "a") == ["a:2", "a:3"])
                #expect(start(1, "b") == ["b:4", "b:5"])
                #expect(start(2, "c") == ["c:8", "c:9"], "chapter 3 holds nothing to wait for")
                #expect(alike.nextWake == nil)
                #expect(start(3, "d") == ["d:10", "d:11"])
                #expect(alike.bypassedAfterWaiting == 0)
            }
        }
    }

    @Test func aChapterThatStartsLaterWaitsForTheOneBeforeIt() {
        var player = Self.player([
            Self.request(1), Self.response(1), Self.completion(1),
            Self.request(2), Self.response(2), Self.completion(2),
        ])
        #expect(player.start(chapter: 1, receiver: Receiver("b")).isEmpty)
        #expect(Self.describe(player.start(chapter: 0, receiver: Receiver("a"))) == ["a:1", "a:2", "b:4", "b:5"])
    }

    @Test func aChapterNobodyRequestsIsBypassedAfterTheWait() throws {
        var player = Self.player(
            [Self.request(1), Self.response(1), Self.completion(1), Self.request(2), Self.completion(2)],
            wait: 0.3
        )
        let start = Date()
        #expect(player.start(chapter: 1, receiver: Receiver("b")).isEmpty)
        let wake = try #require(player.nextWake)
        #expect(player.advance(now: start).isEmpty, "not before the wait")
        #expect(Self.describe(player.advance(now: wake.addingTimeInterval(0.01))) == ["b:4"])
        // The bypassed chapter plays at once when it is requested at last.
        #expect(Self.describe(player.start(chapter: 0, receiver: Receiver("a"))) == ["a:1", "a:2"])
    }

    @Test func aChapterCutOffBeforeItsEndStillEnds() {
        var player = Self.player([Self.request(1), Self.response(1), Self.data(1, "partial")])
        let deliveries = player.start(chapter: 0, receiver: Receiver("a"))
        #expect(Self.describe(deliveries) == ["a:1", "a:2", "a:end"])
        #expect(deliveries.map(\.isEnd) == [false, false, true])
    }

    @Test func momentaryPlaybackIgnoresTheOrderOfChapters() {
        var player = Self.player(
            [Self.request(1), Self.response(1), Self.completion(1), Self.request(2), Self.completion(2)],
            mode: .momentary
        )
        #expect(Self.describe(player.start(chapter: 1, receiver: Receiver("b"))) == ["b:4"])
        #expect(Self.describe(player.start(chapter: 0, receiver: Receiver("a"))) == ["a:1", "a:2"])
    }

    // MARK: Whole chapters delivered at once

    @Test func theNextChapterOnTheTapeIsDeliveredWholeWhenNobodyWaits() {
        var player = Self.player([
            Self.request(1), Self.response(1), Self.completion(1),
            Self.request(2), Self.response(2), Self.completion(2),
        ])
        #expect(Self.describe(player.start(chapter: 0, receiver: Receiver("a"))) == ["a:1", "a:2"])
        #expect(player.playhead == 3)
        #expect(Self.describe(player.start(chapter: 1, receiver: Receiver("b"))) == ["b:4", "b:5"])
        #expect(player.playhead == 6)
    }

    @Test func aChapterAheadOfTheTapeWaitsAndOneBehindAWaitingRequestBringsItAlong() {
        var player = Self.player([
            Self.request(1), Self.response(1), Self.completion(1),
            Self.request(2), Self.response(2), Self.completion(2),
            Self.request(3), Self.response(3), Self.completion(3),
        ])
        #expect(player.start(chapter: 1, receiver: Receiver("b")).isEmpty, "chapter 1 plays first")
        #expect(player.playhead == 0, "nothing was delivered")
        // Chapter 1 is next on the tape, and a request waits behind it: the waiting request's scenes follow its
        // own, in order.
        #expect(Self.describe(player.start(chapter: 0, receiver: Receiver("a"))) == ["a:1", "a:2", "b:4", "b:5"])
        #expect(Self.describe(player.start(chapter: 2, receiver: Receiver("c"))) == ["c:7", "c:8"])
    }

    @Test func aChapterCutByAnotherIsDeliveredUpToTheCut() {
        var player = Self.player([
            Self.request(1), Self.response(1), Self.request(2), Self.completion(1), Self.completion(2),
        ])
        #expect(Self.describe(player.start(chapter: 0, receiver: Receiver("a"))) == ["a:1"])
    }

    @Test func momentaryAndBypassedChaptersAreDeliveredWhole() throws {
        var momentary = Self.player(
            [Self.request(1), Self.response(1), Self.completion(1), Self.request(2), Self.completion(2)],
            mode: .momentary
        )
        #expect(Self.describe(momentary.start(chapter: 1, receiver: Receiver("b"))) == ["b:4"])
        #expect(Self.describe(momentary.start(chapter: 0, receiver: Receiver("a"))) == ["a:1", "a:2"])

        var chronological = Self.player(
            [Self.request(1), Self.response(1), Self.completion(1), Self.request(2), Self.completion(2)],
            wait: 0.3
        )
        #expect(chronological.start(chapter: 1, receiver: Receiver("b")).isEmpty)
        let wake = try #require(chronological.nextWake)
        #expect(Self.describe(chronological.advance(now: wake.addingTimeInterval(0.01))) == ["b:4"])
        #expect(
            Self.describe(chronological.start(chapter: 0, receiver: Receiver("a"))) == ["a:1", "a:2"],
            "bypassed: it plays at once when requested"
        )
    }

    /// A playback of `chapters` chapters (`GET http://h/<n>`: request, response, completion), matched by the default
    /// matchers.
    static func playback(chapters: Int, mode: PlaybackMode = .chronological) -> Playback {
        let scenes = (0..<chapters).flatMap { [request($0), response($0), completion($0)] }
        return Playback(
            scenes: scenes,
            layout: ChapterLayout(scenes: scenes),
            policy: Playback.Policy(
                cassettePath: "/tapes/hand-made.json",
                recordMode: .never,
                isWriteProtected: true,
                matchers: VCRConfiguration().matchers.compactMap { $0.resolved() },
                allowsPlaybackRepeats: false
            ),
            mode: mode,
            wait: 0.3
        )
    }

    @Test func aReplayIsDeliveredBeforePlayReturnsWhenNobodyElseIsDelivering() async throws {
        final class Recorder: SceneReceiver, @unchecked Sendable {
            private let lock = NSLock()
            private var events: [String] = []
            func receive(_ event: Scene.Event, part _: Int) {
                lock.lock()
                events.append("\(event)".prefix(8).description)
                lock.unlock()
            }
            var count: Int {
                lock.lock()
                defer { lock.unlock() }
                return events.count
            }
        }
        let playback = Self.playback(chapters: 1)
        let receiver = Recorder()
        let decision = playback.play(URLRequest(url: URL(string: "http://h/0")!), to: receiver)
        guard case .replaying = decision else {
            Issue.record("not replayed: \(decision)")
            return
        }
        #expect(receiver.count == 2, "the response and the completion, before play returns: the receiver's queue is this one")
        #expect(playback.playCount == 1)
    }

    /// Receivers whose clients must be called on queues of their own (corelibs' task queues): each delivery is
    /// made on its receiver's queue, and the next one only once it is over, whatever the queues' threads do.
    @Test func theTurnMovesToEachReceiversQueueAndDeliveriesStayInOrder() async throws {
        final class Log: @unchecked Sendable {
            private let lock = NSLock()
            private var entries: [String] = []
            func append(_ entry: String) {
                lock.lock()
                entries.append(entry)
                lock.unlock()
            }
            var all: [String] {
                lock.lock()
                defer { lock.unlock() }
                return entries
            }
        }
        final class QueueReceiver: SceneReceiver, @unchecked Sendable {
            let name: String
            let log: Log
            let queue: DispatchQueue
            private let key = DispatchSpecificKey<String>()
            init(_ name: String, log: Log) {
                self.name = name
                self.log = log
                queue = DispatchQueue(label: name)
                queue.setSpecific(key: key, value: name)
            }
            var isOnClientQueue: Bool { DispatchQueue.getSpecific(key: key) == name }
            func onClientQueue(_ body: @escaping @Sendable () -> Void) {
                // A moment's delay on some queues: a later delivery must still wait for this one.
                let delay = name == "a" ? 0.002 : 0
                queue.asyncAfter(deadline: .now() + delay) { body() }
            }
            func receive(_ event: Scene.Event, part _: Int) {
                log.append("\(name):\(isOnClientQueue ? "own queue" : "ELSEWHERE")")
            }
        }
        let log = Log()
        let receivers = [QueueReceiver("a", log: log), QueueReceiver("b", log: log), QueueReceiver("c", log: log)]
        let playback = Self.playback(chapters: 30)
        var expected: [String] = []
        for round in 0..<30 {
            let receiver = receivers[(round * 7) % 3]
            _ = playback.play(URLRequest(url: URL(string: "http://h/\(round)")!), to: receiver)
            // The response and the completion of each chapter.
            expected += Array(repeating: "\(receiver.name):own queue", count: 2)
        }
        let deadline = Date().addingTimeInterval(5)
        while log.all.count < expected.count, Date() < deadline { try await Task.sleep(nanoseconds: 1_000_000) }
        #expect(log.all == expected)
    }
}
