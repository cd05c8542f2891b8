import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A cassette in use: its tape, what has been replayed, and what has been recorded since it was inserted.
///
/// Get one from ``VCR/insertCassette(_:)``. Everything here is safe to call from any thread.
public final class Cassette: @unchecked Sendable {
    /// The merged configuration in force for this cassette.
    public let configuration: VCRConfiguration
    /// The cassette file.
    public let url: URL
    /// The format of the file (HTTPVCR's own, or a foreign one replayed read-only).
    public let format: CassetteFormat
    /// No file existed when it was inserted.
    public let isNew: Bool
    /// The record mode in force (`VCR_RECORD_MODE` applied).
    public let recordMode: RecordMode
    /// Unmatched requests fail instead of being recorded: `.once` on an existing cassette, `.none`, and every
    /// foreign cassette.
    public let isWriteProtected: Bool

    /// Chapters waiting for the next request of a hop reported to the client (Apple platforms).
    let redirectHandoffs = RedirectHandoffs()

    private let lock = NSLock()
    private let deliveries: DeliveryQueue
    /// The tape as loaded (empty in `.all` mode): the player's scenes, never edited.
    private let loadedScenes: [Scene]
    /// Each loaded chapter's recorded request.
    private let loadedRequests: [RecordedRequest]
    private var index: MatchIndex
    private var player: Player
    private var matched: [Bool]
    private var finished: [Bool]
    private var finishedCount = 0
    private var wakeScheduled = false
    /// Scenes recorded since insertion, each anchored at the playhead when it happened.
    private var recorded: [(anchor: Int, order: UInt64, scene: Scene)] = []
    private var nextChapter: Int
    /// The loaded tape's chapter numbers, which new chapters must not reuse.
    private let loadedChapters: Set<Int>
    private var hasChanges: Bool

    init(configuration: VCRConfiguration, url: URL) throws(VCRError) {
        let recordMode = configuration.effectiveRecordMode
        let exists = FileManager.default.fileExists(atPath: url.path)
        var tape = Tape()
        var format = CassetteFormat.forWriting(to: url)
        if exists {
            (tape, format) = try CassetteFile.read(at: url)
        } else if recordMode == .none {
            throw VCRError(
                .cassetteNotFound,
                "No cassette at \(url.path), and record mode .none never records. Record it first "
                    + "(VCR_RECORD_MODE=once or new), or check the path.",
                cassettePath: url.path
            )
        }
        if format.isForeign && (recordMode == .new || recordMode == .all || (recordMode == .once && !exists)) {
            throw VCRError(
                .foreignCassetteIsReadOnly,
                "\(url.path) is a \(format.rawValue) cassette: HTTPVCR replays it but does not record into it "
                    + "(record mode \(recordMode)). Convert it first: vcr convert \(url.path) "
                    + "\(url.deletingPathExtension().path).json",
                cassettePath: url.path
            )
        }
        var resolvedMatchers: [Matcher] = []
        for matcher in configuration.matchers {
            guard let resolved = matcher.resolved() else {
                throw VCRError(
                    .cassetteState,
                    "Unknown matcher \"\(matcher.name)\" for \(url.path): register it with VCR.registerMatcher first",
                    cassettePath: url.path
                )
            }
            resolvedMatchers.append(resolved)
        }
        var configuration = configuration
        configuration.matchers = resolvedMatchers
        configuration.recordMode = recordMode

        self.configuration = configuration
        self.url = url
        self.format = format
        self.isNew = !exists
        self.recordMode = recordMode
        self.isWriteProtected = recordMode == .none || format.isForeign || (recordMode == .once && exists)
        self.hasChanges = recordMode == .all && !tape.scenes.isEmpty
        if recordMode == .all { tape = Tape() }

        // Chapters in the order they start; scenes of a chapter in tape order.
        var chapterPosition: [Int: Int] = [:]
        var chapterOfScene: [Int] = []
        var scenesOfChapter: [[Int]] = []
        var requests: [RecordedRequest] = []
        chapterOfScene.reserveCapacity(tape.scenes.count)
        for (position, scene) in tape.scenes.enumerated() {
            let chapter: Int
            if let existing = chapterPosition[scene.chapter] {
                chapter = existing
            } else {
                guard case let .request(request) = scene.event else {
                    throw VCRError.malformed(url.path, "scene \(position) of chapter \(scene.chapter) comes before its request")
                }
                chapter = scenesOfChapter.count
                chapterPosition[scene.chapter] = chapter
                scenesOfChapter.append([])
                requests.append(request)
            }
            chapterOfScene.append(chapter)
            scenesOfChapter[chapter].append(position)
        }
        self.loadedScenes = tape.scenes
        self.deliveries = DeliveryQueue(scenes: tape.scenes)
        self.loadedRequests = requests
        self.index = MatchIndex(matchers: resolvedMatchers, requests: requests)
        self.player = Player(
            scenes: tape.scenes,
            chapterOfScene: chapterOfScene,
            scenesOfChapter: scenesOfChapter,
            mode: configuration.playbackMode,
            wait: configuration.chronologicalWait
        )
        self.matched = Array(repeating: false, count: requests.count)
        self.finished = Array(repeating: false, count: requests.count)
        self.nextChapter = tape.nextChapter
        self.loadedChapters = Set(chapterPosition.keys)
    }

