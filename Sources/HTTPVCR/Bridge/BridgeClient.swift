import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HTTPVCRCassettes

/// An answer read off the bridge: status, fields in order, body.
struct BridgeAnswer: Sendable {
    var status: Int
    var fields: [WireField]
    var body: Data

    func field(_ name: String) -> String? {
        fields.first { $0.name.equalsIgnoringASCIICase(name) }?.value
    }
}

/// The launched process's HTTP/1.1 client for its bridge: kept-alive connections to 127.0.0.1, each used by one
/// exchange at a time on a queue of its own (blocking socket calls never run on Swift's cooperative pool, nor on a
/// URLSession's queues). It speaks only to ``LoopbackServer``, which frames every answer with Content-Length.
///
/// A second URLSession (libcurl, on corelibs) costs several times as much a round trip on loopback
/// (Docs/Performance.md, the bridge).
final class BridgeClient: Sendable {
    let port: UInt16
    private let idle = Locked<[BridgeSocket]>([], level: .leaf)

    init(port: UInt16) {
        self.port = port
    }

    /// Sends `bytes` (a whole request) and reads the answer, on a connection's own queue; `done` gets the answer or
    /// the error, there. `stopped` is told the exchange's socket, so that a cancellation can shut it down.
    func exchange(
        _ bytes: Data,
        isHead: Bool,
        timeout: TimeInterval,
        started: @escaping @Sendable (BridgeSocket) -> Void = { _ in },
        _ done: @escaping @Sendable (Result<BridgeAnswer, URLError>) -> Void
    ) {
        let reused = idle.withLock { $0.popLast() }
        let socket = reused ?? BridgeSocket(port: port)
        socket.queue.async { [self] in
            started(socket)
            var used = socket
            var result = socket.exchange(bytes, isHead: isHead, timeout: timeout)
            if reused != nil, case let .failure(error) = result, error.code == .networkConnectionLost {
                // The bridge closed a kept-alive connection meanwhile: once more on a new one.
                socket.close()
                used = BridgeSocket(port: port)
                started(used)
                result = used.exchange(bytes, isHead: isHead, timeout: timeout)
            }
            // Told before the connection is offered again: whoever may shut it down lets go of it in `done`.
            done(result)
            if case .success = result, used.isReusable {
                idle.withLock { $0.append(used) }
            } else {
                used.close()
            }
        }
    }

    /// ``exchange(_:isHead:timeout:started:_:)`` awaited.
    func exchange(_ bytes: Data, isHead: Bool, timeout: TimeInterval) async throws -> BridgeAnswer {
        try await withCheckedThrowingContinuation { continuation in
            exchange(bytes, isHead: isHead, timeout: timeout) { continuation.resume(with: $0) }
        }
    }

    /// The bytes of `request` sent to the bridge: its path and query, its fields (Host and framing set here), the
    /// token and origin, its body with its length. Written as bytes: building the head as a String and converting
    /// it cost the launched process a tenth of a bridged request (Docs/Performance.md).
    static func serialize(_ request: URLRequest, origin: String, token: String, port: UInt16) -> Data {
        let body = request.httpBody ?? Data()
        var bytes = [UInt8]()
        bytes.reserveCapacity(512 + body.count)
        bytes += (request.httpMethod ?? "GET").utf8
        bytes.append(Byte.space)
        bytes += BridgeWire.target(of: request.url!).utf8
        bytes += " HTTP/1.1\r\nHost: 127.0.0.1:".utf8
        bytes += String(port).utf8
        bytes += "\r\n".utf8
        for (name, value) in request.allHTTPHeaderFields ?? [:] {
            if name.equalsIgnoringASCIICase("host") || WireResponse.isHopByHop(name) || BridgeWire.isOwnField(name) {
                continue
            }
            bytes += name.utf8
            bytes += ": ".utf8
            // A field value cannot hold CR or LF on the wire.
            for byte in value.utf8 { bytes.append(byte == Byte.carriageReturn || byte == Byte.lineFeed ? Byte.space : byte) }
            bytes += "\r\n".utf8
        }
        bytes += "\(BridgeWire.tokenField): \(token)\r\n\(BridgeWire.originField): \(origin)\r\n".utf8
        bytes += "Content-Length: \(body.count)\r\n\r\n".utf8
        bytes += body
        return Data(bytes)
    }
}

/// One connection to the bridge, used by one exchange at a time, on its own serial queue.
final class BridgeSocket: @unchecked Sendable {
    let queue = DispatchQueue(label: "HTTPVCR.bridge.connection")
    private let port: UInt16
    /// -1 until connected; touched on ``queue`` only, but for ``shutDown()`` (an atomic system call on a number).
    private let descriptor = Locked<Int32>(-1, level: .leaf)
    private var buffer = [UInt8]()
    /// What one `recv` fills: made once per connection (zeroing 64 KiB for every read showed in the timings).
    private var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    private(set) var isReusable = false

    init(port: UInt16) {
        self.port = port
    }

