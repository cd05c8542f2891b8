// Scenarios that need a process of their own: what a user's process did before the first VCR call cannot be
// undone inside the test runner, which has long registered HTTPVCR. FreshProcessTests runs each one.
//
//   vcr-scenarios shared-session-made-first     URLSession.shared used before VCR: inserting must refuse
//   vcr-scenarios session-made-first FOLDER     a session made before VCR.setup: records, then refuses offline
//   vcr-scenarios stress FOLDER COUNT           COUNT concurrent requests recorded, then replayed
//   vcr-scenarios mismatch-in-group FOLDER      one unmatched request among 20 in a task group
//   vcr-scenarios cancel-storm FOLDER           tasks cancelled while their chapters are delivered
//   vcr-scenarios leftover-child                exits with a child it launched through a bridge still running
//   vcr-scenarios side-sessions FOLDER ID       sessions HTTPVCR is not in, made before and after VCR.setup
//   vcr-scenarios network-off                   run with VCR_ALLOW_NETWORK=0: no cassette, no network
//   vcr-scenarios lock-order                    two locks taken against the lock order: a debug build traps
//   vcr-scenarios matcher-under-lock            a matcher's closure run under a lock: a debug build traps
//
// Each prints `ok: …` and exits 0, or prints what went wrong and exits 1. HTTPBIN_URL names the server.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCR

struct ScenarioFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

func httpbin(_ pathAndQuery: String) throws -> URL {
    guard let base = ProcessInfo.processInfo.environment["HTTPBIN_URL"], !base.isEmpty,
          let url = URL(string: base + pathAndQuery)
    else { throw ScenarioFailure("HTTPBIN_URL is not set: run through scripts/with-httpbin") }
    return url
}

func check(_ condition: Bool, _ message: @autoclosure () -> String) throws {
    if !condition { throw ScenarioFailure(message()) }
}

/// httpbin's `/anything` echoes the URL it was asked for: the body says which request it answers.
func echoedURL(_ data: Data) -> String? {
    ((try? JSONSerialization.jsonObject(with: data)) as? [String: Any])?["url"] as? String
}

