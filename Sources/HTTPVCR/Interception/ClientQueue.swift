import Foundation

/// Where a protocol may talk to its client.
///
/// swift-corelibs-foundation's client reads the session's task registry, which "must only be accessed on the
/// owning session's work queue": a callback from any other thread races it and can crash the process. Inside
/// `startLoading` we are on that queue; callbacks that come later (the recorder's delegate, chronological
/// playback waking up) must go back to it. Foundation offers no handle on it, so the queue is captured from
/// libdispatch when `startLoading` runs. Apple's loader takes callbacks from any thread.
final class ClientQueue: @unchecked Sendable {
    #if canImport(FoundationNetworking)
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
    private let startThread = pthread_self()
    /// Written and read only on the thread that runs `startLoading` (see ``isDirect``), so it needs no lock.
    private var isInStartLoading = true

    /// Call from `startLoading`: captures the queue it runs on.
    init() {
        queue = Self.dispatch.flatMap { $0.getCurrentQueue() }
        if let queue { Self.dispatch?.retain(queue) }
    }

    deinit {
        if let queue { Self.dispatch?.release(queue) }
    }

    /// Call when `startLoading` returns: from then on callbacks hop to the captured queue.
    func leftStartLoading() {
        isInStartLoading = false
    }

    /// Whether a callback may be made right here: from `startLoading` itself, or when no queue was captured.
    var isDirect: Bool {
        guard queue != nil, Self.dispatch != nil else { return true }
        return pthread_equal(pthread_self(), startThread) != 0 && isInStartLoading
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
    init() {}
    func leftStartLoading() {}
    var isDirect: Bool { true }
    func async(_ body: @escaping () -> Void) { body() }
    #endif
}
