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
/// private let state = Locked(State(), level: .cassette)
/// let count = state.withLock { state in
///     state.count += 1
///     return state.count
/// }
/// ```
///
/// The state and its lock share one allocation, and the state is reached through a pointer (Docs/Performance.md,
/// "Costs behind the code's shape"). Copies share the state. The lock is a ``Lock``: its level places it in the lock
/// order (``LockLevel``), which debug builds check.
package struct Locked<State>: @unchecked Sendable {
    private let storage: Storage

    /// - Parameter level: where the lock stands in the lock order; a lock that takes no other while held may leave
    ///   it as a leaf.
    package init(
        _ state: consuming State, level: LockLevel = .leaf, fileID: StaticString = #fileID, line: UInt = #line
    ) {
        storage = Storage.make(state) { Lock(level: level, fileID: fileID, line: line) }
    }

    @inline(__always)
    package func withLock<Result, Failure: Error>(
        _ body: (inout State) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try storage.withUnsafeMutablePointers { (state, lock) throws(Failure) -> Result in
            try lock.pointee.withLock(state, at: UnsafeMutableRawPointer(lock), body)
        }
    }

    /// The state as the header, the lock as the one element: `ManagedBuffer` keeps both at a fixed address.
    private final class Storage: ManagedBuffer<State, Lock> {
        static func make(_ state: consuming State, lock: () -> Lock) -> Storage {
            // Moved in: the closure would otherwise return a copy of the state, and the original be destroyed.
            var pending = Optional(state)
            let made = create(minimumCapacity: 1) { _ in pending.take().unsafelyUnwrapped }
            let storage = unsafeDowncast(made, to: Storage.self)
            storage.withUnsafeMutablePointerToElements { $0.initialize(to: lock()) }
            return storage
        }

        deinit {
            _ = withUnsafeMutablePointerToElements { $0.deinitialize(count: 1) }
        }
    }
}

/// ``Locked`` kept in an object of its own making, for an object made per request, where a separate allocation for
/// its state shows in a request's cost (Docs/Performance.md). Subclass it; the state is reached only inside
/// ``withLock(_:)``, through the same ``Lock``.
///
/// The state is stored without Swift's dynamic exclusivity checks: the lock is what keeps its accesses apart, and
/// every access begins inside it. Internal, not `package`: a `package` initializer gave the subclass a synthesized
/// stub the compiler warned of (an "infinite recursion", Swift 6.3).
class LockedObject<State>: @unchecked Sendable {
    @exclusivity(unchecked) private var state: State
    /// Where `state` is, taken once (an object does not move): every access then begins inside the lock, where
    /// ThreadSanitizer sees it ordered by the lock's hooks. An `inout` access begun before the lock is taken is
    /// reported as a race.
    private var statePointer: UnsafeMutablePointer<State>?
    private let lock: Lock

    init(_ state: consuming State, level: LockLevel, fileID: StaticString = #fileID, line: UInt = #line) {
        self.state = state
        lock = Lock(level: level, fileID: fileID, line: line)
        statePointer = withUnsafeMutablePointer(to: &self.state) { $0 }
    }

    @inline(__always)
    final func withLock<Result, Failure: Error>(
        _ body: (inout State) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try lock.withLock(statePointer.unsafelyUnwrapped, at: Unmanaged.passUnretained(self).toOpaque(), body)
    }
}

/// The one lock under ``Locked`` and ``LockedObject``: the standard library's `Mutex` off Apple platforms (on Linux
/// one atomic exchange each way, nothing to set up or tear down), told to ThreadSanitizer when it runs
/// (``ThreadSanitizer``); an `OSAllocatedUnfairLock` on Apple platforms, where `Mutex` needs macOS 15. Debug builds
/// check the lock order (``LockOrder``) on every take; release builds keep no level.
struct Lock: ~Copyable {
    #if canImport(Darwin)
    private let lock = OSAllocatedUnfairLock()
    #else
    private let mutex = Mutex(())
    /// Read once, when the lock is made.
    private let sanitizer = ThreadSanitizer.hooks
    #endif
    #if DEBUG
    let name: LockOrder.Name
    #endif

    @inline(__always)
    init(level: LockLevel, fileID: StaticString, line: UInt) {
        #if DEBUG
        name = LockOrder.Name(level: level, fileID: fileID, line: line)
        #endif
    }

    /// Runs `body` on the state at `state` holding the lock; `address` is what ThreadSanitizer is told the lock is
    /// (fixed while it lives). The state is reached only inside the lock, and the caller's `body` is passed on as it
    /// is: a closure around it cost the per-request load's replay step its inlining (Docs/Performance.md).
    @inline(__always)
    func withLock<State, Result, Failure: Error>(
        _ state: UnsafeMutablePointer<State>,
        at address: UnsafeMutableRawPointer,
        _ body: (inout State) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        #if DEBUG
        LockOrder.taking(name)
        defer { LockOrder.released(name) }
        #endif
        #if canImport(Darwin)
        lock.lock()
        defer { lock.unlock() }
        return try body(&state.pointee)
        #else
        // `Mutex` hands its own value over as `sending`, which the caller's state and result are not: it guards
        // nothing of its own, and the state stays beside it.
        var result: Result?
        try mutex.withLock { _ throws(Failure) in
            sanitizer?.acquired(address)
            defer { sanitizer?.releasing(address) }
            result = try body(&state.pointee)
        }
        return result.unsafelyUnwrapped
        #endif
    }
}

#if !canImport(Darwin)
/// ThreadSanitizer's own annotations, when the process runs under it (`swift test --sanitize=thread`), else nil.
///
/// `Synchronization.Mutex` locks with atomics inside the standard library, which is not built for the sanitizer: it
/// does not see the lock, and reports every state a lock guards as a race. Telling it "acquired" and "releasing" at
/// the lock's address gives it the order the lock makes. Found with `dlsym`, as the Swift runtime finds them for its
/// own annotations; without the sanitizer a lock pays one nil check each way.
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
}
#endif
