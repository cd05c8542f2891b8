import Foundation

/// Who receives a replayed chapter's scenes: the URLProtocol instance serving the live request.
protocol SceneReceiver: AnyObject, Sendable {
    /// Whether ``receive(_:)`` may be called from here, now.
    var isOnClientQueue: Bool { get }
    /// Runs `body` where ``receive(_:)`` may be called, after what was sent there before.
    func onClientQueue(_ body: @escaping @Sendable () -> Void)
    /// Whether the chapter's end must be delivered from a block of its own, sent to the client's queue now, rather
    /// than right here (see ``CallerTask``). True once at most: the end is delivered from that block.
    func yieldsBeforeEnding() -> Bool
    func receive(_ event: Scene.Event)
}

extension SceneReceiver {
    var isOnClientQueue: Bool { true }
    func onClientQueue(_ body: @escaping @Sendable () -> Void) { body() }
    func yieldsBeforeEnding() -> Bool { false }
}

/// One scene handed to one receiver. It names the scene rather than holding it: deliveries are copied on their
/// way through the queue, and scenes carry bodies.
struct Delivery {
    let receiver: any SceneReceiver
    /// The scene's position on the tape; nil for the completion of a chapter cut off before it ended.
    let scene: Int?
    /// The position of the chapter it belongs to.
    let chapter: Int
    /// The chapter's last delivery: a completion or an error.
    let isEnd: Bool

    static func isEnd(_ event: Scene.Event) -> Bool {
        switch event {
        case .completion, .error: true
        default: false
        }
    }
}

/// Decides which recorded scenes can be delivered now. It holds no lock: the cassette calls it under its own.
///
/// Chronological playback walks the tape in order and stops at a scene whose request nobody has issued yet.
/// If requests are waiting behind it for longer than `wait`, that chapter is bypassed: its scenes leave the
/// chronological order and are delivered at once whenever it is requested. Momentary playback delivers a
/// chapter's scenes as soon as it is requested.
struct Player {
    let scenes: [Scene]
    /// For each scene, the position of its chapter.
    let chapterOfScene: [Int]
    /// For each chapter, the positions of its scenes in tape order.
    let scenesOfChapter: [[Int]]
    let mode: PlaybackMode
    let wait: TimeInterval

    /// For each scene, whether it ends its chapter.
    private let isLastOfChapter: [Bool]
    private var delivered: [Bool]
    private var receivers: [Int: any SceneReceiver] = [:]
    private var bypassed: Set<Int> = []
    private var cursor = 0
    private var waitingSince: Date?
    /// One past the furthest scene delivered: where `.new` mode inserts what it records.
    private(set) var playhead = 0

