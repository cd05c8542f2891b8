import Foundation

/// Where a protocol may talk to its client.
///
/// swift-corelibs-foundation's client reads the session's task registry, which "must only be accessed on the
/// owning session's work queue": a callback from any other thread races it and can crash the process. Inside
/// `startLoading` we are on that queue; callbacks that come later (the recorder's delegate, chronological
/// playback waking up) must go back to it. Foundation offers no handle on it, so the queue is captured from
/// libdispatch when `startLoading` runs. Apple's loader asks for them on the thread that called `startLoading`,
/// whose run loop it runs: there the run loop is captured.
final class ClientQueue: @unchecked Sendable {
    #if canImport(FoundationNetworking) && !HTTPVCR_APPLE_PATHS
    private typealias GetCurrentQueue = @convention(c) () -> OpaquePointer?
    private typealias RetainOrRelease = @convention(c) (OpaquePointer?) -> Void
    private typealias AsyncFunction = @convention(c) (
        OpaquePointer?, UnsafeMutableRawPointer?, @convention(c) (UnsafeMutableRawPointer?) -> Void
    ) -> Void

    private struct Dispatch {
        let getCurrentQueue: GetCurrentQueue
        let retain: RetainOrRelease
        let release: RetainOrRelease
        let async: AsyncFunction
    }

    private static let dispatch: Dispatch? = {
        func symbol<T>(_ name: String, as type: T.Type) -> T? {
            dlsym(nil, name).map { unsafeBitCast($0, to: type) }
        }
        guard let getCurrentQueue = symbol("dispatch_get_current_queue", as: GetCurrentQueue.self),
              let retain = symbol("dispatch_retain", as: RetainOrRelease.self),
              let release = symbol("dispatch_release", as: RetainOrRelease.self),
              let async = symbol("dispatch_async_f", as: AsyncFunction.self)
        else { return nil }
        return Dispatch(getCurrentQueue: getCurrentQueue, retain: retain, release: release, async: async)
    }()

    private let queue: OpaquePointer?

    /// Call from `startLoading`: captures the queue it runs on.
    init() {
        queue = Self.dispatch.flatMap { $0.getCurrentQueue() }
        if let queue { Self.dispatch?.retain(queue) }
    }

    deinit {
        if let queue { Self.dispatch?.release(queue) }
    }

    /// The queue this thread runs a block of now, if any: in `canInit` and `startLoading`, the task's own queue.
    static var currentQueue: OpaquePointer? {
        dispatch?.getCurrentQueue()
    }

    /// Whether a callback may be made right here: on the captured queue (in `startLoading`, or in a block sent
    /// there), or anywhere when no queue was captured.
    var isCurrent: Bool {
        guard let queue, let dispatch = Self.dispatch else { return true }
        return dispatch.getCurrentQueue() == queue
    }

    /// Runs `body` on the captured queue, after what was sent there before.
    func async(_ body: @escaping () -> Void) {
        guard let queue, let dispatch = Self.dispatch else { return body() }
        let context = Unmanaged.passRetained(Box(body)).toOpaque()
        dispatch.async(queue, context) { context in
            guard let context else { return }
            Unmanaged<Box>.fromOpaque(context).takeRetainedValue().body()
        }
    }

    /// Carries the callback to the queue; it runs there once, alone.
    private final class Box: @unchecked Sendable {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }
    #else
    // Apple's URL loading system asks a protocol to call its client on the thread that called `startLoading`, a
    // loader thread that runs a run loop: later calls are performed on that run loop, in order. A thread whose run
    // loop is not running (a loader that starts protocols from a dispatch queue) could never perform them: its
    // client is called from wherever the event is.
    private let thread: Thread
    private let runLoop: RunLoop?

    /// Call from `startLoading`: captures its thread and, if it is running, its run loop.
    init() {
        thread = Thread.current
        runLoop = RunLoop.current.currentMode != nil ? RunLoop.current : nil
    }

    static var currentQueue: OpaquePointer? { nil }

    var isCurrent: Bool { runLoop == nil || Thread.current === thread }

    /// Runs `body` on the captured thread's run loop, after what was sent there before.
    func async(_ body: @escaping () -> Void) {
        guard let runLoop else { return body() }
        let block = UncheckedBlock(body)
        runLoop.perform(inModes: [.common]) { block.body() }
        // `perform` queues without waking a run loop that is waiting for input.
        #if canImport(CoreFoundation) && !canImport(FoundationNetworking)
        CFRunLoopWakeUp(runLoop.getCFRunLoop())
        #else
        // corelibs (HTTPVCR_APPLE_PATHS) has no public CFRunLoopWakeUp: a timer due now wakes it.
        runLoop.add(Timer(timeInterval: 0, repeats: false) { _ in }, forMode: .common)
        #endif
    }

    private struct UncheckedBlock: @unchecked Sendable {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }
    #endif
}
