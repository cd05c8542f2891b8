import Foundation
@testable import HTTPVCRTesting
import Testing

/// A scope that finds a cassette in its way, inserted by code that does not hold `VCRCassetteLock.shared`: it waits
/// for that cassette's ejection, woken by it (not a timer), and gives up after `foreignCassetteTimeout`.
@Suite(.timeLimit(.minutes(2)))
struct ScopeRunnerTests {
    /// A scope that inserts its cassette for the process. On its first try its own configuration inserts another
    /// cassette by hand, as code outside the lock would, before the scope's is inserted: the scope holds the lock
    /// all the while, so that cassette is in nobody else's way.
    static func scope(in folder: TemporaryFolder, tries: Locked<Int>) -> VCRCassetteScope {
        var scope = VCRCassetteScope("waits", cassettesPath: folder.path) { configuration in
            configuration.recordMode = .passthrough
            guard tries.withLock({ $0 += 1; return $0 }) == 1 else { return }
            _ = try? VCR.insertCassette(forTest: "ScopeRunnerTests") { foreign in
                foreign.cassettesPath = folder.path
                foreign.cassettePath = "foreign"
                foreign.recordMode = .passthrough
            }
        }
        scope.isExclusive = true
        return scope
    }

    @Test func anAsyncScopeGoesOnOnceTheCassetteInItsWayIsEjected() async throws {
        let folder = TemporaryFolder()
        let tries = Locked(0)
        let (waits, waiting) = AsyncStream<Void>.makeStream()
        async let entered: Date? = VCR.$whenWaitingForEjection.withValue({ waiting.yield() }) {
            defer { waiting.finish() }
            return try await withVCRCassette(Self.scope(in: folder, tries: tries)) {
                VCR.cassette?.path == folder.path + "/waits.json" ? Date() : nil
            }
        }
        var waited = waits.makeAsyncIterator()
        #expect(await waited.next() != nil, "the scope waits")
        try #require(VCR.cassette?.path == folder.path + "/foreign.json")
        // Ejected from this task, while the scope waits for it.
        let ejected = Date()
        try VCR.ejectCassette()
        let inScope = try #require(try await entered, "the scope's body ran on the scope's cassette")
        #expect(inScope.timeIntervalSince(ejected) < 10, "woken by the ejection, not at the timeout")
        #expect(tries.withLock { $0 } == 2, "one try before the ejection, one after it: no polling")
    }

    @Test func aBlockingScopeGoesOnOnceTheCassetteInItsWayIsEjected() async throws {
        let folder = TemporaryFolder()
        let tries = Locked(0)
        let entered = Locked<Date?>(nil)
        let (waits, waiting) = AsyncStream<Void>.makeStream()
        // A thread of its own: the blocking form must not run on Swift concurrency's threads.
        async let done: Void = withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            Thread.detachNewThread {
                defer { waiting.finish() }
                continuation.resume(with: Result {
                    try VCR.$whenWaitingForEjection.withValue({ waiting.yield() }) {
                        try withVCRCassette(Self.scope(in: folder, tries: tries)) {
                            if VCR.cassette?.path == folder.path + "/waits.json" { entered.withLock { $0 = Date() } }
                        }
                    }
                })
            }
        }
        var waited = waits.makeAsyncIterator()
        #expect(await waited.next() != nil, "the scope waits")
        try #require(VCR.cassette?.path == folder.path + "/foreign.json")
        let ejected = Date()
        try VCR.ejectCassette()
        try await done
        let inScope = try #require(entered.withLock { $0 }, "the scope's body ran on the scope's cassette")
        #expect(inScope.timeIntervalSince(ejected) < 10, "woken by the ejection, not at the timeout")
        #expect(tries.withLock { $0 } == 2, "one try before the ejection, one after it: no polling")
    }

    /// Waiting ends at its deadline, the cassette still in; past the scope's deadline, that is an error.
    @Test func aCassetteThatStaysInIsAnErrorAtTheDeadline() async throws {
        let folder = TemporaryFolder()
        let scope = Self.scope(in: folder, tries: Locked(1))
        try await VCRCassetteLock.shared.withLock {
            _ = try VCR.insertCassette(forTest: "ScopeRunnerTests") { foreign in
                foreign.cassettesPath = folder.path
                foreign.cassettePath = "foreign"
                foreign.recordMode = .passthrough
            }
            defer { try? VCR.ejectCassette() }
            let started = Date()
            await VCR.waitForEjection(until: started.addingTimeInterval(0.05))
            #expect(Date().timeIntervalSince(started) >= 0.04)
            #expect(VCR.cassette?.path == folder.path + "/foreign.json")
            #expect(try ScopeRunner.insert(scope, extraConfigure: { _ in }, giveUpAt: .distantFuture) == nil)
            let error = #expect(throws: VCRTestingError.self) {
                try ScopeRunner.insert(scope, extraConfigure: { _ in }, giveUpAt: .distantPast)
            }
            #expect(error?.message == "Cannot insert \(scope.cassettePath): \(folder.path)/foreign.json has been "
                + "inserted for 60 s by code that does not hold VCRCassetteLock.shared. Eject it, or insert cassettes "
                + "by hand inside VCRCassetteLock.shared.withLock { … }.")
        }
    }
}