func sharedSessionMadeFirst() async throws -> String {
    _ = URLSession.shared  // an app's client, a probe: anything that touches it before HTTPVCR
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("scenario-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    VCR.setup { $0.cassettesPath = folder.path }
    do {
        try VCR.insertCassette("refused")
        throw ScenarioFailure("insertCassette accepted a cassette the shared session bypasses")
    } catch let error as VCRError {
        try check(error.code == .sharedSessionNotIntercepted, "wrong error: \(error)")
        try check(error.message.contains("URLSession.shared was made before HTTPVCR registered itself"),
                  "unclear message: \(error.message)")
    }
    // Opted out: the cassette goes in, for installed sessions.
    try VCR.insertCassette { $0.cassettePath = "installed-only"; $0.allowsUninterceptedSharedSession = true }
    try VCR.ejectCassette()
    return "refused with sharedSessionNotIntercepted"
}

func sessionMadeFirst(folder: String) async throws -> String {
    _ = URLSession(configuration: .ephemeral)  // makes corelibs register its native protocols first
    VCR.setup { $0.cassettesPath = folder }
    let url = try httpbin("/anything/made-first?id=\(UUID().uuidString)")
    try VCR.insertCassette("made-first")
    let (recorded, _) = try await URLSession.shared.data(from: url)
    try VCR.ejectCassette()
    let (tape, _) = try CassetteFile.read(at: URL(fileURLWithPath: folder + "/made-first.json"))
    try check(tape.interactions.map(\.request.url) == [url.absoluteString], "not recorded: \(tape.interactions)")

    try VCR.insertCassette { $0.cassettePath = "made-first"; $0.recordMode = .never }
    defer { try? VCR.ejectCassette() }
    let (replayed, _) = try await URLSession.shared.data(from: url)
    try check(replayed == recorded, "replayed another body")
    do {
        _ = try await URLSession.shared.data(from: try httpbin("/anything/made-first-unrecorded"))
        throw ScenarioFailure("an unmatched request on a .never cassette was answered")
    } catch let error as VCRError {
        try check(error.code == .noMatch, "wrong error: \(error)")
    }
    return "recorded, replayed, and refused the unmatched request"
}

func stress(folder: String, count: Int) async throws -> String {
    _ = URLSession(configuration: .ephemeral)
    VCR.setup { $0.cassettesPath = folder }
    let run = UUID().uuidString
    let urls = try (0..<count).map { try httpbin("/anything/stress/\($0)?run=\(run)") }

    func fetchAll() async throws -> [URL: Data] {
        try await withThrowingTaskGroup(of: (URL, Data).self) { group in
            for url in urls { group.addTask { (url, try await URLSession.shared.data(from: url).0) } }
            var bodies: [URL: Data] = [:]
            for try await (url, body) in group { bodies[url] = body }
            return bodies
        }
    }
    func checkOwnBodies(_ bodies: [URL: Data], _ phase: String) throws {
        try check(bodies.count == count, "\(phase): \(bodies.count) of \(count) answered")
        let crossed = bodies.filter { echoedURL($0.value) != $0.key.absoluteString }
        try check(crossed.isEmpty, "\(phase): \(crossed.count) requests got another request's body, e.g. "
            + "\(crossed.first.map { "\($0.key) got \(echoedURL($0.value) ?? "?")" } ?? "")")
    }

    try VCR.insertCassette("stress")
    let recorded = try await fetchAll()
    try VCR.ejectCassette()
    try checkOwnBodies(recorded, "recording")
    let (tape, _) = try CassetteFile.read(at: URL(fileURLWithPath: folder + "/stress.json"))
    let taped = Dictionary(tape.interactions.map { ($0.request.url, $0.body) }, uniquingKeysWith: { first, _ in first })
    try check(tape.interactions.count == count && taped.count == count, "the tape holds \(tape.interactions.count)")
    let crossedOnTape = taped.filter { echoedURL($0.value) != $0.key }
    try check(crossedOnTape.isEmpty, "\(crossedOnTape.count) taped bodies belong to other requests")

    try VCR.insertCassette { $0.cassettePath = "stress"; $0.recordMode = .never }
    let replayed = try await fetchAll()
    let cassette = VCR.cassette
    try VCR.ejectCassette()
    try checkOwnBodies(replayed, "replay")
    try check(cassette?.allPlayed == true, "not every recording was replayed")
    return "\(count) recorded and \(count) replayed, every body its own"
}

func mismatchInGroup(folder: String) async throws -> String {
    VCR.setup { $0.cassettesPath = folder }
    // Recorded from the server, 19 requests in flight together: chapters interleave on the tape as they did.
    let urls = try (1...19).map { try httpbin("/anything/group/\($0)") }
    try VCR.insertCassette("group")
    try await withThrowingTaskGroup(of: Void.self) { group in
        for url in urls { group.addTask { _ = try await URLSession.shared.data(from: url) } }
        try await group.waitForAll()
    }
    try VCR.ejectCassette()
    var outcomes: [String: Int] = [:]
    for round in 0..<20 {
        try VCR.insertCassette { $0.cassettePath = "group"; $0.recordMode = .never }
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                // The unmatched request moves through the group from round to round.
                var requested = urls
                requested.insert(try httpbin("/anything/group/unmatched"), at: round % 20)
                for url in requested { group.addTask { _ = try await URLSession.shared.data(from: url) } }
                try await group.waitForAll()
            }
            throw ScenarioFailure("round \(round): the unmatched request did not fail the group")
        } catch let error as VCRError where error.code == .noMatch {
            outcomes["noMatch", default: 0] += 1
        }
        try VCR.ejectCassette()
        _ = VCR.takeFailures()
    }
    return "20 rounds, each failed by its unmatched request: \(outcomes)"
}

/// Tasks cancelled while their replayed chapters are being delivered: HTTPVCR must leave a cancelled task to
/// corelibs (which tells its client itself) and never finish it in between.
func cancelStorm(folder: String) async throws -> String {
    VCR.setup { $0.cassettesPath = folder }
    let count = 60
    var scenes: [Tape.Scene] = []
    for chapter in 1...count {
        let url = "http://replay.test/\(chapter)"
        scenes += [
            Tape.Scene(chapter: chapter, event: .request(RecordedRequest(method: "GET", url: url))),
            Tape.Scene(chapter: chapter, event: .response(RecordedResponse(url: url, statusCode: 200))),
            Tape.Scene(chapter: chapter, event: .data(Data("body \(chapter)".utf8))),
            Tape.Scene(chapter: chapter, event: .completion),
        ]
    }
    try CassetteFile.write(Tape(scenes: scenes), to: URL(fileURLWithPath: folder + "/storm.json"), as: .json)
    var finished = 0
    var cancelled = 0
    for round in 0..<30 {
        try VCR.insertCassette { $0.cassettePath = "storm"; $0.recordMode = .never }
        let outcomes = await withTaskGroup(of: Bool.self) { group in
            // Requested in reverse: chronological playback queues them all until the first on the tape comes.
            for chapter in (1...count).reversed() {
                let url = URL(string: "http://replay.test/\(chapter)")!
                group.addTask { (try? await URLSession.shared.data(from: url)) != nil }
            }
            // Cancel the lot at a moment that moves from round to round, while deliveries are under way.
            try? await Task.sleep(nanoseconds: UInt64(round % 6) * 200_000)
            group.cancelAll()
            var outcomes: [Bool] = []
            for await outcome in group { outcomes.append(outcome) }
            return outcomes
        }
        finished += outcomes.filter { $0 }.count
        cancelled += outcomes.filter { !$0 }.count
        try VCR.ejectCassette()
        _ = VCR.takeFailures()
    }
    return "30 rounds of \(count): \(finished) finished, \(cancelled) cancelled, no crash"
}

