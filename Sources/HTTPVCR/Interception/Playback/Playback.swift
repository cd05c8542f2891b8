import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Replaying one cassette's tape: finds the recorded chapter a live request matches (``MatchIndex``), decides
/// whether the request is replayed, recorded or refused, and hands scenes over in playback order (``Player``)
/// through its one delivery queue (under the same lock), waking itself when requests have waited long enough for one
/// nobody made. It keeps the counts of what was played.
final class Playback: @unchecked Sendable {
    enum Decision {
        /// Scenes of a recorded chapter are on their way to the receiver: delivered before `play` returns when
        /// they can be (sequential and momentary replay, the common case), else as they become due.
        case replaying
        /// Nothing matched and the cassette may record: send the request and record it.
        case record
        /// Nothing matched and the cassette may not record: fail with this error, send nothing.
        case refuse(VCRError)
    }

    /// Where a mismatch message says the request was refused, and how the cassette was set up.
    struct Policy {
        let cassettePath: String
        let recordMode: RecordMode
        let isWriteProtected: Bool
        let matchers: [Matcher]
        /// A request whose matches were all played replays the last of them again.
        let allowsPlaybackRepeats: Bool
        /// How the mismatch message says to record, or to repeat (``VCRConfiguration/mismatchAdvice``).
        var mismatchAdvice: MismatchAdvice?
        /// ``VCRConfiguration/replayTiming``'s factor on recorded offsets; nil: at once.
        var timingFactor: Double? = nil
        /// The configuration's request filters, for a tape recorded before them: a live request that matches
        /// nothing is matched again against the tape's requests as these filters would write them now (a cassette
        /// recorded before ``VCRConfiguration/filtersSecrets`` holds its secrets in clear, and still replays).
        var refilter: (@Sendable (RecordedRequest) -> RecordedRequest)? = nil
        /// A live request as the filters wrote it before ``VCRConfiguration/sensitiveData`` placeholders won over the
        /// secure defaults (`[FILTERED]` where a placeholder stands under a secret name), for a tape recorded then;
        /// nil when that is the same request. Set only when the configuration has placeholders.
        var beforePlaceholdersWon: (@Sendable (FilteredRequest) -> FilteredRequest?)? = nil
        /// ``VCRConfiguration/volatileValues``: compared by shape, echoed live.
        var volatileValues: [VolatileValue] = []
    }

    let scenes: [Scene]
    let layout: ChapterLayout
    /// Each chapter's recorded request.
    let requests: [RecordedRequest]
    /// The matchers that run a closure of the app's (``MatchIndex/predicates``): matching with them runs outside the
    /// lock (`Playback+Checking.swift`).
    let predicates: [Matcher]
    let policy: Policy
    /// `.all` or `.verify`: every request is sent. Kept as a flag: comparing record modes compares their names.
    let sendsEveryRequest: Bool
    /// The volatile values, when the tape holds any: requests are then matched as ``VolatileValues/matchingView(of:)``
    /// makes them. Nil for every other tape, which is matched as it is.
    let volatile: VolatileValues?
    /// The recorded requests as matching compares them: ``requests`` itself unless the tape holds volatile values.
    let views: [RecordedRequest]
    let state: Locked<State>

    struct State {
        var index: MatchIndex
        /// The requests `index` matches: the recorded ones, or once ``Policy/refilter`` was needed, them filtered.
        var matchRequests: [RecordedRequest]
        var isRefiltered = false
        /// Counts the indexes `index` was: what the app's matchers found in one is claimed in it only.
        var generation = 0
        /// When each chapter replaying with timing started (uptime nanoseconds): its scenes are due from then.
        var startedAt: [Int: UInt64] = [:]
        var player: Player
        /// What was decided and not handed over yet, in decision order by construction (queued under the lock that
        /// decided it); where the next one is (what is before it has been handed over); whether someone holds the
        /// turn to hand them out: a draining thread, or a hop to a client's queue.
        var pending: [Delivery] = []
        var next = 0
        var isDelivering = false
        var matched: [Bool]
        var finished: [Bool]
        var finishedCount = 0
        var wakeScheduled = false
        /// Requests that reached the cassette: matched, recorded, refused, or passed by its filters.
        var requestsSeen = 0
    }

