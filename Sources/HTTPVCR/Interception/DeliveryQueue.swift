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

/// Hands deliveries to receivers one at a time, in the order they were queued: inline on whichever thread queued
/// them when nobody else is delivering, else by whoever is.
///
/// Each delivery is made where its receiver's client must be called (corelibs: the task's queue). When that is not
/// where the turn is, the turn goes there with it, and the deliveries after it follow from there: so a client call
/// is over before the next one starts, and the session hears of chapters in tape order by construction.
final class DeliveryQueue: @unchecked Sendable {
    private struct State {
        var pending: [Delivery] = []
        /// Where the next delivery is in `pending`; what is before it has been handed over.
        var next = 0
        /// Someone holds the turn to deliver: a draining thread, or a hop to a client's queue.
        var isDraining = false
    }

    private let state = Locked(State())
    /// The tape the deliveries' scene positions refer to.
    private let scenes: [Scene]

    init(scenes: [Scene]) {
        self.scenes = scenes
    }

    /// Call with the playback's lock held, so that queue order is decision order.
    func enqueue(_ deliveries: [Delivery]) {
        guard !deliveries.isEmpty else { return }
        state.withLock { state in
            // Usually nothing is pending: take the array as it is rather than copy its deliveries one by one.
            if state.pending.isEmpty {
                state.pending = deliveries
            } else {
                state.pending.append(contentsOf: deliveries)
            }
        }
    }

    /// Call without the playback's lock: delivers everything queued, unless someone else holds the turn.
    func drain() {
        let takesTurn = state.withLock { state in
            guard !state.isDraining, !state.pending.isEmpty else { return false }
            state.isDraining = true
            return true
        }
        if takesTurn { deliverHoldingTheTurn() }
    }

    /// Hands the queue out, a run at a time: the deliveries to one receiver that follow one another (usually a
    /// whole chapter), in one call. `waiting`: a run taken from the queue before, that had to wait until it was due.
    private func deliverHoldingTheTurn(startingWith waiting: ArraySlice<Delivery>? = nil) {
        var carried = waiting
        while true {
            let taken: ArraySlice<Delivery>? = carried ?? state.withLock { state in
                guard state.next < state.pending.count else {
                    state.pending.removeAll(keepingCapacity: true)
                    state.next = 0
                    state.isDraining = false
                    return nil
                }
                let start = state.next
                let receiver = state.pending[start].receiver
                var end = start + 1
                // A delivery that is not due yet starts a run of its own, so that the run before it is not held.
                while end < state.pending.count, state.pending[end].receiver === receiver, state.pending[end].due == 0 {
                    end += 1
                }
                state.next = end
                return state.pending[start..<end]
            }
            carried = nil
            guard var run = taken, let first = run.first else { return }
            if first.due != 0, first.due > DispatchTime.now().uptimeNanoseconds {
                // Keeps the turn: what was queued after it waits, so order holds.
                let due = DispatchTime(uptimeNanoseconds: first.due)
                run[run.startIndex].due = 0
                return DispatchQueue.global().asyncAfter(deadline: due) { [self, run] in
                    deliverHoldingTheTurn(startingWith: run)
                }
            }
            let receiver = first.receiver
            let ends = run.contains { $0.isEnd }
            guard receiver.isOnClientQueue, !(ends && receiver.yieldsBeforeEnding()) else {
                // The turn moves to the client's queue, and what follows is delivered from there.
                return receiver.onClientQueue { [self, run] in
                    receiver.receive(SceneRun(scenes: scenes, deliveries: run))
                    deliverHoldingTheTurn()
                }
            }
            receiver.receive(SceneRun(scenes: scenes, deliveries: run))
        }
    }
}
