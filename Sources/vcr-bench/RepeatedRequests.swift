import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCR

extension Bench {
    /// How many rounds of three identical requests the repeated-requests rows make.
    var repeatedRounds: Int { options.quick ? 1_000 : 3_000 }

    /// swift-corelibs-foundation's `test_repeatedRequestsStress`: three identical requests at a time, the next
    /// three once the last one started has its answer. Recorded against the server, then replayed from that
    /// cassette in chronological order: replaying must not take longer than the server did.
    mutating func repeatedRequests() async throws {
        table.section("repeated identical requests: 3 at a time, the next 3 after the third's answer; ms, lower is better")
        guard let server = options.server else {
            table.add(Row("repeated", n: "-", unit: .milliseconds, note: "skipped (no --server)"))
            return
        }
        let url = server.appendingPathComponent("anything/repeated")
        let session = makeSession(.vcr)
        defer { session.invalidateAndCancel() }
        let count = "\(repeatedRounds * 3)"
        var recordRow = Row("record (.all)", n: count, unit: .milliseconds, note: url.absoluteString)
        var replayRow = Row("replay (.never, chronological)", n: count, unit: .milliseconds, note: "the cassette just recorded")
        var ratio = Row("replay / record, each run", n: count, unit: .ratio)
        for run in 1...options.runs {
            progress("repeated requests: run \(run) of \(options.runs)")
            let name = "repeated-\(run)"
            let recording = try await timedRounds(session, url, cassette: name, mode: .all)
            let replaying = try await timedRounds(session, url, cassette: name, mode: .never)
            recordRow.samples.append(recording * 1000)
            replayRow.samples.append(replaying * 1000)
            ratio.samples.append(replaying / recording)
        }
        for row in [recordRow, replayRow, ratio] { table.add(row) }
        ratios["repeated_replay_vs_record"] = ratio.median
    }

    /// Seconds the rounds took with `cassette` inserted in `mode`.
    private func timedRounds(_ session: URLSession, _ url: URL, cassette: String, mode: RecordMode) async throws -> Double {
        try VCR.insertCassette { configuration in
            configuration.cassettesPath = directory.path
            configuration.cassettePath = cassette
            configuration.recordMode = mode
        }
        let rounds = repeatedRounds
        let start = DispatchTime.now().uptimeNanoseconds
        let failed = await withCheckedContinuation { (done: CheckedContinuation<Int, Never>) in
            let state = Locked((left: rounds, failed: 0), level: .leaf)
            @Sendable func ended(_ error: (any Error)?, last: Bool) {
                let failed = state.withLock { state in
                    if error != nil { state.failed += 1 }
                    return state.failed
                }
                if last { next(failed) }
            }
            @Sendable func next(_ failed: Int) {
                let more = state.withLock { state in
                    defer { state.left -= 1 }
                    return state.left > 0
                }
                guard more else { return done.resume(returning: failed) }
                session.dataTask(with: url) { _, _, error in ended(error, last: false) }.resume()
                session.dataTask(with: url) { _, _, error in ended(error, last: false) }.resume()
                session.dataTask(with: url) { _, _, error in ended(error, last: true) }.resume()
            }
            next(0)
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        try VCR.ejectCassette()
        guard failed == 0, VCR.takeFailures().isEmpty else {
            throw BenchFailure("\(failed) repeated requests failed with \(cassette) in \(mode)")
        }
        return seconds
    }
}
