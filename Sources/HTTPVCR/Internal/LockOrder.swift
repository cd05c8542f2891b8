#if canImport(Darwin)
import Darwin
#else
import Glibc
#endif

/// Where a lock stands in HTTPVCR's lock order (Docs/Architecture.md, "Locks"): a thread holding locks takes only
/// one whose level is above every level it holds, so no two threads can wait for each other. Debug builds check it
/// on every take (``LockOrder``); two locks of one level never nest.
package enum LockLevel: Int, Comparable, Sendable {
    /// ``VCRCassetteLock``'s state: the test integrations' scope lock.
    case scope
    /// HTTPVCRTesting's registries: suite traits, XCTest's cassette and sources, drift reports, failure watches.
    case testing
    /// ``VCR``'s state: the configuration, the cassettes in force, matchers, the notes `canInit` leaves.
    case vcr
    /// A ``VCRBridge``'s state.
    case bridge
    /// A ``Cassette``'s recordings and failures: taken under ``vcr`` (a request's failure, ejection).
    case cassette
    /// ``Recorder``'s recordings in flight.
    case recorder
    /// A ``Recording``'s events.
    case recording
    /// A ``Playback``'s matching and delivery queue.
    case playback
    /// A ``DriftVerifier``'s used recordings.
    case verifier
    /// A ``Load`` (its decisions and client end), and the door's receivers.
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
        // Held locks rise in level, so the last one taken is the highest.
        if let top = held.names.last, name.level <= top.level {
            preconditionFailure("HTTPVCR lock order: \(name) taken while holding \(top)")
        }
        held.names.append(name)
    }

    static func checkNoneHeld(running what: StaticString) {
        guard let top = held.names.last else { return }
        preconditionFailure("HTTPVCR runs \(what) while holding the lock \(top): no user closure runs under a lock")
    }

    /// Locks are released in the reverse order of taking (``Lock/withLock(at:_:)`` is scoped).
    static func released(_ name: Name) {
        held.names.removeLast()
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
