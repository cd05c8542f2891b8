import Foundation
import HTTPVCR
import Testing

/// What a test in ``RecordMode/verify`` is told about its cassette's drift, and the summary of the whole run printed
/// when the process ends, for reading in CI logs.
enum DriftReport {
    /// Tells the test how its live answers differ from its recordings (a warning, or a failure with
    /// `failsOnDrift`), and notes the cassette for the run's summary. Nothing outside verify mode.
    static func report(
        _ cassette: Cassette, scope: VCRCassetteScope, fails: Bool, report: (String) -> Void, warn: (String) -> Void
    ) {
        guard cassette.recordMode == .verify else { return }
        let drift = cassette.drift
        let command = scope.rerecordCommand(recordMode: "all")
        summary.note(Entry(
            test: "\(scope.suiteName)/\(scope.testName)", cassette: cassette.path, drift: drift, command: command,
            library: Test.current == nil ? .xcTest : .swiftTesting
        ))
        guard !drift.isEmpty else { return }
        (fails ? report : warn)(message(drift, cassette: cassette.path, scope: scope, command: command))
    }

    /// `The live answers differ from … (VCR_RECORD_MODE=verify)`, each request and its differences, the cassette,
    /// the test and the command that records the test anew.
    static func message(
        _ drift: [CassetteDrift], cassette: String, scope: VCRCassetteScope, command: String?
    ) -> String {
        var lines = [
            "The live answers differ from the recordings in \(cassette) (VCR_RECORD_MODE=verify): "
                + counts(drift) + ".",
        ]
        lines += requestLines(drift, indent: "  ")
        lines.append("  cassette: \(cassette)")
        lines.append("  test: \(scope.suiteName)/\(scope.testName)")
        if let command {
            lines.append("  If the service changed on purpose, record this test anew: \(command)")
        }
        return lines.joined(separator: "\n")
    }

    /// `2 changed, 1 new, 1 unused` (only the kinds there are).
    static func counts(_ drift: [CassetteDrift]) -> String {
        let changed = drift.filter { $0.kind == .changed }.count
        let new = drift.filter { $0.kind == .new }.count
        let unused = drift.filter { $0.kind == .unused }.count
        var parts: [String] = []
        if changed > 0 { parts.append("\(changed) changed") }
        if new > 0 { parts.append("\(new) new") }
        if unused > 0 { parts.append("\(unused) unused") }
        return parts.joined(separator: ", ")
    }

    /// `~ GET url` and its differences below it, `+ GET url (new: no recording)`, `- GET url (unused: not
    /// requested)`, as `vcr diff` prints them.
    static func requestLines(_ drift: [CassetteDrift], indent: String) -> [String] {
        drift.flatMap { drift -> [String] in
            switch drift.kind {
            case .new: ["\(indent)+ \(drift.request) (new: no recording)"]
            case .unused: ["\(indent)- \(drift.request) (unused: not requested)"]
            default: ["\(indent)~ \(drift.request)"] + drift.differences.map { "\(indent)    \($0)" }
            }
        }
    }

    // MARK: The run's summary

    /// One verified cassette.
    struct Entry: Sendable {
        var test: String
        var cassette: String
        var drift: [CassetteDrift]
        var command: String?
        /// Which library ran its test.
        var library: Library = .swiftTesting
    }

    /// The test libraries, as the summary names them: under `swift test` on Linux each runs the tests in a process
    /// of its own, and each process prints its summary, for its library's tests.
    enum Library: String, Sendable, CaseIterable {
        case xcTest = "XCTest"
        case swiftTesting = "Swift Testing"
    }

    /// The cassettes verified in this process; printed on standard error, once, when it exits.
    static let summary = Summary()

    final class Summary: Sendable {
        private let entries = Locked<[Entry]?>(nil, level: .testing)

        func note(_ entry: Entry) {
            let isFirst = entries.withLock { entries in
                defer { entries = (entries ?? []) + [entry] }
                return entries == nil
            }
            if isFirst { atexit { DriftReport.summary.print() } }
        }

        func print() {
            guard let entries = entries.withLock({ $0 }) else { return }
            FileHandle.standardError.write(Data((DriftReport.summaryText(entries) + "\n").utf8))
        }
    }

    /// The process's summary: which library's tests it covers, how many cassettes were verified, how many drifted,
    /// then each that did, with its test, its requests and the command that records the test anew.
    static func summaryText(_ entries: [Entry]) -> String {
        let drifted = entries.filter { !$0.drift.isEmpty }
        let cassettes = entries.count == 1 ? "1 cassette" : "\(entries.count) cassettes"
        let libraries = Library.allCases.filter { library in entries.contains { $0.library == library } }
        let tests = libraries.map(\.rawValue).joined(separator: " and ") + " tests"
        var lines = ["HTTPVCR verify: \(cassettes) of \(tests) checked against the live service, "
            + (drifted.isEmpty ? "none drifted." : "\(drifted.count) drifted (\(counts(drifted.flatMap(\.drift))))")]
        for entry in drifted {
            lines.append("  \(entry.test): \(entry.cassette)")
            lines += requestLines(entry.drift, indent: "    ")
            if let command = entry.command { lines.append("    record anew: \(command)") }
        }
        return lines.joined(separator: "\n")
    }
}