    // MARK: Public state

    /// Requests fully replayed so far.
    public var playCount: Int { withLock { finishedCount } }

    /// Every recorded request has been replayed.
    public var allPlayed: Bool { withLock { finishedCount == loadedRequests.count } }

    /// The requests recorded on the tape, in tape order (what was loaded and what was recorded since).
    public var requests: [URLRequest] { tape.interactions.map(\.request.urlRequest) }

    /// One entry per recorded request, in the order of ``requests``: its response and body, or its error.
    public var responses: [Outcome] {
        tape.interactions.map { interaction in
            if let error = interaction.error { return .error(error.foundationError) }
            let fallback = URL(string: interaction.request.url)
            if let response = interaction.response?.httpURLResponse(fallbackURL: fallback) {
                return .response(response, body: interaction.body)
            }
            return .error(NSError(domain: NSURLErrorDomain, code: NSURLErrorUnknown))
        }
    }

    /// What a recorded request ended with.
    public enum Outcome: @unchecked Sendable {
        case response(HTTPURLResponse, body: Data)
        case error(any Error)
    }

    /// Recorded requests that were never replayed, in tape order.
    public var unplayedRequests: [URLRequest] {
        withLock { matched.indices.filter { !matched[$0] }.map { loadedRequests[$0].urlRequest } }
    }

    /// The tape as it would be saved now: the loaded scenes with what was recorded inserted at the playhead.
    public var tape: Tape {
        withLock { mergedTape() }
    }

    /// Something was recorded (or erased) since insertion.
    public var hasUnsavedChanges: Bool { withLock { hasChanges } }

    // MARK: Playing

    /// Whether a request goes through this cassette: its host filter and `beforeRecordRequest` accept it.
    /// The configuration's fields are read in place; copying the whole configuration cost more than the check.
    func intercepts(_ request: URLRequest, to url: URL) -> Bool {
        if !configuration.hostFilter.acceptsEveryHost, !configuration.hostFilter.accepts(host: url.decodedHost ?? "") {
            return false
        }
        if let beforeRecordRequest = configuration.beforeRecordRequest, beforeRecordRequest(request) == nil {
            return false
        }
        return true
    }

    enum Decision {
        /// Scenes of a recorded chapter are on their way to the receiver.
        case replaying
        /// A recorded chapter to hand over whole, now, before anything else is delivered; then call
        /// ``endDirectReplay()``. Sequential and momentary replay, the common case, skip the delivery queue.
        case replayNow(ReplayedChapter)
        /// Nothing matched and the cassette may record: send the request and record it.
        case record
        /// Nothing matched and the cassette may not record: fail with this error, send nothing.
        case refuse(VCRError)
    }

    /// The live request as it is matched and recorded, or nil when `beforeRecordRequest` refuses it.
    func filtered(_ request: URLRequest) -> URLRequest? {
        RequestFilter.filter(request, with: configuration)
    }

    /// A chapter's scenes, for a caller that hands them over itself.
    struct ReplayedChapter {
        let scenes: [Scene]
        /// The chapter's scenes' positions in `scenes`, in tape order.
        let positions: [Int]
    }

    /// Matches a (filtered) live request against the tape and starts replaying it, either handing the chapter
    /// back whole or queueing its scenes for the receiver `makeReceiver` makes (made only then).
    func play(
        _ request: URLRequest,
        mayHandOverWhole: Bool = true,
        to makeReceiver: () -> any SceneReceiver
    ) -> Decision {
        let decision: Decision = withLock {
            if recordMode == .all { return .record }
            switch startReplay(of: request, mayHandOverWhole: mayHandOverWhole, to: makeReceiver) {
            case let .whole(chapter): return .replayNow(chapter)
            case .queued: return .replaying
            case nil: break
            }
            if !isWriteProtected { return .record }
            return .refuse(VCRError(.noMatch, Mismatch.message(
                request: RequestParts(request),
                cassettePath: url.path,
                recordMode: recordMode,
                matchers: configuration.matchers,
                requests: loadedRequests.map(RequestParts.init),
                isPlayed: { matched[$0] }
            ), cassettePath: url.path))
        }
        if case .replayNow = decision { return decision }
        deliveries.drain()
        return decision
    }

    /// Call when a chapter from ``play(_:to:)``'s `.replayNow` has been handed over.
    func endDirectReplay() {
        deliveries.endDirect()
    }

