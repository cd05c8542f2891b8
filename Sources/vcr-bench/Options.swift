import Foundation

/// Command-line options of `vcr-bench`.
struct Options: Sendable {
    /// A short run CI can afford: fewer runs, fewer requests, the same rows and ratios.
    var quick = false
    /// Repetitions of every measurement (the table shows their median, min and max).
    var runs = 5
    /// A live server for the recording rows (`--server`, or `HTTPBIN_URL`).
    var server: URL?
    /// Only these sections (for profiling one thing at a time); empty: all of them.
    var sections: Set<Section> = []
    /// Log every sample to stderr as it is taken.
    var verbose = false
    /// Profiling: do only this, once, and print how long it took (see ``Profile``).
    var profile: Profile?
    /// The cassette size (and request count) of `--profile`.
    var profileSize = 1_000
    /// `--bridge-client N`: be the launched process of the bridge rows (see `BridgeReplay`), not the benchmark.
    var bridgeClient: Int?
    /// Where cassettes are generated. A fresh temporary folder unless given; removed at the end unless given.
    var workDirectory: URL?

    enum Section: String, CaseIterable, Sendable {
        case replay, io, memory, record, scopes, bridge
    }

    /// Requests of the floor rows and of each replay row, by cassette size.
    var cassetteSizes: [Int] { [100, 1_000, 10_000] }
    /// How many interactions of a cassette one replay sample plays (every one, in tape order).
    func replayed(from size: Int) -> Int {
        // In --quick the 10,000-interaction cassette is still loaded whole, but only its first 2,000
        // interactions are replayed: enough for the per-request time, a fifth of the wall time.
        quick && size > 2_000 ? 2_000 : size
    }
    /// Each replay sample covers at least this many requests: small cassettes are replayed several times
    /// (inserted again each time; only the requests are timed).
    var minimumRequestsPerSample: Int { quick ? 1_000 : 2_000 }
    var recordRequests: Int { quick ? 60 : 200 }
    var concurrency: Int { 8 }

    func includes(_ section: Section) -> Bool { sections.isEmpty || sections.contains(section) }

    static let usage = """
        Usage: vcr-bench [--quick] [--runs N] [--server URL] [--only SECTION[,SECTION...]] [--dir PATH] [--no-pin]
                         [--verbose]
               vcr-bench --profile WHAT [--size N]

        Measures HTTPVCR against its floors in one process and prints a table (median of several runs, with
        min and max), then one line of JSON with the ratios the targets are stated in.

          --quick          a short run for CI: 3 runs, fewer requests (the 10,000-interaction cassette is still
                           loaded and saved whole; its replay row plays its first 2,000 interactions)
          --runs N         repetitions of every measurement (default 5, 3 with --quick)
          --server URL     a live HTTP server (e.g. a local httpbin) for the recording rows; defaults to the
                           HTTPBIN_URL environment variable. Without one the recording rows are skipped.
          --only SECTIONS  run only some sections: replay, io, memory, record, scopes, bridge (comma-separated)
          --dir PATH       generate the cassettes here and keep them (default: a temporary folder, removed)
          --no-pin         run on every CPU instead of one (Linux pins the process to one CPU by default:
                           thread handovers between CPUs make timings swing by a factor of two)
          --verbose        log every sample to stderr as it is taken
          -h, --help       this text

        Profiling (e.g. under valgrind --tool=callgrind): do one thing once, with a warm-up, and print its time.
          --profile WHAT   floor, floor-8, replay, replay-8, replay-momentary, load-json, load-read, load-insert,
                           save-json, save-write, scopes, scopes-preloaded, stub-scopes (rows of the parallel scopes
                           section), bridge-answer (the test process's side of bridged replays, without sockets)
          --size N         cassette size for --profile (default 1000); replay rows replay all N interactions

        Timings on a shared machine are noisy: compare the ratios, which are taken within one run.
        """

    static func parse(_ arguments: [String]) throws -> Options {
        var options = Options()
        var explicitRuns: Int?
        var iterator = arguments.makeIterator()
        func value(for flag: String) throws -> String {
            guard let value = iterator.next() else { throw UsageError("\(flag) needs a value") }
            return value
        }
        while let argument = iterator.next() {
            switch argument {
            case "--quick":
                options.quick = true
            case "--verbose":
                options.verbose = true
            case "--no-pin":
                break  // acted on in main.swift, before the first thread starts
            case "--runs":
                let text = try value(for: argument)
                guard let runs = Int(text), runs > 0 else { throw UsageError("--runs needs a positive number, not \(text)") }
                explicitRuns = runs
            case "--server":
                let text = try value(for: argument)
                guard let url = URL(string: text), url.scheme != nil else { throw UsageError("--server needs a URL, not \(text)") }
                options.server = url
            case "--only":
                for name in try value(for: argument).split(separator: ",") {
                    guard let section = Section(rawValue: String(name)) else {
                        throw UsageError("unknown section \(name) (replay, io, memory, record, scopes, bridge)")
                    }
                    options.sections.insert(section)
                }
            case "--profile":
                let text = try value(for: argument)
                guard let profile = Profile(rawValue: text) else {
                    throw UsageError("unknown --profile \(text) (\(Profile.allCases.map(\.rawValue).joined(separator: ", ")))")
                }
                options.profile = profile
            case "--size":
                let text = try value(for: argument)
                guard let size = Int(text), size > 0 else { throw UsageError("--size needs a positive number, not \(text)") }
                options.profileSize = size
            case "--bridge-client":
                let text = try value(for: argument)
                guard let count = Int(text), count > 0 else { throw UsageError("--bridge-client needs a count, not \(text)") }
                options.bridgeClient = count
            case "--dir":
                options.workDirectory = URL(fileURLWithPath: try value(for: argument))
            case "-h", "--help":
                throw UsageError(nil)
            default:
                throw UsageError("unknown argument \(argument)")
            }
        }
        options.runs = explicitRuns ?? (options.quick ? 3 : 5)
        if options.server == nil, let text = ProcessInfo.processInfo.environment["HTTPBIN_URL"], !text.isEmpty {
            options.server = URL(string: text)
        }
        return options
    }
}

enum Profile: String, CaseIterable, Sendable {
    case floor, floor8 = "floor-8", replay, replay8 = "replay-8", replayMomentary = "replay-momentary"
    /// The same requests made with completion handlers: corelibs calls those on the delegate queue for the stub
    /// and for HTTPVCR alike, so the async callers' hop (see Docs/Performance.md) is in neither.
    case floorHandler = "floor-handler", replayHandler = "replay-handler"
    case loadJSON = "load-json", loadRead = "load-read", loadInsert = "load-insert"
    case saveJSON = "save-json", saveWrite = "save-write"
    case scopes, scopesPreloaded = "scopes-preloaded", stubScopes = "stub-scopes"
    /// The bridge's side of bridged replays, without sockets: parse, answer from the cassette, write.
    case bridgeAnswer = "bridge-answer"
    /// Requests recorded from a live server (`--server`, as the recording rows), with completion handlers.
    case recordHandler = "record-handler"
}

struct UsageError: Error {
    let message: String?
    init(_ message: String?) { self.message = message }
}
