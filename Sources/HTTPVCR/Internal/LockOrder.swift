#if canImport(Darwin)
import Darwin
#else
import Glibc
#endif

/// Where a lock stands in HTTPVCR's lock order (Docs/Architecture.md, "Locks"): a thread holding locks takes only
/// one whose level is above every level it holds, so no two threads can wait for each other. Debug builds check it
/// on every take (``LockOrder``); two locks of one level never nest.
package enum LockLevel: Int, Comparable, Sendable {
    case scope
    case testing
    case vcr
    case bridge
    case cassette
    case recorder
    case recording
    case playback
    case verifier
    case load
    /// Takes no other lock while held.
    case leaf

    package static func < (lhs: LockLevel, rhs: LockLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}

#if DEBUG
/// The lock order, checked: each thread's held locks, in the order taken (so in rising level), and a trap naming both
/// locks when one is taken out of order. Debug builds only; release builds keep nothing.
enum LockOrder {
    /// A lock's level and where it was made, for the message.
    struct Name: CustomStringConvertible {
        let level: LockLevel
        let fileID: StaticString
        let line: UInt

        var description: String { "\(level) (level \(level.rawValue), made at \(fileID):\(line))" }
    }

    /// One thread's held locks.
    private final class Held {
        var names: [Name] = []
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        #if canImport(Darwin)
        pthread_key_create(&key) { Unmanaged<Held>.fromOpaque($0).release() }
        #else
        pthread_key_create(&key) { pointer in pointer.map { Unmanaged<Held>.fromOpaque($0).release() } }
        #endif
        return key
    }()

    private static var held: Held {
        if let pointer = pthread_getspecific(key) { return Unmanaged<Held>.fromOpaque(pointer).takeUnretainedValue() }
        let held = Held()
        pthread_setspecific(key, Unmanaged.passRetained(held).toOpaque())
        return held
    }

    static func taking(_ name: Name) {
        let held = held
        if let top = held.names.last, name.level <= top.level {
            trace(top, name)
            if !isTracing {
                preconditionFailure("HTTPVCR lock order: \(name) taken while holding \(top)")
            }
        } else if let top = held.names.last {
            trace(top, name)
        }
        held.names.append(name)
    }

    static func checkNoneHeld(running what: StaticString) {
        guard let top = held.names.last else { return }
        if isTracing { return traceUser(what, top) }
        preconditionFailure("HTTPVCR runs \(what) while holding the lock \(top): no user closure runs under a lock")
    }

    /// Locks are released in the reverse order of taking (``Lock/withLock(at:_:)`` is scoped).
    static func released(_ name: Name) {
        held.names.removeLast()
    }

    // TEMPORARY: measuring the nestings.
    private static let traceFile: Int32? = getenv("HTTPVCR_LOCK_TRACE").map { open($0, O_WRONLY | O_APPEND | O_CREAT, 0o644) }
    private static var isTracing: Bool { traceFile != nil }
    private static func trace(_ outer: Name, _ inner: Name) {
        guard let traceFile else { return }
        let held = held.names.map { "\($0.fileID):\($0.line)" }.joined(separator: ", ")
        let line = "\(outer.level) > \(inner.level)  \(inner.fileID):\(inner.line) under [\(held)]\n"
        guard TraceSeen.shared.insert(line) else { return }
        _ = line.withCString { write(traceFile, $0, strlen($0)) }
    }
    private static func traceUser(_ what: StaticString, _ top: Name) {
        guard let traceFile else { return }
        let held = held.names.map { "\($0.fileID):\($0.line)" }.joined(separator: ", ")
        let line = "USER \(what) under [\(held)]\n"
        guard TraceSeen.shared.insert(line) else { return }
        _ = line.withCString { write(traceFile, $0, strlen($0)) }
    }
    private final class TraceSeen: @unchecked Sendable {
        static let shared = TraceSeen()
        private let mutex: UnsafeMutablePointer<pthread_mutex_t> = {
            let pointer = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
            pthread_mutex_init(pointer, nil)
            return pointer
        }()
        private var seen: Set<String> = []
        func insert(_ line: String) -> Bool {
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return seen.insert(line).inserted
        }
    }
}
#endif

/// Called just before a closure the user supplied runs (a filter, a matcher, a hook): no lock of HTTPVCR's may be held
/// then, or the closure could take one out of order, or wait on a thread that waits for the lock. Debug builds trap
/// when one is; release builds do nothing.
@inline(__always)
package func checkNoLockHeld(running what: StaticString) {
    #if DEBUG
    LockOrder.checkNoneHeld(running: what)
    #endif
}
