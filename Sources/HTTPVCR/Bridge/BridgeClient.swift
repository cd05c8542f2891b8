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
/// exchange at a time on a queue of its own (blocking socket calls never run on Swift's cooperative pool, and hold a
/// URLSession's queue a moment at most: ``exchange(_:isHead:timeout:waitingHere:using:_:)``). It speaks only to
/// ``LoopbackServer``, which frames every answer with Content-Length.
///
/// A second URLSession (libcurl, on corelibs) costs several times as much a round trip on loopback
/// (Docs/Performance.md, the bridge).
final class BridgeClient: Sendable {
    let port: UInt16
    private let idle = Locked<[BridgeSocket]>([], level: .leaf)

    init(port: UInt16) {
        self.port = port
    }

    /// How long a recording's request waits for its answer on the thread that sends it (the session's work queue)
    /// before the connection's queue takes over: a replayed answer comes well within it, and is then told to the
    /// client from that thread, without two hand-overs between threads (Docs/Performance.md, the bridge). A slower
    /// one (a recording the bridge forwards to a server) holds the session's queue no longer than this.
    static let waitHere: TimeInterval = 0.002

    /// Sends `bytes` (a whole request) and reads the answer, on a connection's own queue; `done` gets the answer or
    /// the error, there. `using` is told the socket the exchange uses, so that a cancellation can shut it down, and
    /// nil once the exchange is over, before the connection is offered to the next one (and before `done`).
    ///
    /// `waitingHere`: on a kept-alive connection, the request is sent from the calling thread, and its answer
    /// waited for there that long (`done` is then called there); only then does the connection's queue go on.
    /// Never in a Swift task: its thread is one of the cooperative pool's few.
    func exchange(
        _ bytes: Data,
        isHead: Bool,
        timeout: TimeInterval,
        waitingHere: TimeInterval = 0,
        using: @escaping @Sendable (BridgeSocket?) -> Void = { _ in },
        _ done: @escaping @Sendable (Result<BridgeAnswer, URLError>) -> Void
    ) {
        let reused = idle.withLock { $0.popLast() }
        let socket = reused ?? BridgeSocket(port: port)
        using(socket)
        let settle: @Sendable (Result<BridgeAnswer, URLError>) -> Void = { [self] result in
            guard reused != nil, Self.isLostConnection(result) else { return finish(result, on: socket, using, done) }
            // The bridge closed a kept-alive connection meanwhile: once more on a new one.
            socket.close()
            let fresh = BridgeSocket(port: port)
            using(fresh)
            finish(fresh.exchange(bytes, isHead: isHead, timeout: timeout), on: fresh, using, done)
        }
        if reused != nil, waitingHere > 0, Self.mayWaitOnThisThread {
            switch socket.begin(bytes, isHead: isHead, timeout: timeout, waitingUpTo: waitingHere) {
            case let .answered(result) where !Self.isLostConnection(result):
                return finish(result, on: socket, using, done)
            case let .answered(result):
                return socket.queue.async { settle(result) }
            case .waiting:
                return socket.queue.async { settle(socket.awaitAnswer()) }
            }
        }
        socket.queue.async { settle(socket.exchange(bytes, isHead: isHead, timeout: timeout)) }
    }

    /// Outside every Swift task: this thread is no cooperative pool's.
    static var mayWaitOnThisThread: Bool { withUnsafeCurrentTask { $0 == nil } }

    private static func isLostConnection(_ result: Result<BridgeAnswer, URLError>) -> Bool {
        if case let .failure(error) = result { error.code == .networkConnectionLost } else { false }
    }

    /// Offers the connection again (or closes it), then tells `done` the result: whoever `done` wakes finds the
    /// connection free. A cancellation lets go of it first (`using`), so that it never shuts down the next exchange.
    private func finish(
        _ result: Result<BridgeAnswer, URLError>, on socket: BridgeSocket,
        _ using: @Sendable (BridgeSocket?) -> Void, _ done: @Sendable (Result<BridgeAnswer, URLError>) -> Void
    ) {
        using(nil)
        if case .success = result, socket.isReusable {
            idle.withLock { $0.append(socket) }
        } else {
            socket.close()
        }
        done(result)
    }

    /// ``exchange(_:isHead:timeout:waitingHere:using:_:)`` awaited.
    func exchange(_ bytes: Data, isHead: Bool, timeout: TimeInterval) async throws -> BridgeAnswer {
        try await withCheckedThrowingContinuation { continuation in
            exchange(bytes, isHead: isHead, timeout: timeout) { continuation.resume(with: $0) }
        }
    }

