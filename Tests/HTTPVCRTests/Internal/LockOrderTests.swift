import Foundation
import Testing
import TestSupport
@testable import HTTPVCR

/// The lock order (Docs/Architecture.md, "Locks") is checked in debug builds, as the suite runs: a lock taken out of
/// order, or a closure of the app's run under a lock, traps. A trap is seen from a process of its own.
@Suite struct LockOrderTests {
    #if DEBUG
    /// Not under ThreadSanitizer: there the trapping child stayed a zombie the test runner never reaped, and the
    /// wait for it held a thread of the cooperative pool until the run was killed.
    static var seesATrap: Bool { ThreadSanitizer.hooks == nil }

    @Test(.enabled(if: seesATrap)) func aLockTakenOutOfOrderTrapsNamingBothLocks() throws {
        let result = try FreshProcessTests.scenario("lock-order")
        #expect(result.status != 0, "\(result)")
        let scenario = "vcr_scenarios/LockOrderScenarios.swift:"
        #expect(result.output.contains("HTTPVCR lock order: vcr (level 2, made at \(scenario)"), "\(result)")
        #expect(result.output.contains("taken while holding cassette (level 4, made at \(scenario)"), "\(result)")
    }

    @Test(.enabled(if: seesATrap)) func aMatcherOfTheAppsRunUnderALockTraps() throws {
        let result = try FreshProcessTests.scenario("matcher-under-lock")
        #expect(result.status != 0, "\(result)")
        #expect(result.output.contains("HTTPVCR runs a matcher's comparison while holding the lock playback"),
                "\(result)")
    }
    #endif

    /// Taken in order, and one after another at one level, locks do not trap.
    @Test func locksTakenInOrderDoNotTrap() {
        let vcr = Locked(1, level: .vcr)
        let cassette = Locked(2, level: .cassette)
        let playback = Locked(3, level: .playback)
        let sum = vcr.withLock { outer in
            cassette.withLock { middle in playback.withLock { outer + middle + $0 } }
        }
        let again = Locked(4, level: .vcr).withLock { $0 }
        #expect(sum + again == 10)
    }
}
