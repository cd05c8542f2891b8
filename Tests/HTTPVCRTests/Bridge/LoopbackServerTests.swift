import Foundation
#if canImport(Glibc)
import Glibc
#endif
@testable import HTTPVCR
import Testing

/// The loopback server on a real socket: keep-alive in turn, stopping with a client still connected.
@Suite struct LoopbackServerTests {
    static func echo(_ request: WireRequest) -> WireResponse {
        WireResponse(status: 200, fields: [WireField("X-Method", request.method)],
                     body: Data((request.target + ":" + String(decoding: request.body, as: UTF8.self)).utf8))
    }

    /// Runs blocking socket work on a thread of its own, not on the cooperative pool the other suites share.
    static func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body() }) }.start()
        }
    }

    @Test func answersPipelinedRequestsInTurnOnOneConnection() async throws {
        let server = try LoopbackServer(readTimeout: 2, handler: Self.echo)
        let answer = try await Self.offThePool {
            defer { server.stop() }
            let client = try Socket(port: server.port)
            client.send("GET /one HTTP/1.1\r\n\r\nPOST /two HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "3\r\nabc\r\n0\r\n\r\nGET /three HTTP/1.1\r\nConnection: close\r\n\r\n")
            return client.readToEnd()
        }
        let bodies = answer.components(separatedBy: "\r\n\r\n").dropFirst().map { $0.prefix { $0 != "H" } }
        #expect(bodies == ["/one:", "/two:abc", "/three:"], "\(answer)")
        #expect(answer.occurrences(of: "HTTP/1.1 200 OK") == 3)
        #expect(answer.hasSuffix("Connection: close\r\n\r\n/three:"))
    }

    @Test func stopReturnsWithAnIdleClientConnected() async throws {
        let server = try LoopbackServer(readTimeout: 30, handler: Self.echo)
        let (first, seconds, rest) = try await Self.offThePool {
            let client = try Socket(port: server.port)
            client.send("GET /kept HTTP/1.1\r\n\r\n")
            let first = client.readSome()
            let started = Date()
            server.stop()
            return (first, Date().timeIntervalSince(started), client.readToEnd())
        }
        #expect(first.contains("/kept:"))
        #expect(seconds < 5)
        #expect(rest.isEmpty, "the connection is closed")
    }

    /// A blocking client socket with a 5 s bound on each read, so a server bug fails the test instead of hanging it.
    final class Socket: Sendable {
        let fd: Int32

        init(port: UInt16) throws {
            fd = Loopback.tcpSocket()
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            let connected = Loopback.connect(fd, port: port)
            try #require(connected == 0)
        }

        deinit { close(fd) }

        func send(_ text: String) {
            _ = Array(text.utf8).withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }

        func readSome() -> String {
            var buffer = [UInt8](repeating: 0, count: 65_536)
            let count = recv(fd, &buffer, buffer.count, 0)
            return count > 0 ? String(decoding: buffer[0..<count], as: UTF8.self) : ""
        }

        func readToEnd() -> String {
            var answer = ""
            while true {
                let piece = readSome()
                if piece.isEmpty { return answer }
                answer += piece
            }
        }
    }
}

private extension String {
    func occurrences(of needle: String) -> Int { components(separatedBy: needle).count - 1 }
}
