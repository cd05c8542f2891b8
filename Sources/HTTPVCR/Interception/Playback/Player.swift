import Foundation
import HTTPVCRCassettes

/// Decides which recorded scenes can be delivered now. It holds no lock: ``Playback`` calls it under its own.
///
/// Chronological playback walks the tape in order and stops at a scene whose request nobody has issued yet.
/// If requests are waiting behind it for longer than `wait`, that chapter is bypassed: its scenes leave the
/// chronological order and are delivered at once whenever it is requested. A chapter is bypassed at once when a
/// request waiting behind it is one no matcher tells apart from its own: which of such chapters a request gets is
/// only the order the requests reached HTTPVCR in, which the loader does not keep from one run to the next (the
/// tape's order among them holds nothing to wait for). Momentary playback delivers a chapter's scenes as soon as it
/// is requested.
struct Player {
    let scenes: [Scene]
    let layout: ChapterLayout
    let mode: PlaybackMode
    let wait: TimeInterval
    /// Groups of chapters whose requests match alike (``MatchIndex/interchangeable``), if known.
    let interchangeable: [Int]?

    private var delivered: [Bool]
    /// Who receives each requested chapter, and for which of its requests (``Delivery/part``).
    private var receivers: [Int: SceneRecipient] = [:]
    private var bypassed: Set<Int> = []
    private var cursor = 0
    private var waitingSince: Date?
    /// One past the furthest scene delivered: where `.new` mode inserts what it records.
    private(set) var playhead = 0
    /// Chapters bypassed once requests had waited `wait` for them, and how long the requests behind each waited:
    /// the end of the test says so, never leaving a wait silent.
    private(set) var waits: [(chapter: Int, seconds: TimeInterval)] = []
    /// How many chapters were bypassed after a wait.
    var bypassedAfterWaiting: Int { waits.count }

    init(scenes: [Scene], layout: ChapterLayout, mode: PlaybackMode, wait: TimeInterval, interchangeable: [Int]? = nil) {
        self.scenes = scenes
        self.layout = layout
        self.mode = mode
        self.wait = wait
        self.interchangeable = interchangeable
        self.delivered = Array(repeating: false, count: scenes.count)
    }

    private func isBypassed(_ chapter: Int) -> Bool {
        !bypassed.isEmpty && bypassed.contains(chapter)
    }

    /// How a matched chapter plays at once, whole, if it does.
    private enum WholeDelivery {
        /// Momentary playback, or a bypassed chapter: order among chapters does not matter.
        case anyOrder
        /// The next chapter on the tape, unbroken, with no other request waiting.
        case nextOnTape
    }

    private mutating func wholeDelivery(of chapter: Int) -> WholeDelivery? {
        if mode == .momentary || isBypassed(chapter) { return .anyOrder }
        if receivers.isEmpty, startsAtCursorUnbroken(chapter) { return .nextOnTape }
        return nil
    }

    /// A matched request starts playing its chapter. Returns what can be delivered now.
    mutating func start(chapter: Int, receiver: any SceneReceiver, part: Int = 0) -> [Delivery] {
        var deliveries: [Delivery] = []
        start(chapter: chapter, receiver: receiver, part: part, into: &deliveries)
        return deliveries
    }

    /// ``start(chapter:receiver:part:)``, appending to `deliveries`: the playback's queue, whose storage then serves
    /// one request after another.
    mutating func start(chapter: Int, receiver: any SceneReceiver, part: Int = 0, into deliveries: inout [Delivery]) {
        if let whole = wholeDelivery(of: chapter) {
            // Sequential replay: the same deliveries `advance` would make, without registering a receiver.
            deliverAll(of: chapter, to: (receiver, part), into: &deliveries)
            if whole == .nextOnTape { waitingSince = nil }
            return
        }
        receivers[chapter] = (receiver, part)
        deliveries.append(contentsOf: advance(now: Date()))
    }

