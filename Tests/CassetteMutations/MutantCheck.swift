import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCR

/// What happened to one mutant. None of these is a trap: a trap kills the process, which the runner detects.
public enum MutantOutcome: String, Sendable, CaseIterable {
    /// Read, inserted, replayed, and chapters added.
    case inserted
    /// Read, but inserting it failed with a `VCRError` naming the file (a chapter that comes before its request).
    case refusedOnInsert
    /// Reading failed with a `VCRError` naming the file.
    case rejected
    /// A `VCRError` whose message does not name the file. Must never happen.
    case unnamed
    /// Anything else that must never happen: another error, a tape HTTPVCR wrote but cannot read back, a
    /// `nextChapter` already in use, a replay that never finished, HTTPVCR's two JSON readers reading it apart.
    case misbehaved

    public var isFailure: Bool { self == .unnamed || self == .misbehaved }
}

public struct MutantResult: Sendable {
    public var outcome: MutantOutcome
    /// The error or the problem, for anything but ``MutantOutcome/inserted``.
    public var message: String?
}

/// Puts one mutant through everything a cassette file goes through: reading, the tape's own API, a new chapter,
/// writing and reading back, inserting in `.never` mode, replaying its first requests, ejecting.
public enum MutantCheck {
    /// Inserts a cassette with the configuration the first closure makes (``configuration(for:at:)``), runs the
    /// second with it, and ejects it. The tests hold the global cassette lock for this; the fuzz runner is alone
    /// in its process.
    public typealias Insert = (
        _ configure: (inout VCRConfiguration) -> Void,
        _ whileInserted: (Cassette) async -> Void
    ) async throws -> Void

    /// The configuration a mutant is inserted with: a fresh one, `.never` (nothing is ever recorded or sent), its
    /// absolute path. Half the mutants of each format are matched with every built-in matcher, so that each reads
    /// every recorded request; half play momentarily.
    public static func configuration(for mutant: Mutant, at url: URL) -> VCRConfiguration {
        var configuration = VCRConfiguration()
        configuration.cassettePath = url.path
        configuration.recordMode = .never
        configuration.allowsUninterceptedSharedSession = true
        // Formats take turns by index, so the variants turn once a round.
        let round = mutant.index / SeedFormat.allCases.count
        if round & 1 == 1 {
            configuration.matchers = [.method, .uri, .scheme, .host, .port, .path, .query, .headers, .body]
        }
        if round & 2 == 2 { configuration.playbackMode = .momentary }
        // Chronological playback waits this long for a chapter nobody asked for; 0.3 s each would make the run
        // mostly waiting.
        configuration.chronologicalWait = 0.02
        return configuration
    }

    public static func check(_ mutant: Mutant, in folder: URL, insert: Insert) async -> MutantResult {
        let url = folder.appendingPathComponent(mutant.fileName)
        do {
            try mutant.bytes.write(to: url)
        } catch {
            return MutantResult(outcome: .misbehaved, message: "could not write \(url.path): \(error)")
        }
        defer { try? FileManager.default.removeItem(at: url) }

        // Our JSON has two readers; where the fast one reads a file, the one reader must read the same tape.
        if let disagreement = CassetteFile.writtenLayoutDisagreement(mutant.bytes) {
            return MutantResult(outcome: .misbehaved, message: disagreement)
        }
        let tape: Tape
        do {
            tape = try CassetteFile.read(at: url).tape
        } catch {
            return named(error, url: url, outcome: .rejected)
        }
        if let problem = exercise(tape, path: url.path) {
            return MutantResult(outcome: .misbehaved, message: problem)
        }
        var replayProblem: String?
        do {
            let configuration = configuration(for: mutant, at: url)
            try await insert({ $0 = configuration }) { cassette in
                replayProblem = await replayRequests(of: cassette)
            }
        } catch let error as VCRError {
            return named(error, url: url, outcome: .refusedOnInsert)
        } catch {
            return MutantResult(outcome: .misbehaved, message: "inserting threw \(type(of: error)): \(error)")
        }
        if let replayProblem { return MutantResult(outcome: .misbehaved, message: replayProblem) }
        return MutantResult(outcome: .inserted)
    }

    private static func named(_ error: VCRError, url: URL, outcome: MutantOutcome) -> MutantResult {
        guard error.message.contains(url.path), error.cassettePath == url.path else {
            return MutantResult(outcome: .unnamed, message: "\(error.code): \(error.message)")
        }
        return MutantResult(outcome: outcome, message: error.message)
    }

