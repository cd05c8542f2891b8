import Foundation
import Testing
import HTTPBinTestSupport
import TestSupport

/// What a user's process does before the first `VCR` call, and races only a fresh process shows: each scenario of
/// `Tests/VCRScenarios` runs in a process of its own, as a test binary of a user's would.
@Suite struct FreshProcessTests {
    static func scenario(
        _ arguments: String..., environment: [String: String] = [:], timeout: TimeInterval = 60
    ) throws -> Subprocess.Result {
        try Subprocess.run(
            try Subprocess.builtExecutable("vcr-scenarios"), arguments, environment: environment, timeout: timeout
        )
    }

    @Test func aSharedSessionMadeBeforeHTTPVCRRefusesCassettesInsteadOfBypassingThem() throws {
        let result = try Self.scenario("shared-session-made-first")
        #expect(result.status == 0 && result.output.hasPrefix("ok:"), "\(result)")
    }

    @Test func aSessionMadeBeforeSetupDoesNotStopTheSharedSessionFromBeingIntercepted() throws {
        let folder = try TemporaryFolder()
        let before = try HTTPBin.settledRequestCount()
        let result = try Self.scenario("session-made-first", folder.path)
        #expect(result.status == 0 && result.output.hasPrefix("ok:"), "\(result)")
        let seen = try HTTPBin.requestsFromAnyProcess(since: before).filter { $0.contains("/anything/made-first") }
        #expect(seen.count == 1, "recorded once, replayed and refused without the server: \(seen)")
    }

    /// Sessions HTTPVCR is not in (made from `.default`, before and after `VCR.setup`, never installed): named while
    /// recording, refused under `.never` without reaching httpbin or any other host, refused with no cassette when
    /// the network is off without one; a task group that forgot the install is over in seconds.
    @Test func sessionsHTTPVCRIsNotInNeverReachAServerAProtectedCassetteHolds() throws {
        let folder = try TemporaryFolder()
        let id = String(UUID().uuidString.prefix(8))
        let before = try HTTPBin.settledRequestCount()
        let result = try Self.scenario("side-sessions", folder.path, id)
        // Before it, on stderr: the requests named as they went around the recording cassette.
        let lines = result.output.split(separator: "\n")
        #expect(result.status == 0 && lines.last?.hasPrefix("ok:") == true, "\(result)")
        #expect(lines.filter { $0.hasPrefix("HTTPVCR: GET ") && $0.contains("went around the cassette") }.count == 2)
        let seen = try HTTPBin.requestsFromAnyProcess(since: before)
        #expect(seen.filter { $0.contains("side-\(id)") }.count == 5, "recorded, went around twice, loopback twice: \(seen)")
        #expect(seen.filter { $0.contains("never-\(id)") }.isEmpty, "refused requests reached httpbin: \(seen)")
    }

    /// `VCR_ALLOW_NETWORK=0` in the environment a user runs the tests with: no cassette, no network; loopback too
    /// once `allowsLoopbackWithoutCassette` is off.
    @Test func theNetworkOffByTheEnvironmentRefusesRequestsWithoutACassette() throws {
        let result = try Self.scenario("network-off", environment: ["VCR_ALLOW_NETWORK": "0"])
        let lines = result.output.split(separator: "\n")
        #expect(result.status == 0 && lines.last?.hasPrefix("ok:") == true, "\(result)")
    }

    /// A process that exits with a server it launched through a bridge still running ends it: `swift test` never
    /// waits on a leftover child.
    @Test func aLaunchedProcessDoesNotOutliveTheTestProcess() throws {
        let result = try Self.scenario("leftover-child")
        let line = result.output.split(separator: "\n").last ?? ""
        let pid = try #require(Int32(line.replacingOccurrences(of: "ok: pid ", with: "")), "\(result)")
        let deadline = Date().addingTimeInterval(10)
        // Killed at exit; a zombie until whoever inherited it reaps it, which counts as ended.
        func hasEnded() -> Bool {
            guard kill(pid, 0) == 0 else { return errno == ESRCH }
            let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
            return stat.split(separator: ")").last?.hasPrefix(" Z") == true
        }
        while !hasEnded() && Date() < deadline { usleep(20_000) }
        #expect(hasEnded(), "the child \(pid) outlived the scenario: \(result)")
    }

    /// 100 requests in flight while recording, then while replaying, in a process where a session was made
    /// before `VCR.setup`: every body is its own, on the tape and in the caller's hands.
    @Test func oneHundredConcurrentRequestsRecordAndReplayEachWithItsOwnBody() throws {
        for _ in 0..<3 {
            let folder = try TemporaryFolder()
            let result = try Self.scenario("stress", folder.path, "100")
            #expect(result.status == 0 && result.output.hasPrefix("ok:"), "\(result)")
        }
    }

    /// One unmatched request among 20 in a task group, on a cassette that may not record: the group fails with
    /// the mismatch, its other tasks are cancelled, and nothing crashes or hangs.
    @Test func anUnmatchedRequestInATaskGroupFailsTheGroupWithoutCrashOrHang() throws {
        for _ in 0..<3 {
            let folder = try TemporaryFolder()
            let result = try Self.scenario("mismatch-in-group", folder.path, timeout: 60)
            #expect(result.status == 0 && result.output.hasPrefix("ok:"), "\(result)")
        }
    }

    /// A task group cancelled while the chapters of its 60 requests are being handed over, 30 times: every
    /// request ends (replayed or cancelled) and nothing deadlocks. (Plain URLSession on Linux deadlocks here: a
    /// cancellation handler waits for the session's queue while holding the lock a completion needs.)
    @Test func cancellingATaskGroupWhileItsChaptersAreDeliveredNeverDeadlocks() throws {
        for _ in 0..<2 {
            let folder = try TemporaryFolder()
            let result = try Self.scenario("cancel-storm", folder.path, timeout: 180)
            #expect(result.status == 0 && result.output.hasPrefix("ok:"), "\(result)")
        }
    }
}
