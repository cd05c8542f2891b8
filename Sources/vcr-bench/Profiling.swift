import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCR

extension Bench {
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
        /// The record profile inserts an empty cassette before each run; saving it when ejected is not measured.
        var records = false
        let operation: () async throws -> Double
        switch what {
        case .floor: operation = { try await drive(floorSession, requests, width: 1) }
        case .floor8: operation = { try await drive(floorSession, requests, width: options.concurrency) }
        case .floorHandler: operation = { try await runWithHandlers(floorSession, requests, expectedBytes: 512) }
        case .replayHandler:
            playback = .chronological
            operation = { try await runWithHandlers(vcrSession, requests, expectedBytes: 512) }
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
        case .bridgeAnswer:
            playback = .momentary
            let answers = VCRBridge.ProfiledAnswers()
            let inFlight = requests.map(answers.bytes(of:))
            operation = {
                try timed {
                    for bytes in inFlight where answers.answer(bytes).isEmpty { throw BenchFailure("no answer") }
                }.1
            }
        case .recordHandler:
            guard let server = options.server else { throw UsageError("--profile record-handler needs --server URL") }
            let live = (0..<size).map {
                URLRequest(url: server.appendingPathComponent("bytes/512").appending(queryItems: [URLQueryItem(name: "seed", value: "\($0)")]))
            }
            records = true
            operation = { try await runWithHandlers(vcrSession, live, expectedBytes: 512) }
        case .saveWrite:
            let tape = try CassetteFile.read(at: file).tape
            let output = directory.appendingPathComponent("profile-vcr.json")
            operation = { try timed { try CassetteFile.write(tape, to: output, as: .json) }.1 }
        }
        if [.scopes, .scopesPreloaded, .stubScopes].contains(what) {
            detail = "\(Self.scopeCount) scopes x \(Self.requestsPerScope) requests"
        } else if [
            .floor, .floor8, .replay, .replay8, .replayMomentary, .floorHandler, .replayHandler, .bridgeAnswer,
            .recordHandler,
        ].contains(what) {
            detail += " requests"
        } else {
            detail += "-interaction cassette"
        }
        func run(measured: Bool) async throws -> (elapsed: Double, cpu: Double) {
            if let playback { _ = try insert(size, mode: playback) }
            if records { _ = try insertForRecording() }
            defer { if playback != nil || records { try? VCR.ejectCassette() } }
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
}