    init(scenes: [Scene], chapterOfScene: [Int], scenesOfChapter: [[Int]], mode: PlaybackMode, wait: TimeInterval) {
        self.scenes = scenes
        self.chapterOfScene = chapterOfScene
        self.scenesOfChapter = scenesOfChapter
        self.mode = mode
        self.wait = wait
        self.delivered = Array(repeating: false, count: scenes.count)
        var isLastOfChapter = Array(repeating: false, count: scenes.count)
        for chapterScenes in scenesOfChapter {
            if let last = chapterScenes.last { isLastOfChapter[last] = true }
        }
        self.isLastOfChapter = isLastOfChapter
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
    mutating func start(chapter: Int, receiver: any SceneReceiver) -> [Delivery] {
        if let whole = wholeDelivery(of: chapter) {
            // Sequential replay: the same deliveries `advance` would make, without registering a receiver.
            let deliveries = deliverAll(of: chapter, to: receiver)
            if whole == .nextOnTape { waitingSince = nil }
            return deliveries
        }
        receivers[chapter] = receiver
        return advance(now: Date())
    }

    /// Marks every scene of a matched chapter delivered, for the caller to hand over itself, when ``start`` would
    /// hand the whole chapter over at once. Returns false, having delivered nothing, otherwise.
    mutating func takeWhole(chapter: Int) -> Bool {
        guard let whole = wholeDelivery(of: chapter) else { return false }
        for position in scenesOfChapter[chapter] where !delivered[position] {
            delivered[position] = true
            playhead = max(playhead, position + 1)
        }
        if whole == .nextOnTape { waitingSince = nil }
        return true
    }

    /// Whether the next scene to play is this chapter's first and its scenes follow one another on the tape.
    private mutating func startsAtCursorUnbroken(_ chapter: Int) -> Bool {
        while cursor < scenes.count, delivered[cursor] || isBypassed(chapterOfScene[cursor]) { cursor += 1 }
        let positions = scenesOfChapter[chapter]
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
            let chapter = chapterOfScene[position]
            if delivered[position] || isBypassed(chapter) {
                if position == cursor { cursor += 1 }
            } else if let receiver = receivers[chapter] {
                if blockedBy != nil { break }
                deliver(position, to: receiver, into: &deliveries)
                if position == cursor { cursor += 1 }
            } else if let waitingSince, now.timeIntervalSince(waitingSince) >= wait, hasWaitingReceivers(after: position) {
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

    private func hasWaitingReceivers(after position: Int) -> Bool {
        receivers.keys.contains { chapter in scenesOfChapter[chapter].contains { $0 >= position && !delivered[$0] } }
    }

    private mutating func deliverAll(of chapter: Int, to receiver: any SceneReceiver) -> [Delivery] {
        var deliveries: [Delivery] = []
        deliveries.reserveCapacity(scenesOfChapter[chapter].count)
        for position in scenesOfChapter[chapter] where !delivered[position] {
            deliver(position, to: receiver, into: &deliveries)
        }
        return deliveries
    }

    /// The scene at `position`, and a completion after it when it is the last of a chapter that was cut off
    /// before it ended (so that no client waits forever on a truncated tape).
    private mutating func deliver(_ position: Int, to receiver: any SceneReceiver, into deliveries: inout [Delivery]) {
        delivered[position] = true
        playhead = max(playhead, position + 1)
        let chapter = chapterOfScene[position]
        let isLast = isLastOfChapter[position]
        // The request scene only marks the chapter as issued: its receiver has nothing to do with it.
        if case .request = scenes[position].event, !isLast { return }
        let isEnd = Delivery.isEnd(scenes[position].event)
        deliveries.append(Delivery(receiver: receiver, scene: position, chapter: chapter, isEnd: isEnd))
        guard isLast else { return }
        receivers[chapter] = nil
        if !isEnd { deliveries.append(Delivery(receiver: receiver, scene: nil, chapter: chapter, isEnd: true)) }
    }
}

/// Hands deliveries to receivers one at a time, in the order they were queued: inline on whichever thread queued
/// them when nobody else is delivering, else by whoever is.
///
/// Each delivery is made where its receiver's client must be called (corelibs: the task's queue). When that is not
/// where the turn is, the turn goes there with it, and the deliveries after it follow from there: so a client call
/// is over before the next one starts, and the session hears of chapters in tape order by construction.
final class DeliveryQueue: @unchecked Sendable {
    private let lock = NSLock()
    private var pending: [Delivery] = []
    /// Where the next delivery is in `pending`; what is before it has been handed over.
    private var next = 0
    /// Someone holds the turn to deliver: a draining thread, a hop to a client's queue, or a direct hand-over.
    private var isDraining = false
    /// The tape the deliveries' scene positions refer to.
    private let scenes: [Scene]

    init(scenes: [Scene]) {
        self.scenes = scenes
    }

    /// Call with the cassette's lock held, so that queue order is decision order.
    func enqueue(_ deliveries: [Delivery]) {
        guard !deliveries.isEmpty else { return }
        lock.lock()
        // Usually nothing is pending: take the array as it is rather than copy its deliveries one by one.
        if pending.isEmpty { pending = deliveries } else { pending.append(contentsOf: deliveries) }
        lock.unlock()
    }

    /// Takes the turn to deliver, for a caller that hands a whole chapter over itself, when nothing is queued and
    /// nobody is delivering; what others queue meanwhile waits for ``endDirect()``. Call with the cassette's lock
    /// held.
    func beginDirect() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard !isDraining, pending.isEmpty else { return false }
        isDraining = true
        return true
    }

    /// Gives the turn back once the directly handed-over chapter's client calls are made, and delivers what was
    /// queued meanwhile.
    func endDirect() {
        lock.lock()
        isDraining = false
        let hasPending = !pending.isEmpty
        lock.unlock()
        if hasPending { drain() }
    }

    /// Call without the cassette's lock: delivers everything queued, unless someone else holds the turn.
    func drain() {
        lock.lock()
        guard !isDraining, !pending.isEmpty else { return lock.unlock() }
        isDraining = true
        lock.unlock()
        deliverHoldingTheTurn()
    }

    private func deliverHoldingTheTurn() {
        while true {
            lock.lock()
            guard next < pending.count else {
                pending.removeAll(keepingCapacity: true)
                next = 0
                isDraining = false
                return lock.unlock()
            }
            let delivery = pending[next]
            next += 1
            lock.unlock()
            guard delivery.receiver.isOnClientQueue, !(delivery.isEnd && delivery.receiver.yieldsBeforeEnding()) else {
                // The turn moves to the client's queue, and what follows is delivered from there.
                return delivery.receiver.onClientQueue { [self] in
                    hand(delivery)
                    deliverHoldingTheTurn()
                }
            }
            hand(delivery)
        }
    }

    private func hand(_ delivery: Delivery) {
        if let scene = delivery.scene {
            delivery.receiver.receive(scenes[scene].event)
        } else {
            delivery.receiver.receive(.completion)
        }
    }
}
