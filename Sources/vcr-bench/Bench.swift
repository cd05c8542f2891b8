import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCR

/// The benchmark: every section in one process, every row of a section measured once per run so that drift on
/// a shared machine hits the rows that are compared alike.
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

    private func bytesOnDisk(_ size: Int) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: files[size]!.path)
        return (attributes[.size] as? NSNumber)?.intValue ?? 0
    }

    // MARK: Profiling

    /// Does one thing with a warm-up first, then once more, and prints how long that took: small enough to
    /// run under callgrind, where the inclusive instruction counts of the library's functions tell where
    /// the time goes.
    func profile(_ what: Profile) async throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let size = options.profileSize
        let file = try Fixtures.writeCassettes(sizes: [size], in: directory)[size]!
        let requests = (0..<size).map { Fixtures.request(Fixtures.url($0)) }
        let floorSession = makeSession(.floor)
        let vcrSession = makeSession(.vcr)
        var detail = "\(size)"
        /// The replay profiles insert a cassette before each run, outside what is measured.
        var playback: PlaybackMode?
        let operation: () async throws -> Double
        switch what {
        case .floor: operation = { try await drive(floorSession, requests, width: 1) }
        case .floor8: operation = { try await drive(floorSession, requests, width: options.concurrency) }
        case .replay, .replay8, .replayMomentary:
            playback = what == .replayMomentary ? .momentary : .chronological
            let width = what == .replay8 ? options.concurrency : 1
            operation = { try await drive(vcrSession, requests, width: width) }
        case .loadJSON: operation = { try timed { try JSONSerialization.jsonObject(with: Data(contentsOf: file)) }.1 }
        case .loadRead: operation = { try timed { try CassetteFile.read(at: file) }.1 }
        case .loadInsert:
            operation = {
                let time = try timed { try insert(size, mode: .chronological) }.1
                try VCR.ejectCassette()
                return time
            }
        case .saveJSON:
            let document = try JSONSerialization.jsonObject(with: Data(contentsOf: file))
            let output = directory.appendingPathComponent("profile-floor.json")
            operation = {
                try timed {
                    try JSONSerialization.data(withJSONObject: document, options: [.prettyPrinted, .sortedKeys])
                        .write(to: output, options: .atomic)
                }.1
            }
        case .scopes:
            try writeScopeCassettes()
            operation = { try await replayScopes(vcrSession) }
        case .scopesPreloaded:
            try writeScopeCassettes()
            operation = { try await replayScopes(vcrSession, preloaded: true) }
        case .stubScopes:
            operation = { try await stubScopes(floorSession) }
        case .saveWrite:
            let tape = try CassetteFile.read(at: file).tape
            let output = directory.appendingPathComponent("profile-vcr.json")
            operation = { try timed { try CassetteFile.write(tape, to: output, as: .json) }.1 }
        }
        if [.scopes, .scopesPreloaded, .stubScopes].contains(what) {
            detail = "\(Self.scopeCount) scopes x \(Self.requestsPerScope) requests"
        } else if [.floor, .floor8, .replay, .replay8, .replayMomentary].contains(what) {
            detail += " requests"
        } else {
            detail += "-interaction cassette"
        }
        func run(measured: Bool) async throws -> (elapsed: Double, cpu: Double) {
            if let playback { _ = try insert(size, mode: playback) }
            defer { if playback != nil { try? VCR.ejectCassette() } }
            let cpuStart = processCPUTime()
            if measured { profileMeasuredStart() }
            let elapsed = try await operation()
            if measured { profileMeasuredEnd() }
            return (elapsed, processCPUTime() - cpuStart)
        }
        _ = try await run(measured: false)  // warm-up
        let (elapsed, cpu) = try await run(measured: true)
        print("profile \(what.rawValue), \(detail): \(String(format: "%.1f", elapsed * 1000)) ms, "
            + "\(String(format: "%.1f", cpu * 1000)) ms CPU")
    }

    /// Marks for callgrind around the measured operation: with `--dump-before='*profileMeasuredStart*'
    /// --dump-before='*profileMeasuredEnd*'`, part 2 of the output holds that operation alone.
    @inline(never) @_optimize(none) func profileMeasuredStart() {}
    @inline(never) @_optimize(none) func profileMeasuredEnd() {}

    // MARK: Memory

    /// What a loaded cassette holds, against its size on disk: the tape alone (`CassetteFile.read`), and the
    /// inserted cassette (tape, match index, player, the recorded requests as `URLRequest`s).
    mutating func memory() throws {
        progress("memory: loading the \(Self.largest)-interaction cassette")
        let disk = try bytesOnDisk(Self.largest)
        var tapeHeap: [Double] = [], cassetteHeap: [Double] = [], cassetteRSS: [Double] = [], peak: [Double] = []
        var floorHeap: [Double] = [], floorPeak: [Double] = []
        var available = true
        // Heap figures barely move between runs; a few are enough.
        for _ in 0..<(options.quick ? 1 : min(options.runs, 3)) {
            do {
                let before = Memory.Snapshot.take()
                Memory.resetPeak()
                let object = try JSONSerialization.jsonObject(with: Data(contentsOf: files[Self.largest]!))
                let after = Memory.Snapshot.take()
                withExtendedLifetime(object) {}
                let growth = after.growth(since: before)
                if let heap = growth.heap { floorHeap.append(Double(heap)) }
                if let value = growth.peak { floorPeak.append(Double(value)) }
            }
            do {
                let before = Memory.Snapshot.take()
                let (tape, _) = try CassetteFile.read(at: files[Self.largest]!)
                let after = Memory.Snapshot.take()
                withExtendedLifetime(tape) {}
                if let heap = after.growth(since: before).heap { tapeHeap.append(Double(heap)) } else { available = false }
            }
            do {
                let before = Memory.Snapshot.take()
                Memory.resetPeak()
                let cassette = try insert(Self.largest, mode: .chronological)
                let after = Memory.Snapshot.take()
                try VCR.ejectCassette()
                withExtendedLifetime(cassette) {}
                let growth = after.growth(since: before)
                if let heap = growth.heap { cassetteHeap.append(Double(heap)) }
                if let rss = growth.rss { cassetteRSS.append(Double(rss)) }
                if let value = growth.peak { peak.append(Double(value)) }
            }
        }
        let megabyte = 1_048_576.0
        let n = "\(Self.largest)"
        table.section("memory: the \(Self.largest)-interaction cassette (Linux: glibc heap in use, /proc/self/status)")
        table.add(Row("bytes on disk", n: n, unit: .megabytes, samples: [Double(disk) / megabyte], note: "\(disk) bytes, pretty-printed JSON"))
        guard available else {
            table.add(Row("memory", n: n, unit: .megabytes, note: "n/a on this platform"))
            return
        }
        table.add(Row("JSONSerialization object (floor), heap", n: n, unit: .megabytes, samples: floorHeap.map { $0 / megabyte },
                      note: String(format: "%.2fx disk: the parsed document alone", Stats.median(floorHeap) / Double(disk))))
        table.add(Row("tape (CassetteFile.read), heap", n: n, unit: .megabytes, samples: tapeHeap.map { $0 / megabyte },
                      note: String(format: "%.2fx disk", Stats.median(tapeHeap) / Double(disk))))
        table.add(Row("inserted cassette, heap", n: n, unit: .megabytes, samples: cassetteHeap.map { $0 / megabyte },
                      note: String(format: "%.2fx disk: tape, match index, player", Stats.median(cassetteHeap) / Double(disk))))
        table.add(Row("inserted cassette, RSS", n: n, unit: .megabytes, samples: cassetteRSS.map { $0 / megabyte },
                      note: "VmRSS growth after malloc_trim"))
        if !floorPeak.isEmpty {
            table.add(Row("peak RSS, JSONSerialization (floor)", n: n, unit: .megabytes, samples: floorPeak.map { $0 / megabyte },
                          note: String(format: "VmHWM growth: %.2fx disk", Stats.median(floorPeak) / Double(disk))))
        }
        if !peak.isEmpty {
            table.add(Row("peak RSS while inserting", n: n, unit: .megabytes, samples: peak.map { $0 / megabyte },
                          note: String(format: "VmHWM growth: %.2fx disk (parse tree included)", Stats.median(peak) / Double(disk))))
        }
        ratios["memory_vs_disk"] = Stats.median(cassetteHeap) / Double(disk)
    }

    // MARK: Cassette I/O

    /// Loading and saving the largest cassette, against `JSONSerialization` parsing and writing the same bytes.
    mutating func cassetteIO() throws {
        progress("cassette I/O: \(options.runs) runs of load and save, \(Self.largest) interactions")
        let file = files[Self.largest]!
        let n = "\(Self.largest)"
        let disk = try bytesOnDisk(Self.largest)
        let (tape, _) = try CassetteFile.read(at: file)
        let document = try JSONSerialization.jsonObject(with: Data(contentsOf: file))
        let floorOutput = directory.appendingPathComponent("save-floor.json")
        let vcrOutput = directory.appendingPathComponent("save-vcr.json")

        var loadFloor = Row("load: JSONSerialization (floor)", n: n, unit: .milliseconds, note: "Data(contentsOf:) + jsonObject(with:)")
        var loadRead = Row("load: CassetteFile.read", n: n, unit: .milliseconds, note: "read + parse + decode to a Tape")
        var loadInsert = Row("load: VCR.insertCassette", n: n, unit: .milliseconds, note: "read + decode + match index + player")
        var saveFloor = Row("save: JSONSerialization (floor)", n: n, unit: .milliseconds, note: "data(.prettyPrinted, .sortedKeys) + atomic write")
        var saveWrite = Row("save: CassetteFile.write", n: n, unit: .milliseconds, note: "encode + atomic write")
        var floorBytes = 0

        for _ in 0..<options.runs {
            let (object, floorTime) = try timed { try JSONSerialization.jsonObject(with: Data(contentsOf: file)) }
            withExtendedLifetime(object) {}
            loadFloor.samples.append(floorTime * 1000)

            let (decoded, readTime) = try timed { try CassetteFile.read(at: file) }
            withExtendedLifetime(decoded) {}
            loadRead.samples.append(readTime * 1000)

            let (cassette, insertTime) = try timed { try insert(Self.largest, mode: .chronological) }
            try VCR.ejectCassette()
            withExtendedLifetime(cassette) {}
            loadInsert.samples.append(insertTime * 1000)

            let (_, saveFloorTime) = try timed {
                let data = try JSONSerialization.data(withJSONObject: document, options: [.prettyPrinted, .sortedKeys])
                try data.write(to: floorOutput, options: .atomic)
                floorBytes = data.count
            }
            saveFloor.samples.append(saveFloorTime * 1000)

            let (_, saveTime) = try timed { try CassetteFile.write(tape, to: vcrOutput, as: .json) }
            saveWrite.samples.append(saveTime * 1000)
        }
        let saved = (try? Data(contentsOf: vcrOutput)) ?? Data()
        guard saved == (try? Data(contentsOf: file)) else {
            throw BenchFailure("CassetteFile.write of the tape read from \(file.path) did not give the same bytes")
        }
        table.section("cassette I/O: the \(Self.largest)-interaction cassette, \(disk) bytes on disk "
            + "(JSONSerialization writes \(floorBytes))")
        for row in [loadFloor, loadRead, loadInsert, saveFloor, saveWrite] { table.add(row) }
        ratios["load_vs_jsonserialization"] = loadInsert.pairedRatio(to: loadFloor)
        ratios["load_read_vs_jsonserialization"] = loadRead.pairedRatio(to: loadFloor)
        table.add(Row("load: CassetteFile.read / floor", n: n, unit: .ratio, samples: loadRead.samples.indices.map { loadRead.samples[$0] / loadFloor.samples[$0] },
                      note: "for reference; the target uses VCR.insertCassette"))
        ratios["save_vs_jsonserialization"] = saveWrite.pairedRatio(to: saveFloor)
    }

    // MARK: Replay

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

    private func drive(_ session: URLSession, _ requests: [URLRequest], width: Int) async throws -> Double {
        width == 1
            ? try await runSequential(session, requests, expectedBytes: 512)
            : try await runWindowed(session, requests, width: width, expectedBytes: 512)
    }

    /// Inserts a generated cassette for replay: `.never` (never records), the default matchers.
    private func insert(_ size: Int, mode: PlaybackMode) throws -> Cassette {
        try VCR.insertCassette { configuration in
            configuration.cassettesPath = directory.path
            configuration.cassettePath = Fixtures.cassetteName(size)
            configuration.playbackMode = mode
            configuration.recordMode = .never
            configuration.matchers = VCRConfiguration().matchers
        }
    }

    // MARK: Recording

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
