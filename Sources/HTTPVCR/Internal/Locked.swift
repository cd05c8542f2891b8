import Foundation

/// Mutable state behind a lock: the package's one locking idiom. The state is reached only inside ``withLock(_:)``,
/// so no path can forget to unlock, and what a lock guards is written down in one type.
///
/// ```swift
/// private let state = Locked(State())
/// let count = state.withLock { state in
///     state.count += 1
///     return state.count
/// }
/// ```
package final class Locked<State>: @unchecked Sendable {
    private let lock = NSLock()
    private var state: State

    package init(_ state: State) {
        self.state = state
    }

    package func withLock<Result, Failure: Error>(
        _ body: (inout State) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }
}
