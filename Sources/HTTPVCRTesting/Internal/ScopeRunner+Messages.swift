import Foundation
import HTTPVCR
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a scope tells its test when it ends: each message says what happened, to which cassette, and the remedy
/// that fits, with the command to run when there is one.
extension ScopeRunner {
    static func discardedMessage(count: Int, cassette: Cassette, scope: VCRCassetteScope) -> String {
        let what = count == 1 ? "the interaction it recorded was" : "the \(count) interactions it recorded were"
        return "The test failed, so \(what) discarded, not saved to \(cassette.path): a partial "
            + "recording would replay as if it were the whole story. Fix the test and record again, or keep a failed "
            + "test's recording with recordsOnFailure: true.\n  test: \(scope.suiteName)/\(scope.testName)"
    }

    /// A request's failure, with the test and the command that fits it. A request whose earlier form the cassette
    /// holds (``MismatchKind/changedRequest``), or a test whose other requests matched recordings (`replayedSome`),
    /// is recorded anew (`all`): `new` would keep the stale recording, or replay the other answers again, stale or
    /// not. A request that differs only in its port gets no command: recording again cannot help there.
    static func failureMessage(_ failure: VCRError, scope: VCRCassetteScope, replayedSome: Bool = false) -> String {
        var message = failure.message
        message += "\n  test: \(scope.suiteName)/\(scope.testName)"
        if case .portOnly = failure.mismatch { return message }
        let anewBecause: String? = if failure.mismatch == .changedRequest {
            "VCR_RECORD_MODE=new would keep the recording this request replaces, never played again"
        } else if replayedSome {
            "VCR_RECORD_MODE=new would replay its other answers as they were"
        } else {
            nil
        }
        if let anewBecause, let command = scope.rerecordCommand(recordMode: "all") {
            message += "\n  To record this test anew (\(anewBecause)): \(command)"
        } else if let command = scope.rerecordCommand {
            message += "\n  To re-record this test: \(command)"
        }
        return message
    }

    /// For a test that failed after replaying recordings: they may be what is stale.
    static func staleMessage(replayed: Int, cassette: Cassette, scope: VCRCassetteScope, command: String) -> String {
        "The test failed after replaying \(replayed) recorded interaction\(replayed == 1 ? "" : "s") of "
            + "\(cassette.path). If the recordings are stale (the service answers differently now), record the test "
            + "anew: \(command)\n  test: \(scope.suiteName)/\(scope.testName)"
    }

    /// What to tell a test none of whose requests reached its cassette, when that looks like a mistake: its
    /// cassette held recordings, or was recording. The likely cause comes first: on Linux a session made from
    /// `.default` or `.ephemeral` is invisible to HTTPVCR, and its requests go to the network, recording nothing
    /// and replaying nothing, with the test passing.
    static func untouchedMessage(_ cassette: Cassette, scope: VCRCassetteScope) -> String? {
        guard cassette.requestCount == 0, cassette.recordMode != .passthrough else { return nil }
        let cause = "On Linux a URLSession made from URLSessionConfiguration.default or .ephemeral does not go "
            + "through HTTPVCR by itself: pass its configuration to VCR.install(in:) before making the session (see "
            + "\"An app's own session\" in HTTPVCR's README)."
        let recorded = cassette.loadedInteractionCount
        var lines: [String]
        if recorded > 0 {
            lines = [
                "No request of this test reached HTTPVCR, yet its cassette holds \(recorded) recorded "
                    + "interaction\(recorded == 1 ? "" : "s"), none replayed: the test's requests most likely went "
                    + "around HTTPVCR, to the network.",
                "  " + cause,
                "  cassette: \(cassette.path)",
                "  test: \(scope.suiteName)/\(scope.testName)",
            ]
            if let filter = scope.testFilter {
                lines.append("  If the test no longer makes those requests, record it anew: "
                    + CassetteNaming.rerecordCommand(filter: filter, recordMode: "all"))
            }
        } else if !cassette.isWriteProtected, scope.expectsRequests {
            lines = [
                "No request of this test reached HTTPVCR while its cassette was recording, so nothing was recorded"
                    + (cassette.isNew ? " and no cassette was written." : "."),
                "  If the test makes requests, they most likely went around HTTPVCR, to the network. " + cause,
                "  If it makes none, it needs no cassette: take the .cassette trait off it (or return false from "
                    + "VCRTestCase.shouldSetUpVCR()).",
                "  cassette: \(cassette.path)",
                "  test: \(scope.suiteName)/\(scope.testName)",
            ]
        } else {
            return nil
        }
        return lines.joined(separator: "\n")
    }

