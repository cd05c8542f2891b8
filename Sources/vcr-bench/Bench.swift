import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCR

/// The benchmark: every section in one process, every row of a section measured once per run so that drift on
/// a shared machine hits the rows that are compared alike.
///
/// Each section is an extension of its own file (`CassetteMemory`, `CassetteIO`, `ReplayThroughput`,
/// `RecordingOverhead`, `RepeatedRequests`, `ParallelScopes`); `Profiling` runs one operation alone, for callgrind.
/// This file runs them and prints the table and the targets, with the helpers they share.
struct Bench {
    let options: Options
    let directory: URL
    /// The CPU the process runs on, when it is pinned to one (see ``CPUPinning``).
    let pinnedCPU: Int?
    var table = Table()
    var ratios: [String: Double] = [:]
    /// The same ratios from CPU time per request, for reading a noisy run (not in the JSON).
    var cpuRatios: [String: Double] = [:]
    var files: [Int: URL] = [:]

    static let largest = 10_000
    static let reference = 1_000
    static let smallest = 100

    init(options: Options, directory: URL, pinnedCPU: Int?) {
        self.options = options
        self.directory = directory
        self.pinnedCPU = pinnedCPU
    }

    static func main(_ arguments: [String], pinnedCPU: Int?) async -> Int32 {
        let options: Options
        do {
            options = try Options.parse(arguments)
        } catch let error as UsageError {
            if let message = error.message {
                FileHandle.standardError.write(Data("vcr-bench: \(message)\n\n\(Options.usage)\n".utf8))
                return 2
            }
            print(Options.usage)
            return 0
        } catch {
            return 2
        }
        if let mode = ProcessInfo.processInfo.environment[RecordMode.environmentVariable], !mode.isEmpty {
            FileHandle.standardError.write(Data("vcr-bench: \(RecordMode.environmentVariable)=\(mode) is set; unset it, it overrides the benchmark's record modes\n".utf8))
            return 2
        }
        if let count = options.bridgeClient { return await bridgeClient(count: count) }
        let directory = options.workDirectory
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("vcr-bench-\(UUID().uuidString)")
        defer { if options.workDirectory == nil { try? FileManager.default.removeItem(at: directory) } }
        var bench = Bench(options: options, directory: directory, pinnedCPU: pinnedCPU)
        do {
            if let profile = options.profile {
                try await bench.profile(profile)
                return 0
            }
            try await bench.run()
            return 0
        } catch {
            try? VCR.ejectCassette()
            FileHandle.standardError.write(Data("vcr-bench: failed: \(error)\n".utf8))
            return 1
        }
    }

    mutating func run() async throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        VCR.setup { $0.cassettesPath = directory.path }
        progress("generating cassettes of \(options.cassetteSizes.map(String.init).joined(separator: ", ")) interactions")
        files = try Fixtures.writeCassettes(sizes: options.cassetteSizes, in: directory)

        if options.includes(.memory) { try memory() }
        if options.includes(.io) { try cassetteIO() }
        if options.includes(.replay) { try await replay() }
        if options.includes(.record) {
            try await record()
            try await repeatedRequests()
        }
        if options.includes(.scopes) { try await parallelScopes() }
        if options.includes(.bridge) { try await bridgeReplay() }

