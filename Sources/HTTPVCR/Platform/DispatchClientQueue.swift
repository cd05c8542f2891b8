#if canImport(FoundationNetworking)
import Foundation
import FoundationNetworking

/// Where a protocol may talk to its client under swift-corelibs-foundation: the queue `startLoading` ran on.
///
/// corelibs' client reads the session's task registry, which "must only be accessed on the owning session's work
/// queue": a callback from any other thread races it and can crash the process. Inside `startLoading` we are on that
/// queue; callbacks that come later (the recorder's delegate, chronological playback waking up) must go back to it.
/// Foundation offers no handle on it, so the queue is captured from libdispatch (``Functions``).
///
/// A value, not an object: a load makes one per request, and the queue is kept alive by whoever holds the task.
struct DispatchClientQueue: ClientQueue, @unchecked Sendable {
    /// libdispatch's C functions for a queue as such, which Swift's Dispatch does not expose (notably
    /// `dispatch_get_current_queue`).
    struct Functions: @unchecked Sendable {
        typealias GetCurrentQueue = @convention(c) () -> OpaquePointer?
        typealias RetainOrRelease = @convention(c) (OpaquePointer?) -> Void
        typealias AsyncFunction = @convention(c) (
            OpaquePointer?, UnsafeMutableRawPointer?, @convention(c) (UnsafeMutableRawPointer?) -> Void
        ) -> Void

        let currentQueue: GetCurrentQueue
        let retain: RetainOrRelease
        let release: RetainOrRelease
        let async: AsyncFunction

        /// nil when one is missing.
        static func find() -> Functions? {
            func symbol<T>(_ name: String, as type: T.Type) -> T? {
                dlsym(nil, name).map { unsafeBitCast($0, to: type) }
            }
            guard let currentQueue = symbol("dispatch_get_current_queue", as: GetCurrentQueue.self),
                  let retain = symbol("dispatch_retain", as: RetainOrRelease.self),
                  let release = symbol("dispatch_release", as: RetainOrRelease.self),
                  let async = symbol("dispatch_async_f", as: AsyncFunction.self)
            else { return nil }
            return Functions(currentQueue: currentQueue, retain: retain, release: release, async: async)
        }
    }

    /// Found once; nil when one is missing.
    static let functions = Functions.find()

    private let queue: OpaquePointer?
    /// Holds the queue where nothing else is known to: nil when the load holds the task, whose work queue it is.
    private let retained: Retained?

    /// Call from `startLoading`: captures the queue it runs on. corelibs runs `startLoading` on the task's work queue,
    /// which the task holds: with `heldByTask`, the caller keeps the task (a load does), and so the queue. Without
    /// ``functions``, calls are made where they are.
    init(heldByTask: Bool) {
        let queue = Self.functions.flatMap { $0.currentQueue() }
        self.queue = queue
        retained = heldByTask ? nil : queue.flatMap { queue in Self.functions.map { Retained(queue, $0) } }
    }

    /// On the captured queue (in `startLoading`, or in a block sent there), or anywhere when none was captured.
    var isCurrent: Bool {
        guard let queue, let functions = Self.functions else { return true }
        return functions.currentQueue() == queue
    }

    func async(_ body: @escaping () -> Void) {
        guard let queue, let functions = Self.functions else { return body() }
        let context = Unmanaged.passRetained(Box(body)).toOpaque()
        functions.async(queue, context) { context in
            guard let context else { return }
            Unmanaged<Box>.fromOpaque(context).takeRetainedValue().body()
        }
    }

    /// A reference on a queue, let go with the last copy.
    private final class Retained: @unchecked Sendable {
        let queue: OpaquePointer
        let functions: Functions

        init(_ queue: OpaquePointer, _ functions: Functions) {
            self.queue = queue
            self.functions = functions
            functions.retain(queue)
        }

        deinit { functions.release(queue) }
    }

    /// Carries the callback to the queue; it runs there once, alone.
    private final class Box: @unchecked Sendable {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }
}
#endif
