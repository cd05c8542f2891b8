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
    public var url: URL { file.url }
    /// The cassette file's path.
    package var path: String { file.path }
    private let file: CassetteLocation
    /// The format of the file (HTTPVCR's own, or a foreign one replayed read-only).
    public let format: CassetteFormat
    /// No file existed when it was inserted.
    public let isNew: Bool
    /// The record mode in force (`VCR_RECORD_MODE` applied).
    public let recordMode: RecordMode
    /// Set when the cassette is older than ``VCRConfiguration/reRecordInterval``: what was done about it. The test
    /// integrations tell the test.
    public let expiry: CassetteExpiry?
    /// Unmatched requests fail instead of being recorded: `.once` on an existing cassette, `.never`, and every
    /// foreign cassette.
    public let isWriteProtected: Bool

    /// Bound to a test's task (``VCR/withCassette(_:isolation:_:)``) rather than inserted for the process: it keeps
    /// its own failures, which its scope reports.
    package let isBoundToTask: Bool
    /// Failures of requests on this cassette while it is bound to a task.
    private let boundFailures = Locked<[VCRError]>([])

    /// Chapters waiting for the next request of a hop reported to the client (Apple platforms).
    let redirectHandoffs = RedirectHandoffs()

    /// Replaying the tape as loaded: matching, playback order, delivery and what was played.
    let playback: Playback
    /// The tape as loaded (empty in `.all` mode): what is replayed, never edited.
    private let loadedScenes: [Scene]
    private let loadedLayout: ChapterLayout
    /// In `.all` mode, what the file held before it was erased.
    private let previousInteractions: [Interaction]
    private let recording: Locked<Recorded>

    /// What was recorded since insertion.
    private struct Recorded {
        /// Scenes recorded since insertion, each anchored at the playhead when it happened.
        var scenes: [(anchor: Int, order: UInt64, scene: Scene)] = []
        var nextChapter: Int
        var hasChanges: Bool
        /// The loaded tape's chapter numbers, which new chapters must not reuse: gathered when first needed, as
        /// most cassettes record nothing.
        var loadedChapters: Set<Int>?
        /// Every secret filtered from what was recorded so far: replaced wherever it comes back in a later
        /// recording (a token from a login response in a later request's path). Kept in memory only.
        var secrets = SecretValues()
        /// Requests being recorded: written when they end, or as far as they got when the cassette is saved.
        var inFlight: [ObjectIdentifier: Recording] = [:]
    }

    convenience init(configuration: VCRConfiguration, url: URL) throws(VCRError) {
        try self.init(configuration: configuration, file: CassetteLocation(url: url))
    }

    init(configuration: VCRConfiguration, file: CassetteLocation, isBoundToTask: Bool = false) throws(VCRError) {
        self.isBoundToTask = isBoundToTask
        var recordMode = configuration.effectiveRecordMode
        let path = file.path
        var tape = Tape()
        var format = CassetteFormat.forWriting(toPath: path)
        let exists: Bool
        if recordMode == .passthrough {
            // Neither read nor written: the file may be missing, malformed or foreign.
            exists = FileManager.default.fileExists(atPath: path)
        } else {
            // Read straight away: a missing file is found out by trying, without a look at the disk first.
            do throws(VCRError) {
                (tape, format) = try CassetteFile.read(atPath: path)
                exists = true
            } catch {
                guard error.code == .cassetteNotFound else { throw error }
                exists = false
            }
            if !exists && recordMode == .never {
                throw VCRError(
                    .cassetteNotFound,
                    "No cassette at \(path), and record mode .never never records. Record it first "
                        + "(VCR_RECORD_MODE=once or new), or check the path.",
                    cassettePath: path,
                    reason: "no such file"
                )
            }
        }
        if format.isForeign && (recordMode == .new || recordMode == .all || (recordMode == .once && !exists)) {
            throw VCRError(
                .foreignCassetteIsReadOnly,
                "\(path) is a \(format.rawValue) cassette: HTTPVCR replays it but does not record into it "
                    + "(record mode \(recordMode)). Convert it first: vcr convert \(path) "
                    + "\(file.url.deletingPathExtension().path).json",
                cassettePath: path
            )
        }
        let expiry = try CassetteExpiry.check(
            tape,
            path: path,
            configuration: configuration,
            recordMode: recordMode,
            mayRecord: recordMode != .never && recordMode != .passthrough && !format.isForeign
        )
        if expiry?.action == .reRecord { recordMode = .all }  // recorded anew
        var resolvedMatchers: [Matcher] = []
        for matcher in configuration.matchers {
            guard let resolved = matcher.resolved() else {
                throw VCRError(
                    .unknownMatcher,
                    "Unknown matcher \"\(matcher.name)\" for \(path): register it with VCR.registerMatcher first",
                    cassettePath: path,
                    reason: "unknown matcher \"\(matcher.name)\""
                )
            }
            resolvedMatchers.append(resolved)
        }
        var configuration = configuration
        configuration.matchers = resolvedMatchers
        configuration.recordMode = recordMode

        self.configuration = configuration
        self.file = file
        self.format = format
        self.isNew = !exists
        self.recordMode = recordMode
        self.expiry = expiry
        let isWriteProtected = recordMode == .never || format.isForeign || (recordMode == .once && exists)
        self.isWriteProtected = isWriteProtected
        let hasChanges = recordMode == .all && !tape.scenes.isEmpty
        // Recorded anew: what comes back unchanged keeps its bytes (StableRerecording).
        self.previousInteractions = recordMode == .all ? tape.interactions : []
        if recordMode == .all { tape = Tape() }

        let layout = ChapterLayout(scenes: tape.scenes)
        if let misplaced = layout.misplacedScene {
            throw VCRError.malformed(
                path,
                "scene \(misplaced.position) of chapter \(misplaced.chapter) comes before its request"
            )
        }
        self.loadedScenes = tape.scenes
        self.loadedLayout = layout
        // What the code under test gets: the tape with its sensitive data put back (the file keeps placeholders).
        let sensitive = SensitiveData(configuration)
        let playedScenes = sensitive.isEmpty
            ? tape.scenes
            : tape.scenes.map { Scene(chapter: $0.chapter, time: $0.time, event: sensitive.revealing($0.event)) }
        self.playback = Playback(
            scenes: playedScenes,
            layout: layout,
            policy: Playback.Policy(
                cassettePath: path,
                recordMode: recordMode,
                isWriteProtected: isWriteProtected,
                matchers: resolvedMatchers,
                allowsPlaybackRepeats: configuration.allowsPlaybackRepeats,
                timingFactor: configuration.replayTiming.factor,
                refilter: { [configuration] recorded in
                    var request = RecordedRequest(
                        RequestFilter.filterIgnoringBeforeRecordRequest(recorded.urlRequest, with: configuration)
                    )
                    request.recordedAt = recorded.recordedAt
                    return request
                }
            ),
            mode: configuration.playbackMode,
            wait: configuration.chronologicalWait
        )
        self.recording = Locked(Recorded(nextChapter: tape.nextChapter, hasChanges: hasChanges))
    }

    // MARK: Public state

    /// Requests fully replayed so far.
    public var playCount: Int { playback.playCount }

    /// How many requests reached this cassette since it was inserted: replayed, recorded, refused, or passed by its
    /// filters. None, for a test that makes requests, means they went around HTTPVCR.
    public var requestCount: Int { playback.requestsSeen }

    /// Every recorded request has been replayed.
    public var allPlayed: Bool { playback.allPlayed }

    /// How many recorded requests the cassette held when it was inserted (none in `.all` mode, which erases it).
    package var loadedInteractionCount: Int { playback.chapterCount }

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
        playback.unplayedRequests.map(\.urlRequest)
    }

    /// The tape as it would be saved now: the loaded scenes with what was recorded inserted at the playhead.
    public var tape: Tape {
        recording.withLock { mergedTape($0.scenes) }
    }

    /// Something was recorded (or erased) since insertion.
    public var hasUnsavedChanges: Bool { recording.withLock { $0.hasChanges } }

    // MARK: Playing

    /// Whether a request goes through this cassette: its host filter accepts it and `beforeRecordRequest` does not
    /// refuse it. `madeOf` is what that hook made of it, when there is one. The configuration's fields are read in
    /// place; copying the whole configuration cost more than the check.
    func intercepts(_ request: URLRequest, to url: URL) -> (intercepts: Bool, madeOf: URLRequest?) {
        if recordMode == .passthrough { return (false, nil) }
        if !configuration.hostFilter.acceptsEveryHost, !configuration.hostFilter.accepts(host: url.decodedHost ?? "") {
            playback.notePassedBy()
            return (false, nil)
        }
        guard let beforeRecordRequest = configuration.beforeRecordRequest else { return (true, nil) }
        let madeOf = beforeRecordRequest(request)
        if madeOf == nil { playback.notePassedBy() }
        return (madeOf != nil, madeOf)
    }

    /// The live request as it is matched and recorded, or nil when `beforeRecordRequest` refuses it. `earlier` is
    /// what that hook already made of the request (``CanInitNotes``): it is not asked twice about the same request.
    func filtered(_ request: URLRequest, earlier: (seen: URLRequest, result: URLRequest)? = nil) -> URLRequest? {
        if let earlier, earlier.seen == request {
            return RequestFilter.filterIgnoringBeforeRecordRequest(earlier.result, with: configuration)
        }
        return RequestFilter.filter(request, with: configuration)
    }

    // MARK: Recording

    /// A chapter number for a request about to be recorded.
    func reserveChapter() -> Int {
        recording.withLock { recorded in
            // Counting up from above the highest chapter; past the largest number a file may hold (a tape that
            // already reaches it), the lowest unused ones. Never overflows, never reuses one.
            let chapter = Tape.unusedChapter(from: recorded.nextChapter, notIn: loadedChapters(&recorded))
            recorded.nextChapter = chapter + 1
            return chapter
        }
    }

    private func loadedChapters(_ recorded: inout Recorded) -> Set<Int> {
        if let known = recorded.loadedChapters { return known }
        let numbers = loadedLayout.chapterNumbers
        recorded.loadedChapters = numbers
        return numbers
    }

    /// A request starts being recorded onto this cassette.
    func beginRecording(_ recording: Recording) {
        self.recording.withLock { $0.inFlight[ObjectIdentifier(recording)] = recording }
    }

    /// Writes a recording onto the tape, each scene at the playhead of the moment it happened; nil scenes: nothing
    /// of it is taped. Only a recording begun since the last ``discardRecordings()`` is written, once.
    func finishRecording(
        _ recording: Recording,
        scenes: [(scene: Scene, anchor: Int, order: UInt64)]?,
        secrets: SecretValues = SecretValues()
    ) {
        self.recording.withLock { recorded in
            guard recorded.inFlight.removeValue(forKey: ObjectIdentifier(recording)) != nil else { return }
            recorded.secrets.formUnion(secrets)
            guard let scenes, !scenes.isEmpty else { return }
            recorded.scenes.append(contentsOf: scenes.map { ($0.anchor, $0.order, $0.scene) })
            recorded.hasChanges = true
        }
    }

    /// Writes what the requests still being recorded have got so far: the cassette is being saved.
    private func finishRecordingsInFlight() {
        let inFlight = recording.withLock { Array($0.inFlight.values) }
        for recording in inFlight { recording.commit() }
    }

    /// The secrets filtered from this cassette's recordings so far.
    var recordedSecrets: SecretValues { recording.withLock { $0.secrets } }

    /// Where a scene happening now goes on the tape.
    var playhead: Int { playback.playhead }

    /// The loaded scenes with `recorded` inserted at the playhead of the moment each happened; with
    /// ``VCRConfiguration/dropsUnusedInteractions``, and something recorded, without the loaded chapters that were
    /// never played.
    private func mergedTape(_ recorded: [(anchor: Int, order: UInt64, scene: Scene)]) -> Tape {
        guard !recorded.isEmpty else { return Tape(scenes: loadedScenes) }
        let keeps = configuration.dropsUnusedInteractions ? playback.matchedChapters : nil
        let inserted = StableRerecording.keepingUnchanged(recorded, previous: previousInteractions)
            .sorted { ($0.anchor, $0.order) < ($1.anchor, $1.order) }
        var scenes: [Scene] = []
        scenes.reserveCapacity(loadedScenes.count + inserted.count)
        var next = inserted.startIndex
        for (position, scene) in loadedScenes.enumerated() {
            while next < inserted.endIndex, inserted[next].anchor <= position {
                scenes.append(inserted[next].scene)
                next += 1
            }
            if let keeps, !keeps[loadedLayout.chapterOfScene[position]] { continue }
            scenes.append(scene)
        }
        scenes.append(contentsOf: inserted[next...].map(\.scene))
        return Tape(scenes: scenes)
    }

    // MARK: Failures

    func recordFailure(_ error: VCRError) {
        boundFailures.withLock { $0.append(error) }
    }

    /// What went wrong with this cassette's requests while it was bound to a task, forgotten once taken. (Failures
    /// on a cassette inserted for the process are in ``VCR/failures``.)
    package func takeFailures() -> [VCRError] {
        boundFailures.withLock { failures in
            defer { failures.removeAll() }
            return failures
        }
    }

    // MARK: Saving

    /// Forgets what was recorded since insertion (nothing of it will be saved), keeping what was loaded. The test
    /// integrations call it for a test that failed, unless told to keep its recording (`recordsOnFailure`).
    /// Returns how many interactions were forgotten.
    @discardableResult
    public func discardRecordings() -> Int {
        recording.withLock { recorded in
            let count = recorded.scenes.filter { if case .request = $0.scene.event { true } else { false } }.count
                + recorded.inFlight.count
            recorded.scenes = []
            recorded.inFlight = [:]
            recorded.hasChanges = false
            return count
        }
    }

    /// Saves the tape if anything changed since insertion. Atomic: a failed save leaves the old file.
    func saveIfChanged() throws(VCRError) {
        finishRecordingsInFlight()
        let saving: (tape: Tape, loadedChapters: Set<Int>)? = recording.withLock { recorded in
            recorded.hasChanges ? (mergedTape(recorded.scenes), loadedChapters(&recorded)) : nil
        }
        guard let (tape, loadedChapters) = saving else { return }
        let recordedChapters = Set(tape.scenes.lazy.map(\.chapter)).subtracting(loadedChapters)
        try SaveTimeSecretCheck.check(
            tape, recordedChapters: recordedChapters, configuration: configuration, path: path
        )
        try CassetteFile.write(tape, to: url, as: format)
        recording.withLock { $0.hasChanges = false }
    }
}