        print("vcr-bench\(options.quick ? " --quick" : ""): \(options.runs) runs per row (table: median, min, max); "
            + "\(ProcessInfo.processInfo.activeProcessorCount) CPUs, "
            + (pinnedCPU.map { "pinned to CPU \($0) (--no-pin to use all)" } ?? "not pinned")
            + "; cassettes of 512-byte GET responses with distinct URLs")
        print(table.render())
        print("")
        let targets = [
            Target(key: "replay_vs_floor", value: ratios["replay_vs_floor"], comparison: .atLeast, bound: 0.8,
                   meaning: "replay throughput / floor throughput (sequential, 1,000 interactions, chronological)"),
            Target(key: "replay_10k_vs_100", value: ratios["replay_10k_vs_100"], comparison: .atMost, bound: 1.2,
                   meaning: "per-request time, 10,000- vs 100-interaction cassette (sequential, chronological)"),
            Target(key: "load_vs_jsonserialization", value: ratios["load_vs_jsonserialization"], comparison: .atMost, bound: 2.0,
                   meaning: "VCR.insertCassette (read + decode + index) / Data(contentsOf:) + JSONSerialization.jsonObject"),
            Target(key: "save_vs_jsonserialization", value: ratios["save_vs_jsonserialization"], comparison: .atMost, bound: 3.0,
                   meaning: "CassetteFile.write / JSONSerialization.data(.prettyPrinted, .sortedKeys) + atomic write"),
            Target(key: "record_vs_direct", value: ratios["record_vs_direct"], comparison: .atMost, bound: 1.2,
                   meaning: "per-request time recording through HTTPVCR / the same requests made directly"),
            Target(key: "memory_vs_disk", value: ratios["memory_vs_disk"], comparison: .atMost, bound: 2.0,
                   meaning: "heap held by the inserted 10,000-interaction cassette / its bytes on disk"),
            Target(key: "parallel_scopes_vs_stub", value: ratios["parallel_scopes_vs_stub"], comparison: .atLeast, bound: 0.7,
                   meaning: "throughput, \(Self.scopeCount) cassette scopes x \(Self.requestsPerScope) replayed requests at once / the same through a bare stub"),
            Target(key: "repeated_replay_vs_record", value: ratios["repeated_replay_vs_record"], comparison: .atMost, bound: 1.0,
                   meaning: "time, \(repeatedRounds * 3) identical requests 3 at a time replayed (chronological) / recorded"),
            Target(key: "parallel_record_vs_one_request", value: ratios["parallel_record_vs_one_request"], comparison: .atMost, bound: 1.5,
                   meaning: "time, \(Self.recordingScopes) scopes recording /delay/1 at once / one scope recording it"),
            Target(key: "bridge_vs_in_process", value: ratios["bridge_vs_in_process"], comparison: .atMost, bound: 2.0,
                   meaning: "per-request time, replay in a launched process over a VCRBridge / replay in this process"),
            Target(key: "bridge_p99_ms", value: ratios["bridge_p99_ms"], comparison: .atMost, bound: 1.0,
                   meaning: "p99 latency of a request replayed over the bridge, in ms (loopback)"),
        ]
        print("targets:")
        for target in targets { print("  " + target.line) }
        if !cpuRatios.isEmpty {
            print("by CPU time per request instead of wall time (steadier on a shared machine; not in the JSON): "
                + cpuRatios.sorted { $0.key < $1.key }.map { "\($0.key) \(String(format: "%.2f", $0.value))" }.joined(separator: ", "))
        }
        if options.quick {
            print("note: --quick replays the first \(options.replayed(from: Self.largest)) interactions of the "
                + "\(Self.largest)-interaction cassette (the whole cassette is loaded); the ratio compares per-request times.")
        }
        print(ratiosJSON(targets.map { ($0.key, $0.value) }))
    }

    private static let started = DispatchTime.now().uptimeNanoseconds

    func progress(_ message: String) {
        let elapsed = String(format: "%6.1fs", seconds(since: Self.started))
        FileHandle.standardError.write(Data("vcr-bench \(elapsed): \(message)\n".utf8))
    }

    /// The size of the generated cassette of `size` interactions, in bytes.
    func bytesOnDisk(_ size: Int) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: files[size]!.path)
        return (attributes[.size] as? NSNumber)?.intValue ?? 0
    }

    /// A target ratio measured on its own: each sample of `measured` taken between two samples of `reference`,
    /// against their mean (throughput over throughput). Rows of the table are sampled several rows apart, and
    /// a slow stretch of a shared machine can land on one and not the other; a sample between two reference
    /// samples cancels a slow stretch that comes or goes during it.
    func sandwiched(
        _ name: String, n: String,
        _ measured: () async throws -> Double,
        between reference: () async throws -> Double
    ) async throws -> Row {
        let count = options.runs * 3
        var ratios = Row(name, n: n, unit: .ratio, note: "median of \(count)")
        var before = try await reference()
        for index in 1...count {
            progress("\(name), \(index) of \(count)")
            let value = try await measured()
            let after = try await reference()
            ratios.samples.append(value / ((before + after) / 2))
            if options.verbose { progress("  \(value) between \(before) and \(after): \(ratios.samples.last!)") }
            before = after
        }
        return ratios
    }

    /// Sends `requests` through `session`, one after the other or `width` in flight, each answered with 512
    /// bytes; returns the seconds it took.
    func drive(_ session: URLSession, _ requests: [URLRequest], width: Int) async throws -> Double {
        width == 1
            ? try await runSequential(session, requests, expectedBytes: 512)
            : try await runWindowed(session, requests, width: width, expectedBytes: 512)
    }

    /// Inserts a generated cassette for replay: `.never` (never records), the default matchers.
    func insert(_ size: Int, mode: PlaybackMode) throws -> Cassette {
        try VCR.insertCassette { configuration in
            configuration.cassettesPath = directory.path
            configuration.cassettePath = Fixtures.cassetteName(size)
            configuration.playbackMode = mode
            configuration.recordMode = .never
            configuration.matchers = VCRConfiguration().matchers
        }
    }

    /// Inserts an empty cassette that records everything (`.all`), in a file of its own each time.
    func insertForRecording() throws -> Cassette {
        try VCR.insertCassette { configuration in
            configuration.cassettesPath = directory.path
            configuration.cassettePath = "profile-record-\(UUID().uuidString).json"
            configuration.recordMode = .all
        }
    }
}
