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
}
