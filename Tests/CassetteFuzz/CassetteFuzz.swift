import CassetteMutations
import Foundation
import HTTPVCR

/// Runs many cassette mutants and reports, per format, how many were read, rejected with an error naming the
/// file, or trapped. `scripts/fuzz-cassettes` builds and runs it; its header explains the options.
///
/// A trap kills the process, so the mutants run in a worker process that logs each mutant's index before trying
/// it. When the worker dies, the last index it started is the mutant that trapped: it is reported, written to
/// the output folder, and a new worker carries on after it.
@main
struct CassetteFuzz {
    static func main() async {
        let options = Options(CommandLine.arguments.dropFirst())
        if options.wantsHelp {
            print(Options.usage)
            exit(0)
        }
        if let problem = options.problem {
            FileHandle.standardError.write(Data("cassette-fuzz: \(problem)\n\n\(Options.usage)\n".utf8))
            exit(2)
        }
        if options.isWorker {
            await runWorker(options)
        } else if let index = options.index {
            await reproduce(index: index, options: options)
        } else {
            exit(runParent(options))
        }
    }

    // MARK: One mutant

    static func reproduce(index: Int, options: Options) async {
        let mutant = Mutant.make(index: index, runSeed: options.seed)
        print(mutant.summary)
        if let path = options.write {
            do {
                try mutant.bytes.write(to: URL(fileURLWithPath: path))
                print("written to \(path)")
            } catch {
                print("cannot write \(path): \(error)")
            }
        }
        let folder = temporaryFolder("reproduce")
        defer { try? FileManager.default.removeItem(at: folder) }
        let result = await MutantCheck.check(mutant, in: folder, insert: insertDirectly)
        print("\(result.outcome.rawValue)\(result.message.map { ": \($0)" } ?? "")")
        exit(result.outcome.isFailure ? 1 : 0)
    }

    static func insertDirectly(
        _ configure: (inout VCRConfiguration) -> Void,
        _ whileInserted: (Cassette) async -> Void
    ) async throws {
        let cassette = try VCR.insertCassette(configure)
        await whileInserted(cassette)
        try VCR.ejectCassette()
    }

    // MARK: Worker

    /// Checks mutants `from..<to`, writing `start i` before each and `end i outcome<TAB>message` after it.
    static func runWorker(_ options: Options) async {
        guard let logPath = options.log, let log = FileHandle(forWritingAtPath: logPath) else {
            FileHandle.standardError.write(Data("cassette-fuzz: the worker needs --log FILE (an existing file)\n".utf8))
            exit(2)
        }
        let folder = temporaryFolder("worker")
        defer { try? FileManager.default.removeItem(at: folder) }
        VCR.setup { _ in }
        for index in options.from..<options.to {
            // Written straight to the file (no buffer), so it is there even if this mutant kills the process.
            log.write(Data("start \(index)\n".utf8))
            let result = await MutantCheck.check(Mutant.make(index: index, runSeed: options.seed), in: folder,
                                                 insert: insertDirectly)
            let message = (result.message ?? "").prefix(400).map { $0 == "\n" || $0 == "\t" ? " " : $0 }
            log.write(Data("end \(index) \(result.outcome.rawValue)\t\(String(message))\n".utf8))
            if (index + 1 - options.from) % 2_000 == 0 { print("  … \(index + 1 - options.from) mutants") }
        }
        exit(0)
    }

    // MARK: Parent

    struct Failure {
        let index: Int
        let what: String
        let message: String
    }

