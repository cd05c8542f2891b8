#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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
///
/// The state and its mutex share one allocation, and the state is reached through a pointer: an `NSLock` and a
/// stored `var` cost two more allocations for each lock and a dynamic exclusivity check on every access, and a
/// cassette takes half a dozen of these locks, a request a dozen of their accesses. Copies share the state.
package struct Locked<State>: @unchecked Sendable {
    private let storage: Storage

    package init(_ state: consuming State) {
        storage = Storage.make(state)
    }

    package func withLock<Result, Failure: Error>(
        _ body: (inout State) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try storage.withUnsafeMutablePointers { (state, mutex) throws(Failure) -> Result in
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return try body(&state.pointee)
        }
    }

    /// The state as the header, the mutex as the one element: `ManagedBuffer` keeps both at a fixed address.
    private final class Storage: ManagedBuffer<State, pthread_mutex_t> {
        static func make(_ state: consuming State) -> Storage {
            // Moved in: the closure would otherwise return a copy of the state, and the original be destroyed.
            var pending = Optional(state)
            let made = create(minimumCapacity: 1) { _ in pending.take().unsafelyUnwrapped }
            let storage = unsafeDowncast(made, to: Storage.self)
            storage.withUnsafeMutablePointerToElements { mutex in
                mutex.initialize(to: pthread_mutex_t())
                pthread_mutex_init(mutex, nil)
            }
            return storage
        }

        deinit {
            withUnsafeMutablePointerToElements { mutex in
                pthread_mutex_destroy(mutex)
                mutex.deinitialize(count: 1)
            }
        }
    }
}
