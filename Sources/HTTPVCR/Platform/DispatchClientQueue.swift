#if canImport(FoundationNetworking)
import Foundation

/// Where a protocol may talk to its client under swift-corelibs-foundation: the queue `startLoading` ran on.
///
/// corelibs' client reads the session's task registry, which "must only be accessed on the owning session's work
/// queue": a callback from any other thread races it and can crash the process. Inside `startLoading` we are on that
/// queue; callbacks that come later (the recorder's delegate, chronological playback waking up) must go back to it.
/// Foundation offers no handle on it, so the queue is captured from libdispatch (``Functions``).
final class DispatchClientQueue: ClientQueue, @unchecked Sendable {
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

    private let functions: Functions?
    private let queue: OpaquePointer?

    /// Call from `startLoading`: captures the queue it runs on. Without `functions`, calls are made where they are.
    init(_ functions: Functions?) {
        self.functions = functions
        queue = functions.flatMap { $0.currentQueue() }
        if let queue { functions?.retain(queue) }
    }

    deinit {
        if let queue { functions?.release(queue) }
    }

    /// On the captured queue (in `startLoading`, or in a block sent there), or anywhere when none was captured.
    var isCurrent: Bool {
        guard let queue, let functions else { return true }
        return functions.currentQueue() == queue
    }

    func async(_ body: @escaping () -> Void) {
        guard let queue, let functions else { return body() }
        let context = Unmanaged.passRetained(Box(body)).toOpaque()
        functions.async(queue, context) { context in
            guard let context else { return }
            Unmanaged<Box>.fromOpaque(context).takeRetainedValue().body()
        }
    }

    /// Carries the callback to the queue; it runs there once, alone.
    private final class Box: @unchecked Sendable {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }
}
#endif
