import Foundation
import HTTPVCRCassettes

extension CassetteExpiry {
    /// The expiry of `tape` (read from `path`), if it has expired; throws for ``ExpiryAction/fail``. Interactions
    /// that do not say when they were recorded (cassettes written before HTTPVCR kept it) never expire.
    static func check(
        _ tape: Tape,
        path: String,
        configuration: VCRConfiguration,
        recordMode: RecordMode,
        mayRecord: Bool,
        now: Date = Date()
    ) throws(VCRError) -> CassetteExpiry? {
        guard let interval = configuration.reRecordInterval else { return nil }
        var oldest: Date?
        for scene in tape.scenes {
            if case let .request(request) = scene.event, let recordedAt = request.recordedAt,
               oldest.map({ recordedAt < $0 }) ?? true {
                oldest = recordedAt
            }
        }
        guard let oldest, now.timeIntervalSince(oldest) > interval else { return nil }
        let age = "its oldest interaction was recorded \(describe(now.timeIntervalSince(oldest))) ago "
            + "(\(RecordingTime.text(of: oldest))), longer ago than reRecordInterval (\(describe(interval)))"
        switch configuration.expiryAction {
        case .fail:
            throw VCRError(
                .cassetteExpired,
                "Cassette \(path) has expired: \(age). Record it again: VCR_RECORD_MODE=all, or set "
                    + "expiryAction = .reRecord.",
                cassettePath: path,
                reason: age
            )
        case .reRecord where mayRecord:
            return CassetteExpiry(
                oldestRecording: oldest, interval: interval, action: .reRecord,
                message: "Cassette \(path) has expired and is recorded anew (expiryAction .reRecord): \(age)."
            )
        case .reRecord, .warn:
            let why = configuration.expiryAction == .reRecord
                ? " It is not re-recorded: record mode \(recordMode) may not record into it."
                : " Record it again: VCR_RECORD_MODE=all, or set expiryAction = .reRecord."
            return CassetteExpiry(
                oldestRecording: oldest, interval: interval, action: .warn,
                message: "Cassette \(path) is older than it should be: \(age).\(why)"
            )
        }
    }
}
