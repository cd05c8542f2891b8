import Dispatch

/// How to wake one waiter: a suspended task's continuation, or a blocked thread's semaphore. Kept in the state of the
/// lock that guards what it waits for, and woken (``resume()``) once that lock is released.
enum Wakeup: Sendable {
    case task(CheckedContinuation<Void, Never>)
    case thread(DispatchSemaphore)

    func resume() {
        switch self {
        case let .task(continuation): continuation.resume()
        case let .thread(semaphore): semaphore.signal()
        }
    }
}
