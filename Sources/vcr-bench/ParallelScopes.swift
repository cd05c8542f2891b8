import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCR

/// Test scopes that run in parallel, each with its cassette bound to its task, as HTTPVCRTesting's `.cassette`
/// trait runs them (share the scope lock, load, bind, make the requests, save): what a suite of parallel cassette
/// tests costs over the same requests answered by a bare stub, and what recording slow requests in parallel saves
/// over the scopes taking turns.
extension Bench {
    static let scopeCount = 200
    static let requestsPerScope = 3
    static let recordingScopes = 12

    mutating func parallelScopes() async throws {
        try writeScopeCassettes()
        let vcr = makeSession(.vcr)
        let floor = makeSession(.floor)
        defer {
            vcr.invalidateAndCancel()
            floor.invalidateAndCancel()
        }
        let requests = Double(Self.scopeCount * Self.requestsPerScope)
        let n = "\(Self.scopeCount)x\(Self.requestsPerScope)"
        var stubRow = Row("bare stub, scopes at once", n: n, unit: .requestsPerSecond, note: "FloorProtocol, no VCR")
        var scopeRow = Row("cassette scopes at once", n: n, unit: .requestsPerSecond,
                           note: "each loads its own cassette, bound to its task")
        progress("scopes: warming up")
        _ = try await replayScopes(vcr)
        _ = try await stubScopes(floor)
        for run in 1...options.runs {
            progress("scopes: run \(run) of \(options.runs)")
            stubRow.samples.append(requests / (try await stubScopes(floor)))
            scopeRow.samples.append(requests / (try await replayScopes(vcr)))
        }
        let vsStub = try await sandwiched("scopes / bare stub, each between two stub samples", n: n) {
            requests / (try await replayScopes(vcr))
        } between: {
            requests / (try await stubScopes(floor))
        }
        table.section("parallel cassette scopes: \(Self.scopeCount) scopes, \(Self.requestsPerScope) replayed GETs each, all at once")
        // Where the gap is: the same scopes with their cassettes loaded before the clock starts.
        var preloadedRow = Row("cassette scopes at once, loaded beforehand", n: n, unit: .requestsPerSecond,
                               note: "bind + requests + save; loading left out")
        for _ in 1...options.runs {
            preloadedRow.samples.append(requests / (try await replayScopes(vcr, preloaded: true)))
        }
        for row in [stubRow, scopeRow, preloadedRow, vsStub] { table.add(row) }
        ratios["parallel_scopes_vs_stub"] = vsStub.median

        try await parallelRecording()
    }

    /// Twelve scopes recording a 1-second request: at once (bound to their tasks), and one after the other
    /// (inserted for the process, as scopes that run alone do).
    private mutating func parallelRecording() async throws {
        table.section("recording in parallel scopes: /delay/1 on a live server; seconds, lower is better")
        guard let server = options.server else {
            table.add(Row("record in scopes", n: "-", unit: .milliseconds, note: "skipped (no --server)"))
            return
        }
        let session = makeSession(.vcr)
        defer { session.invalidateAndCancel() }
        let delay = server.appendingPathComponent("delay/1")
        let n = "\(Self.recordingScopes)"
        var one = Row("one scope", n: "1", unit: .milliseconds, note: delay.absoluteString)
        var parallel = Row("scopes at once", n: n, unit: .milliseconds, note: "each bound to its task")
        var serialized = Row("scopes one after the other", n: n, unit: .milliseconds, note: "inserted for the process, as before")
        var ratio = Row("at once / one scope", n: n, unit: .ratio, note: "sample by sample")
        let runs = options.quick ? 1 : options.runs
        var sample = 0
        for run in 1...runs {
            progress("scopes recording: run \(run) of \(runs)")
            sample += 1
            let single = try await recordBound(delay, scopes: 1, session: session, sample: sample)
            sample += 1
            let together = try await recordBound(delay, scopes: Self.recordingScopes, session: session, sample: sample)
            one.samples.append(single * 1000)
            parallel.samples.append(together * 1000)
            ratio.samples.append(together / single)
        }
        progress("scopes recording: one after the other")
        serialized.samples.append(try await recordSerialized(delay, session: session) * 1000)
        for row in [one, parallel, serialized, ratio] { table.add(row) }
        ratios["parallel_record_vs_one_request"] = ratio.median
    }

    // MARK: Scopes

    private func scopeRequest(_ scope: Int, _ index: Int) -> URLRequest {
        Fixtures.request(URL(string: "http://\(Fixtures.host)/scope/\(scope)/item/\(index)")!)
    }

    func writeScopeCassettes() throws {
        for scope in 0..<Self.scopeCount {
            let tape = Fixtures.tape(
                count: Self.requestsPerScope,
                url: { scopeRequest(scope, $0).url! },
                firstBody: scope * Self.requestsPerScope
            )
            try CassetteFile.write(tape, to: directory.appendingPathComponent("scope-\(scope).json"), as: .json)
        }
    }

