import Foundation

/// What to do with a cassette older than ``VCRConfiguration/reRecordInterval``.
public enum ExpiryAction: Sendable, Equatable {
    /// Replay it as it is, and tell the test (a warning under Swift Testing, a line on stderr under XCTest).
    case warn
    /// Refuse to insert it: the test fails before its body runs.
    case fail
    /// Record it anew, as in `.all` mode. Never where nothing may be recorded (`.never`, a foreign cassette): those
    /// warn instead.
    case reRecord
}

/// A cassette whose oldest interaction was recorded longer ago than ``VCRConfiguration/reRecordInterval``.
public struct CassetteExpiry: Sendable, Equatable {
    /// When the oldest interaction that says so was recorded.
    public let oldestRecording: Date
    /// The ``VCRConfiguration/reRecordInterval`` the cassette's oldest recording is older than.
    public let interval: TimeInterval
    /// What was done: ``ExpiryAction/warn`` or ``ExpiryAction/reRecord``.
    public let action: ExpiryAction
    /// What to tell the test.
    public let message: String

    /// An expiry as found: what the cassette's check decided.
    package init(oldestRecording: Date, interval: TimeInterval, action: ExpiryAction, message: String) {
        self.oldestRecording = oldestRecording
        self.interval = interval
        self.action = action
        self.message = message
    }

    /// "45 days", "3 hours", "20 minutes".
    package static func describe(_ interval: TimeInterval) -> String {
        let minutes = Int(interval / 60)
        if minutes < 120 { return minutes == 1 ? "1 minute" : "\(minutes) minutes" }
        let hours = minutes / 60
        if hours < 48 { return "\(hours) hours" }
        return "\(hours / 24) days"
    }
}