    /// Replays `request` if it matches an unplayed recording; never records or refuses. Used to follow
    /// redirect hops that a tape holds as separate requests.
    func replayIfMatched(_ request: URLRequest, to receiver: any SceneReceiver) -> Bool {
        let started = withLock {
            recordMode != .all && startReplay(of: request, mayHandOverWhole: false, to: { receiver }) != nil
        }
        deliveries.drain()
        return started
    }

    private enum Start {
        case whole(ReplayedChapter)
        case queued
    }

    /// The matched chapter, whole when it may and can be handed over at once, else queued for the receiver;
    /// nil when nothing matches. Call with the lock held.
    private func startReplay(
        of request: URLRequest,
        mayHandOverWhole: Bool,
        to makeReceiver: () -> any SceneReceiver
    ) -> Start? {
        let position = index.firstMatch(
            for: request,
            recordedRequest: { RequestParts(loadedRequests[$0]) },
            isPlayed: { matched[$0] }
        )
        guard let position else { return nil }
        matched[position] = true
        if mayHandOverWhole, !hasRedirect(chapter: position), deliveries.beginDirect() {
            if player.takeWhole(chapter: position) {
                countFinished(position)
                return .whole(ReplayedChapter(scenes: loadedScenes, positions: player.scenesOfChapter[position]))
            }
            deliveries.endDirect()  // nothing was queued meanwhile: this lock is held
        }
        enqueue(player.start(chapter: position, receiver: makeReceiver()))
        scheduleWakeIfNeeded()
        return .queued
    }

    /// Whether the chapter holds a redirect hop, or is one (a 3xx with a `Location`, as foreign tapes keep
    /// hops): those go through a receiver, which follows or reports them.
    private func hasRedirect(chapter: Int) -> Bool {
        for position in player.scenesOfChapter[chapter] {
            switch loadedScenes[position].event {
            case .redirect:
                return true
            case let .response(response) where response.isRedirect:
                return true
            default:
                continue
            }
        }
        return false
    }

    /// Queues deliveries, counting a chapter as played once its last scene is queued: before the client hears
    /// of it, so that code awaiting the response sees it played. Call with the lock held.
    private func enqueue(_ batch: [Delivery]) {
        for delivery in batch where delivery.isEnd { countFinished(delivery.chapter) }
        deliveries.enqueue(batch)
    }

    /// Counts a chapter as played, once. Call with the lock held.
    private func countFinished(_ chapter: Int) {
        guard !finished[chapter] else { return }
        finished[chapter] = true
        finishedCount += 1
    }

    private func scheduleWakeIfNeeded() {
        guard !wakeScheduled, let wake = player.nextWake else { return }
        wakeScheduled = true
        let delay = max(0, wake.timeIntervalSinceNow) + 0.001
        DispatchQueue.global().asyncAfter(deadline: .now() + delay) { [weak self] in self?.wake() }
    }

    private func wake() {
        withLock {
            wakeScheduled = false
            enqueue(player.advance(now: Date()))
            scheduleWakeIfNeeded()
        }
        deliveries.drain()
    }

    // MARK: Recording

    /// A chapter number for a request about to be recorded.
    func reserveChapter() -> Int {
        withLock {
            // Counting up from above the highest chapter; past the largest number a file may hold (a tape that
            // already reaches it), the lowest unused ones. Never overflows, never reuses one.
            let chapter = Tape.unusedChapter(from: nextChapter, notIn: loadedChapters)
            nextChapter = chapter + 1
            return chapter
        }
    }

    /// Writes a finished recording onto the tape, each scene at the playhead of the moment it happened.
    func commit(_ scenes: [(scene: Scene, anchor: Int, order: UInt64)]) {
        guard !scenes.isEmpty else { return }
        withLock {
            recorded.append(contentsOf: scenes.map { ($0.anchor, $0.order, $0.scene) })
            hasChanges = true
        }
    }

    /// Where a scene happening now goes on the tape.
    var playhead: Int { withLock { player.playhead } }

    private func mergedTape() -> Tape {
        guard !recorded.isEmpty else { return Tape(scenes: loadedScenes) }
        let inserted = recorded.sorted { ($0.anchor, $0.order) < ($1.anchor, $1.order) }
        var scenes: [Scene] = []
        scenes.reserveCapacity(loadedScenes.count + inserted.count)
        var next = inserted.startIndex
        for (position, scene) in loadedScenes.enumerated() {
            while next < inserted.endIndex, inserted[next].anchor <= position {
                scenes.append(inserted[next].scene)
                next += 1
            }
            scenes.append(scene)
        }
        scenes.append(contentsOf: inserted[next...].map(\.scene))
        return Tape(scenes: scenes)
    }

    // MARK: Saving

    /// Saves the tape if anything changed since insertion. Atomic: a failed save leaves the old file.
    func saveIfChanged() throws(VCRError) {
        let tape: Tape? = withLock { hasChanges ? mergedTape() : nil }
        guard let tape else { return }
        try CassetteFile.write(tape, to: url, as: format)
        withLock { hasChanges = false }
    }

    private func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }
}
