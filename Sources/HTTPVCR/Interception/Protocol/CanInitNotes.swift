import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What `canInit` learned about a request that `startLoading` needs, carried from one to the other.
///
/// On Linux `canInit` runs inside `resume()`, on the URLSessionTask's own queue, and `startLoading` runs later on
/// that same queue: the queue ties the two together (there is no other handle; the protocol instance may be made
/// on yet another queue in between). Elsewhere nothing is carried, and `startLoading` works it out again.
struct CanInitNotes {
    /// Where the request goes: `canInit` sees the caller's task, and with it the cassette bound to that task.
    var attribution: RequestAttribution
    /// The Swift task that started the request.
    var caller: CallerTask?
    /// What `beforeRecordRequest` made of the request `canInit` saw, when it had to run there to tell whether the
    /// request is the cassette's at all: run once per request, not again in `startLoading`.
    var beforeRecordRequest: (seen: URLRequest, result: URLRequest)?

    /// Call from `canInit` once the request is known to be ours; `queue`: the platform's current queue.
    func note(on queue: OpaquePointer?) {
        guard let queue else { return }
        VCR.keep(self, on: queue)
    }

    /// Call from `startLoading`: what `canInit` noted for this request, if anything.
    static func take(on queue: OpaquePointer?) -> CanInitNotes? {
        guard let queue else { return nil }
        return VCR.takeNotes(on: queue)
    }

    /// Notes kept until their `startLoading` takes them, by the task's queue. The last one kept is held apart, where
    /// taking it hashes nothing: a request's `startLoading` mostly comes before the next request's `canInit`, and the
    /// queue's hashing was most of what keeping and taking cost.
    struct ByQueue {
        private var last: (queue: OpaquePointer, notes: CanInitNotes)?
        private var earlier: [OpaquePointer: CanInitNotes] = [:]

        mutating func keep(_ notes: CanInitNotes, on queue: OpaquePointer) {
            if let displaced = last.take(), displaced.queue != queue {
                // The entry of a task that never starts stays until its queue's address is used again. Bounded, far
                // above the requests a process has between canInit and startLoading at once.
                if earlier.count >= 16_384 { earlier.removeAll() }
                earlier[displaced.queue] = displaced.notes
            }
            last = (queue, notes)
        }

        mutating func take(on queue: OpaquePointer) -> CanInitNotes? {
            guard last?.queue == queue, let taken = last.take() else { return earlier.removeValue(forKey: queue) }
            // Left by an earlier task whose queue had the same address and never started.
            if !earlier.isEmpty { earlier[queue] = nil }
            return taken.notes
        }
    }
}
