import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One side of a proxied connection, read through a buffer: heads, lines and counted bytes, each with an idle
/// limit, so that a client that stops sending never holds a thread for good.
struct ProxySocket {
    let fd: Int32
    private var buffer: [UInt8] = []
    private var start = 0
    private let idleTimeout: Int32

    init(_ fd: Int32, idleTimeout: TimeInterval = 120) {
        self.fd = fd
        self.idleTimeout = Int32(idleTimeout * 1000)
        #if canImport(Darwin)
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &yes, socklen_t(MemoryLayout<Int32>.size))
        #endif
    }

    /// Reads what the peer sends next into the buffer; false at its end, an error or the idle limit.
    private mutating func fill() -> Bool {
        if start > 0 && start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        }
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        guard let count = Self.receive(fd, into: &chunk, timeout: idleTimeout), count > 0 else { return false }
        buffer.append(contentsOf: chunk[0..<count])
        return true
    }

    /// A request's head up to and including the empty line, or nil when the peer is done, stalls or sends more than
    /// `limit` bytes without ending one.
    mutating func readHead(limit: Int = 64 * 1024) -> ArraySlice<UInt8>? {
        while true {
            // Blank lines before a request are allowed (RFC 9112 2.2).
            while buffer.count - start >= 2, buffer[start] == 13, buffer[start + 1] == 10 { start += 2 }
            // Searched from the head's start each time: `fill` may move what is buffered.
            if let end = Self.find([13, 10, 13, 10], in: buffer, from: start) {
                defer { start = end + 4 }
                return buffer[start..<end + 4]
            }
            guard buffer.count - start <= limit, fill() else { return nil }
        }
    }

    /// One line without its CRLF (a chunk's size, a trailer).
    mutating func readLine(limit: Int = 8 * 1024) -> ArraySlice<UInt8>? {
        while true {
            if let end = Self.find([13, 10], in: buffer, from: start) {
                defer { start = end + 2 }
                return buffer[start..<end]
            }
            guard buffer.count - start <= limit, fill() else { return nil }
        }
    }

    /// Sends the next `count` bytes on to `peer` as they come; false if either side fails first.
    mutating func relay(_ count: Int, to peer: Int32) -> Bool {
        var left = count
        while left > 0 {
            if start == buffer.count, !fill() { return false }
            let taken = min(left, buffer.count - start)
            guard Self.send(buffer[start..<start + taken], to: peer) else { return false }
            start += taken
            left -= taken
        }
        return true
    }

    /// Hands what is buffered to `peer`, then empties the buffer.
    mutating func flush(to peer: Int32) -> Bool {
        defer { start = buffer.count }
        return Self.send(buffer[start...], to: peer)
    }

    // MARK: Sockets

    static func send(_ bytes: ArraySlice<UInt8>, to socket: Int32) -> Bool {
        bytes.isEmpty || Loopback.sendAll(Data(bytes), to: socket)
    }

    /// Waits at most `timeout` ms (-1: no limit) for bytes; nil on error or the limit, 0 at the end.
    static func receive(_ socket: Int32, into chunk: inout [UInt8], timeout: Int32) -> Int? {
        while true {
            var poller = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, timeout)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { return nil }
            let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
            return count < 0 ? nil : count
        }
    }

    /// Copies what `from` sends to `to` until `from` ends or `mayGoOn` says no, then ends `to`'s writing side.
    static func pipe(from: Int32, to: Int32, mayGoOn: () -> Bool = { true }) {
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while let count = receive(from, into: &chunk, timeout: -1), count > 0, mayGoOn(),
              send(chunk[0..<count], to: to) {}
        shutdown(to, Int32(SHUT_WR))
    }

    /// A TCP connection to `host`:`port`, or the errno of the last try (`EAI_NONAME` as `-1`: no such host).
    static func connect(host: String, port: Int) -> Result<Int32, UpstreamFailure> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let first = list else {
            return .failure(.noSuchHost)
        }
        defer { freeaddrinfo(list) }
        var failure = UpstreamFailure.refused
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let entry = next {
            next = entry.pointee.ai_next
            #if canImport(Glibc)
            let socket = Glibc.socket(entry.pointee.ai_family, entry.pointee.ai_socktype, entry.pointee.ai_protocol)
            guard socket >= 0 else { continue }
            if Glibc.connect(socket, entry.pointee.ai_addr, entry.pointee.ai_addrlen) == 0 { return .success(socket) }
            #else
            let socket = Darwin.socket(entry.pointee.ai_family, entry.pointee.ai_socktype, entry.pointee.ai_protocol)
            guard socket >= 0 else { continue }
            if Darwin.connect(socket, entry.pointee.ai_addr, entry.pointee.ai_addrlen) == 0 { return .success(socket) }
            #endif
            failure = errno == ETIMEDOUT ? .timedOut : errno == ENETUNREACH ? .unreachable : .refused
            close(socket)
        }
        return .failure(failure)
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8], from: Int) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        var index = from
        while index + needle.count <= haystack.count {
            if haystack[index] == needle[0], haystack[index..<index + needle.count].elementsEqual(needle) { return index }
            index += 1
        }
        return nil
    }
}

/// Why the guard could not reach a server it forwards to: what the app's session would have been told had it gone
/// there itself, so that HTTPVCR's recorder can tell the app the same (``NetworkGuard/upstreamFailure(for:since:)``).
enum UpstreamFailure: Error, Sendable, Equatable {
    case noSuchHost
    case refused
    case timedOut
    case unreachable

    var urlErrorCode: URLError.Code {
        switch self {
        case .noSuchHost: .cannotFindHost
        case .refused: .cannotConnectToHost
        case .timedOut: .timedOut
        case .unreachable: .notConnectedToInternet
        }
    }
}
