/// What a no-match message tells its reader to do, in the words of the tool they run: the library's settings by
/// default, `vcr serve`'s options there (its users have no configuration to edit, and restart it instead).
///
/// ```swift
/// configuration.mismatchAdvice = MismatchAdvice(
///     toRecord: "restart vcr serve with --record-mode new, or delete the cassette to record anew",
///     toRepeat: "restart vcr serve without --no-repeats"
/// )
/// ```
package struct MismatchAdvice: Sendable, Equatable {
    /// How to record a request the cassette does not hold, the end of "To record it: …".
    package var toRecord: String
    /// How to have a recording that was played answer again, the start of "(… to replay the last of them again)".
    package var toRepeat: String

    /// Advice in these words.
    package init(toRecord: String, toRepeat: String) {
        self.toRecord = toRecord
        self.toRepeat = toRepeat
    }

    /// The library's: its environment variable and configuration.
    package static let library = MismatchAdvice(
        toRecord: "set VCR_RECORD_MODE=new (or recordMode = .new), or delete the cassette to record anew",
        toRepeat: "set allowsPlaybackRepeats = true"
    )
}
