import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Replaying one cassette's tape: finds the recorded chapter a live request matches (``MatchIndex``), decides
/// whether the request is replayed, recorded or refused, and hands scenes over in playback order (``Player``)
/// through the one delivery queue (``DeliveryQueue``), waking itself when requests have waited long enough for one
/// nobody made. It keeps the counts of what was played.
final class Playback: @unchecked Sendable {
    enum Decision {
        /// Scenes of a recorded chapter are on their way to the receiver.
        case replaying
        /// A recorded chapter to hand over whole, now, before anything else is delivered; then call
        /// ``endDirect()``. Sequential and momentary replay, the common case, skip the delivery queue.
        case replayNow(ReplayedChapter)
        /// Nothing matched and the cassette may record: send the request and record it.
        case record
        /// Nothing matched and the cassette may not record: fail with this error, send nothing.
        case refuse(VCRError)
    }

    /// A chapter's scenes, for a caller that hands them over itself.
    struct ReplayedChapter {
        let scenes: [Scene]
        /// The chapter's scenes' positions in `scenes`, in tape order.
        let positions: [Int]
    }

    /// Where a mismatch message says the request was refused, and how the cassette was set up.
    struct Policy {
        let cassettePath: String
        let recordMode: RecordMode
        let isWriteProtected: Bool
        let matchers: [Matcher]
        /// A request whose matches were all played replays the last of them again.
        let allowsPlaybackRepeats: Bool
        /// ``VCRConfiguration/replayTiming``'s factor on recorded offsets; nil: at once.
        var timingFactor: Double? = nil
        /// The configuration's request filters, for a tape recorded before them: a live request that matches
        /// nothing is matched again against the tape's requests as these filters would write them now (a cassette
        /// recorded before ``VCRConfiguration/filtersSecrets`` holds its secrets in clear, and still replays).
        var refilter: (@Sendable (RecordedRequest) -> RecordedRequest)? = nil
    }

    private let scenes: [Scene]
    private let layout: ChapterLayout
    /// Each chapter's recorded request.
    private let requests: [RecordedRequest]
    private let policy: Policy
    private let deliveries: DeliveryQueue
    private let state: Locked<State>

    private struct State {
        var index: MatchIndex
        /// The requests `index` matches: the recorded ones, or once ``Policy/refilter`` was needed, them filtered.
        var matchRequests: [RecordedRequest]
        var isRefiltered = false
        /// When each chapter replaying with timing started (uptime nanoseconds): its scenes are due from then.
        var startedAt: [Int: UInt64] = [:]
        var player: Player
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
        self.deliveries = DeliveryQueue(scenes: scenes)
        let index = MatchIndex(matchers: policy.matchers, requests: requests)
        self.state = Locked(State(
            index: index,
            matchRequests: requests,
            player: Player(
                scenes: scenes, layout: layout, mode: mode, wait: wait, interchangeable: index.interchangeable
            ),
            matched: Array(repeating: false, count: requests.count),
            finished: Array(repeating: false, count: requests.count)
        ))
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

    /// One past the furthest scene delivered: where a scene recorded now goes on the tape.
    var playhead: Int { state.withLock { $0.player.playhead } }

    // MARK: Playing

    /// Matches a (filtered) live request against the tape and starts replaying it: hands the chapter back whole,
    /// or queues its scenes for the receiver `makeReceiver` makes (made only then); or says to record or refuse.
    func play(
        _ request: URLRequest, mayHandOverWhole: Bool, to makeReceiver: () -> any SceneReceiver
    ) -> Decision {
        // A chapter handed over whole cannot wait for its scenes to be due.
        let mayHandOverWhole = mayHandOverWhole && policy.timingFactor == nil
        let decision: Decision = state.withLock { state in
            state.requestsSeen += 1
            if policy.recordMode == .all { return .record }
            if let decision = startReplay(of: request, mayHandOverWhole: mayHandOverWhole, in: &state, makeReceiver) {
                return decision
            }
            if refilter(&state),
               let decision = startReplay(of: request, mayHandOverWhole: mayHandOverWhole, in: &state, makeReceiver) {
                return decision
            }
            if policy.allowsPlaybackRepeats, let chapter = state.index.lastMatch(
                for: request, recordedRequest: { [matchRequests = state.matchRequests] in RequestParts(matchRequests[$0]) }
            ) {
                return replayAgain(chapter, mayHandOverWhole: mayHandOverWhole, in: &state, makeReceiver)
            }
            if !policy.isWriteProtected { return .record }
            return .refuse(VCRError(.noMatch, Mismatch.message(
                request: RequestParts(request),
                cassettePath: policy.cassettePath,
                recordMode: policy.recordMode,
                matchers: policy.matchers,
                requests: requests.map { RequestParts($0) },
                isPlayed: { state.matched[$0] }
            ), cassettePath: policy.cassettePath, request: Mismatch.describe(request)))
        }
        if case .replayNow = decision { return decision }
        deliveries.drain()
        return decision
    }

