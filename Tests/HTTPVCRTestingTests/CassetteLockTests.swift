import Foundation
@testable import HTTPVCRTesting
import Testing

@Suite struct CassetteLockTests {
    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var inside = 0
        private(set) var maximum = 0
        private(set) var order: [Int] = []

        func enter(_ id: Int) {
            lock.lock(); inside += 1; maximum = max(maximum, inside); order.append(id); lock.unlock()
        }
        func leave() { lock.lock(); inside -= 1; lock.unlock() }
    }

    @Test func oneHolderAtATimeAcrossTasksAndThreads() async {
        let lock = VCRCassetteLock()
        let counter = Counter()
        await withTaskGroup(of: Void.self) { group in
            for id in 0..<40 {
                group.addTask {
                    await lock.withLock {
                        counter.enter(id)
                        try? await Task.sleep(nanoseconds: 200_000)
                        counter.leave()
                    }
                }
            }
            // Blocking waiters, on threads of their own, mixed in.
            for id in 40..<44 {
                group.addTask {
                    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                        Thread.detachNewThread {
                            lock.withLockBlocking {
                                counter.enter(id)
                                Thread.sleep(forTimeInterval: 0.0002)
                                counter.leave()
                            }
                            done.resume()
                        }
                    }
                }
            }
        }
        #expect(counter.maximum == 1)
        #expect(Set(counter.order) == Set(0..<44))
        #expect(!lock.isLocked)
    }

    @Test func waitersAreServedInOrder() async throws {
        let lock = VCRCassetteLock()
        await lock.lock()
        let counter = Counter()
        var tasks: [Task<Void, Never>] = []
        for id in 0..<5 {
            tasks.append(Task { await lock.withLock { counter.enter(id); counter.leave() } })
            while lock.waitingCount < id + 1 { try await Task.sleep(nanoseconds: 1_000_000) }
        }
        lock.unlock()
        for task in tasks { await task.value }
        #expect(counter.order == [0, 1, 2, 3, 4])
        #expect(!lock.isLocked)
    }

    @Test func sharesAreHeldTogether() async {
        let lock = VCRCassetteLock()
        for _ in 0..<3 { await lock.lockShared() }
        #expect(lock.sharedHolderCount == 3)
        #expect(!lock.tryLock(), "no exclusive hold beside shares")
        for _ in 0..<3 { lock.unlockShared() }
        #expect(!lock.isLocked)
    }

    /// An exclusive waiter waits for the shares before it, and shares that ask after it wait for it: neither kind
    /// starves the other.
    @Test func anExclusiveWaiterIsServedBetweenTheSharesAroundIt() async throws {
        let lock = VCRCassetteLock()
        await lock.lockShared()
        let counter = Counter()
        let exclusive = Task {
            await lock.withLock {
                counter.enter(1)
                #expect(lock.sharedHolderCount == 0)
                counter.leave()
            }
        }
        while lock.waitingCount < 1 { try await Task.sleep(nanoseconds: 1_000_000) }
        let laterShares = (2..<5).map { id in
            Task {
                await lock.lockShared()
                counter.enter(id)
                counter.leave()
                lock.unlockShared()
            }
        }
        while lock.waitingCount < 4 { try await Task.sleep(nanoseconds: 1_000_000) }
        #expect(counter.order.isEmpty, "everyone waits for the first share")
        lock.unlockShared()
        await exclusive.value
        for share in laterShares { await share.value }
        #expect(counter.order.first == 1)
        #expect(Set(counter.order) == Set(1..<5))
        #expect(!lock.isLocked)
    }

    @Test func tryLock() {
        let lock = VCRCassetteLock()
        #expect(lock.tryLock())
        #expect(!lock.tryLock())
        #expect(lock.isLocked)
        lock.unlock()
        #expect(!lock.isLocked)
    }
}
