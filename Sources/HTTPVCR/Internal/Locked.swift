#if canImport(Darwin)
import Darwin
import os
#else
import Glibc
import Synchronization
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
/// The state and its lock share one allocation, and the state is reached through a pointer: an `NSLock` and a
/// stored `var` cost two more allocations for each lock and a dynamic exclusivity check on every access, and a
/// cassette takes half a dozen of these locks, a request a dozen of their accesses. Copies share the state.
///
/// The lock is the standard library's `Mutex` off Apple platforms (on Linux one atomic exchange each way and nothing to
/// set up or tear down: cheaper than `pthread_mutex_t`, Docs/Performance.md), told to ThreadSanitizer when it runs
/// (``ThreadSanitizer``), and a `pthread_mutex_t` on Apple platforms, where `Mutex` needs macOS 15.
package struct Locked<State>: @unchecked Sendable {
    private let storage: Storage

    package init(_ state: consuming State) {
        storage = Storage.make(state)
    }

    @inline(__always)
    package func withLock<Result, Failure: Error>(
        _ body: (inout State) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try storage.withUnsafeMutablePointers { (state, lock) throws(Failure) -> Result in
            #if canImport(Darwin)
            pthread_mutex_lock(lock)
            defer { pthread_mutex_unlock(lock) }
            return try body(&state.pointee)
            #else
            // `Mutex` hands its own value over as `sending`, which the caller's state and result are not: it guards
            // nothing of its own, and the state stays beside it.
            var result: Result?
            try lock.pointee.mutex.withLock { _ throws(Failure) in
                lock.pointee.sanitizer?.acquired(lock)
                defer { lock.pointee.sanitizer?.releasing(lock) }
                result = try body(&state.pointee)
            }
            return result.unsafelyUnwrapped
            #endif
        }
    }

    #if canImport(Darwin)
    private typealias Lock = pthread_mutex_t
    #else
    /// The mutex, and ThreadSanitizer's hooks when the process runs under it (read once, when the lock is made).
    private struct Lock: ~Copyable {
        let mutex = Mutex(())
        let sanitizer = ThreadSanitizer.hooks
    }
    #endif

    /// The state as the header, the lock as the one element: `ManagedBuffer` keeps both at a fixed address.
    private final class Storage: ManagedBuffer<State, Lock> {
        static func make(_ state: consuming State) -> Storage {
            // Moved in: the closure would otherwise return a copy of the state, and the original be destroyed.
            var pending = Optional(state)
            let made = create(minimumCapacity: 1) { _ in pending.take().unsafelyUnwrapped }
            let storage = unsafeDowncast(made, to: Storage.self)
            storage.withUnsafeMutablePointerToElements { lock in
                #if canImport(Darwin)
                lock.initialize(to: pthread_mutex_t())
                pthread_mutex_init(lock, nil)
                #else
                lock.initialize(to: Lock())
                #endif
            }
            return storage
        }

        deinit {
            withUnsafeMutablePointerToElements { lock in
                #if canImport(Darwin)
                pthread_mutex_destroy(lock)
                #endif
                _ = lock.deinitialize(count: 1)
            }
        }
    }
}

/// ``Locked``'s state and lock kept in an object of their own making: for an object made per request, where a
/// separate allocation for its state shows in a request's cost. Subclass it; the state
/// is reached only inside ``withLock(_:)``, as with ``Locked``.
///
/// The state is stored without Swift's dynamic exclusivity checks: the lock is what keeps its accesses apart, and
/// every access begins inside it. Internal, not `package`: a `package` initializer gave the subclass a synthesized
/// stub the compiler warned of (an "infinite recursion", Swift 6.3).
class LockedObject<State>: @unchecked Sendable {
    @exclusivity(unchecked) private var state: State
    #if canImport(Darwin)
    // `Mutex` needs macOS 15; this lock has a fixed address of its own.
    private let lock = OSAllocatedUnfairLock()
    #else
    private let lock = Mutex(())
    private let sanitizer = ThreadSanitizer.hooks
    #endif

    init(_ state: consuming State) {
        self.state = state
    }

    @inline(__always)
    final func withLock<Result, Failure: Error>(
        _ body: (inout State) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        #if canImport(Darwin)
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
        #else
        // As in `Locked`: `Mutex` hands over its own (empty) value only.
        var result: Result?
        try lock.withLock { _ throws(Failure) in
            sanitizer?.acquired(self)
            defer { sanitizer?.releasing(self) }
            result = try body(&state)
        }
        return result.unsafelyUnwrapped
        #endif
    }
}

#if !canImport(Darwin)
/// ThreadSanitizer's own annotations, when the process runs under it (`swift test --sanitize=thread`), else nil.
///
/// `Synchronization.Mutex` locks with atomics inside the standard library, which is not built for the sanitizer: it
/// does not see the lock, and reports every state a lock guards as a race (21 reports in this suite). Telling it
/// "acquired" and "releasing" at the lock's address gives it the order the lock makes. Found with `dlsym`, as the
/// Swift runtime finds them for its own annotations; without the sanitizer a lock pays one nil check each way.
struct ThreadSanitizer: Sendable {
    private typealias Annotation = @convention(c) (UnsafeMutableRawPointer?) -> Void
    private let acquire: Annotation
    private let release: Annotation

    static let hooks: ThreadSanitizer? = {
        guard let acquire = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__tsan_acquire"),
              let release = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__tsan_release")
        else { return nil }
        return ThreadSanitizer(acquire: unsafeBitCast(acquire, to: Annotation.self),
                               release: unsafeBitCast(release, to: Annotation.self))
    }()

    // Out of line: the locks are inlined everywhere, and without the sanitizer these are never called.
    @inline(never) func acquired(_ lock: UnsafeMutableRawPointer) { acquire(lock) }
    @inline(never) func releasing(_ lock: UnsafeMutableRawPointer) { release(lock) }
    @inline(never) func acquired(_ object: AnyObject) { acquire(Unmanaged.passUnretained(object).toOpaque()) }
    @inline(never) func releasing(_ object: AnyObject) { release(Unmanaged.passUnretained(object).toOpaque()) }
}
#endif
