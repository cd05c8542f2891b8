import Foundation
import HTTPVCRCassettes

/// A cassette file read, and the rules it is played and recorded by worked out: what a ``Cassette`` is made from.
/// Everything decided once, when a cassette is inserted, is decided here (the record mode in force, what a foreign
/// or expired file allows, the matchers, the write protection, the tape the code under test gets); the cassette
/// only keeps what changes while it is in.
struct LoadedCassette {
    /// The configuration in force: the record mode resolved (`VCR_RECORD_MODE`, expiry), the matchers resolved.
    let configuration: VCRConfiguration
    let file: CassetteLocation
    /// The file's format; for a file that is not there, the one it will be written in.
    let format: CassetteFormat
    /// A file was there.
    let exists: Bool
    let expiry: CassetteExpiry?
    /// Unmatched requests fail instead of being recorded: `.once` on an existing cassette, `.never`, and every
    /// foreign cassette.
    let isWriteProtected: Bool
    /// The tape as loaded (empty in `.all` mode, which erases it) and where its chapters are.
    let tape: Tape
    let layout: ChapterLayout
    /// In `.all` mode, what the file held before it was erased: what comes back unchanged keeps its bytes and
    /// its order (``StableRerecording``).
    let previous: PreviousRecordings
    /// `.all` mode erased a tape that had scenes: a change to save even when nothing is recorded.
    let isErased: Bool
    /// The tape as the code under test gets it: its sensitive data put back (the file keeps placeholders).
    let playedScenes: [Scene]
    /// How the tape is matched and played.
    let policy: Playback.Policy

    /// The record mode in force.
    var recordMode: RecordMode { configuration.recordMode }

    /// Reads the cassette at `file` and works out its rules from `configuration`.
    ///
    /// - Throws: ``VCRError`` when the file is missing in `.never` mode, malformed, foreign where the mode would
    ///   record, expired with ``ExpiryAction/fail``, or a matcher is not registered.
    static func load(configuration: VCRConfiguration, file: CassetteLocation) throws(VCRError) -> LoadedCassette {
        var recordMode = configuration.effectiveRecordMode
        // A read-only copy replays only: no mode, expiry included, may erase or record into it.
        if configuration.isReadOnlyCopy, recordMode != .passthrough, recordMode != .verify { recordMode = .never }
        let path = file.path
        let (loaded, format, exists) = try read(file, recordMode: recordMode)
        var tape = loaded
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
            mayRecord: recordMode != .never && recordMode != .passthrough && recordMode != .verify && !format.isForeign
        )
        if expiry?.action == .reRecord { recordMode = .all }  // recorded anew
        var configuration = configuration
        configuration.matchers = try resolved(configuration.matchers, path: path)
        configuration.recordMode = recordMode

        let previous = recordMode == .all ? PreviousRecordings(tape) : .none
        let isErased = recordMode == .all && !tape.scenes.isEmpty
        if recordMode == .all { tape = Tape() }
        let layout = ChapterLayout(scenes: tape.scenes)
        if let misplaced = layout.misplacedScene {
            throw VCRError.malformed(
                path,
                "scene \(misplaced.position) of chapter \(misplaced.chapter) comes before its request"
            )
        }
        // Verify sends every request and never writes: nothing to protect.
        let isWriteProtected = recordMode != .verify
            && (recordMode == .never || format.isForeign || (recordMode == .once && exists))
        let sensitive = SensitiveData(configuration)
        return LoadedCassette(
            configuration: configuration,
            file: file,
            format: format,
            exists: exists,
            expiry: expiry,
            isWriteProtected: isWriteProtected,
            tape: tape,
            layout: layout,
            previous: previous,
            isErased: isErased,
            playedScenes: sensitive.isEmpty
                ? tape.scenes
                : tape.scenes.map { Scene(chapter: $0.chapter, time: $0.time, event: sensitive.revealing($0.event)) },
            policy: Playback.Policy(
                cassettePath: path,
                recordMode: recordMode,
                isWriteProtected: isWriteProtected,
                matchers: configuration.matchers,
                allowsPlaybackRepeats: configuration.allowsPlaybackRepeats,
                mismatchAdvice: configuration.mismatchAdvice,
                timingFactor: configuration.replayTiming.factor,
                refilter: { [configuration] recorded in
                    var request = RecordedRequest(
                        RequestFilter.filterIgnoringBeforeRecordRequest(recorded.urlRequest, with: configuration)
                    )
                    request.recordedAt = recorded.recordedAt
                    return request
                },
                beforePlaceholdersWon: beforePlaceholdersWon(configuration),
                volatileValues: configuration.volatileValues
            )
        )
    }

    /// ``Playback/Policy/beforePlaceholdersWon``: the live request filtered again without placeholders, so that the
    /// ones under secret names become `[FILTERED]` as they were then. Nil for a configuration without any.
    private static func beforePlaceholdersWon(
        _ configuration: VCRConfiguration
    ) -> (@Sendable (FilteredRequest) -> FilteredRequest?)? {
        guard !configuration.sensitiveData.isEmpty else { return nil }
        var earlier = configuration
        earlier.sensitiveData = [:]
        return { [earlier] live in
            let filtered = RequestFilter.filterIgnoringBeforeRecordRequest(live.request, with: earlier)
            return filtered == live.request ? nil : FilteredRequest(filtered)
        }
    }

    /// The file's tape and format, and whether it was there. A missing file is found out by trying, without a look
    /// at the disk first; in `.passthrough` mode the file is neither read nor written, and may be missing,
    /// malformed or foreign.
    private static func read(
        _ file: CassetteLocation,
        recordMode: RecordMode
    ) throws(VCRError) -> (tape: Tape, format: CassetteFormat, exists: Bool) {
        let path = file.path
        let format = CassetteFormat.forWriting(toPath: path)
        if recordMode == .passthrough { return (Tape(), format, FileManager.default.fileExists(atPath: path)) }
        do throws(VCRError) {
            let (tape, format) = try CassetteFile.read(atPath: path)
            return (tape, format, true)
        } catch {
            guard error.code == .cassetteNotFound else { throw error }
        }
        if recordMode == .never {
            throw VCRError(
                .cassetteNotFound,
                "No cassette at \(path), and record mode .never does not record. Record it first "
                    + "(VCR_RECORD_MODE=once or new), or check the path.",
                cassettePath: path,
                reason: "no such file"
            )
        }
        return (Tape(), format, false)
    }

    /// Every matcher as registered now; a name nobody registered is an error.
    private static func resolved(_ matchers: [Matcher], path: String) throws(VCRError) -> [Matcher] {
        var resolved: [Matcher] = []
        for matcher in matchers {
            guard let found = matcher.resolved() else {
                throw VCRError(
                    .unknownMatcher,
                    "Unknown matcher \"\(matcher.name)\" for \(path): register it with VCR.registerMatcher first",
                    cassettePath: path,
                    reason: "unknown matcher \"\(matcher.name)\""
                )
            }
            resolved.append(found)
        }
        return resolved
    }
}
