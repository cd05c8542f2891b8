import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCRCassettes

/// A cassette in use: its tape, what has been replayed, and what has been recorded since it was inserted.
///
/// Get one from ``VCR/insertCassette(_:)``. Everything here is safe to call from any thread.
public final class Cassette: @unchecked Sendable {
    /// The merged configuration in force for this cassette. Stored, not read through ``loaded``: requests read its
    /// fields in place.
    public let configuration: VCRConfiguration
    /// The configuration's secure headers, with the quick test every live request's headers go through.
    private let secureHeaders: SecureHeaderNames
    /// The cassette file.
    public var url: URL { loaded.file.url }
    /// The cassette file's path.
    package var path: String { loaded.file.path }
    /// The format of the file (HTTPVCR's own, or a foreign one replayed read-only).
    public var format: CassetteFormat { loaded.format }
    /// No file existed when it was inserted.
    public var isNew: Bool { !loaded.exists }
    /// The record mode in force (`VCR_RECORD_MODE` applied).
    public var recordMode: RecordMode { loaded.recordMode }
    /// Set when the cassette is older than ``VCRConfiguration/reRecordInterval``: what was done about it. The test
    /// integrations tell the test.
    public var expiry: CassetteExpiry? { loaded.expiry }
    /// Unmatched requests fail instead of being recorded: `.once` on an existing cassette, `.never`, and every
    /// foreign cassette.
    public var isWriteProtected: Bool { loaded.isWriteProtected }

    /// Bound to a test's task (``VCR/withCassette(_:isolation:_:)``) rather than inserted for the process: its
    /// failures are its scope's to report, never in ``VCR/failures``.
    package let isBoundToTask: Bool

    /// Chapters waiting for the next request of a hop reported to the client (Apple platforms).
    let redirectHandoffs = RedirectHandoffs()

    /// Replaying the tape as loaded: matching, playback order, delivery and what was played.
    let playback: Playback
    /// In ``RecordMode/verify``: compares what is recorded with the tape instead of taping it.
    private let verifier: DriftVerifier?
    /// The file as read and the rules worked out from it: never changes.
    let loaded: LoadedCassette
    /// What changes while the cassette is in, behind its one lock (level ``LockLevel/cassette``). ``VCR`` takes it
    /// while holding its own; no other lock is taken while it is held.
    private let state: Locked<State>

    /// What was recorded since insertion, and what went wrong.
    private struct State {
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
        /// Failures of requests on this cassette, not taken yet.
        var failures: [VCRError] = []
        /// What ends with the cassette: bridges started for it, and the processes they launched.
        var whenEjected: [@Sendable () -> Void] = []
    }

    convenience init(configuration: VCRConfiguration, url: URL) throws(VCRError) {
        self.init(try LoadedCassette.load(configuration: configuration, file: CassetteLocation(url: url)))
    }

