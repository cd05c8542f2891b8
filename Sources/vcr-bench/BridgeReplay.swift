import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCR

extension Bench {
    /// How many interactions of the reference cassette one bridge sample replays.
    var bridgeRequests: Int { options.quick ? 500 : Self.reference }

    /// Replay across processes against replay in the process: the same cassette (the reference one, momentary
    /// playback, `.never`) replayed request by request, one at a time, by a session in this process, and by a
    /// session in a process this one launches (`vcr-bench --bridge-client N`, connected with
    /// `VCR.connectToBridge()`) through a ``VCRBridge`` started here under the cassette. Both sides time each
    /// request as the app sees it (from `data(for:)` to its return): throughput, p50 and p99.
    mutating func bridgeReplay() async throws {
        let count = bridgeRequests
        let requests = (0..<count).map { Fixtures.request(Fixtures.url($0)) }
        let session = makeSession(.vcr)
        defer { session.invalidateAndCancel() }
        // The transport alone: URLSession to a loopback HTTP server (the bridge's) that answers at once; the
        // launched process reaches it as its bridge too, for the floor.
        let body = Fixtures.body(0)
        let server = try LoopbackServer { _ in
            WireResponse(status: 200, fields: [WireField("Content-Type", "application/json")], body: body)
        }
        defer { server.stop() }
        let wireRequests = (0..<count).map { Fixtures.request(server.url.appendingPathComponent("item/\($0)")) }
        let direct = makeSession(.direct)
        defer { direct.invalidateAndCancel() }
        var floor = LatencyRows("floor: URLSession to a loopback server, no VCR", n: count)
        var inProcess = LatencyRows("in-process replay", n: count)
        var bridged = LatencyRows("bridged replay (child process)", n: count)
        var ratio = Row("bridged / in-process, per-request time", n: "\(count)", unit: .ratio)
        var canned = LatencyRows("bridged, canned answer (no cassette)", n: count)
        var cannedRatio = Row("bridged canned / in-process (the floor)", n: "\(count)", unit: .ratio)
        progress("bridge: warming up")
        _ = try await replayedHere(requests, session)
        _ = try await replayedOverBridge(count)
        _ = try await replayedOverCannedBridge(count, at: server.url)
        _ = try await Latencies.timing(wireRequests, direct)
        for run in 1...options.runs {
            progress("bridge: run \(run) of \(options.runs)")
            floor.add(try await Latencies.timing(wireRequests, direct))
            let here = try await replayedHere(requests, session)
            let there = try await replayedOverBridge(count)
            let floorThere = try await replayedOverCannedBridge(count, at: server.url)
            inProcess.add(here)
            bridged.add(there)
            canned.add(floorThere)
            ratio.samples.append(there.seconds / here.seconds)
            cannedRatio.samples.append(floorThere.seconds / here.seconds)
        }
        table.section("bridge: \(count) replayed 512-byte GETs one at a time, momentary; µs per request, lower is better")
        for row in inProcess.rows + bridged.rows + [ratio] + canned.rows + [cannedRatio] + floor.rows { table.add(row) }
        ratios["bridge_vs_in_process"] = ratio.median
        ratios["bridge_p99_ms"] = Stats.median(bridged.p99.samples) / 1000
    }

    /// Latencies of `requests` replayed by `session` from the reference cassette inserted here.
    private func replayedHere(_ requests: [URLRequest], _ session: URLSession) async throws -> Latencies {
        try VCR.insertCassette { configuration in
            configuration.cassettesPath = directory.path
            configuration.cassettePath = Fixtures.cassetteName(Self.reference)
            configuration.playbackMode = .momentary
            configuration.recordMode = .never
        }
        defer { try? VCR.ejectCassette() }
        let latencies = try await Latencies.timing(requests, session)
        guard VCR.takeFailures().isEmpty else { throw BenchFailure("in-process replay failed") }
        return latencies
    }

    /// Latencies the child process measured, replaying `count` requests over a bridge started here.
    private func replayedOverBridge(_ count: Int) async throws -> Latencies {
        let cassette = try VCR.loadCassette { configuration in
            configuration.cassettesPath = directory.path
            configuration.cassettePath = Fixtures.cassetteName(Self.reference)
            configuration.playbackMode = .momentary
            configuration.recordMode = .never
        }
        let output = try await VCR.withCassette(cassette) {
            // A quick run replays the first part of the cassette: the rest is never asked for, as meant.
            let bridge = try VCRBridge.start(failsOnUnplayedInteractions: count == Self.reference)
            defer { bridge.stop() }
            return try await Self.launch(["--bridge-client", "\(count)"], environment: bridge.environment)
        }
        let failures = cassette.takeFailures()
        guard failures.isEmpty, let latencies = Latencies(line: output) else {
            throw BenchFailure("the bridge client failed: \(failures.map(\.message)) \(output.prefix(500))")
        }
        return latencies
    }