/// Sessions made from `.default` without `VCR.install(in:)`, one before the first VCR call and one after: named
/// while recording, refused under `.never` (loopback the cassette holds, and any other host), and refused with no
/// cassette once the network is off without one. Requests that must never reach httpbin carry `never-ID`.
func sideSessions(folder: String, id: String) async throws -> String {
    let early = URLSession(configuration: .default)
    VCR.setup { $0.cassettesPath = folder }
    let late = URLSession(configuration: .default)
    let sessions = [("made before VCR.setup", early), ("made after VCR.setup", late)]
    func status(_ session: URLSession, _ url: URL) async throws -> (Int, String) {
        let (data, response) = try await session.data(from: url)
        let http = response as? HTTPURLResponse
        return (http?.statusCode ?? 0, (http?.value(forHTTPHeaderField: "X-HTTPVCR-Refused") ?? "")
            + String(decoding: data, as: UTF8.self))
    }
    func failures(naming url: String, _ code: VCRError.Code) -> [VCRError] {
        VCR.takeFailures().filter { $0.code == code && $0.message.contains(url) }
    }

    // Recording: the app's installed traffic is taped; the side sessions' go to the server and are named.
    let recorded = try httpbin("/anything/side-\(id)")
    try VCR.insertCassette { $0.cassettePath = "side"; $0.recordMode = .all }
    _ = try await URLSession.shared.data(from: recorded)
    for (name, session) in sessions {
        let around = try httpbin("/anything/side-\(id)?around=\(name.prefix(4))")
        let (code, _) = try await status(session, around)
        try check(code == 200, "recording: a session \(name) did not get the server's answer: \(code)")
        let named = failures(naming: around.absoluteString, .wentAroundCassette)
        try check(named.count == 1 && named[0].message.contains("went around the cassette")
            && named[0].message.contains("VCR.install(in:)"), "recording: not named as it went around: \(named)")
    }
    try VCR.ejectCassette()

    // Replaying: the side sessions reach neither httpbin nor any other host; the cassette names each request.
    try VCR.insertCassette { $0.cassettePath = "side"; $0.recordMode = .never }
    for (name, session) in sessions {
        let url = try httpbin("/anything/never-\(id)?session=\(name.prefix(4))")
        let (code, body) = try await status(session, url)
        try check(code == 403 && body.hasPrefix("1HTTPVCR refused"), "a session \(name) got \(code): \(body)")
        let named = failures(naming: url.absoluteString, .wentAroundCassette)
        try check(named.count == 1 && named[0].message.contains("not installed in")
            && named[0].message.contains("Fix: pass that session's configuration to VCR.install(in:)"),
            "refused, but the cassette's failure does not name it: \(named)")
        for other in ["http://api.example.invalid/never-\(id)", "https://api.example.invalid/never-\(id)"] {
            do {
                let (code, body) = try await status(session, URL(string: other)!)
                try check(code == 403 && body.hasPrefix("1HTTPVCR refused"), "\(other): \(code) \(body)")
            } catch let error as URLError {
                // https: the tunnel is refused, which the loader reports as an unknown error, never a DNS one.
                try check(other.hasPrefix("https") && error.code == .unknown, "\(other): \(error.code) \(error)")
            }
            let host = other.hasPrefix("https") ? "https://api.example.invalid/…" : other
            try check(!failures(naming: host, .wentAroundCassette).isEmpty, "\(other): no failure on the cassette")
        }
    }

    // A server the test runs itself, which the cassette holds nothing of: reached.
    let own = try LoopbackServer { _ in .text(200, "the test's own server") }
    defer { own.stop() }
    for (name, session) in sessions {
        let (code, body) = try await status(session, own.url.appendingPathComponent("never-\(id)"))
        try check(code == 200 && body.hasPrefix("the test's own server"), "own server, session \(name): \(code) \(body)")
    }
    try check(VCR.takeFailures().isEmpty, "the test's own server was named")

    // A suite that forgot VCR.install(in:), in a task group: over in seconds, failed by HTTPVCR's refusal.
    let start = Date()
    do {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<10 {
                group.addTask {
                    let (code, body) = try await status(late, try httpbin("/anything/never-\(id)?group=\(index)"))
                    if code != 200 { throw ScenarioFailure(body) }
                }
            }
            try await group.waitForAll()
        }
        throw ScenarioFailure("the group's requests were answered by the server")
    } catch let failure as ScenarioFailure where failure.description.contains("HTTPVCR refused") {}
    let elapsed = Date().timeIntervalSince(start)
    try check(elapsed < 10, "the forgotten-install task group took \(elapsed) s")
    _ = VCR.takeFailures()
    try VCR.ejectCassette()

    // No cassette, network off: URLSession.shared gets a VCRError, loopback passes.
    VCR.setup { $0.allowsNetworkWithoutCassette = false }
    do {
        _ = try await URLSession.shared.data(from: URL(string: "http://api.example.invalid/offline")!)
        throw ScenarioFailure("no cassette, network off: the shared session's request was sent")
    } catch let error as VCRError {
        try check(error.code == .networkWithoutCassette && error.message.contains("api.example.invalid")
            && error.message.contains("VCR_ALLOW_NETWORK=1"), "wrong error: \(error)")
    }
    let (code, body) = try await status(late, URL(string: "http://api.example.invalid/offline")!)
    try check(code == 403 && body.contains("no cassette is in force"), "a side session's request: \(code) \(body)")
    for session in [URLSession.shared, late] {
        let (code, _) = try await status(session, try httpbin("/anything/side-\(id)?offline-loopback"))
        try check(code == 200, "loopback, network off: \(code)")
    }
    let ms = Int(elapsed * 1000)
    return "named while recording, refused under .never (task group over in \(ms) ms), refused with no cassette"
}

