import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCRCassettes

/// Carries the requests of a process your test launches (a server binary, an app under XCUITest) to the test's
/// cassette, over loopback HTTP, and lets the test exercise that process for real.
///
/// Start it in the test and launch the process with ``launch(_:arguments:environment:)`` (or hand its
/// ``environment`` to a process you launch). A process that calls ``VCR/connectToBridge()`` early sends every
/// request it makes through `URLSession.shared`, a session set up with ``VCR/install(in:)`` or
/// ``VCR/data(for:sending:)`` here; a server that does not link HTTPVCR is configured with
/// ``url(standingInFor:)`` in place of its upstream. Either way its upstream calls reach the cassette in force for
/// the task that started the bridge (the test's own under the `.cassette` trait or `VCRCassetteScope`, else the one
/// inserted for the process) and go through its filters, matchers, record mode and playback order as a request made
/// in the test would; failures are reported on that test. Recording happens here, in the test process.
///
/// What the test sends to the process it launched is not taped: it goes to that process in every record mode.
///
/// ```swift
/// @Test(.cassette) func summaryComesFromTheUpstream() async throws {
///     let bridge = try VCRBridge.start()
///     defer { bridge.stop() }
///     let server = try bridge.launch(serverExecutable, environment: [
///         "UPSTREAM_URL": bridge.url(standingInFor: URL(string: "https://api.example.com")!).absoluteString,
///     ])
///     … wait for the server's port, call it, check what it answered …
/// }
/// ```
///
/// The bridge never needs a thread of Swift's cooperative pool: each connection is served on a thread of its own,
/// and the answer comes from the cassette or the upstream's session queue. A test may block the pool
/// (`Process.waitUntilExit()`, a semaphore) while its process's requests are answered.
///
/// The bridge listens on 127.0.0.1 only, on a port the system picks, and answers only requests that carry its
/// token, a random 256-bit value made at ``start()`` and passed in ``environment``: others get 403 and never reach
/// the cassette. (A stand-in has no token to check: it listens on loopback only, and serves only its upstream.)
///
/// > Note: Redirects are not followed here: a 3xx is recorded and answered as it is, and the launched process's own
/// > session decides whether to follow it (asking its delegate), its next request crossing the bridge again. A
/// > redirect is therefore taped as two interactions.
public final class VCRBridge: Sendable {
    /// What the launched process needs to reach this bridge: set it on `Process.environment` or
    /// `XCUIApplication.launchEnvironment`. Holds the bridge's URL and its token.
    public let environment: [String: String]
    /// `http://127.0.0.1:PORT`, where the bridge listens.
    public let url: URL

    private let server: LoopbackServer
    private let target: BridgeTarget
    private let door: WireDoor
    /// Whether ``stop()`` reports the recordings that were never asked for.
    private let failsOnUnplayedInteractions: Bool
    private let state = Locked(State(), level: .bridge)

    private struct State {
        var isStopped = false
        var launched: [LaunchedProcess] = []
        /// Processes launched by others with this bridge's environment, known by the pid they said.
        var connected: Set<Int32> = []
        /// Loopback servers standing in for upstreams, by the upstream's origin.
        var standIns: [String: LoopbackServer] = [:]
        var exercised: [Int] = []
    }

    /// Why ``VCRBridge/start()`` failed: no socket could be bound on 127.0.0.1.
    public struct StartError: Error, CustomStringConvertible {
        /// What the system said.
        public var description: String
    }

    private init(
        server: LoopbackServer,
        token: String,
        target: BridgeTarget,
        door: WireDoor,
        failsOnUnplayedInteractions: Bool
    ) {
        self.failsOnUnplayedInteractions = failsOnUnplayedInteractions
        self.server = server
        self.target = target
        self.door = door
        url = server.url
        // The launched process gets the proxy settings the test process had before HTTPVCR's network guard: the
        // bridge is its way to the cassette.
        environment = (NetworkGuard.isActive ? NetworkGuard.originalEnvironment : [:])
            .merging([BridgeWire.urlVariable: server.url.absoluteString, BridgeWire.tokenVariable: token]) { $1 }
    }