    static func runParent(_ options: Options) -> Int32 {
        let start = Date()
        let work = temporaryFolder("run")
        defer { try? FileManager.default.removeItem(at: work) }
        let output = URL(fileURLWithPath: options.out ?? FileManager.default.temporaryDirectory
            .appendingPathComponent("cassette-fuzz-failures").path)
        let end = options.from + options.count
        var counts: [SeedFormat: [String: Int]] = [:]
        var failures: [Failure] = []
        var next = options.from
        print("cassette-fuzz: \(options.count) mutants from seed \(options.seed), "
            + "\(SeedCassette.all.count) seed cassettes in \(SeedFormat.allCases.count) formats")

        while next < end {
            let log = work.appendingPathComponent("worker.log")
            let errors = work.appendingPathComponent("worker.stderr")
            let worker: Process
            fflush(nil)  // into a file or a pipe, what was printed so far comes before the worker's progress
            do {
                worker = try startWorker(options, from: next, to: end, log: log, errors: errors)
            } catch {
                print("cassette-fuzz: cannot start a worker: \(error)")
                return 2
            }
            let hung = !waitForWorker(worker, log: log)

            let entries = WorkerLog(log)
            for (index, outcome, message) in entries.ended {
                counts[Mutant.format(ofIndex: index), default: [:]][outcome, default: 0] += 1
                if MutantOutcome(rawValue: outcome)?.isFailure ?? true {
                    failures.append(Failure(index: index, what: outcome, message: message))
                }
            }
            for index in entries.started {
                counts[Mutant.format(ofIndex: index), default: [:]]["mutants", default: 0] += 1
            }
            if !hung, worker.terminationReason == .exit, worker.terminationStatus == 0, entries.lastEnded == end - 1 {
                break
            }
            // The worker died (or hung) in the mutant it started last: report it, and carry on after it.
            guard let failed = entries.started.last, failed != entries.lastEnded else {
                print("cassette-fuzz: the worker stopped outside any mutant (status \(worker.terminationStatus)):")
                print((try? String(contentsOf: errors, encoding: .utf8)) ?? "")
                return 2
            }
            let mutant = Mutant.make(index: failed, runSeed: options.seed)
            let what = hung ? "hung" : "trapped"
            let saved = output.appendingPathComponent("\(what)-\(options.seed)-\(mutant.fileName)")
            try? FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
            try? mutant.bytes.write(to: saved)
            let reason = hung ? "no progress for \(Int(workerPatience)) s, stopped"
                : worker.terminationReason == .uncaughtSignal ? "signal \(worker.terminationStatus)"
                : "exit status \(worker.terminationStatus)"
            let crash = crashSummary((try? String(contentsOf: errors, encoding: .utf8)) ?? "")
            counts[mutant.seed.format, default: [:]][what, default: 0] += 1
            failures.append(Failure(
                index: failed,
                what: what,
                message: "\(reason); \(mutant.summary); saved as \(saved.path)\n    \(crash)"
            ))
            next = failed + 1
        }

        report(counts: counts, failures: failures, options: options, seconds: Date().timeIntervalSince(start))
        return failures.isEmpty ? 0 : 1
    }

    static func startWorker(_ options: Options, from: Int, to: Int, log: URL, errors: URL) throws -> Process {
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
        let worker = Process()
        worker.executableURL = Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
        worker.arguments = ["--worker", "--seed", String(options.seed), "--from", String(from), "--to", String(to),
                            "--log", log.path]
        worker.standardError = FileHandle(forWritingAtPath: errors.path)
        try worker.run()
        return worker
    }

    /// What a worker wrote: the mutants it started, and the outcome of those it finished.
    struct WorkerLog {
        var started: [Int] = []
        var ended: [(index: Int, outcome: String, message: String)] = []
        var lastEnded: Int? { ended.last?.index }

        init(_ url: URL) {
            let text = (try? String(contentsOf: url, encoding: .utf8)) ?? ""
            for line in text.split(separator: "\n") {
                let fields = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
                guard fields.count >= 2, let index = Int(fields[1]) else { continue }
                if fields[0] == "start" {
                    started.append(index)
                } else if fields[0] == "end", fields.count == 3 {
                    let parts = fields[2].split(separator: "\t", maxSplits: 1, omittingEmptySubsequences: false)
                    ended.append((index, String(parts[0]), parts.count > 1 ? String(parts[1]) : ""))
                }
            }
        }
    }

    /// How long a worker may go without finishing a mutant. A replay gives up after 10 s by itself.
    static let workerPatience: TimeInterval = 60

    /// Waits for the worker to exit; false if it stopped making progress and was killed.
    static func waitForWorker(_ worker: Process, log: URL) -> Bool {
        var lastSize = -1
        var lastProgress = Date()
        while worker.isRunning {
            Thread.sleep(forTimeInterval: 0.05)
            let size = (try? FileManager.default.attributesOfItem(atPath: log.path)[.size] as? Int) ?? 0
            if size != lastSize {
                lastSize = size
                lastProgress = Date()
            } else if Date().timeIntervalSince(lastProgress) > workerPatience {
                worker.interrupt()
                Thread.sleep(forTimeInterval: 1)
                if worker.isRunning { kill(worker.processIdentifier, SIGKILL) }
                worker.waitUntilExit()
                return false
            }
        }
        worker.waitUntilExit()
        return true
    }