    /// The bytes of `request` sent to the bridge: its path and query (`target`, when the caller has it), its fields
    /// (Host and framing set here), the token and origin, its body with its length. Written as bytes: building the
    /// head as a String and converting it cost the launched process a tenth of a bridged request
    /// (Docs/Performance.md).
    static func serialize(
        _ request: URLRequest, origin: String, target: String? = nil, token: String, port: UInt16
    ) -> Data {
        let body = request.httpBody ?? Data()
        var bytes = [UInt8]()
        bytes.reserveCapacity(512 + body.count)
        bytes.appendUTF8(request.httpMethod ?? "GET")
        bytes.append(Byte.space)
        bytes.appendUTF8(target ?? BridgeWire.target(of: request.url!))
        bytes.appendUTF8(" HTTP/1.1\r\nHost: 127.0.0.1:")
        bytes.appendDecimal(Int(port))
        bytes.appendUTF8("\r\n")
        for (name, value) in request.allHTTPHeaderFields ?? [:]
        where !name.equalsIgnoringASCIICase("host") && !WireResponse.isHopByHop(name) && !BridgeWire.isOwnField(name) {
            bytes.appendField(name, value)
        }
        bytes.appendField(BridgeWire.tokenField, token)
        bytes.appendField(BridgeWire.originField, origin)
        bytes.appendUTF8("Content-Length: ")
        bytes.appendDecimal(body.count)
        bytes.appendUTF8("\r\n\r\n")
        // Copied at once, and not at all when empty (a GET): `+=` took Data's generic path even then.
        if !body.isEmpty { body.withUnsafeBytes { bytes.append(contentsOf: $0.bindMemory(to: UInt8.self)) } }
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

    /// Where an exchange begun with ``begin(_:isHead:timeout:waitingUpTo:)`` stands.
    enum Progress {
        case answered(Result<BridgeAnswer, URLError>)
        /// Sent, and no answer yet: ``awaitAnswer()`` goes on, on ``queue``.
        case waiting
    }

    /// The exchange under way: its deadline, and whether it is a HEAD's (no body follows the head).
    private var deadline = Date.distantFuture
    private var isHead = false

    /// Writes a request and reads its answer. Runs on ``queue``.
    func exchange(_ bytes: Data, isHead: Bool, timeout: TimeInterval) -> Result<BridgeAnswer, URLError> {
        if let error = send(bytes, isHead: isHead, timeout: timeout) { return .failure(error) }
        return awaitAnswer()
    }

    /// Writes a request and waits for its answer up to `wait`: on the caller's thread, which then leaves the
    /// connection to ``queue`` (``awaitAnswer()``) when it is still waiting.
    func begin(_ bytes: Data, isHead: Bool, timeout: TimeInterval, waitingUpTo wait: TimeInterval) -> Progress {
        if let error = send(bytes, isHead: isHead, timeout: timeout) { return .answered(.failure(error)) }
        return answer(givingUpAt: min(deadline, Date().addingTimeInterval(wait))).map(Progress.answered) ?? .waiting
    }

    /// Reads the answer of the request sent last, until the exchange's deadline.
    func awaitAnswer() -> Result<BridgeAnswer, URLError> {
        answer(givingUpAt: nil) ?? .failure(URLError(.timedOut))
    }

    /// Connects if need be and writes the request; an error when that fails.
    private func send(_ bytes: Data, isHead: Bool, timeout: TimeInterval) -> URLError? {
        isReusable = false
        self.isHead = isHead
        deadline = Date().addingTimeInterval(timeout > 0 ? timeout : 60)
        var socket = descriptor.withLock { $0 }
        if socket < 0 {
            socket = Loopback.tcpSocket()
            guard socket >= 0 else { return URLError(.cannotConnectToHost) }
            var yes: Int32 = 1
            setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
            #if canImport(Darwin)
            setsockopt(socket, SOL_SOCKET, SO_NOSIGPIPE, &yes, socklen_t(MemoryLayout<Int32>.size))
            #endif
            guard Loopback.connect(socket, port: port) == 0 else {
                _ = closeDescriptor(socket)
                return URLError(.cannotConnectToHost)
            }
            descriptor.withLock { $0 = socket }
        }
        guard Loopback.sendAll(bytes, to: socket) else { return URLError(.networkConnectionLost) }
        buffer.removeAll(keepingCapacity: true)
        return nil
    }

    /// The answer, once it has all arrived; nil when `pause` comes first (the exchange goes on).
    private func answer(givingUpAt pause: Date?) -> Result<BridgeAnswer, URLError>? {
        let socket = descriptor.withLock { $0 }
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
                // From the array's storage: a Data made from an array slice copies it byte by byte.
                whole.body = buffer.withUnsafeBufferPointer {
                    Data(buffer: UnsafeBufferPointer(rebasing: $0[headEnd..<headEnd + length]))
                }
                isReusable = whole.field("Connection")?.lowercased() != "close" && buffer.count == headEnd + length
                return .success(whole)
            }
            switch read(socket, until: deadline, pausingAt: pause) {
            case .failure(let error): return .failure(error)
            case .success(false): return nil
            case .success(true): continue
            }
        }
    }


    /// Appends what arrives to ``buffer`` (true); false when `pause` comes first; an error when the connection ends
    /// or the deadline passes.
    private func read(_ socket: Int32, until deadline: Date, pausingAt pause: Date?) -> Result<Bool, URLError> {
        while true {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { return .failure(URLError(.timedOut)) }
            let wait = pause.map { min(remaining, $0.timeIntervalSinceNow) } ?? remaining
            if pause != nil, wait <= 0 { return .success(false) }
            var poller = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(min(wait * 1000, 60_000).rounded(.up)))
            if ready < 0 && errno == EINTR { continue }
            if ready < 0 { return .failure(URLError(.networkConnectionLost)) }
            if ready == 0 { continue }
            let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                buffer.append(contentsOf: chunk[0..<count])
                return .success(true)
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

    /// Status line and fields (the body left empty), and the Content-Length. Read as bytes, in one pass: Foundation's
    /// string splitting and trimming, then splitting into arrays of lines, cost more than the rest of a bridged
    /// request in the launched process.
    private static func parseHead(_ head: ArraySlice<UInt8>) -> (answer: BridgeAnswer, length: Int)? {
        // Named here: read inside the loops, the constants of `Byte` (another module's) were a call a byte.
        let (space, tab) = (Byte.space, Byte.tab)
        return head.withUnsafeBufferPointer { bytes -> (answer: BridgeAnswer, length: Int)? in
            var status: Int?
            var fields: [WireField] = []
            fields.reserveCapacity(8)
            var length = 0
            var start = 0
            while start < bytes.count {
                let newline = bytes[start...].firstIndex(of: Byte.lineFeed) ?? bytes.count
                var end = newline
                if end > start, bytes[end - 1] == Byte.carriageReturn { end -= 1 }
                let line = UnsafeBufferPointer(rebasing: bytes[start..<end])
                start = newline + 1
                guard !line.isEmpty else { continue }
                guard status != nil else {
                    guard let parsed = Self.status(in: line) else { return nil }
                    status = parsed
                    continue
                }
                guard let colon = line.firstIndex(of: Byte.colon) else { return nil }
                var valueStart = colon + 1
                var valueEnd = line.count
                while valueStart < valueEnd, line[valueStart] == space || line[valueStart] == tab { valueStart += 1 }
                while valueEnd > valueStart, line[valueEnd - 1] == space || line[valueEnd - 1] == tab { valueEnd -= 1 }
                let field = WireField(
                    String(decoding: UnsafeBufferPointer(rebasing: line[..<colon]), as: UTF8.self),
                    String(decoding: UnsafeBufferPointer(rebasing: line[valueStart..<valueEnd]), as: UTF8.self)
                )
                if field.name.equalsIgnoringASCIICase("Content-Length") {
                    guard let declared = Int(field.value), declared >= 0 else { return nil }
                    length = declared
                }
                fields.append(field)
            }
            guard let status else { return nil }
            return (BridgeAnswer(status: status, fields: fields, body: Data()), length)
        }
    }

    /// The status of a status line (`HTTP/1.1 200 OK`): its second word, digits only.
    private static func status(in line: UnsafeBufferPointer<UInt8>) -> Int? {
        guard let space = line.firstIndex(of: Byte.space), line[..<space].starts(with: "HTTP/1.".utf8) else {
            return nil
        }
        let digits = line[(space + 1)...].prefix { $0 != Byte.space }
        guard (1...3).contains(digits.count), digits.allSatisfy({ (Byte.zero...Byte.nine).contains($0) })
        else { return nil }
        return digits.reduce(0) { $0 * 10 + Int($1 - Byte.zero) }
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
