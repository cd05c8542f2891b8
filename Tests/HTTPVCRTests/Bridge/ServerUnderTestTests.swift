import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import HTTPVCR
import HTTPBinTestSupport
import Testing
import TestSupport

/// The test a newcomer writes for a server: launch it through a bridge, call it, stop. The server is exercised (the
/// test's calls to it are never taped), its upstream calls are recorded and replayed, the bridge never waits on
/// Swift's pool, and nothing it launched outlives the test.
@Suite struct ServerUnderTestTests {
    /// The server's upstream, in this process: answers what `bridge-child serve` asks, and can be stopped to show a
    /// replay does without it.
    final class Upstream: Sendable {
        let server: LoopbackServer
        let seen = Locked<[WireRequest]>([])
        var base: String { server.url.absoluteString }

        init() throws {
            let seen = self.seen
            server = try LoopbackServer { request in
                seen.withLock { $0.append(request) }
                let parts = URLComponents(string: request.target)
                switch parts?.path {
                case "/anything/summary":
                    let marker = parts?.queryItems?.first { $0.name == "marker" }?.value ?? ""
                    return WireResponse(status: 200, fields: [WireField("Content-Type", "application/json")],
                                        body: Data(#"{"args":{"marker":"\#(marker)"}}"#.utf8))
                case "/cookies-pair":
                    return WireResponse(status: 200, fields: [
                        WireField("Set-Cookie", "a=1; Path=/"),
                        WireField("Set-Cookie", "b=2; Expires=Wed, 21 Oct 2037 07:28:00 GMT; Path=/"),
                    ], body: Data("two cookies".utf8))
                default:
                    return .text(404, "no such page")
                }
            }
            self.seen.withLock { _ = $0 }
        }

        func stop() { server.stop() }
    }

    static func cassette(_ name: String, in folder: URL, _ mode: RecordMode) throws -> Cassette {
        try VCR.loadCassette { configuration in
            configuration = VCRConfiguration()
            configuration.cassettesPath = folder.path
            configuration.cassettePath = name
            configuration.recordMode = mode
        }
    }

    /// The port a launched `bridge-child serve` printed, once it listens.
    static func port(of process: LaunchedProcess) throws -> Int {
        try port(printedIn: process.output, while: { process.isRunning })
    }

    /// The port a server printed (`listening PORT`) in what `output` reads, while `running` says it runs.
    static func port(printedIn output: () -> String, while running: () -> Bool) throws -> Int {
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if let line = output().split(separator: "\n").first(where: { $0.hasPrefix("listening ") }),
               let port = Int(line.dropFirst("listening ".count)) {
                return port
            }
            guard running() else { break }
            usleep(20_000)
        }
        throw ServerDidNotListen(output: output())
    }

    struct ServerDidNotListen: Error { var output: String }

    /// The test's own call to the server it launched, through `URLSession.shared` as a test writes it.
    static func call(_ port: Int, _ pathAndQuery: String) async throws -> (Int, String) {
        let (data, response) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(port)\(pathAndQuery)")!)
        return ((response as? HTTPURLResponse)?.statusCode ?? -1, String(decoding: data, as: UTF8.self))
    }

    /// How a test starts its server: through the bridge, or as `Process` with the bridge's environment (the server
    /// then says its pid when it connects).
    enum Launch: String, CaseIterable, Sendable {
        case bridge, process
    }