    /// Call when a chapter from ``play(_:mayHandOverWhole:to:)``'s `.replayNow` has been handed over.
    func endDirect() {
        deliveries.endDirect()
    }

    /// The matched chapter, whole when it may and can be handed over at once, else queued for the receiver;
    /// nil when nothing matches.
    private func startReplay(
        of request: URLRequest,
        mayHandOverWhole: Bool,
        in state: inout State,
        _ makeReceiver: () -> any SceneReceiver
    ) -> Decision? {
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
        guard let chapter else { return nil }
        matched[chapter] = true
        if policy.timingFactor != nil { state.startedAt[chapter] = DispatchTime.now().uptimeNanoseconds }
        if mayHandOverWhole, !asksTheSession(chapter), deliveries.beginDirect() {
            if state.player.takeWhole(chapter: chapter) {
                countFinished(chapter, in: &state)
                return .replayNow(ReplayedChapter(scenes: scenes, positions: layout.scenesOfChapter[chapter]))
            }
            deliveries.endDirect()  // nothing was queued meanwhile: the lock is held
        }
        let receiver = makeReceiver()
        enqueue(state.player.start(chapter: chapter, receiver: receiver), in: &state)
        scheduleWakeIfNeeded(&state)
        return .replaying
    }

    /// Whether the app's session may have its say on the chapter's way (a hop, or an end in a redirect or a 401
    /// asking for credentials): such a chapter goes through its load (``Load``) scene by scene, never handed over
    /// whole.
    private func asksTheSession(_ chapter: Int) -> Bool {
        layout.scenesOfChapter[chapter].contains { position in
            switch scenes[position].event {
            case .redirect: true
            case let .response(response): LoaderRules.leadsFurther(response)
            default: false
            }
        }
    }

    /// Matches against the tape's requests as the filters write them now, from now on, when that changes any of
    /// them. Once: a tape recorded with today's filters costs nothing, and an old one pays once, on its first miss.
    private func refilter(_ state: inout State) -> Bool {
        guard !state.isRefiltered, let refilter = policy.refilter else { return false }
        state.isRefiltered = true
        let refiltered = requests.map(refilter)
        guard refiltered != requests else { return false }
        state.matchRequests = refiltered
        state.index = MatchIndex(matchers: policy.matchers, requests: refiltered)
        return true
    }

    /// A chapter all of whose matches were played, replayed once more, whole, outside playback order.
    private func replayAgain(
        _ chapter: Int,
        mayHandOverWhole: Bool,
        in state: inout State,
        _ makeReceiver: () -> any SceneReceiver
    ) -> Decision {
        if mayHandOverWhole, !asksTheSession(chapter), deliveries.beginDirect() {
            return .replayNow(ReplayedChapter(scenes: scenes, positions: layout.scenesOfChapter[chapter]))
        }
        if policy.timingFactor != nil { state.startedAt[chapter] = DispatchTime.now().uptimeNanoseconds }
        let receiver = makeReceiver()
        enqueue(state.player.repeatDeliveries(of: chapter, to: receiver), in: &state, counts: false)
        return .replaying
    }

    /// Queues deliveries, counting a chapter as played once its last scene is queued: before the client hears
    /// of it, so that code awaiting the response sees it played.
    private func enqueue(_ batch: [Delivery], in state: inout State, counts: Bool = true) {
        if counts {
            for delivery in batch where delivery.isEnd { countFinished(delivery.chapter, in: &state) }
        }
        guard let factor = policy.timingFactor else { return deliveries.enqueue(batch) }
        var timed = batch
        for index in timed.indices {
            let delivery = timed[index]
            guard let start = state.startedAt[delivery.chapter] else { continue }
            // A completion added after a cut-off chapter's last scene is due with it.
            let position = delivery.scene ?? layout.scenesOfChapter[delivery.chapter].last
            let offset = position.map { scenes[$0].time } ?? 0
            // Bounded (a day): a cassette's times are read from a file, and a wild one must not trap.
            let wait = min(max(0, offset * factor), 86_400)
            timed[index].due = start + UInt64((wait * 1e9).rounded())
        }
        deliveries.enqueue(timed)
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
        state.withLock { state in
            state.wakeScheduled = false
            enqueue(state.player.advance(now: Date()), in: &state)
            scheduleWakeIfNeeded(&state)
        }
        deliveries.drain()
    }
}