/// Run with `VCR_ALLOW_NETWORK=0`: requests with no cassette fail at once, whatever the configuration says, but for
/// loopback; then loopback too, with `allowsLoopbackWithoutCassette` off.
func networkOff() async throws -> String {
    VCR.setup { $0.allowsNetworkWithoutCassette = true }  // the environment wins
    let side = URLSession(configuration: .default)
    let own = try LoopbackServer { _ in .text(200, "own") }
    defer { own.stop() }
    do {
        _ = try await URLSession.shared.data(from: URL(string: "http://api.example.invalid/env")!)
        throw ScenarioFailure("VCR_ALLOW_NETWORK=0: the shared session's request was sent")
    } catch let error as VCRError {
        try check(error.code == .networkWithoutCassette && error.message.contains("VCR_ALLOW_NETWORK=0"), "\(error)")
    }
    for session in [URLSession.shared, side] {
        let (_, response) = try await session.data(from: own.url)
        try check((response as? HTTPURLResponse)?.statusCode == 200, "loopback, network off: \(response)")
    }
    VCR.setup { $0.allowsLoopbackWithoutCassette = false }
    do {
        _ = try await URLSession.shared.data(from: own.url)
        throw ScenarioFailure("loopback off: the shared session's request was sent")
    } catch let error as VCRError {
        try check(error.code == .networkWithoutCassette, "\(error)")
    }
    let (data, response) = try await side.data(from: own.url)
    try check((response as? HTTPURLResponse)?.statusCode == 403
        && String(decoding: data, as: UTF8.self).contains("no cassette is in force"), "loopback off, side session")
    return "refused without a cassette, loopback allowed, then refused too"
}

/// A test that forgets its launched server: the process ends with it still running, and it must not outlive it.
func leftoverChild() throws -> String {
    let bridge = try VCRBridge.start()
    let sleeper = try bridge.launch(URL(fileURLWithPath: "/bin/sleep"), arguments: ["60"])
    try check(sleeper.isRunning, "the child runs")
    return "pid \(sleeper.pid)"  // and exit without stopping the bridge
}

let arguments = Array(CommandLine.arguments.dropFirst())
do {
    let result: String
    switch (arguments.first, arguments.count) {
    case ("shared-session-made-first", 1): result = try await sharedSessionMadeFirst()
    case ("session-made-first", 2): result = try await sessionMadeFirst(folder: arguments[1])
    case ("stress", 3): result = try await stress(folder: arguments[1], count: Int(arguments[2]) ?? 100)
    case ("mismatch-in-group", 2): result = try await mismatchInGroup(folder: arguments[1])
    case ("cancel-storm", 2): result = try await cancelStorm(folder: arguments[1])
    case ("side-sessions", 3): result = try await sideSessions(folder: arguments[1], id: arguments[2])
    case ("network-off", 1): result = try await networkOff()
    case ("leftover-child", 1): result = try leftoverChild()
    case ("lock-order", 1): result = lockOrderBroken()
    case ("matcher-under-lock", 1): result = matcherUnderLock()
    default: throw ScenarioFailure("usage: see the top of Tests/VCRScenarios/main.swift")
    }
    print("ok: \(result)")
} catch {
    print("failed: \(error)")
    exit(1)
}