    /// Records, then replays with the upstream stopped: the server's upstream call comes from the tape, with only
    /// the app's own fields, the test's call to the server is never taped, and the server's port (a new one each run)
    /// changes nothing.
    @Test(arguments: Launch.allCases)
    func theServerIsExercisedAndItsUpstreamCallsReplayedWithTheUpstreamDown(launch: Launch) async throws {
        let folder = try VCRBridgeTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let upstream = try Upstream()
        for mode in [RecordMode.once, .never] {
            let cassette = try Self.cassette("summary", in: folder, mode)
            let answer = try await VCRBridgeTests.bound(cassette) {
                let bridge = try VCRBridge.start()
                defer { bridge.stop() }
                let executable = try Subprocess.builtExecutable("bridge-child")
                let port: Int
                switch launch {
                case .bridge:
                    port = try Self.port(of: try bridge.launch(executable, arguments: ["serve", upstream.base]))
                case .process:
                    let output = folder.appendingPathComponent("serve-\(mode.rawValue).out")
                    _ = FileManager.default.createFile(atPath: output.path, contents: nil)
                    let server = Process()
                    server.executableURL = executable
                    server.arguments = ["serve", upstream.base]
                    server.environment = ProcessInfo.processInfo.environment.merging(bridge.environment) { $1 }
                    server.standardOutput = try FileHandle(forWritingTo: output)
                    try server.run()
                    defer {
                        server.terminate()
                        server.waitUntilExit()  // on a pool thread, as tests do
                    }
                    port = try Self.port(
                        printedIn: { String(decoding: (try? Data(contentsOf: output)) ?? Data(), as: UTF8.self) },
                        while: { server.isRunning }
                    )
                    return try await Self.call(port, "/summary?marker=exercised")
                }
                return try await Self.call(port, "/summary?marker=exercised")
            }
            try VCR.saveBoundCassette(cassette)
            #expect(answer.0 == 200)
            #expect(answer.1 == "summary: upstream 200, marker exercised\n", "\(mode.rawValue)")
            #expect(cassette.takeFailures().isEmpty)
            if mode == .once { upstream.stop() }
        }
        let seen = upstream.seen.withLock { $0 }
        #expect(seen.map(\.target) == ["/anything/summary?marker=exercised"])
        #expect(seen.first?.fields.map { $0.name.lowercased() } == ["host"], "only the app's own fields (none)")
        let taped = try Self.cassette("summary", in: folder, .never).tape.scenes.compactMap { scene -> String? in
            if case let .request(request) = scene.event { return request.url }
            return nil
        }
        #expect(taped == ["\(upstream.base)/anything/summary?marker=exercised"], "only the server's upstream call")
    }

    /// A replay in which the server makes none of its recorded upstream calls fails, naming them; a bridge started
    /// not to (an app whose calls vary) says nothing.
    @Test(arguments: [true, false])
    func aReplayWhereTheServerMakesNoUpstreamCallFailsNamingThem(failsOnUnplayed: Bool) async throws {
        let folder = try VCRBridgeTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let upstream = try Upstream()
        defer { upstream.stop() }
        let recording = try Self.cassette("idle", in: folder, .once)
        try await VCRBridgeTests.bound(recording) {
            let bridge = try VCRBridge.start()
            defer { bridge.stop() }
            let server = try bridge.launch(try Subprocess.builtExecutable("bridge-child"), arguments: ["serve", upstream.base])
            _ = try await Self.call(try Self.port(of: server), "/summary?marker=idle")
        }
        try VCR.saveBoundCassette(recording)
        let replaying = try Self.cassette("idle", in: folder, .never)
        try await VCRBridgeTests.bound(replaying) {
            let bridge = try VCRBridge.start(failsOnUnplayedInteractions: failsOnUnplayed)
            defer { bridge.stop() }
            let server = try bridge.launch(try Subprocess.builtExecutable("bridge-child"), arguments: ["serve", upstream.base])
            _ = try Self.port(of: server)  // listening, and never called
        }
        let failures = replaying.takeFailures()
        #expect(failures.map(\.code) == (failsOnUnplayed ? [.requestsNeverCame] : []), "\(failures)")
        guard failsOnUnplayed else { return }
        #expect(failures.first?.message.contains("GET \(upstream.base)/anything/summary?marker=idle") == true, "\(failures)")
    }

