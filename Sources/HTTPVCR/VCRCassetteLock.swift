import Foundation

/// The lock every cassette scope holds from loading its cassette until it has saved it and reported its failures.
///
/// Swift Testing runs tests in parallel. A scope that binds its cassette to the test's task (the `.cassette` trait
/// and the `async` `withVCRCassette` in a Swift Testing test, on Linux) takes the lock *shared*: scopes like it run
/// side by side, each request going to the cassette of the task that made it. A scope that inserts its cassette for
/// the whole process (``VCRTestCase``, the synchronous `withVCRCassette`, `exclusive: true`, Apple platforms) takes
/// it *exclusively*: it runs alone, so every request made meanwhile is its test's. Waiters are served in order, so
/// neither kind starves the other. Tests without a cassette never touch the lock.
///
/// Waiting is asynchronous (a suspended task, not a blocked thread) in the `async` forms; the synchronous form
/// blocks its thread, which is what XCTest's synchronous `invokeTest()` needs.
///
/// Code that inserts cassettes by hand while such tests may run should hold the lock (exclusively) too:
///
/// ```swift
/// try await VCRCassetteLock.shared.withLock {
///     try VCR.insertCassette("Manual")
///     defer { try? VCR.ejectCassette() }
///     …
/// }
/// ```
public final class VCRCassetteLock: @unchecked Sendable {
    /// The lock the testing integrations (and anyone inserting cassettes while tests run) share.
    public static let shared = VCRCassetteLock()

    /// A thread waits only to take the lock exclusively.
    private typealias Waiter = (wakeup: Wakeup, isShared: Bool)

    private struct State {
        var isHeldExclusively = false
        var sharedHolders = 0
        var waiters: [Waiter] = []
        /// Waiters before it have been served; the array is compacted now and then.
        var waiterStart = 0

        var hasWaiters: Bool { waiterStart < waiters.count }

        /// Takes the lock for `shared` or exclusive use if it is free for that and nobody waits before.
        mutating func take(shared: Bool) -> Bool {
            guard !hasWaiters, !isHeldExclusively, shared || sharedHolders == 0 else { return false }
            if shared { sharedHolders += 1 } else { isHeldExclusively = true }
            return true
        }

        /// Hands the lock to the waiters at the front that can have it now: one exclusive, or every shared one up to
        /// the next exclusive.
        mutating func serveWaiters() -> [Waiter] {
            var served: [Waiter] = []
            while hasWaiters, !isHeldExclusively {
                let next = waiters[waiterStart]
                if next.isShared {
                    sharedHolders += 1
                } else if sharedHolders == 0 {
                    isHeldExclusively = true
                } else {
                    break
                }
                served.append(next)
                waiterStart += 1
            }
            if !hasWaiters {
                waiters.removeAll()
                waiterStart = 0
            } else if waiterStart > 64 && waiterStart * 2 > waiters.count {
                waiters.removeFirst(waiterStart)
                waiterStart = 0
            }
            return served
        }
    }

    private let state = Locked(State(), level: .scope)

    /// A new lock, free, and independent of ``shared`` (the one the testing integrations take).
    public init() {}

    /// Whether some scope holds the lock now, shared or exclusively.
    public var isLocked: Bool {
        state.withLock { $0.isHeldExclusively || $0.sharedHolders > 0 }
    }

    /// How many are waiting for the lock.
    package var waitingCount: Int {
        state.withLock { $0.waiters.count - $0.waiterStart }
    }

    /// How many hold the lock shared now.
    package var sharedHolderCount: Int {
        state.withLock { $0.sharedHolders }
    }

    /// Waits (suspended) until nobody holds the lock, and takes it exclusively. Waiters are served in order.
    public func lock() async {
        await take(shared: false)
    }

    /// Waits (suspended) until nobody holds the lock exclusively, and takes a share of it. Waiters are served in
    /// order: a share waits for an exclusive holder that asked first.
    public func lockShared() async {
        await take(shared: true)
    }

    private func take(shared: Bool) async {
        // Free, the common case: taken without suspending the task (a suspension costs a trip through the executor).
        if state.withLock({ $0.take(shared: shared) }) { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let took = state.withLock { state in
                if state.take(shared: shared) { return true }
                state.waiters.append((.task(continuation), shared))
                return false
            }
            if took { continuation.resume() }
        }
    }

    /// Waits (blocking the calling thread) until nobody holds the lock, and takes it exclusively.
    ///
    /// Do not call this from Swift concurrency's cooperative threads (a synchronous Swift Testing test is
    /// one): use ``lock()`` there.
    public func lockBlocking() {
        let semaphore: DispatchSemaphore? = state.withLock { state in
            if state.take(shared: false) { return nil }
            let semaphore = DispatchSemaphore(value: 0)
            state.waiters.append((.thread(semaphore), false))
            return semaphore
        }
        semaphore?.wait()
    }

    /// Takes the lock exclusively if nobody holds it and nobody waits. Returns whether it did.
    public func tryLock() -> Bool {
        state.withLock { $0.take(shared: false) }
    }

    /// Releases the exclusive hold, handing the lock to the waiters at the front.
    public func unlock() {
        let served = state.withLock { state in
            precondition(state.isHeldExclusively, "VCRCassetteLock.unlock() without lock()")
            state.isHeldExclusively = false
            return state.serveWaiters()
        }
        for waiter in served { waiter.wakeup.resume() }
    }

    /// Releases a share, handing the lock on when it was the last.
    public func unlockShared() {
        let served = state.withLock { state in
            precondition(state.sharedHolders > 0, "VCRCassetteLock.unlockShared() without lockShared()")
            state.sharedHolders -= 1
            return state.serveWaiters()
        }
        for waiter in served { waiter.wakeup.resume() }
    }

    /// Runs `body` holding the lock.
    public func withLock<R>(
        isolation: isolated (any Actor)? = #isolation,
        _ body: () async throws -> R
    ) async rethrows -> R {
        await lock()
        defer { unlock() }
        return try await body()
    }

    /// Runs `body` holding the lock, blocking the thread while waiting for it.
    public func withLockBlocking<R>(_ body: () throws -> R) rethrows -> R {
        lockBlocking()
        defer { unlock() }
        return try body()
    }
}