    /// Starts a bridge on 127.0.0.1, on a free port, for the cassette in force for the calling task.
    ///
    /// The cassette is looked up for each request: the one bound to the calling task (a `.cassette` test's own) if
    /// there is one, else the one inserted for the process when a request arrives (not one another test inserted).
    /// With neither, requests go to the network as if HTTPVCR were not there. When that cassette is ejected (its test
    /// ends, passes, fails or throws), the bridge stops and the processes it launched end.
    ///
    /// - Parameter failsOnUnplayedInteractions: Whether ``stop()`` reports, as a failure of the test, the recordings
    ///   of a replay that were never asked for: on by default, since a server under test that no longer makes a call
    ///   its cassette holds was not exercised as recorded. Off for an app whose calls vary from run to run (polling).
    /// - Throws: ``StartError`` when no port can be bound.
    public static func start(failsOnUnplayedInteractions: Bool = true) throws -> VCRBridge {
        let token = BridgeWire.makeToken()
        let target = BridgeTarget(bound: VCR.boundCassette, test: VCR.currentTest?())
        let door = WireDoor()
        // Weak: the bridge owns its server, whose handler this is.
        let connected = Locked(WeakBridge(), level: .leaf)
        let exchange = BridgeExchange(token: token, target: target, door: door) { pid in
            connected.withLock { $0.bridge }?.processConnected(pid)
        }
        let bridge: VCRBridge
        do {
            let server = try LoopbackServer(handler: exchange.answer)
            bridge = VCRBridge(
                server: server, token: token, target: target, door: door,
                failsOnUnplayedInteractions: failsOnUnplayedInteractions
            )
        } catch {
            throw StartError(description: error.description)
        }
        connected.withLock { $0.bridge = bridge }
        target.cassette?.whenEjected { bridge.stop() }
        return bridge
    }

    // MARK: The server under test

    /// Launches `executable` with this bridge's ``environment`` (over the test process's, under `environment`),
    /// as the server or app under test.
    ///
    /// Its output goes to files (``LaunchedProcess/standardOutput``), never to a pipe `swift test` would wait on; it
    /// leads a process group of its own, with SIGTERM and SIGINT at their defaults whatever the test runner set. It
    /// ends at ``stop()``, when the test's cassette is ejected, and when the test process exits. What the test sends
    /// to the loopback ports it (or a process it starts) listens on goes to it in every record mode, never to the
    /// cassette: the server is exercised, and only its own upstream calls are taped.
    ///
    /// ```swift
    /// let server = try bridge.launch(serverExecutable, arguments: ["--port", "0"])
    /// ```
    ///
    /// - Throws: ``LaunchedProcess/LaunchError`` when the executable cannot be started (or the bridge was stopped),
    ///   naming it.
    public func launch(
        _ executable: URL,
        arguments: [String] = [],
        environment: [String: String] = [:]
    ) throws -> LaunchedProcess {
        let merged = ProcessInfo.processInfo.environment.merging(self.environment) { $1 }.merging(environment) { $1 }
        let process = try LaunchedProcess.launch(executable, arguments: arguments, environment: merged)
        let stopped = state.withLock { state in
            if !state.isStopped { state.launched.append(process) }
            return state.isStopped
        }
        if stopped {
            process.terminate()
            throw LaunchedProcess.LaunchError(executable: executable, reason: "the bridge was stopped", errorNumber: nil)
        }
        ServersUnderTest.add(process: process.pid)
        return process
    }

    /// Sends what the test process sends to `server` (a loopback URL of a server the test runs some other way) to
    /// it, in every record mode, never to the cassette, until the bridge stops. Servers the bridge launched, and
    /// processes launched with its ``environment`` that call ``VCR/connectToBridge()``, need no such call.
    public func exercise(_ server: URL) {
        guard let origin = NetworkOrigin(server), origin.isLoopback else { return }
        let added = state.withLock { state in
            if !state.isStopped { state.exercised.append(origin.port) }
            return !state.isStopped
        }
        if added { ServersUnderTest.add(port: origin.port) }
    }

    private func processConnected(_ pid: Int32) {
        let added = state.withLock { state in
            !state.isStopped && state.connected.insert(pid).inserted
        }
        if added { ServersUnderTest.add(process: pid) }
    }

    // MARK: A server that does not link HTTPVCR