    /// The lines of a crash report worth reading: the failure, and the top of the thread that crashed.
    static func crashSummary(_ stderr: String) -> String {
        let lines = stderr.split(separator: "\n").map(String.init)
        var summary = lines.filter { $0.contains("runtime failure") || $0.contains("Fatal error") }.prefix(2).map { $0 }
        if let crashed = lines.firstIndex(where: { $0.contains(" crashed:") }) {
            summary += lines[crashed...].prefix(9)
        }
        return (summary.isEmpty ? Array(lines.prefix(12)) : summary).joined(separator: "\n    ")
    }

    static func report(counts: [SeedFormat: [String: Int]], failures: [Failure], options: Options, seconds: Double) {
        let columns = ["mutants", "decoded", "inserted", "refusedOnInsert", "rejected", "unnamed", "misbehaved",
                       "trapped", "hung"]
        let titles = ["mutants", "decoded", "inserted", "refused on insert", "rejected (VCRError naming the file)",
                      "error without the file", "misbehaved", "trapped", "hung"]
        func value(_ row: [String: Int], _ column: String) -> Int {
            guard column == "decoded" else { return row[column, default: 0] }
            return row["inserted", default: 0] + row["refusedOnInsert", default: 0]
        }
        var total: [String: Int] = [:]
        for row in counts.values { for (key, count) in row { total[key, default: 0] += count } }
        let header = ["format".padding(toLength: 16, withPad: " ", startingAt: 0)]
            + columns.map { $0 == "refusedOnInsert" ? "refused" : $0 }.map { $0.leftPadded(10) }
        print("")
        print(header.joined(separator: " "))
        for format in SeedFormat.allCases {
            let row = counts[format] ?? [:]
            print(([format.rawValue.padding(toLength: 16, withPad: " ", startingAt: 0)]
                + columns.map { String(value(row, $0)).leftPadded(10) }).joined(separator: " "))
        }
        print((["total".padding(toLength: 16, withPad: " ", startingAt: 0)]
            + columns.map { String(value(total, $0)).leftPadded(10) }).joined(separator: " "))
        print("")
        for (column, title) in zip(columns, titles) where column != "mutants" {
            print("\(title): \(value(total, column))")
        }
        print(String(format: "time: %.1f s (%.2f ms per mutant)", seconds,
                     seconds * 1000 / Double(max(1, options.count))))
        guard !failures.isEmpty else { return }
        print("\n\(failures.count) failures (each reproduces with: scripts/fuzz-cassettes --seed \(options.seed) "
            + "--index N --write FILE):")
        for failure in failures.prefix(50) {
            print("  [\(failure.index)] \(failure.what): \(failure.message)")
        }
    }

    static func temporaryFolder(_ purpose: String) -> URL {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("cassette-fuzz-\(purpose)-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }
}

extension String {
    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}

struct Options {
    var count = 10_000
    var seed: UInt64 = 1
    var from = 0
    var to = 0
    var out: String?
    var index: Int?
    var write: String?
    var log: String?
    var isWorker = false
    var wantsHelp = false
    var problem: String?

    static let usage = """
        usage: cassette-fuzz [--count N] [--seed S] [--from I] [--out DIR]
               cassette-fuzz --index I [--seed S] [--write FILE]
          --count N     how many mutants (default 10000)
          --seed S      the run's seed (default 1); mutant I of seed S is always the same file
          --from I      the first mutant's index (default 0)
          --out DIR     where mutants that trapped or hung are saved (default: $TMPDIR/cassette-fuzz-failures)
          --index I     make, describe and check mutant I alone (in this process: a trap shows its backtrace)
          --write FILE  with --index: also save the mutant as FILE
        """

    init<Arguments: Collection>(_ arguments: Arguments) where Arguments.Element == String {
        var remaining = Array(arguments)[...]
        func value(_ name: String) -> String? {
            guard let value = remaining.popFirst() else {
                problem = "\(name) needs a value"
                return nil
            }
            return value
        }
        func number<T: FixedWidthInteger>(_ name: String) -> T? {
            guard let text = value(name) else { return nil }
            guard let number = T(text) else {
                problem = "\(name): not a number: \(text)"
                return nil
            }
            return number
        }
        while let argument = remaining.popFirst() {
            switch argument {
            case "--count": count = number(argument) ?? count
            case "--seed": seed = number(argument) ?? seed
            case "--from": from = number(argument) ?? from
            case "--to": to = number(argument) ?? to
            case "--out": out = value(argument)
            case "--index": index = number(argument)
            case "--write": write = value(argument)
            case "--log": log = value(argument)
            case "--worker": isWorker = true
            case "--help", "-h": wantsHelp = true
            default: problem = "unknown argument \(argument)"
            }
        }
        if count < 0 || from < 0 { problem = "--count and --from must not be negative" }
    }
}
