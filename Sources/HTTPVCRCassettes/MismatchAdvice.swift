/// What a no-match message tells its reader to do, in the words of the tool they run: the library's settings by
/// default, `vcr serve`'s options there (its users have no configuration to edit, and restart it instead).
///
/// ```swift
/// configuration.mismatchAdvice = MismatchAdvice(
///     toRecord: "restart vcr serve with --record-mode new, or delete the cassette to record anew",
///     toRecordAnew: "restart vcr serve with --record-mode all, or delete the cassette to record anew",
///     toRepeat: "restart vcr serve without --no-repeats"
/// )
/// ```
package struct MismatchAdvice: Sendable, Equatable {
    /// How to record a request the cassette does not hold, the end of "To record it: …".
    package var toRecord: String
    /// How to record a request whose earlier form the cassette holds (``MismatchKind/changedRequest``): the whole
    /// cassette anew, since recording beside it would keep the stale recording, never played again.
    package var toRecordAnew: String
    /// How to have a recording that was played answer again, the start of "(… to replay the last of them again)".
    package var toRepeat: String

    /// Advice in these words.
    package init(toRecord: String, toRecordAnew: String, toRepeat: String) {
        self.toRecord = toRecord
        self.toRecordAnew = toRecordAnew
        self.toRepeat = toRepeat
    }

    /// The library's: its environment variable and configuration.
    package static let library = MismatchAdvice(
        toRecord: "set VCR_RECORD_MODE=new (or recordMode = .new), or delete the cassette to record anew",
        toRecordAnew: "record the cassette anew with VCR_RECORD_MODE=all (or recordMode = .all), or delete it and "
            + "record again; VCR_RECORD_MODE=new would keep the recording this request replaces, never played again",
        toRepeat: "set allowsPlaybackRepeats = true"
    )
}

/// What the closest recording says about a request that matched nothing, and so which remedy its message gives.
package enum MismatchKind: Sendable, Equatable {
    /// No recording is near: a request the cassette never held. Recording with `new` adds it beside the others.
    case newRequest
    /// It matches recordings that were all played already.
    case alreadyPlayed
    /// The closest recording is this request as it was (the same method and path; another query, body, header or
    /// host): the test changed it. Recording with `new` would keep that recording, never played again, so the
    /// remedy is to record the cassette anew (`all`).
    case changedRequest
    /// The closest recording differs only in its port: a server listening on a port chosen anew each run. Recording
    /// again cannot help; a fixed port, or matchers without the port, do.
    case portOnly(recorded: String, live: String)
}
