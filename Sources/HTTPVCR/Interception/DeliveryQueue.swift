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
    /// Scenes delivered one after the other, in order, with nothing in between: one call for what the queue hands
    /// over at once (usually a whole chapter).
    func receive(_ run: SceneRun)
}

extension SceneReceiver {
    var isOnClientQueue: Bool { true }
    func onClientQueue(_ body: @escaping @Sendable () -> Void) { body() }
    func yieldsBeforeEnding() -> Bool { false }
    func receive(_ run: SceneRun) {
        for event in run { receive(event) }
    }
}

/// Consecutive deliveries to one receiver, read as the scenes they name.
struct SceneRun: Sequence {
    let scenes: [Scene]
    let deliveries: ArraySlice<Delivery>

    var underestimatedCount: Int { deliveries.count }

    func makeIterator() -> Iterator {
        Iterator(scenes: scenes, deliveries: deliveries.makeIterator())
    }

    struct Iterator: IteratorProtocol {
        let scenes: [Scene]
        var deliveries: ArraySlice<Delivery>.Iterator

        mutating func next() -> Scene.Event? {
            deliveries.next().map { delivery in delivery.scene.map { scenes[$0].event } ?? .completion }
        }
    }
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
    /// Not to be handed over before this uptime (nanoseconds; ``ReplayTiming``); 0: at once.
    var due: UInt64 = 0

    static func isEnd(_ event: Scene.Event) -> Bool {
        switch event {
        case .completion, .error: true
        default: false
        }
    }
}

/// Deliveries in the order they were queued, and whether someone holds the turn to hand them out. A value kept in
/// ``Playback``'s state, behind its one lock: what is queued while a request is matched is in decision order by
/// construction. ``Playback/deliver(startingWith:)`` hands it out.
struct DeliveryQueue {
    private var pending: [Delivery] = []
    /// Where the next delivery is in `pending`; what is before it has been handed over.
    private var next = 0
    /// Someone holds the turn to deliver: a draining thread, or a hop to a client's queue.
    private var isDelivering = false

    mutating func enqueue(_ deliveries: [Delivery]) {
        guard !deliveries.isEmpty else { return }
        // Usually nothing is pending: take the array as it is rather than copy its deliveries one by one.
        if pending.isEmpty { pending = deliveries } else { pending.append(contentsOf: deliveries) }
    }

    /// Takes the turn and the first run, unless someone else holds the turn or nothing is queued.
    mutating func takeTurn() -> ArraySlice<Delivery>? {
        guard !isDelivering, next < pending.count else { return nil }
        isDelivering = true
        return nextRun()
    }

    /// For whoever holds the turn: the deliveries to one receiver that follow one another (usually a whole
    /// chapter); nil, and the turn given back, when nothing is left. A delivery that is not due yet starts a run of
    /// its own, so that the run before it is not held.
    mutating func nextRun() -> ArraySlice<Delivery>? {
        guard next < pending.count else {
            pending.removeAll(keepingCapacity: true)
            next = 0
            isDelivering = false
            return nil
        }
        let start = next
        let receiver = pending[start].receiver
        var end = start + 1
        while end < pending.count, pending[end].receiver === receiver, pending[end].due == 0 {
            end += 1
        }
        next = end
        return pending[start..<end]
    }
}