    /// A chapter played again (``VCRConfiguration/allowsPlaybackRepeats``): all its scenes at once, to `receiver`,
    /// outside playback order and without changing what was delivered.
    func repeatDeliveries(of chapter: Int, to receiver: any SceneReceiver, part: Int = 0) -> [Delivery] {
        var deliveries: [Delivery] = []
        for position in layout.scenesOfChapter[chapter].dropFirst() {
            deliveries.append(Delivery(
                receiver: receiver, part: part, scene: position, chapter: chapter,
                isEnd: Delivery.isEnd(scenes[position].event)
            ))
        }
        if deliveries.last?.isEnd != true {
            deliveries.append(Delivery(receiver: receiver, part: part, scene: nil, chapter: chapter, isEnd: true))
        }
        return deliveries
    }

    /// Whether the next scene to play is this chapter's first and its scenes follow one another on the tape.
    private mutating func startsAtCursorUnbroken(_ chapter: Int) -> Bool {
        while cursor < scenes.count, delivered[cursor] || isBypassed(layout.chapterOfScene[cursor]) { cursor += 1 }
        let positions = layout.scenesOfChapter[chapter]
        guard let first = positions.first, let last = positions.last else { return false }
        return first == cursor && last - first + 1 == positions.count
    }

    /// Delivers what has become deliverable, bypassing chapters that held up waiting requests for too long.
    /// Returns the deliveries and, when requests are still waiting, when to call again.
    mutating func advance(now: Date) -> [Delivery] {
        var deliveries: [Delivery] = []
        deliveries.reserveCapacity(4)
        var position = cursor
        var blockedBy: Int?
        while position < scenes.count {
            let chapter = layout.chapterOfScene[position]
            if delivered[position] || isBypassed(chapter) {
                if position == cursor { cursor += 1 }
            } else if let recipient = receivers[chapter] {
                if blockedBy != nil { break }
                deliver(position, to: recipient, into: &deliveries)
                if position == cursor { cursor += 1 }
            } else if let waitingSince, now.timeIntervalSince(waitingSince) >= wait, hasWaitingReceivers(after: position) {
                bypassed.insert(chapter)
                waits.append((chapter, now.timeIntervalSince(waitingSince)))
                if position == cursor { cursor += 1 }
            } else if isWaitedForByItsLike(chapter, at: position) {
                bypassed.insert(chapter)
                if position == cursor { cursor += 1 }
            } else {
                blockedBy = chapter
                break
            }
            position += 1
        }
        if blockedBy != nil && hasWaitingReceivers(after: position) {
            if waitingSince == nil || !deliveries.isEmpty { waitingSince = now }
        } else {
            waitingSince = nil
        }
        return deliveries
    }

    /// When ``advance(now:)`` should run again for requests waiting on a bypass, if any are.
    var nextWake: Date? {
        waitingSince.map { $0.addingTimeInterval(wait) }
    }

    /// Whether `chapter`, not requested and reached at its request, holds up a waiting request that matches alike.
    private func isWaitedForByItsLike(_ chapter: Int, at position: Int) -> Bool {
        guard let interchangeable, layout.scenesOfChapter[chapter].first == position, !receivers.isEmpty else {
            return false
        }
        let group = interchangeable[chapter]
        return receivers.keys.contains { interchangeable[$0] == group }
    }

    private func hasWaitingReceivers(after position: Int) -> Bool {
        receivers.keys.contains { chapter in layout.scenesOfChapter[chapter].contains { $0 >= position && !delivered[$0] } }
    }

    private mutating func deliverAll(of chapter: Int, to recipient: SceneRecipient, into deliveries: inout [Delivery]) {
        for position in layout.scenesOfChapter[chapter] where !delivered[position] {
            deliver(position, to: recipient, into: &deliveries)
        }
    }