    /// The tape's API, a new chapter, and a round trip through every format HTTPVCR writes. Returns a problem.
    public static func exercise(_ tape: Tape, path: String) -> String? {
        for interaction in tape.interactions {
            _ = (interaction.chapter, interaction.request, interaction.redirects, interaction.response)
            _ = (interaction.body, interaction.error, interaction.timeToFirstByte)
        }
        let next = tape.nextChapter
        if tape.scenes.contains(where: { $0.chapter == next }) { return "nextChapter \(next) is already on the tape" }
        var grown = tape
        grown.scenes += Interaction(
            chapter: next,
            request: RecordedRequest(method: "GET", url: "https://api.example.test/added"),
            response: RecordedResponse(url: "https://api.example.test/added", statusCode: 200),
            chunks: [Data("added".utf8)]
        ).scenes
        if grown.nextChapter <= next { return "nextChapter did not move past \(next)" }
        let written: Data
        do {
            written = try CassetteFile.encode(grown, as: .json)
            let reread = try CassetteFile.decode(written, path: path).tape
            if reread.scenes.count != grown.scenes.count {
                return "read back \(reread.scenes.count) of the \(grown.scenes.count) scenes HTTPVCR wrote"
            }
        } catch {
            return "HTTPVCR wrote a tape it cannot read back: \(error.message)"
        }
        // These may refuse a tape (a property list cannot hold every string); they must not trap.
        _ = try? CassetteFile.encode(grown, as: .plist)
        _ = try? CassetteFile.encode(grown, as: .har)
        return nil
    }

    // MARK: Replaying

    private static let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 10
        configuration.urlCache = nil
        VCR.install(in: configuration)
        return URLSession(configuration: configuration)
    }()

    /// How long a replay may take before it counts as hung. Replays take a millisecond or so.
    static let replayTimeout: TimeInterval = 10

    /// Asks for the first few recorded requests that are http(s) URLs, all at once and last first (so that
    /// chronological playback has to queue them), as a client would send them (method, URL, body). Each replays
    /// or fails as unmatched. Returns a problem if they do not all finish.
    static func replayRequests(of cassette: Cassette) async -> String? {
        defer { _ = VCR.takeFailures() }
        let requests: [URLRequest] = cassette.requests.lazy.compactMap { recorded -> URLRequest? in
            guard let url = recorded.url, ["http", "https"].contains(url.scheme?.lowercased() ?? "") else { return nil }
            var request = URLRequest(url: url)
            let method = recorded.httpMethod ?? "GET"
            // A client sends a plain method; anything else is sent as GET (and fails as unmatched).
            let isPlain = !method.isEmpty && method.utf8.allSatisfy { (65...90).contains($0) }  // A to Z
            request.httpMethod = isPlain ? method : "GET"
            request.httpBody = recorded.httpBody
            return request
        }.prefix(3).reversed()
        guard !requests.isEmpty else { return nil }
        let tasks = requests.map { request in
            { (done: @escaping @Sendable () -> Void) -> URLSessionDataTask in
                session.dataTask(with: request) { _, _, _ in done() }
            }
        }
        let finished = await withReplayTimeout(tasks)
        let urls = requests.map { $0.url?.absoluteString ?? "?" }.joined(separator: ", ")
        return finished ? nil : "replaying \(urls) did not finish in \(replayTimeout) s"
    }

    /// Runs the tasks the closures make; false if they did not all call back in time (they are then cancelled).
    private static func withReplayTimeout(
        _ makeTasks: [(@escaping @Sendable () -> Void) -> URLSessionDataTask]
    ) async -> Bool {
        let waiting = Countdown(makeTasks.count)
        return await withCheckedContinuation { continuation in
            let tasks = makeTasks.map { makeTask in
                makeTask { if waiting.finishOne() { continuation.resume(returning: true) } }
            }
            for task in tasks { task.resume() }
            DispatchQueue.global().asyncAfter(deadline: .now() + replayTimeout) {
                if waiting.giveUp() {
                    for task in tasks { task.cancel() }
                    continuation.resume(returning: false)
                }
            }
        }
    }

    /// Counts tasks down; whoever sees the end first (the last task, or the timeout) resumes the caller.
    private final class Countdown: @unchecked Sendable {
        private let lock = NSLock()
        private var remaining: Int
        private var isOver = false

        init(_ count: Int) {
            remaining = count
        }

        /// True for the task that finishes last, before the timeout.
        func finishOne() -> Bool {
            withLock {
                remaining -= 1
                guard remaining == 0, !isOver else { return false }
                isOver = true
                return true
            }
        }

        /// True if the tasks had not all finished.
        func giveUp() -> Bool {
            withLock {
                guard !isOver else { return false }
                isOver = true
                return true
            }
        }

        private func withLock<T>(_ body: () -> T) -> T {
            lock.lock()
            defer { lock.unlock() }
            return body()
        }
    }
}
