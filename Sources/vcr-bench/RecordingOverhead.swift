import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCR

extension Bench {
    /// The same GETs to a live server made directly and recorded through HTTPVCR (`.all`).
    mutating func record() async throws {
        table.section("recording: sequential GETs to a live server; req/s, higher is better")
        guard let server = options.server else {
            table.add(Row("record", n: "-", unit: .requestsPerSecond, note: "skipped (no --server)"))
            return
        }
        let count = options.recordRequests
        let requests = (0..<count).map { index in
            URLRequest(url: server.appendingPathComponent("bytes/512").appending(queryItems: [URLQueryItem(name: "seed", value: "\(index)")]))
        }
        let direct = makeSession(.direct)
        let vcr = makeSession(.vcr)
        defer {
            direct.invalidateAndCancel()
            vcr.invalidateAndCancel()
        }
        var directRow = Row("direct (no VCR)", n: "\(count)", unit: .requestsPerSecond, note: server.absoluteString + "/bytes/512")
        var recordRow = Row("record through HTTPVCR (.all)", n: "\(count)", unit: .requestsPerSecond, note: "requests only; saving is below")
        var saveRow = Row("record: ejectCassette (save)", n: "\(count)", unit: .milliseconds, note: "writes the recorded cassette")

        progress("recording: warming up against \(server.absoluteString)")
        let warmUp = Array(requests.prefix(10))
        _ = try await runSequential(direct, warmUp, expectedBytes: 512)
        _ = try await recordSample(vcr, warmUp, name: "record-warmup")  // connections open, code paths warm

        for run in 1...options.runs {
            progress("recording: run \(run) of \(options.runs)")
            let cpuStart = processCPUTime()
            directRow.samples.append(Double(count) / (try await runSequential(direct, requests, expectedBytes: 512)))
            directRow.cpuSamples.append((processCPUTime() - cpuStart) * 1e6 / Double(count))
            let (requestTime, requestCPU, saveTime) = try await recordSample(vcr, requests, name: "record-\(run)")
            recordRow.samples.append(Double(count) / requestTime)
            recordRow.cpuSamples.append(requestCPU * 1e6 / Double(count))
            saveRow.samples.append(saveTime * 1000)
        }
        var sandwichIndex = 0
        var recordVsDirect = try await sandwiched("per-request time, record / direct, each between two", n: "\(count)") {
            sandwichIndex += 1
            return Double(count) / (try await recordSample(vcr, requests, name: "record-between-\(sandwichIndex)").0)
        } between: {
            Double(count) / (try await runSequential(direct, requests, expectedBytes: 512))
        }
        // Throughput ratios turned into per-request time ratios, as the target is written.
        recordVsDirect.samples = recordVsDirect.samples.map { 1 / $0 }
        for row in [directRow, recordRow, saveRow, recordVsDirect] { table.add(row) }
        ratios["record_vs_direct"] = recordVsDirect.median
    }

    /// Records `requests` into a new cassette; returns the seconds the requests took, the CPU seconds they
    /// used (the server's are not counted: it is another process) and the seconds saving took.
    private func recordSample(_ session: URLSession, _ requests: [URLRequest], name: String) async throws -> (Double, Double, Double) {
        let cassette = try VCR.insertCassette { configuration in
            configuration.cassettesPath = directory.path
            configuration.cassettePath = name
            configuration.recordMode = .all
            configuration.matchers = VCRConfiguration().matchers
        }
        let requestTime: Double
        let cpuStart = processCPUTime()
        do {
            requestTime = try await runSequential(session, requests, expectedBytes: 512)
        } catch {
            try? VCR.ejectCassette()
            throw error
        }
        let requestCPU = processCPUTime() - cpuStart
        let recorded = cassette.requests.count
        let (_, saveTime) = try timed { try VCR.ejectCassette() }
        guard recorded == requests.count else {
            throw BenchFailure("recorded \(recorded) of \(requests.count) requests into \(name)")
        }
        return (requestTime, requestCPU, saveTime)
    }
}
