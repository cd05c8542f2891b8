import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCR

extension Bench {
    private struct ReplayRow {
        var row: Row
        let size: Int?
        let mode: PlaybackMode
        let width: Int
    }

    /// Every interaction of each cassette replayed once, in tape order, one at a time and 8 in flight, in
    /// both playback modes; the floor answers the same requests.
    mutating func replay() async throws {
        let floorSession = makeSession(.floor)
        let vcrSession = makeSession(.vcr)
        defer {
            floorSession.invalidateAndCancel()
            vcrSession.invalidateAndCancel()
        }
        var rows: [ReplayRow] = []
        for width in [1, options.concurrency] {
            let shape = width == 1 ? "sequential" : "\(width) in flight"
            rows.append(ReplayRow(
                row: Row("floor, \(shape)", n: "\(Self.reference)", unit: .requestsPerSecond, note: "bare URLProtocol, no VCR"),
                size: nil, mode: .momentary, width: width
            ))
            for mode in [PlaybackMode.chronological, .momentary] {
                for size in options.cassetteSizes {
                    let played = options.replayed(from: size)
                    let note = played < size ? "first \(played) of \(size) interactions" : ""
                    rows.append(ReplayRow(
                        row: Row("replay \(mode.rawValue), \(shape)", n: "\(size)", unit: .requestsPerSecond, note: note),
                        size: size, mode: mode, width: width
                    ))
                }
            }
        }
        let requests = Dictionary(uniqueKeysWithValues: Set(options.cassetteSizes + [Self.reference]).map { size in
            (size, (0..<options.replayed(from: size)).map { Fixtures.request(Fixtures.url($0)) })
        })

        progress("replay: warming up")
        _ = try await sample(rows[0], requests: requests, floor: floorSession, vcr: vcrSession)
        _ = try await sample(rows[1], requests: requests, floor: floorSession, vcr: vcrSession)

        for run in 1...options.runs {
            progress("replay: run \(run) of \(options.runs)")
            for index in rows.indices {
                if options.verbose { progress("  \(rows[index].row.name), \(rows[index].row.n)") }
                let (throughput, cpu) = try await sample(rows[index], requests: requests, floor: floorSession, vcr: vcrSession)
                rows[index].row.samples.append(throughput)
                rows[index].row.cpuSamples.append(cpu)
            }
        }
        table.section("replay: 512-byte GET responses, every interaction once in tape order; req/s, higher is better")
        for row in rows { table.add(row.row) }

        func find(_ size: Int?, _ mode: PlaybackMode, _ width: Int) -> Row {
            rows.first { $0.size == size && (size == nil || $0.mode == mode) && $0.width == width }!.row
        }
        let floor = find(nil, .momentary, 1)
        let replay = find(Self.reference, .chronological, 1)
        cpuRatios["replay_vs_floor"] = Stats.median(floor.cpuSamples) / Stats.median(replay.cpuSamples)
        let floorRow = ReplayRow(row: floor, size: nil, mode: .momentary, width: 1)
        let replayRow = ReplayRow(row: replay, size: Self.reference, mode: .chronological, width: 1)
        let vsFloor = try await sandwiched("replay / floor, each between two floor samples", n: replay.n) {
            try await sample(replayRow, requests: requests, floor: floorSession, vcr: vcrSession).0
        } between: {
            try await sample(floorRow, requests: requests, floor: floorSession, vcr: vcrSession).0
        }
        table.add(vsFloor)
        ratios["replay_vs_floor"] = vsFloor.median

        cpuRatios["replay_10k_vs_100"] = Stats.median(find(Self.largest, .chronological, 1).cpuSamples)
            / Stats.median(find(Self.smallest, .chronological, 1).cpuSamples)
        let smallRow = ReplayRow(row: find(Self.smallest, .chronological, 1), size: Self.smallest, mode: .chronological, width: 1)
        let largeRow = ReplayRow(row: find(Self.largest, .chronological, 1), size: Self.largest, mode: .chronological, width: 1)
        var largeVsSmall = try await sandwiched(
            "per-request time, \(Self.largest) / \(Self.smallest), each between two", n: largeRow.row.n
        ) {
            try await sample(largeRow, requests: requests, floor: floorSession, vcr: vcrSession).0
        } between: {
            try await sample(smallRow, requests: requests, floor: floorSession, vcr: vcrSession).0
        }
        // Throughput ratios turned into per-request time ratios, as the target is written.
        largeVsSmall.samples = largeVsSmall.samples.map { 1 / $0 }
        table.add(largeVsSmall)
        ratios["replay_10k_vs_100"] = largeVsSmall.median
    }

    /// One sample of a replay row: requests per second, and CPU microseconds per request. A sample covers at
    /// least ``Options/minimumRequestsPerSample`` requests: small cassettes are inserted and replayed several
    /// times (only the requests are timed).
    private func sample(_ row: ReplayRow, requests: [Int: [URLRequest]], floor: URLSession, vcr: URLSession) async throws -> (Double, Double) {
        let batch = requests[row.size ?? Self.reference]!
        let rounds = max(1, options.minimumRequestsPerSample / batch.count)
        var elapsed = 0.0
        var cpu = 0.0
        for _ in 0..<rounds {
            guard let size = row.size else {
                let cpuStart = processCPUTime()
                elapsed += try await drive(floor, batch, width: row.width)
                cpu += processCPUTime() - cpuStart
                continue
            }
            let cassette = try insert(size, mode: row.mode)
            do {
                let cpuStart = processCPUTime()
                elapsed += try await drive(vcr, batch, width: row.width)
                cpu += processCPUTime() - cpuStart
            } catch {
                try? VCR.ejectCassette()
                throw error
            }
            try VCR.ejectCassette()
            // `unplayedRequests`, not `playCount`: a chapter counts as played only after its completion has
            // reached the client, so the count can lag the last response by a moment.
            let unplayed = cassette.unplayedRequests.count
            guard unplayed == size - batch.count, VCR.takeFailures().isEmpty else {
                throw BenchFailure("replaying \(Fixtures.cassetteName(size)): \(size - unplayed) of \(batch.count) played")
            }
        }
        let count = Double(rounds * batch.count)
        return (count / elapsed, cpu * 1e6 / count)
    }
}