    init(_ loaded: LoadedCassette, isBoundToTask: Bool = false) {
        self.loaded = loaded
        configuration = loaded.configuration
        secureHeaders = SecureHeaderNames(loaded.configuration.secureHeaders)
        self.isBoundToTask = isBoundToTask
        playback = Playback(
            scenes: loaded.playedScenes,
            layout: loaded.layout,
            policy: loaded.policy,
            mode: loaded.configuration.playbackMode,
            wait: loaded.configuration.chronologicalWait
        )
        state = Locked(State(nextChapter: loaded.tape.nextChapter, hasChanges: loaded.isErased), level: .cassette)
        verifier = loaded.recordMode == .verify ? DriftVerifier(loaded.tape, configuration: loaded.configuration) : nil
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

    /// ``unplayedRequests``, each with how long chronological playback held the requests behind it waiting for
    /// it (``VCRConfiguration/chronologicalWait``; nil when it held none up): what the test integrations report.
    package var unplayedRequestsWithWaits: [(request: URLRequest, waited: TimeInterval?)] {
        playback.unplayedWithWaits.map { ($0.request.urlRequest, $0.waited) }
    }

    /// The tape as it would be saved now: the loaded scenes with what was recorded inserted at the playhead.
    public var tape: Tape {
        let keeps = chaptersKept
        return state.withLock { mergedTape($0.scenes, keeping: keeps) }
    }

    /// In ``RecordMode/verify``: how the live answers differ from the recordings so far. Each request that ended
    /// is matched with the first recording the cassette's matchers find that no earlier request used: a changed
    /// answer (``CassetteDrift/Kind/changed``) or no recording (``CassetteDrift/Kind/new``); then every recording
    /// no request used (``CassetteDrift/Kind/unused``), so read it when the test's requests are done (the test
    /// integrations read it after ejecting). Empty in every other mode.
    ///
    /// ```swift
    /// for drift in cassette.drift { print(drift) }
    /// // GET https://api.example.com/items: $.items[*].price: number → string
    /// ```
    public var drift: [CassetteDrift] { verifier?.drift ?? [] }

    /// Something was recorded (or erased) since insertion.
    public var hasUnsavedChanges: Bool { state.withLock { $0.hasChanges } }

    /// Whether the tape as loaded (in `.all`, as it was before being erased) or what was recorded since holds a
    /// request, or a hop, to `origin`: the network guard's test for a server this cassette is about.
    func holdsRecordings(for origin: NetworkOrigin) -> Bool {
        func isTo(_ scene: Scene) -> Bool {
            switch scene.event {
            case let .request(request), let .redirect(_, to: request):
                NetworkOrigin(URL(string: request.url)) == origin
            default: false
            }
        }
        return loaded.tape.scenes.contains(where: isTo)
            || loaded.previous.interactions.contains { NetworkOrigin(URL(string: $0.request.url)) == origin }
            || state.withLock { $0.scenes.contains { isTo($0.scene) } }
    }

    /// Whether the tape as loaded holds a request to `url` (origin, path and query), a hop's included.
    func holdsRecording(of url: URL) -> Bool {
        let origin = NetworkOrigin(url)
        return (loaded.tape.interactions + loaded.previous.interactions).contains { interaction in
            ([interaction.request] + interaction.redirects.map(\.request)).contains { recorded in
                guard let taped = URL(string: recorded.url) else { return false }
                return NetworkOrigin(taped) == origin && taped.path == url.path && taped.query == url.query
            }
        }
    }

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
        checkNoLockHeld(running: "beforeRecordRequest")
        let madeOf = beforeRecordRequest(request)
        if madeOf == nil { playback.notePassedBy() }
        return (madeOf != nil, madeOf)
    }

    /// The live request as it is matched and recorded, or nil when `beforeRecordRequest` refuses it. `earlier` is
    /// what that hook already made of the request (``CanInitNotes``): it is not asked twice about the same request.
    func filtered(_ request: URLRequest, earlier: (seen: URLRequest, result: URLRequest)? = nil) -> URLRequest? {
        filteredForMatching(request, earlier: earlier)?.request
    }

    /// ``filtered(_:earlier:)``, with the text of the URL the filters read: ``Playback`` matches it without
    /// reading the URL again.
    func filteredForMatching(
        _ request: URLRequest,
        earlier: (seen: URLRequest, result: URLRequest)? = nil
    ) -> FilteredRequest? {
        if let earlier, earlier.seen == request {
            return RequestFilter.filterForMatchingIgnoringBeforeRecordRequest(
                earlier.result, with: configuration, secureHeaders: secureHeaders
            )
        }
        return RequestFilter.filterForMatching(request, with: configuration, secureHeaders: secureHeaders)
    }

    // MARK: Recording

    /// A chapter number for a request about to be recorded.
    func reserveChapter() -> Int {
        state.withLock { recorded in
            // Counting up from above the highest chapter; past the largest number a file may hold (a tape that
            // already reaches it), the lowest unused ones. Never overflows, never reuses one.
            let chapter = Tape.unusedChapter(from: recorded.nextChapter, notIn: loadedChapters(&recorded))
            recorded.nextChapter = chapter + 1
            return chapter
        }
    }

    private func loadedChapters(_ recorded: inout State) -> Set<Int> {
        if let known = recorded.loadedChapters { return known }
        let numbers = loaded.layout.chapterNumbers
        recorded.loadedChapters = numbers
        return numbers
    }

    /// A request starts being recorded onto this cassette.
    func beginRecording(_ recording: Recording) {
        state.withLock { $0.inFlight[ObjectIdentifier(recording)] = recording }
    }

    /// Writes a recording onto the tape, each scene at the playhead of the moment it happened; nil scenes: nothing
    /// of it is taped. Only a recording begun since the last ``discardRecordings()`` is written, once.
    func finishRecording(
        _ recording: Recording,
        scenes: [(scene: Scene, anchor: Int, order: UInt64)]?,
        secrets: SecretValues = SecretValues()
    ) {
        let verifies: Bool = state.withLock { recorded in
            guard recorded.inFlight.removeValue(forKey: ObjectIdentifier(recording)) != nil else { return false }
            recorded.secrets.formUnion(secrets)
            guard let scenes, !scenes.isEmpty else { return false }
            // Compared, never taped: a verified cassette is not saved.
            if verifier != nil { return true }
            recorded.scenes.append(contentsOf: scenes.map { ($0.anchor, $0.order, $0.scene) })
            recorded.hasChanges = true
            return false
        }
        if verifies, let scenes { verifier?.verify(scenes.map(\.scene)) }
    }

