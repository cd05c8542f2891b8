import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import HTTPVCR

/// What the launched process writes to its bridge for a request.
@Suite struct BridgeClientTests {
    @Test func aRequestIsWrittenWithTheBridgesFramingAndNoInjectedLines() throws {
        var request = URLRequest(url: try #require(URL(string: "https://api.example.com/v1/items?q=a%20b#frag")))
        request.httpMethod = "POST"
        request.setValue("evil.example", forHTTPHeaderField: "Host")
        request.setValue("close", forHTTPHeaderField: "Connection")
        request.setValue("forged", forHTTPHeaderField: BridgeWire.tokenField)
        request.setValue("one\r\nX-Injected: two", forHTTPHeaderField: "X-Note")
        // corelibs checks values, not names.
        request.setValue("three", forHTTPHeaderField: "X-Name\r\nX-Injected-Name: four\r\nX")
        try #require(request.value(forHTTPHeaderField: "X-Name\r\nX-Injected-Name: four\r\nX") == "three")
        request.setValue("text/plain", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data("héllo".utf8)

        let bytes = BridgeClient.serialize(request, origin: "https://api.example.com", token: "T0K", port: 4321)
        let text = String(decoding: bytes, as: UTF8.self)
        let parts = text.components(separatedBy: "\r\n\r\n")
        #expect(parts.count == 2)
        #expect(parts.last == "héllo")
        let lines = try #require(parts.first).components(separatedBy: "\r\n")
        #expect(lines.first == "POST /v1/items?q=a%20b HTTP/1.1")
        #expect(lines[1] == "Host: 127.0.0.1:4321")
        #expect(!lines.contains { $0.hasPrefix("X-Injected") }, "a line break in a name or value starts no field")
        // corelibs' URLRequest may refuse such a value itself; one it keeps crosses on one line.
        let note = request.value(forHTTPHeaderField: "X-Note").map {
            "X-Note: " + $0.replacingOccurrences(of: "\r", with: " ").replacingOccurrences(of: "\n", with: " ")
        }
        let fields = Set(lines.dropFirst(2))
        #expect(fields == Set([note].compactMap { $0 } + [
            // corelibs capitalizes each word of a name.
            "X-Name  X-Injected-Name: Four  X: three",
            "Content-Type: text/plain",
            "\(BridgeWire.tokenField): T0K",
            "\(BridgeWire.originField): https://api.example.com",
            "Content-Length: \("héllo".utf8.count)",
        ]))
    }
}

/// How the launched process's client waits for its bridge: a quick answer on the thread that sent the request (the
/// session's work queue: no hand-over to the connection's queue and back), a slow one on the connection's queue.
@Suite struct BridgeClientWaitingTests {
    static let request = Data("GET /a HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n".utf8)

    /// `body` on a thread of its own, outside every Swift task, as the session's work queue is.
    static func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: body()) }.start()
        }
    }

    /// A server that keeps an idle connection open as long as a loaded machine may take between two exchanges.
    static func server(port: UInt16 = 0, _ handler: @escaping LoopbackServer.Handler) throws -> LoopbackServer {
        try LoopbackServer(port: port, readTimeout: 600, handler: handler)
    }

    /// An exchange waited for on this thread: it leaves its connection free for the next one, which reuses it. Made
    /// on the same thread as the exchange under test, right before it, so that nothing (a starved cooperative pool)
    /// comes between them.
    static func open(_ client: BridgeClient) {
        let done = DispatchSemaphore(value: 0)
        client.exchange(request, isHead: false, timeout: 60) { _ in done.signal() }
        done.wait()
    }

    @Test func aQuickAnswerIsToldOnTheSendingThreadBeforeTheCallReturns() async throws {
        let server = try Self.server { _ in WireResponse(status: 200, body: Data("quick".utf8)) }
        defer { server.stop() }
        let client = BridgeClient(port: server.port)
        let (toldBeforeReturning, toldOnSendingThread) = await Self.onThread {
            Self.open(client)
            let sender = pthread_self()
            let told = Locked<(Result<BridgeAnswer, URLError>, onSender: Bool)?>(nil)
            // A loaded machine may take long to answer: the wait here is generous, and over as soon as it comes.
            client.exchange(Self.request, isHead: false, timeout: 60, waitingHere: 30) { result in
                told.withLock { $0 = (result, pthread_equal(pthread_self(), sender) != 0) }
            }
            let result = told.withLock { $0 }
            return (result?.0, result?.onSender ?? false)
        }
        #expect(toldOnSendingThread, "not handed to the connection's queue")
        let answer = try #require(toldBeforeReturning, "told before exchange returned").get()
        #expect(answer.status == 200)
        #expect(answer.body == Data("quick".utf8))
    }

    @Test func aSlowAnswerIsLeftToTheConnectionsQueue() async throws {
        // The server answers once the test says so, after the call returned: the order holds by construction.
        let release = DispatchSemaphore(value: 0)
        let server = try Self.server { wire in
            if wire.target == "/slow" { release.wait() }
            return WireResponse(status: 200, body: Data(wire.target.utf8))
        }
        defer { server.stop() }
        let client = BridgeClient(port: server.port)
        let slow = Data("GET /slow HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n".utf8)
        let (returnedFirst, result) = await withCheckedContinuation {
            (finished: CheckedContinuation<(Bool, Result<BridgeAnswer, URLError>), Never>) in
            Thread {
                Self.open(client)
                let returned = Locked(false)
                client.exchange(slow, isHead: false, timeout: 60, waitingHere: 0.01) { result in
                    finished.resume(returning: (returned.withLock { $0 }, result))
                }
                returned.withLock { $0 = true }
                release.signal()
            }.start()
        }
        #expect(returnedFirst, "the call returned while the answer was still to come")
        #expect(try result.get().body == Data("/slow".utf8))
    }

    @Test func aConnectionTheBridgeClosedIsRetriedOnANewOne() async throws {
        let first = try Self.server { _ in WireResponse(status: 200, body: Data("first".utf8)) }
        let client = BridgeClient(port: first.port)
        let (second, result) = await Self.onThread {
            Self.open(client)
            // The kept-alive connection is closed under the client; another server takes the port.
            first.stop()
            let second = try? Self.server(port: first.port) { _ in WireResponse(status: 200, body: Data("second".utf8)) }
            let told = DispatchSemaphore(value: 0)
            let answer = Locked<Result<BridgeAnswer, URLError>?>(nil)
            client.exchange(Self.request, isHead: false, timeout: 60, waitingHere: 30) { result in
                answer.withLock { $0 = result }
                told.signal()
            }
            told.wait()
            return (second, answer.withLock { $0 })
        }
        defer { second?.stop() }
        #expect(second != nil, "another server took the port")
        #expect(try #require(result).get().body == Data("second".utf8))
    }

    @Test func aSwiftTaskNeverWaitsOnItsThread() async {
        #expect(!BridgeClient.mayWaitOnThisThread, "a test runs in a task")
        #expect(await Self.onThread { BridgeClient.mayWaitOnThisThread })
    }
}