    /// `stop()` with a request in flight to an upstream that never answers returns within two seconds, with every
    /// thread of the cooperative pool held, and the app's request ends in an error rather than waiting. (The child
    /// is launched by hand, so that stopping the bridge does not end it before it says what it got.)
    @Test func stopWithARequestInFlightReturnsWithinTwoSeconds() async throws {
        try await PoolHolding.inTurn {
            let silent = try SilentServer()
            defer { silent.stop() }
            let folder = try VCRBridgeTests.folder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let cassette = try Self.cassette("silent", in: folder, .once)
            let output = folder.appendingPathComponent("child.out")
            _ = FileManager.default.createFile(atPath: output.path, contents: nil)
            let child = Process()
            let elapsed = try await VCRBridgeTests.bound(cassette) {
                let bridge = try VCRBridge.start()
                child.executableURL = try Subprocess.builtExecutable("bridge-child")
                child.arguments = ["one", silent.base, "in-flight"]
                child.environment = ProcessInfo.processInfo.environment.merging(bridge.environment) { $1 }
                child.standardOutput = try FileHandle(forWritingTo: output)
                try child.run()
                #expect(silent.connected.wait(timeout: .now() + 30) == .success, "the request reached the upstream")
                // Every other pool thread held (this one is held by the test itself, blocked in stop()).
                let width = ProcessInfo.processInfo.activeProcessorCount
                let started = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
                defer { for _ in 0..<width { release.signal() } }
                for _ in 0..<width { Task.detached { started.signal(); release.wait() } }
                // Other tests' synchronous work (a scenario process awaited) can hold a thread for many seconds.
                let deadline = DispatchTime.now() + 120
                let held = (1..<width).filter { _ in started.wait(timeout: deadline) == .success }.count
                #expect(held == width - 1, "pool threads held besides the test's")
                let start = DispatchTime.now()
                bridge.stop()
                return Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
            }
            await withCheckedContinuation { exited in Thread.detachNewThread { child.waitUntilExit(); exited.resume() } }
            #expect(elapsed < 2, "stop() took \(elapsed) s")
            let said = String(decoding: try Data(contentsOf: output), as: UTF8.self)
            #expect(said.hasPrefix("one: error "), "the request in flight ended in an error the app saw: \(said)")
        }
    }

