import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A small HTTP/1.1 server on 127.0.0.1: one thread accepts, one thread per connection reads requests in turn
/// (keep-alive), hands each to `handler` and writes its answer. Malformed input gets the error's status and a close;
/// a client that sends nothing for `readTimeout` gets 408 (or, idle between requests, a quiet close).
///
/// Threads rather than the cooperative pool: reading a socket blocks, and a blocked pool thread starves every task.
/// The handler is synchronous and runs on the connection's thread, so the server never needs a pool thread: inside a
/// test process, whose pool other tests may hold, an async handler waited for here could wait for good. A handler
/// that must await (`vcr serve`'s) waits on its own side, where it knows the pool is free.
package final class LoopbackServer: Sendable {
    /// The handler: a parsed request to its answer.
    package typealias Handler = @Sendable (WireRequest) -> WireResponse

    /// Why the server did not start.
    package struct StartError: Error, CustomStringConvertible {
        package var port: UInt16
        package var reason: String
        package var description: String { "cannot listen on 127.0.0.1:\(port): \(reason)" }
    }

    /// The port it listens on (the one the system chose when asked for 0).
    package let port: UInt16
    private let listener: Int32
    private let handler: Handler
    private let limits: WireLimits
    private let readTimeout: TimeInterval
    private let state = Locked(State(), level: .leaf)
    private let connections = DispatchGroup()

    private struct State {
        var stopped = false
        var open: Set<Int32> = []
    }

    /// Binds 127.0.0.1:`port` (0 for a free one) and starts accepting.
    package init(
        port: UInt16 = 0,
        readTimeout: TimeInterval = 30,
        limits: WireLimits = WireLimits(),
        handler: @escaping Handler
    ) throws(StartError) {
        self.handler = handler
        self.limits = limits
        self.readTimeout = readTimeout
        (listener, self.port) = try Self.listen(on: port)
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "HTTPVCR loopback accept"
        thread.start()
    }

    /// `http://127.0.0.1:<port>`.
    package var url: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// Stops accepting, lets each connection finish the request it is answering, and returns when all are closed, or
    /// after `grace` seconds: connections still busy then are shut down (their clients see the connection end) and
    /// their threads left to end on their own.
    package func stop(waitingAtMost grace: TimeInterval? = nil) {
        let open = state.withLock { state -> Set<Int32>? in
            guard !state.stopped else { return nil }
            state.stopped = true
            return state.open
        }
        guard let open else { return }
        // shutdown wakes the blocked accept; the read side of each connection ends its wait for a next request.
        shutdown(listener, Int32(SHUT_RDWR))
        for socket in open { shutdown(socket, Int32(SHUT_RD)) }
        if let grace {
            if connections.wait(timeout: .now() + grace) == .timedOut {
                // Still open means still owned by its thread, which closes it: shut down, never closed here.
                state.withLock { state in
                    for socket in state.open { shutdown(socket, Int32(SHUT_RDWR)) }
                }
            }
        } else {
            connections.wait()
        }
        close(listener)
    }

    static func listen(on port: UInt16) throws(StartError) -> (Int32, UInt16) {
        let socketFD = Loopback.tcpSocket()
        guard socketFD >= 0 else { throw StartError(port: port, reason: String(cString: strerror(errno))) }
        var yes: Int32 = 1
        setsockopt(socketFD, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        guard Loopback.bind(socketFD, port: port) == 0, Loopback.listen(socketFD, backlog: 64) == 0 else {
            let reason = errno == EADDRINUSE ? "the port is in use" : String(cString: strerror(errno))
            close(socketFD)
            throw StartError(port: port, reason: reason)
        }
        return (socketFD, Loopback.port(of: socketFD))
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                if state.withLock({ $0.stopped }) { return }
                // EMFILE and the like: let the system recover rather than spin.
                usleep(10_000)
                continue
            }
            let admitted = state.withLock { state in
                if state.stopped { return false }
                state.open.insert(client)
                return true
            }
            guard admitted else {
                close(client)
                return
            }
            connections.enter()
            let thread = Thread { [self] in
                serve(client)
                state.withLock { _ = $0.open.remove(client) }
                close(client)
                connections.leave()
            }
            thread.name = "HTTPVCR loopback connection"
            thread.start()
        }
    }

    /// Reads and answers requests on one connection until either side closes or a request is malformed.
    private func serve(_ client: Int32) {
        #if canImport(Darwin)
        var yes: Int32 = 1
        setsockopt(client, SOL_SOCKET, SO_NOSIGPIPE, &yes, socklen_t(MemoryLayout<Int32>.size))
        #endif
        var parser = RequestParser(limits: limits)
        var served = 0
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var deadline = Date().addingTimeInterval(readTimeout)
        while true {
            do throws(WireError) {
                while let request = try parser.next() {
                    let response = handler(request)
                    let closing = request.wantsClose || state.withLock { $0.stopped }
                    let bytes = response.serialized(closing: closing, includesBody: request.method != "HEAD")
                    guard Loopback.sendAll(bytes, to: client), !closing else { return }
                    served += 1
                    deadline = Date().addingTimeInterval(readTimeout)
                }
                switch read(client, into: &chunk, until: deadline) {
                case let .bytes(count):
                    parser.feed(chunk[0..<count])
                case .closed:
                    try parser.finish()
                    return
                case .timedOut:
                    // Idle between requests: close quietly; a request that never came or never ended: 408.
                    if served > 0 && !parser.hasPartialRequest { return }
                    throw .timeout
                }
            } catch {
                let response = WireResponse.text(error.status, "HTTPVCR: bad request (\(error.kind))", error: error.kind)
                _ = Loopback.sendAll(response.serialized(closing: true), to: client)
                return
            }
        }
    }

    private enum ReadResult {
        case bytes(Int)
        case closed
        case timedOut
    }

    private func read(_ client: Int32, into buffer: inout [UInt8], until deadline: Date) -> ReadResult {
        while true {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { return .timedOut }
            var poller = pollfd(fd: client, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(min(remaining * 1000, 60_000).rounded(.up)))
            if ready < 0 {
                if errno == EINTR { continue }
                return .closed
            }
            if ready == 0 { continue }
            let count = buffer.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
            if count > 0 { return .bytes(count) }
            if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
            return .closed
        }
    }

}