    /// `scenes` must have no ``ChapterLayout/misplacedScene``.
    init(scenes: [Scene], layout: ChapterLayout, policy: Policy, mode: PlaybackMode, wait: TimeInterval) {
        let requests = layout.requests(in: scenes)
        self.scenes = scenes
        self.layout = layout
        self.requests = requests
        self.policy = policy
        sendsEveryRequest = policy.recordMode == .all || policy.recordMode == .verify
        let volatile = VolatileValues(policy.volatileValues)
        var holdsVolatile = false
        let views = sendsEveryRequest ? requests : requests.map { request in
            guard volatile.mayHoldAny(request) else { return request }
            let view = volatile.matchingView(of: request)
            holdsVolatile = holdsVolatile || view != request
            return view
        }
        self.volatile = holdsVolatile ? volatile : nil
        self.views = holdsVolatile ? views : requests
        let index = MatchIndex(matchers: policy.matchers, requests: self.views)
        predicates = index.predicates
        self.state = Locked(State(
            index: index,
            matchRequests: self.views,
            player: Player(
                scenes: scenes, layout: layout, mode: mode, wait: wait, interchangeable: index.interchangeable
            ),
            matched: Array(repeating: false, count: requests.count),
            finished: Array(repeating: false, count: requests.count)
        ), level: .playback)
    }

    // MARK: Counts

    /// Requests fully replayed so far.
    var playCount: Int { state.withLock { $0.finishedCount } }

    /// How many requests reached the cassette since it was inserted, whatever became of them.
    var requestsSeen: Int { state.withLock { $0.requestsSeen } }

    /// A request reached the cassette and its filters passed it by (to the network, unrecorded).
    func notePassedBy() {
        state.withLock { $0.requestsSeen += 1 }
    }

    /// A request reached the cassette and was refused before it was matched (an upload whose body it cannot see).
    func noteRefusedUnmatched() {
        state.withLock { $0.requestsSeen += 1 }
    }

    /// How many recorded requests the tape held when it was loaded.
    var chapterCount: Int { requests.count }

    /// Every recorded request has been replayed.
    var allPlayed: Bool { state.withLock { $0.finishedCount == requests.count } }

    /// Recorded requests that were never matched, in tape order.
    var unplayedRequests: [RecordedRequest] {
        state.withLock { state in state.matched.indices.filter { !state.matched[$0] }.map { requests[$0] } }
    }

    /// For each chapter, whether a request matched it.
    var matchedChapters: [Bool] { state.withLock { $0.matched } }

    /// Chapters nobody asked for that held requests up for ``VCRConfiguration/chronologicalWait`` each.
    var chaptersWaitedFor: Int { state.withLock { $0.player.bypassedAfterWaiting } }

    /// Recorded requests never matched, in tape order, each with how long chronological playback held the requests
    /// behind it waiting for it (nil: it held none up).
    var unplayedWithWaits: [(request: RecordedRequest, waited: TimeInterval?)] {
        state.withLock { state in
            let waits = Dictionary(state.player.waits.map { ($0.chapter, $0.seconds) }, uniquingKeysWith: +)
            return state.matched.indices.filter { !state.matched[$0] }.map { (requests[$0], waits[$0]) }
        }
    }

    /// One past the furthest scene delivered: where a scene recorded now goes on the tape.
    var playhead: Int { state.withLock { $0.player.playhead } }

    // MARK: Playing

    /// Matches a (filtered) live request against the tape and starts replaying it: queues its scenes for `receiver`
    /// and delivers what can be delivered now; or says to record or refuse. The receiver is made beforehand: nothing
    /// else is made or locked under the playback's lock.
    func play(_ request: URLRequest, to receiver: any SceneReceiver, part: Int = 0) -> Decision {
        play(FilteredRequest(request), to: receiver, part: part)
    }