    /// Writes what the requests still being recorded have got so far: the cassette is being saved.
    private func finishRecordingsInFlight() {
        let inFlight = state.withLock { Array($0.inFlight.values) }
        for recording in inFlight { recording.commit() }
    }

    /// The secrets filtered from this cassette's recordings so far.
    var recordedSecrets: SecretValues { state.withLock { $0.secrets } }

    /// Where a scene happening now goes on the tape.
    var playhead: Int { playback.playhead }

    /// With ``VCRConfiguration/dropsUnusedInteractions``, the loaded chapters a merged tape keeps (those played). Read
    /// before the cassette's lock is taken: the playback's is never taken under it.
    private var chaptersKept: [Bool]? {
        configuration.dropsUnusedInteractions ? playback.matchedChapters : nil
    }

    /// The loaded scenes with `recorded` inserted at the playhead of the moment each happened; with `keeps` (see
    /// ``chaptersKept``), and something recorded, without the loaded chapters that were never played.
    private func mergedTape(_ recorded: [(anchor: Int, order: UInt64, scene: Scene)], keeping keeps: [Bool]?) -> Tape {
        let loadedScenes = loaded.tape.scenes
        guard !recorded.isEmpty else { return loaded.tape }
        let inserted = StableRerecording.arranged(recorded, previous: loaded.previous)
        var scenes: [Scene] = []
        scenes.reserveCapacity(loadedScenes.count + inserted.count)
        var next = inserted.startIndex
        for (position, scene) in loadedScenes.enumerated() {
            while next < inserted.endIndex, inserted[next].anchor <= position {
                scenes.append(inserted[next].scene)
                next += 1
            }
            if let keeps, !keeps[loaded.layout.chapterOfScene[position]] { continue }
            scenes.append(scene)
        }
        scenes.append(contentsOf: inserted[next...].map(\.scene))
        return Tape(scenes: scenes)
    }

    // MARK: Ejection

    /// Runs `body` when the cassette is ejected or its test's scope ends, before its failures are taken: what it
    /// reports then is reported on the test.
    func whenEjected(_ body: @escaping @Sendable () -> Void) {
        state.withLock { $0.whenEjected.append(body) }
    }

    /// Runs what ``whenEjected(_:)`` was given, once, in the order given.
    package func runEjectionHandlers() {
        let handlers = state.withLock { state in
            defer { state.whenEjected.removeAll() }
            return state.whenEjected
        }
        for handler in handlers { handler() }
    }

    // MARK: Failures

    /// Keeps the failure of a request on this cassette (``VCR/recordFailure(_:on:)`` says when).
    func keepFailure(_ error: VCRError) {
        state.withLock { $0.failures.append(error) }
    }

    /// What went wrong with this cassette's requests and was not taken yet.
    package var failures: [VCRError] { state.withLock { $0.failures } }

    /// What went wrong with this cassette's requests, forgotten once taken: its scope reports them. (Those of the
    /// cassette inserted for the process are in ``VCR/failures`` too, and taken by ``VCR/takeFailures()``.)
    package func takeFailures() -> [VCRError] {
        state.withLock { state in
            defer { state.failures.removeAll() }
            return state.failures
        }
    }

    // MARK: Saving

    /// Forgets what was recorded since insertion (nothing of it will be saved), keeping what was loaded. The test
    /// integrations call it for a test that failed, unless told to keep its recording (`recordsOnFailure`).
    /// Returns how many interactions were forgotten.
    @discardableResult
    public func discardRecordings() -> Int {
        state.withLock { recorded in
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
        let keeps = chaptersKept
        let saving: (tape: Tape, loadedChapters: Set<Int>)? = state.withLock { recorded in
            recorded.hasChanges ? (mergedTape(recorded.scenes, keeping: keeps), loadedChapters(&recorded)) : nil
        }
        guard let (tape, loadedChapters) = saving else { return }
        let recordedChapters = Set(tape.scenes.lazy.map(\.chapter)).subtracting(loadedChapters)
        try SaveTimeSecretCheck.check(
            tape, recordedChapters: recordedChapters, configuration: configuration, path: path
        )
        try CassetteFile.write(tape, to: url, as: format)
        state.withLock { $0.hasChanges = false }
    }
}