    /// The scene at `position`, and a completion after it when it is the last of a chapter that was cut off
    /// before it ended (so that no client waits forever on a truncated tape).
    private mutating func deliver(_ position: Int, to recipient: SceneRecipient, into deliveries: inout [Delivery]) {
        delivered[position] = true
        playhead = max(playhead, position + 1)
        let chapter = layout.chapterOfScene[position]
        let isLast = layout.isLastOfChapter[position]
        // The request scene only marks the chapter as issued: its receiver has nothing to do with it.
        if case .request = scenes[position].event, !isLast { return }
        let isEnd = Delivery.isEnd(scenes[position].event)
        let (receiver, part) = recipient
        deliveries.append(Delivery(receiver: receiver, part: part, scene: position, chapter: chapter, isEnd: isEnd))
        guard isLast else { return }
        // Sequential replay registers no receiver: nothing to hash then.
        if !receivers.isEmpty { receivers[chapter] = nil }
        if !isEnd {
            deliveries.append(Delivery(receiver: receiver, part: part, scene: nil, chapter: chapter, isEnd: true))
        }
    }
}

/// A receiver, and which of its requests a chapter answers (``Delivery/part``).
typealias SceneRecipient = (receiver: any SceneReceiver, part: Int)

/// Who receives a replayed chapter's scenes: the load of the URLSession task the request belongs to, or the door's
/// awaiting caller.
protocol SceneReceiver: AnyObject, Sendable {
    /// Whether ``receive(_:)`` may be called from here, now.
    var isOnClientQueue: Bool { get }
    /// Runs `body` where ``receive(_:)`` may be called, after what was sent there before.
    func onClientQueue(_ body: @escaping @Sendable () -> Void)
    /// Whether the chapter's end must be delivered from a block of its own, sent to the client's queue now, rather
    /// than right here (see ``CallerTask``). True once at most: the end is delivered from that block.
    func yieldsBeforeEnding() -> Bool
    /// `part`: which of the receiver's requests the scene answers (``Delivery/part``).
    func receive(_ event: Scene.Event, part: Int)
    /// Scenes delivered one after the other, in order, with nothing in between: one call for what the queue hands
    /// over at once (usually a whole chapter), all for one part.
    func receive(_ run: SceneRun)
}

extension SceneReceiver {
    var isOnClientQueue: Bool { true }
    func onClientQueue(_ body: @escaping @Sendable () -> Void) { body() }
    func yieldsBeforeEnding() -> Bool { false }
    func receive(_ run: SceneRun) {
        for event in run { receive(event, part: run.part) }
    }
}

/// Consecutive deliveries to one receiver, read as the scenes they name.
struct SceneRun: Sequence {
    let scenes: [Scene]
    let deliveries: ArraySlice<Delivery>

    var underestimatedCount: Int { deliveries.count }
    /// Which of the receiver's requests the run is for.
    var part: Int { deliveries.first?.part ?? 0 }

    func makeIterator() -> Iterator {
        Iterator(run: self, deliveries: deliveries.makeIterator())
    }

    struct Iterator: IteratorProtocol {
        let run: SceneRun
        var deliveries: ArraySlice<Delivery>.Iterator

        mutating func next() -> Scene.Event? { deliveries.next().map(run.event(of:)) }
    }

    /// The event `delivery` names.
    func event(of delivery: Delivery) -> Scene.Event {
        delivery.scene.map { scenes[$0].event } ?? .completion
    }
}

/// One scene handed to one receiver. It names the scene rather than holding it: deliveries are copied on their
/// way through the queue, and scenes carry bodies.
struct Delivery {
    let receiver: any SceneReceiver
    /// Which of the receiver's requests it answers: a load's later request (a hop the tape does not have, a retry)
    /// may replay the chapter an earlier one left, and what is left of the earlier one's is not the later one's.
    let part: Int
    /// The scene's position on the tape; nil for the completion of a chapter cut off before it ended.
    let scene: Int?
    /// The position of the chapter it belongs to.
    let chapter: Int
    /// The chapter's last delivery: a completion or an error.
    let isEnd: Bool
    /// Not to be handed over before this uptime (nanoseconds; ``ReplayTiming``); 0: at once.
    var due: UInt64 = 0

    static func isEnd(_ event: Scene.Event) -> Bool {
        switch event {
        case .completion, .error: true
        default: false
        }
    }
}
