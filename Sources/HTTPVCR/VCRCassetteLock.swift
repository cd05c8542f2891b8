import Foundation

/// The lock every cassette scope holds from inserting its cassette until it has ejected it and reported its
/// failures.
///
/// HTTPVCR's cassette and URL protocol are global to the process, while Swift Testing runs tests in parallel: two
/// tests with cassettes inserted at the same time would record into (or replay from) each other's cassettes. So
/// the scopes that HTTPVCRTesting opens (`withVCRCassette`, the `.cassette` trait and `VCRTestCase`) take turns
/// on this lock, first come first served. Tests without a cassette never touch it and keep running in parallel.
///
/// Waiting is asynchronous (a suspended task, not a blocked thread) in the `async` forms; the synchronous form
/// blocks its thread, which is what XCTest's synchronous `invokeTest()` needs.
///
/// Code that inserts cassettes by hand while such tests may run should hold the lock too:
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

    private enum Waiter {
        case task(CheckedContinuation<Void, Never>)
        case thread(DispatchSemaphore)
    }

    private struct State {
        var isHeld = false
        var waiters: [Waiter] = []
        /// Waiters before it have been served; the array is compacted now and then.
        var waiterStart = 0
    }

    private let state = Locked(State())

    public init() {}

    /// Whether some scope holds the lock now.
    public var isLocked: Bool {
        state.withLock { $0.isHeld }
    }

    /// How many are waiting for the lock.
    package var waitingCount: Int {
        state.withLock { $0.waiters.count - $0.waiterStart }
    }

    /// Waits (suspended) until the lock is free, and takes it. Waiters are served in order.
    public func lock() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let took = state.withLock { state in
                if state.isHeld {
                    state.waiters.append(.task(continuation))
                    return false
                }
                state.isHeld = true
                return true
            }
            if took { continuation.resume() }
        }
    }

    /// Waits (blocking the calling thread) until the lock is free, and takes it.
    ///
    /// Do not call this from Swift concurrency's cooperative threads (a synchronous Swift Testing test is
    /// one): use ``lock()`` there.
    public func lockBlocking() {
        let semaphore: DispatchSemaphore? = state.withLock { state in
            if !state.isHeld {
                state.isHeld = true
                return nil
            }
            let semaphore = DispatchSemaphore(value: 0)
            state.waiters.append(.thread(semaphore))
            return semaphore
        }
        semaphore?.wait()
    }

    /// Takes the lock if it is free. Returns whether it did.
    public func tryLock() -> Bool {
        state.withLock { state in
            if state.isHeld { return false }
            state.isHeld = true
            return true
        }
    }

    /// Releases the lock, handing it to the first waiter if there is one.
    public func unlock() {
        let next: Waiter? = state.withLock { state in
            precondition(state.isHeld, "VCRCassetteLock.unlock() without lock()")
            guard state.waiterStart < state.waiters.count else {
                state.isHeld = false
                state.waiters.removeAll()
                state.waiterStart = 0
                return nil
            }
            // The lock stays held: it passes straight to the next waiter.
            let next = state.waiters[state.waiterStart]
            state.waiterStart += 1
            if state.waiterStart > 64 && state.waiterStart * 2 > state.waiters.count {
                state.waiters.removeFirst(state.waiterStart)
                state.waiterStart = 0
            }
            return next
        }
        switch next {
        case let .task(continuation)?: continuation.resume()
        case let .thread(semaphore)?: semaphore.signal()
        case nil: break
        }
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
