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

    private let mutex = NSLock()
    private var isHeld = false
    private var waiters: [Waiter] = []
    private var waiterStart = 0

    public init() {}

    /// Whether some scope holds the lock now.
    public var isLocked: Bool {
        mutex.lock()
        defer { mutex.unlock() }
        return isHeld
    }

    /// How many are waiting for the lock.
    package var waitingCount: Int {
        mutex.lock()
        defer { mutex.unlock() }
        return waiters.count - waiterStart
    }

    /// Waits (suspended) until the lock is free, and takes it. Waiters are served in order.
    public func lock() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            mutex.lock()
            if isHeld {
                waiters.append(.task(continuation))
                mutex.unlock()
            } else {
                isHeld = true
                mutex.unlock()
                continuation.resume()
            }
        }
    }

    /// Waits (blocking the calling thread) until the lock is free, and takes it.
    ///
    /// Do not call this from Swift concurrency's cooperative threads (a synchronous Swift Testing test is
    /// one): use ``lock()`` there.
    public func lockBlocking() {
        mutex.lock()
        if !isHeld {
            isHeld = true
            mutex.unlock()
            return
        }
        let semaphore = DispatchSemaphore(value: 0)
        waiters.append(.thread(semaphore))
        mutex.unlock()
        semaphore.wait()
    }

    /// Takes the lock if it is free. Returns whether it did.
    public func tryLock() -> Bool {
        mutex.lock()
        defer { mutex.unlock() }
        if isHeld { return false }
        isHeld = true
        return true
    }

    /// Releases the lock, handing it to the first waiter if there is one.
    public func unlock() {
        mutex.lock()
        precondition(isHeld, "VCRCassetteLock.unlock() without lock()")
        guard waiterStart < waiters.count else {
            isHeld = false
            waiters.removeAll()
            waiterStart = 0
            mutex.unlock()
            return
        }
        // The lock stays held: it passes straight to the next waiter.
        let next = waiters[waiterStart]
        waiterStart += 1
        if waiterStart > 64 && waiterStart * 2 > waiters.count {
            waiters.removeFirst(waiterStart)
            waiterStart = 0
        }
        mutex.unlock()
        switch next {
        case let .task(continuation): continuation.resume()
        case let .thread(semaphore): semaphore.signal()
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