    /// ``play(_:to:part:)`` for a request whose URL the filters already read.
    ///
    /// The common case is decided under one take of the lock: the built-in matchers find an unplayed chapter. The
    /// rest (the app's matchers, the filters written again for an older tape) runs the app's closures, which never
    /// run under the lock (``decideBeyondTheTape(_:_:)``).
    ///
    /// `live` is the request as sent, before the filters, when it differs: its volatile values are what a replayed
    /// answer echoes. On a tape with volatile values the request is matched as ``VolatileValues`` views it.
    func play(
        _ original: FilteredRequest, to receiver: any SceneReceiver, part: Int = 0, live: URLRequest? = nil
    ) -> Decision {
        let request = volatile.map { viewed(original, by: $0) } ?? original
        let recipient = Requester(
            receiver, part, volatile?.places(in: RecordedRequest(live ?? original.request))
        )
        let (decision, run): (Decision?, ArraySlice<Delivery>?) = state.withLock { state in
            state.requestsSeen += 1
            // `.verify`: sent live like a recording, which the cassette compares instead of taping (DriftVerifier).
            let decision: Decision? = if sendsEveryRequest {
                .record
            } else if predicates.isEmpty, startReplay(of: request, in: &state, recipient) {
                .replaying
            } else {
                nil
            }
            // Delivered before `play` returns unless someone else is delivering: the turn is taken under the same
            // lock as the decision.
            return (decision, state.takeTurn())
        }
        // Handed over, not copied: the queue's storage is then free to serve the next request once it is delivered.
        if let run = consume run { deliver(startingWith: run) }
        return decision ?? decideBeyondTheTape(request, original: original, recipient)
    }

    /// Queues the matched chapter for the receiver; false when nothing matches. Built-in matchers only.
    @inline(__always)
    func startReplay(
        of request: FilteredRequest,
        in state: inout State,
        _ recipient: Requester
    ) -> Bool {
        // Moved out while the index reads it, so that marking it below changes it in place rather than a copy.
        var matched = state.matched
        state.matched = []
        defer { state.matched = matched }
        let matchRequests = state.matchRequests
        let chapter = state.index.firstMatch(
            for: request,
            recordedRequest: { RequestParts(matchRequests[$0]) },
            isPlayed: { matched[$0] }
        )
        guard let chapter else { return false }
        matched[chapter] = true
        begin(chapter, in: &state, recipient)
        return true
    }

    /// Queues a chapter just marked matched for the receiver.
    func begin(_ chapter: Int, in state: inout State, _ recipient: Requester) {
        if policy.timingFactor != nil { state.startedAt[chapter] = DispatchTime.now().uptimeNanoseconds }
        let queued = state.pending.count
        state.player.start(
            chapter: chapter, receiver: echoing(chapter, to: recipient), part: recipient.part, into: &state.pending
        )
        enqueued(from: queued, in: &state)
        scheduleWakeIfNeeded(&state)
    }

    /// A chapter all of whose matches were played, replayed once more, whole, outside playback order.
    func replayAgain(_ chapter: Int, in state: inout State, _ recipient: Requester) {
        if policy.timingFactor != nil { state.startedAt[chapter] = DispatchTime.now().uptimeNanoseconds }
        let deliveries = state.player.repeatDeliveries(
            of: chapter, to: echoing(chapter, to: recipient), part: recipient.part
        )
        enqueue(deliveries, in: &state, counts: false)
    }

    /// Queues deliveries (see ``enqueued(from:in:counts:)``).
    private func enqueue(_ batch: [Delivery], in state: inout State, counts: Bool = true) {
        let queued = state.pending.count
        state.pending.append(contentsOf: batch)
        enqueued(from: queued, in: &state, counts: counts)
    }

    /// The deliveries queued from `start` on: a chapter is counted as played once its last scene is queued (before
    /// the client hears of it, so that code awaiting the response sees it played), and each is given its time.
    private func enqueued(from start: Int, in state: inout State, counts: Bool = true) {
        if counts {
            for delivery in state.pending[start...] where delivery.isEnd { countFinished(delivery.chapter, in: &state) }
        }
        guard let factor = policy.timingFactor else { return }
        for index in start..<state.pending.count {
            let delivery = state.pending[index]
            guard let started = state.startedAt[delivery.chapter] else { continue }
            // A completion added after a cut-off chapter's last scene is due with it.
            let position = delivery.scene ?? layout.scenesOfChapter[delivery.chapter].last
            let offset = position.map { scenes[$0].time } ?? 0
            // Bounded (a day): a cassette's times are read from a file, and a wild one must not trap.
            let wait = min(max(0, offset * factor), 86_400)
            state.pending[index].due = started + UInt64((wait * 1e9).rounded())
        }
    }