    /// Every scope at once, each replaying its cassette's requests one after the other; returns the seconds.
    func replayScopes(_ session: URLSession, preloaded: Bool = false) async throws -> Double {
        let directory = directory.path
        let scopes = try (0..<Self.scopeCount).map { scope in
            (requests: (0..<Self.requestsPerScope).map { scopeRequest(scope, $0) },
             bodies: (0..<Self.requestsPerScope).map { Fixtures.body(scope * Self.requestsPerScope + $0) },
             cassette: preloaded ? try Self.loadScopeCassette("scope-\(scope)", in: directory, recordMode: .never) : nil)
        }
        let start = DispatchTime.now().uptimeNanoseconds
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (scope, (requests, bodies, loaded)) in scopes.enumerated() {
                group.addTask {
                    try await Self.inBoundScope(named: "scope-\(scope)", in: directory, recordMode: .never, loaded: loaded) { cassette in
                        for (request, body) in zip(requests, bodies) {
                            let (data, _) = try await session.data(for: request)
                            guard data == body else {
                                throw BenchFailure("scope \(scope): \(request.url!) was answered with another body")
                            }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        return seconds(since: start)
    }

    /// The same requests in the same shape, answered by the bare stub.
    func stubScopes(_ session: URLSession) async throws -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try await withThrowingTaskGroup(of: Void.self) { group in
            for scope in 0..<Self.scopeCount {
                let requests = (0..<Self.requestsPerScope).map { scopeRequest(scope, $0) }
                group.addTask { _ = try await runSequential(session, requests, expectedBytes: 512) }
            }
            try await group.waitForAll()
        }
        return seconds(since: start)
    }

    /// `scopes` scopes at once, each recording one request to `url`; returns the seconds.
    private func recordBound(_ url: URL, scopes: Int, session: URLSession, sample: Int) async throws -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        let directory = directory.path
        try await withThrowingTaskGroup(of: Void.self) { group in
            for scope in 0..<scopes {
                let request = URLRequest(url: url.appending(queryItems: [URLQueryItem(name: "scope", value: "\(scope)")]))
                group.addTask {
                    try await Self.inBoundScope(named: "record-\(sample)-\(scope)", in: directory, recordMode: .all) { cassette in
                        _ = try await runSequential(session, [request], expectedBytes: nil)
                        guard cassette.requests.count == 1 else {
                            throw BenchFailure("scope \(scope) recorded \(cassette.requests.count) requests, not 1")
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        return seconds(since: start)
    }

    /// The same twelve recordings with each scope's cassette inserted for the process, one scope at a time.
    private func recordSerialized(_ url: URL, session: URLSession) async throws -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        for scope in 0..<Self.recordingScopes {
            let request = URLRequest(url: url.appending(queryItems: [URLQueryItem(name: "scope", value: "\(scope)")]))
            try await VCRCassetteLock.shared.withLock {
                let cassette = try VCR.insertCassette { configuration in
                    configuration.cassettesPath = directory.path
                    configuration.cassettePath = "record-serialized-\(scope)"
                    configuration.recordMode = .all
                }
                do {
                    _ = try await runSequential(session, [request], expectedBytes: nil)
                } catch {
                    try? VCR.ejectCassette()
                    throw error
                }
                try VCR.ejectCassette()
                guard cassette.requests.count == 1 else {
                    throw BenchFailure("scope \(scope) recorded \(cassette.requests.count) requests, not 1")
                }
            }
        }
        return seconds(since: start)
    }

    /// What a bound test scope does around its test: share the scope lock, load the cassette, run `body` with it
    /// bound to the task, save it, and fail on anything it refused.
    private static func inBoundScope(
        named name: String,
        in directory: String,
        recordMode: RecordMode,
        loaded: Cassette? = nil,
        _ body: (Cassette) async throws -> Void
    ) async throws {
        await VCRCassetteLock.shared.lockShared()
        defer { VCRCassetteLock.shared.unlockShared() }
        let cassette = try loaded ?? loadScopeCassette(name, in: directory, recordMode: recordMode)
        try await VCR.withCassette(cassette) { try await body(cassette) }
        try VCR.saveBoundCassette(cassette)
        if let failure = cassette.takeFailures().first { throw failure }
    }

    /// What HTTPVCRTesting's scopes set: their folder and name, worked out before the test (here, once).
    private static func loadScopeCassette(_ name: String, in directory: String, recordMode: RecordMode) throws -> Cassette {
        try VCR.loadCassette { configuration in
            configuration.cassettesPath = directory
            configuration.cassettePath = name
            configuration.recordMode = recordMode
            configuration.matchers = defaultMatchers
        }
    }

    private static let defaultMatchers = VCRConfiguration().matchers
}