    /// Latencies the child process measured with `server` as its bridge: a loopback server that answers every request
    /// at once with the same 512 bytes, so no cassette, no request rebuilt, nothing matched. What a bridged request
    /// costs before the test process answers it (two processes, two sockets, the launched process's URLSession),
    /// and so the least `bridge_vs_in_process` can be in this design.
    private func replayedOverCannedBridge(_ count: Int, at server: URL) async throws -> Latencies {
        // The names Docs/CrossProcess.md gives; a token as long as a bridge's, as the launched process writes it.
        let environment = [
            "HTTPVCR_BRIDGE_URL": server.absoluteString, "HTTPVCR_BRIDGE_TOKEN": String(repeating: "0", count: 64),
        ]
        let output = try await Self.launch(["--bridge-client", "\(count)"], environment: environment)
        guard let latencies = Latencies(line: output) else {
            throw BenchFailure("the canned bridge's client failed: \(output.prefix(500))")
        }
        return latencies
    }

    /// Runs this executable with `arguments` and returns its output once it exited, waiting through its
    /// termination handler (no thread blocked).
    private static func launch(_ arguments: [String], environment: [String: String]) async throws -> String {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("vcr-bench-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: output) }
        let handle = try FileHandle(forWritingTo: output)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = arguments
        // A profiler for the launched process (Docs/Performance.md): its command line goes before the child's.
        if let wrap = ProcessInfo.processInfo.environment["VCR_BENCH_WRAP"] {
            let parts = wrap.split(separator: " ").map(String.init)
            process.arguments = Array(parts.dropFirst()) + [process.executableURL!.path] + arguments
            process.executableURL = URL(fileURLWithPath: parts[0])
        }
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = handle
        process.standardInput = FileHandle.nullDevice
        try await withCheckedThrowingContinuation { (exited: CheckedContinuation<Void, any Error>) in
            process.terminationHandler = { _ in exited.resume() }
            do { try process.run() } catch { exited.resume(throwing: error) }
        }
        try handle.close()
        return String(decoding: try Data(contentsOf: output), as: UTF8.self)
    }

    /// `vcr-bench --bridge-client N`: the launched process's side. Connects to the bridge its environment names,
    /// replays the first N requests of the reference cassette one at a time, and prints their latencies.
    static func bridgeClient(count: Int) async -> Int32 {
        guard VCR.connectToBridge() else {
            FileHandle.standardError.write(Data("vcr-bench: --bridge-client needs a bridge's environment\n".utf8))
            return 2
        }
        let session = makeSession(.vcr)
        do {
            let latencies = try await Latencies.timing((0..<count).map { Fixtures.request(Fixtures.url($0)) }, session)
            print(latencies.line)
            return 0
        } catch {
            FileHandle.standardError.write(Data("vcr-bench: bridge client: \(error)\n".utf8))
            return 1
        }
    }
}

/// Each request's time, as the app sees it, in microseconds.
struct Latencies {
    var microseconds: [Double]
    var seconds: Double { microseconds.reduce(0, +) / 1e6 }

    /// Sends `requests` one after the other through `session`, each a 200 with 512 bytes.
    static func timing(_ requests: [URLRequest], _ session: URLSession) async throws -> Latencies {
        var microseconds: [Double] = []
        microseconds.reserveCapacity(requests.count)
        for request in requests {
            let start = DispatchTime.now().uptimeNanoseconds
            let (data, response) = try await session.data(for: request)
            microseconds.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1000)
            guard (response as? HTTPURLResponse)?.statusCode == 200, data.count == 512 else {
                throw BenchFailure("\(request.url!): \((response as? HTTPURLResponse)?.statusCode ?? -1), \(data.count) bytes")
            }
        }
        return Latencies(microseconds: microseconds)
    }

    func percentile(_ fraction: Double) -> Double {
        let sorted = microseconds.sorted()
        return sorted.isEmpty ? .nan : sorted[min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.up)) - 1)]
    }

    /// `latencies-us 12.5,13.0,…`: how the client hands them over.
    var line: String { "latencies-us " + microseconds.map { String(format: "%.1f", $0) }.joined(separator: ",") }

    init(microseconds: [Double]) { self.microseconds = microseconds }

    init?(line output: String) {
        guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("latencies-us ") }) else { return nil }
        let values = line.dropFirst("latencies-us ".count).split(separator: ",").compactMap { Double($0) }
        guard !values.isEmpty else { return nil }
        microseconds = values
    }
}

/// Throughput, p50 and p99 rows of one way of replaying.
struct LatencyRows {
    var throughput: Row
    var p50: Row
    var p99: Row

    init(_ name: String, n: Int) {
        throughput = Row(name, n: "\(n)", unit: .requestsPerSecond)
        p50 = Row("\(name), p50", n: "\(n)", unit: .microseconds)
        p99 = Row("\(name), p99", n: "\(n)", unit: .microseconds)
    }

    mutating func add(_ latencies: Latencies) {
        throughput.samples.append(Double(latencies.microseconds.count) / latencies.seconds)
        p50.samples.append(latencies.percentile(0.5))
        p99.samples.append(latencies.percentile(0.99))
    }

    var rows: [Row] { [throughput, p50, p99] }
}