    /// Wakes an exchange blocked on this socket: it ends with an error (a cancelled request).
    func shutDown() {
        let socket = descriptor.withLock { $0 }
        if socket >= 0 { shutdown(socket, Int32(SHUT_RDWR)) }
    }

    func close() {
        let socket = descriptor.withLock { socket in defer { socket = -1 }; return socket }
        if socket >= 0 { _ = closeDescriptor(socket) }
    }

    /// Writes a request and reads its answer. Runs on ``queue``.
    func exchange(_ bytes: Data, isHead: Bool, timeout: TimeInterval) -> Result<BridgeAnswer, URLError> {
        isReusable = false
        let deadline = Date().addingTimeInterval(timeout > 0 ? timeout : 60)
        var socket = descriptor.withLock { $0 }
        if socket < 0 {
            socket = Loopback.tcpSocket()
            guard socket >= 0 else { return .failure(URLError(.cannotConnectToHost)) }
            var yes: Int32 = 1
            setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
            #if canImport(Darwin)
            setsockopt(socket, SOL_SOCKET, SO_NOSIGPIPE, &yes, socklen_t(MemoryLayout<Int32>.size))
            #endif
            guard Loopback.connect(socket, port: port) == 0 else {
                _ = closeDescriptor(socket)
                return .failure(URLError(.cannotConnectToHost))
            }
            descriptor.withLock { $0 = socket }
        }
        guard Loopback.sendAll(bytes, to: socket) else { return .failure(URLError(.networkConnectionLost)) }
        buffer.removeAll(keepingCapacity: true)
        var headEnd: Int?
        var answer: BridgeAnswer?
        var length = 0
        while true {
            if answer == nil, let end = Self.headEnd(in: buffer) {
                headEnd = end
                guard let parsed = Self.parseHead(buffer[0..<end]) else { return .failure(URLError(.badServerResponse)) }
                answer = parsed.answer
                length = isHead ? 0 : parsed.length
            }
            if let headEnd, var whole = answer, buffer.count - headEnd >= length {
                whole.body = Data(buffer[headEnd..<headEnd + length])
                isReusable = whole.field("Connection")?.lowercased() != "close" && buffer.count == headEnd + length
                return .success(whole)
            }
            switch read(socket, until: deadline) {
            case .failure(let error): return .failure(error)
            case .success: continue
            }
        }
    }


    /// Appends what arrives to ``buffer``; an error when the connection ends or the deadline passes.
    private func read(_ socket: Int32, until deadline: Date) -> Result<Void, URLError> {
        while true {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { return .failure(URLError(.timedOut)) }
            var poller = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(min(remaining * 1000, 60_000).rounded(.up)))
            if ready < 0 && errno == EINTR { continue }
            if ready < 0 { return .failure(URLError(.networkConnectionLost)) }
            if ready == 0 { continue }
            let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                buffer.append(contentsOf: chunk[0..<count])
                return .success(())
            }
            if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
            return .failure(URLError(.networkConnectionLost))
        }
    }

    /// The index past the CRLFCRLF ending the head, if it has arrived.
    private static func headEnd(in bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 3..<bytes.count where bytes[index] == 10 && bytes[index - 1] == 13
            && bytes[index - 2] == 10 && bytes[index - 3] == 13 {
            return index + 1
        }
        return nil
    }

    /// Status line and fields (the body left empty), and the Content-Length. Read as bytes: Foundation's string
    /// splitting and trimming cost more than the rest of a bridged request in the launched process.
    private static func parseHead(_ head: ArraySlice<UInt8>) -> (answer: BridgeAnswer, length: Int)? {
        var lines = head.split(separator: 10, omittingEmptySubsequences: true).map { line in
            line.last == 13 ? line.dropLast() : line
        }
        lines.removeAll { $0.isEmpty }
        guard let statusLine = lines.first else { return nil }
        let parts = statusLine.split(separator: 32, maxSplits: 2)
        guard parts.count >= 2, parts[0].starts(with: "HTTP/1.".utf8),
              let status = Int(String(decoding: parts[1], as: UTF8.self))
        else { return nil }
        var fields: [WireField] = []
        fields.reserveCapacity(lines.count - 1)
        var length = 0
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: 58) else { return nil }
            var value = line[(colon + 1)...]
            while let first = value.first, first == 32 || first == 9 { value = value.dropFirst() }
            while let last = value.last, last == 32 || last == 9 { value = value.dropLast() }
            let field = WireField(String(decoding: line[..<colon], as: UTF8.self), String(decoding: value, as: UTF8.self))
            if field.name.equalsIgnoringASCIICase("Content-Length") {
                guard let declared = Int(field.value), declared >= 0 else { return nil }
                length = declared
            }
            fields.append(field)
        }
        return (BridgeAnswer(status: status, fields: fields, body: Data()), length)
    }
}

/// `close(2)`, which `BridgeSocket.close()` hides.
private func closeDescriptor(_ descriptor: Int32) -> Int32 {
    #if canImport(Glibc)
    Glibc.close(descriptor)
    #else
    Darwin.close(descriptor)
    #endif
}