    /// Counts a chapter as played, once.
    private func countFinished(_ chapter: Int, in state: inout State) {
        guard !state.finished[chapter] else { return }
        state.finished[chapter] = true
        state.finishedCount += 1
    }

    /// Wakes the player when the requests waiting on a chapter nobody asked for have waited long enough.
    private func scheduleWakeIfNeeded(_ state: inout State) {
        guard !state.wakeScheduled, let wake = state.player.nextWake else { return }
        state.wakeScheduled = true
        let delay = max(0, wake.timeIntervalSinceNow) + 0.001
        DispatchQueue.global().asyncAfter(deadline: .now() + delay) { [weak self] in self?.wake() }
    }

    private func wake() {
        let run = state.withLock { state in
            state.wakeScheduled = false
            enqueue(state.player.advance(now: Date()), in: &state)
            scheduleWakeIfNeeded(&state)
            return state.takeTurn()
        }
        if let run { deliver(startingWith: run) }
    }

    // MARK: Delivering

    /// Hands the queue out, a run at a time, holding the turn, starting with `run`, taken with the turn.
    ///
    /// Each run is delivered where its receiver's client must be called (corelibs: the task's queue). When that is
    /// not here, the turn goes there with it, and the runs after it follow from there: so a client call is over
    /// before the next one starts, and the session hears of chapters in tape order by construction.
    func deliver(startingWith first: consuming ArraySlice<Delivery>) {
        var taken: ArraySlice<Delivery>? = consume first
        while var run = taken.take(), let first = run.first {
            if first.due != 0, first.due > DispatchTime.now().uptimeNanoseconds {
                // Keeps the turn: what was queued after it waits, so order holds.
                let due = DispatchTime(uptimeNanoseconds: first.due)
                run[run.startIndex].due = 0
                return DispatchQueue.global().asyncAfter(deadline: due) { [self, run] in deliver(startingWith: run) }
            }
            let receiver = first.receiver
            let ends = run.contains { $0.isEnd }
            guard receiver.isOnClientQueue, !(ends && receiver.yieldsBeforeEnding()) else {
                // The turn moves to the client's queue, and what follows is delivered from there.
                return receiver.onClientQueue { [self, run] in
                    receiver.receive(SceneRun(scenes: scenes, deliveries: run))
                    deliverRest()
                }
            }
            // Its last use: the queue's storage is no longer shared when the next run is taken.
            receiver.receive(SceneRun(scenes: scenes, deliveries: consume run))
            taken = state.withLock { $0.nextRun() }
        }
    }

    private func deliverRest() {
        if let run = state.withLock({ $0.nextRun() }) { deliver(startingWith: run) }
    }
}

// MARK: The delivery queue

extension Playback.State {
    /// The most deliveries whose storage the queue keeps once it is empty.
    static let keptCapacity = 64

    /// Takes the turn and the first run, unless someone else holds the turn or nothing is queued.
    mutating func takeTurn() -> ArraySlice<Delivery>? {
        guard !isDelivering, next < pending.count else { return nil }
        isDelivering = true
        return nextRun()
    }

    /// For whoever holds the turn: the deliveries to one receiver's part that follow one another (usually a whole
    /// chapter); nil, and the turn given back, when nothing is left. A delivery that is not due yet starts a run of
    /// its own, so that the run before it is not held.
    mutating func nextRun() -> ArraySlice<Delivery>? {
        guard next < pending.count else {
            // The storage is kept for the next request's deliveries (a sequential replay then allocates none), unless
            // a burst made it large. One by one: `removeAll(keepingCapacity:)` goes through a generic replacement
            // that costs more than the few deliveries a request makes.
            if pending.capacity <= Self.keptCapacity {
                while !pending.isEmpty { pending.removeLast() }
            } else {
                pending = []
            }
            next = 0
            isDelivering = false
            return nil
        }
        let start = next
        let (receiver, part) = (pending[start].receiver, pending[start].part)
        var end = start + 1
        while end < pending.count, pending[end].receiver === receiver, pending[end].part == part,
              pending[end].due == 0 {
            end += 1
        }
        next = end
        return pending[start..<end]
    }
}
