import Foundation
import Testing
@testable import HTTPVCR

/// Notes carried from `canInit` to `startLoading` by the task's queue, whichever order requests interleave in.
@Suite struct CanInitNotesTests {
    /// Stand-ins for queue addresses: only compared, never read.
    let queues = (1...3).map { OpaquePointer(bitPattern: $0 * 64)! }

    static func notes(_ why: String) -> CanInitNotes {
        CanInitNotes(attribution: .unattributed(why: why), caller: nil)
    }

    static func why(_ notes: CanInitNotes?) -> String? {
        guard case let .unattributed(why)? = notes?.attribution else { return nil }
        return why
    }

    @Test func eachQueueGetsItsOwnNotesOnceInAnyOrder() {
        var pending = CanInitNotes.ByQueue()
        for (queue, name) in zip(queues, ["a", "b", "c"]) { pending.keep(Self.notes(name), on: queue) }
        #expect(Self.why(pending.take(on: queues[1])) == "b")
        #expect(Self.why(pending.take(on: queues[2])) == "c")
        #expect(Self.why(pending.take(on: queues[0])) == "a")
        for queue in queues { #expect(pending.take(on: queue) == nil) }
    }

    /// A task that never started left its notes; the next task whose queue has the same address gets its own.
    @Test func aQueueUsedAgainGetsTheNewestNotes() {
        var pending = CanInitNotes.ByQueue()
        let (reused, other) = (queues[0], queues[1])
        pending.keep(Self.notes("never started"), on: reused)
        pending.keep(Self.notes("other"), on: other)
        pending.keep(Self.notes("new"), on: reused)
        #expect(Self.why(pending.take(on: reused)) == "new")
        #expect(pending.take(on: reused) == nil)
        #expect(Self.why(pending.take(on: other)) == "other")

        pending.keep(Self.notes("never started"), on: reused)
        pending.keep(Self.notes("newer"), on: reused)
        #expect(Self.why(pending.take(on: reused)) == "newer")
        #expect(pending.take(on: reused) == nil)
    }
}