    /// Every pool thread blocked in `Process.waitUntilExit()`, each waiting for a child whose request crosses its own
    /// bridge: all are answered (the bridge needs no pool thread), and each cassette holds only its own request.
    @Test func childrenAwaitedWithWaitUntilExitOnEveryPoolThreadAreAnswered() async throws {
        try await PoolHolding.inTurn {
            let folder = try VCRBridgeTests.folder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let count = max(2, ProcessInfo.processInfo.activeProcessorCount)
            let base = try HTTPBin.url("/").absoluteString.dropLast()
            let results = try await withThrowingTaskGroup(of: (String, String, Cassette).self) { group in
                for index in 0..<count {
                    group.addTask {
                        let marker = "pool-\(index)"
                        let cassette = try Self.cassette(marker, in: folder, .once)
                        let output = folder.appendingPathComponent("\(marker).out")
                        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
                        try await VCRBridgeTests.bound(cassette) {
                            let bridge = try VCRBridge.start()
                            defer { bridge.stop() }
                            let process = Process()
                            process.executableURL = try Subprocess.builtExecutable("bridge-child")
                            process.arguments = ["one", String(base), marker]
                            process.environment = ProcessInfo.processInfo.environment.merging(bridge.environment) { $1 }
                            process.standardOutput = try FileHandle(forWritingTo: output)
                            try process.run()
                            process.waitUntilExit()  // blocks this pool thread, as tests do
                        }
                        try VCR.saveBoundCassette(cassette)
                        return (marker, String(decoding: try Data(contentsOf: output), as: UTF8.self), cassette)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(results.count == count)
            for (marker, output, cassette) in results {
                // Answered while the pool was blocked: an answer that needed it would have come after the child's
                // request timed out, and the child would say so.
                #expect(output.hasPrefix("one: status 200 url \(base)/anything/one?marker=\(marker)\n"), "\(output)")
                let urls = cassette.tape.scenes.compactMap { scene -> String? in
                    if case let .request(request) = scene.event { return request.url }
                    return nil
                }
                #expect(urls == ["\(base)/anything/one?marker=\(marker)"], "\(marker): \(urls)")
            }
        }
    }
}

/// A server that does not link HTTPVCR: Python's, reading its upstream from `UPSTREAM_URL` as servers do.
enum PlainServer {
    static let script = """
        import http.server, os, urllib.request
        upstream = os.environ["UPSTREAM_URL"]
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                path, _, query = self.path.partition("?")
                target = "/anything/summary?" + query if path == "/summary" else "/cookies-pair"
                with opener.open(upstream + target) as answer:
                    text = "upstream %d, %d Set-Cookie, %s" % (
                        answer.status, len(answer.headers.get_all("Set-Cookie") or []), answer.read().decode())
                body = text.encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            def log_message(self, *args):
                pass
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        print("listening", server.server_address[1], flush=True)
        server.serve_forever()
        """
}

/// A stand-in and the bridge keep repeated fields apart, recording and replaying, and a server that does not link
/// HTTPVCR records and replays through ``VCRBridge/url(standingInFor:)``.
extension ServerUnderTestTests {
    @Test func aServerWithoutHTTPVCRRecordsAndReplaysThroughAStandIn() async throws {
        let folder = try VCRBridgeTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let upstream = try Upstream()
        var answers: [[String]] = []
        for mode in [RecordMode.once, .never] {
            let cassette = try Self.cassette("plain", in: folder, mode)
            let answer = try await VCRBridgeTests.bound(cassette) {
                let bridge = try VCRBridge.start()
                defer { bridge.stop() }
                let standIn = bridge.url(standingInFor: URL(string: upstream.base)!)
                let server = try bridge.launch(URL(fileURLWithPath: "/usr/bin/env"),
                                               arguments: ["python3", "-c", PlainServer.script],
                                               environment: ["UPSTREAM_URL": standIn.absoluteString])
                let port = try Self.port(of: server)
                return [try await Self.call(port, "/summary?marker=plain").1, try await Self.call(port, "/cookies").1]
            }
            try VCR.saveBoundCassette(cassette)
            #expect(cassette.takeFailures().isEmpty, "\(mode.rawValue)")
            answers.append(answer)
            if mode == .once { upstream.stop() }
        }
        #expect(answers[0] == [#"upstream 200, 0 Set-Cookie, {"args":{"marker":"plain"}}"#, "upstream 200, 2 Set-Cookie, two cookies"])
        #expect(answers[1] == answers[0], "replayed as recorded")
        let taped = try Self.cassette("plain", in: folder, .never).tape.scenes.compactMap { scene -> String? in
            if case let .request(request) = scene.event { return request.url }
            return nil
        }
        #expect(taped == ["\(upstream.base)/anything/summary?marker=plain", "\(upstream.base)/cookies-pair"],
                "taped under the upstream's own URL")
    }

    /// Two `Set-Cookie` reach a process linking HTTPVCR as two, through the bridge's door, recorded and replayed.
    @Test func twoSetCookieFieldsCrossTheBridgeAsTwo() async throws {
        let folder = try VCRBridgeTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let upstream = try Upstream()
        defer { upstream.stop() }
        for mode in [RecordMode.once, .never] {
            let cassette = try Self.cassette("cookies", in: folder, mode)
            let answer = try await VCRBridgeTests.bound(cassette) {
                let bridge = try VCRBridge.start()
                defer { bridge.stop() }
                let server = try bridge.launch(try Subprocess.builtExecutable("bridge-child"), arguments: ["serve", upstream.base])
                return try await Self.call(try Self.port(of: server), "/cookies").1
            }
            try VCR.saveBoundCassette(cassette)
            #expect(answer == "cookies: upstream 200, 2 Set-Cookie\n", "\(mode.rawValue)")
        }
    }

    /// A test that throws leaves nothing running: its cassette's ejection stops the bridge and ends what it launched.
    @Test func aTestThatThrowsLeavesNoProcessRunning() async throws {
        struct Thrown: Error {}
        let cassette = try Self.cassette("thrown", in: try VCRBridgeTests.folder(), .once)
        let launched = Locked<LaunchedProcess?>(nil)
        await #expect(throws: Thrown.self) {
            try await VCRBridgeTests.bound(cassette) {
                let bridge = try VCRBridge.start()
                let process = try? bridge.launch(URL(fileURLWithPath: "/bin/sleep"), arguments: ["60"])
                launched.withLock { $0 = process }
                throw Thrown()
            }
        }
        let process = try #require(launched.withLock { $0 })
        #expect(process.waitForExit(timeout: 5) != nil, "ended with the test's cassette")
        #expect(!process.isRunning)
    }
}

/// An upstream that accepts a connection and never answers.
final class SilentServer: Sendable {
    let listener: Int32
    let port: UInt16
    let connected = DispatchSemaphore(value: 0)
    private let accepted = Locked<[Int32]>([])
    var base: String { "http://127.0.0.1:\(port)" }

    init() throws {
        (listener, port) = try LoopbackServer.listen(on: 0)
        let (listener, accepted, connected) = (self.listener, self.accepted, self.connected)
        Thread {
            while true {
                let client = accept(listener, nil, nil)
                guard client >= 0 else { return }
                accepted.withLock { $0.append(client) }
                connected.signal()
            }
        }.start()
    }

    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        for client in accepted.withLock({ $0 }) { close(client) }
    }
}