    /// A loopback URL to configure a server with in place of `upstream` (most read it from their environment):
    /// what arrives there is sent to `upstream`'s scheme, host and port through the bridge's cassette, taped under
    /// the upstream's own URL and replayed from it, as a request made in the test would be. The server needs no
    /// HTTPVCR and no ``VCR/connectToBridge()``.
    ///
    /// The URL keeps `upstream`'s path (`https://api.example.com/v1` stands in as `http://127.0.0.1:PORT/v1`), and
    /// the same upstream origin always gets the same stand-in while the bridge runs. Where no port can be bound
    /// (never seen in practice), the URL names the discard port, the server's requests fail, and the reason is
    /// reported on the test.
    public func url(standingInFor upstream: URL) -> URL {
        guard let origin = BridgeWire.origin(of: upstream), ["http", "https"].contains(upstream.scheme?.lowercased())
        else { return upstream }
        let existing = state.withLock { $0.standIns[origin] }
        let standIn: LoopbackServer
        if let existing {
            standIn = existing
        } else {
            do {
                let made = try LoopbackServer(handler: StandIn(origin: origin, target: target, door: door).answer)
                let kept = state.withLock { state -> LoopbackServer? in
                    guard !state.isStopped else { return nil }
                    if let earlier = state.standIns[origin] { return earlier }
                    state.standIns[origin] = made
                    return made
                }
                if kept !== made { made.stop() }
                standIn = kept ?? made
            } catch {
                let failure = VCRError(.cassetteState, "HTTPVCR could not stand in for \(origin): \(error.description)")
                target.cassette.map { VCR.recordFailure(failure, on: $0) }
                FileHandle.standardError.write(Data("\(failure.message)\n".utf8))
                return URL(string: "http://127.0.0.1:9")!
            }
        }
        var parts = URLComponents(url: upstream, resolvingAgainstBaseURL: true)
        parts?.scheme = "http"
        parts?.host = "127.0.0.1"
        parts?.port = Int(standIn.port)
        parts?.user = nil
        parts?.password = nil
        return parts?.url ?? standIn.url
    }

    // MARK: Stopping

    /// Stops the bridge, within a second or two whatever its connections are doing: upstream requests in flight are
    /// cancelled (the app gets the error), stand-ins stop, and the processes it launched are ended (SIGTERM, then
    /// SIGKILL). Called again, or after the test's cassette was ejected (which stops it), it does nothing.
    ///
    /// Recorded requests that never came while it ran are reported on the test as ``VCRError/Code/requestsNeverCame``:
    /// the server under test did not make the upstream calls its cassette holds (unless the bridge was started with
    /// `failsOnUnplayedInteractions: false`).
    public func stop() {
        let taken = state.withLock { state -> State? in
            guard !state.isStopped else { return nil }
            state.isStopped = true
            return state
        }
        guard let taken else { return }
        let deadline = DispatchTime.now() + 1.5
        if failsOnUnplayedInteractions { reportRequestsThatNeverCame() }
        // Answers in flight first, so that the app hears of the cancellation before it is ended.
        door.close()
        let servers = [server] + Array(taken.standIns.values)
        DispatchQueue.concurrentPerform(iterations: servers.count) { servers[$0].stop(waitingAtMost: 1) }
        for process in taken.launched { process.terminate() }
        for process in taken.launched {
            let left = Double(deadline.uptimeNanoseconds &- min(deadline.uptimeNanoseconds, DispatchTime.now().uptimeNanoseconds)) / 1e9
            if process.waitForExit(timeout: max(0.05, left)) == nil { kill(-process.pid, SIGKILL) }
            ServersUnderTest.remove(process: process.pid)
        }
        for pid in taken.connected { ServersUnderTest.remove(process: pid) }
        for port in taken.exercised { ServersUnderTest.remove(port: port) }
    }

    /// What the cassette holds that was not replayed, once a replay is over: the server made fewer calls.
    private func reportRequestsThatNeverCame() {
        guard let cassette = target.cassette, [.once, .new, .never].contains(cassette.recordMode) else { return }
        let missing = cassette.unplayedRequests
        guard !missing.isEmpty else { return }
        VCR.recordFailure(.requestsNeverCame(missing, cassette: cassette), on: cassette)
    }
}

private struct WeakBridge {
    weak var bridge: VCRBridge?
}

extension VCRError {
    /// Recorded requests a bridge's process never made (``VCRBridge/stop()``).
    static func requestsNeverCame(_ requests: [URLRequest], cassette: Cassette) -> VCRError {
        let count = requests.count
        var lines = [
            "\(count) recorded request\(count == 1 ? "" : "s") never came while the VCRBridge ran: the server under "
                + "test did not make the upstream call\(count == 1 ? "" : "s") its cassette holds (cassette: "
                + "\(cassette.path)).",
        ]
        for request in requests.prefix(20) {
            lines.append("    \((request.httpMethod ?? "GET").uppercased()) \(request.url?.absoluteString ?? "(no URL)")")
        }
        if count > 20 { lines.append("    … and \(count - 20) more") }
        lines.append("  If the server no longer makes them, record the cassette anew (VCR_RECORD_MODE=all); if it "
            + "should, the replay did not exercise it: check what the test sent it.")
        return VCRError(.requestsNeverCame, lines.joined(separator: "\n"))
    }
}
