import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A server-sent-events endpoint that never ends: every connection gets `text/event-stream` with one event
/// (`data: N`) every `interval`, until the client goes away. httpbin's streams all end; a stream a client must
/// cancel needs this.
public final class EventStreamServer: @unchecked Sendable {
    public let port: Int
    private let listener: Int32
    private let interval: TimeInterval

    /// Listens on 127.0.0.1, on a free port.
    public init(interval: TimeInterval = 0.05) throws {
        self.interval = interval
        #if canImport(Glibc)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw Failure("socket: \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(descriptor, 16) == 0 else {
            close(descriptor)
            throw Failure("bind/listen: \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        listener = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    deinit {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    public var url: URL { URL(string: "http://127.0.0.1:\(port)/events")! }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    private func acceptLoop() {
        while true {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }  // closed
            let thread = Thread { [interval] in Self.serve(connection, interval: interval) }
            thread.start()
        }
    }

    private static func serve(_ connection: Int32, interval: TimeInterval) {
        defer { close(connection) }
        // The request: read up to the end of its headers (no body is expected).
        var request: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1024)
        while !request.ends(with: Array("\r\n\r\n".utf8)) {
            let count = read(connection, &buffer, buffer.count)
            guard count > 0 else { return }
            request += buffer[..<count]
            if request.count > 64 * 1024 { return }
        }
        let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
            + "Transfer-Encoding: chunked\r\n\r\n"
        guard write(connection, head) else { return }
        var number = 1
        while true {
            let event = "data: \(number)\n\n"
            let chunk = String(event.utf8.count, radix: 16) + "\r\n" + event + "\r\n"
            guard write(connection, chunk) else { return }  // the client went away
            number += 1
            Thread.sleep(forTimeInterval: interval)
        }
    }

    private static func write(_ connection: Int32, _ text: String) -> Bool {
        let bytes = Array(text.utf8)
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { send(connection, $0.baseAddress, $0.count, noSignal) }
            guard count > 0 else { return false }
            sent += count
        }
        return true
    }
}

/// A write to a closed connection fails rather than kill the process.
#if canImport(Glibc)
private let noSignal = Int32(MSG_NOSIGNAL)
#else
private let noSignal: Int32 = 0  // Darwin: SIGPIPE is ignored by the test runner
#endif

private extension Array where Element == UInt8 {
    func ends(with suffix: [UInt8]) -> Bool {
        count >= suffix.count && self[(count - suffix.count)...].elementsEqual(suffix)
    }
}