    /// Whether the recordings the test never replayed are worth telling it about: in the modes that replay, a
    /// failure with `failsOnUnplayedInteractions`, else a warning for a test that passed (a failed one is told what
    /// failed, and its requests may have stopped short). Not twice: a ``VCRBridge`` names those its process never
    /// asked for itself. Not where the configuration drops them from the file anyway.
    static func reportsUnplayed(_ cassette: Cassette, strict: Bool, testFailed: Bool, failures: [VCRError]) -> Bool {
        guard [.once, .new, .never].contains(cassette.recordMode),
              !failures.contains(where: { $0.code == .requestsNeverCame })
        else { return false }
        if strict { return true }
        return !testFailed && failures.isEmpty && !cassette.configuration.dropsUnusedInteractions
    }

    /// The recordings a test never replayed, and how long chronological playback waited for each before going on:
    /// a failure with `failsOnUnplayedInteractions` (`strict`), else a warning.
    static func unplayedMessage(
        _ requests: [(request: URLRequest, waited: TimeInterval?)],
        strict: Bool,
        cassette: Cassette,
        scope: VCRCassetteScope
    ) -> String {
        let count = requests.count
        let strictness = strict
            ? "failsOnUnplayedInteractions is on" : "failsOnUnplayedInteractions: true fails the test"
        var lines = [
            "\(count) recorded interaction\(count == 1 ? " was" : "s were") never replayed (\(strictness))",
            "  cassette: \(cassette.path)",
            "  test: \(scope.suiteName)/\(scope.testName)",
        ]
        for (request, waited) in requests.prefix(20) {
            let method = (request.httpMethod ?? "GET").uppercased()
            let wait = waited.map {
                " (replay waited \(String(format: "%.2f", $0)) s for it before going on: chronologicalWait)"
            }
            lines.append("    \(method) \(request.url?.absoluteString ?? "(no URL)")" + (wait ?? ""))
        }
        if count > 20 { lines.append("    … and \(count - 20) more") }
        lines.append("  If the test still makes them, they went around HTTPVCR: a URLSession made from .default or "
            + ".ephemeral without VCR.install(in:) sends its requests to the network on Linux.")
        if let filter = scope.testFilter {
            lines.append("  If the test no longer makes them, record the cassette anew: "
                + CassetteNaming.rerecordCommand(filter: filter, recordMode: "all"))
        }
        return lines.joined(separator: "\n")
    }

    /// After recording anew (`.all`): the values that changed from the recordings replaced while keeping their shape,
    /// and the line that declares them, so that the next replay matches them (``Cassette/volatileCandidates``).
    static func volatileMessage(_ cassette: Cassette, scope: VCRCassetteScope) -> String? {
        let candidates = cassette.volatileCandidates
        guard !candidates.isEmpty else { return nil }
        let declarations = candidates.map(\.description).joined(separator: ", ")
        return [
            "Recorded anew, these values changed but kept their shape (a timestamp, a UUID, a signature): they look "
                + "volatile, and a replay will not match them as written: \(declarations)",
            "  cassette: \(cassette.path)",
            "  test: \(scope.suiteName)/\(scope.testName)",
            "  To match them by shape: configuration.volatileValues += [\(declarations)] (Docs/VolatileValues.md)",
        ].joined(separator: "\n")
    }
}
