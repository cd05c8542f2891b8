import Foundation
import HTTPVCRCassettes

/// Reads HTTP/1.1 requests from bytes as they arrive: feed what the socket gave, take requests while there are
/// whole ones. Strict on purpose (it only ever talks to loopback clients): only CRLF ends a line, no folded fields,
/// no Content-Length beside Transfer-Encoding. Empty lines before a request line are skipped.
///
/// ```swift
/// var parser = RequestParser()
/// parser.feed(bytes)
/// while let request = try parser.next() { … }
/// ```
package struct RequestParser: Sendable {
    package let limits: WireLimits
    private var buffer: [UInt8] = []
    /// The head of the request whose body is still arriving, and where that body starts in `buffer`.
    private var pending: (request: WireRequest, bodyStart: Int, framing: Framing)?

    private enum Framing: Sendable {
        case length(Int)
        case chunked
    }

    package init(limits: WireLimits = WireLimits()) {
        self.limits = limits
    }

    /// Whether bytes of an unfinished request are held.
    package var hasPartialRequest: Bool { pending != nil || buffer.contains { $0 != 13 && $0 != 10 } }

    package mutating func feed<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        buffer.append(contentsOf: bytes)
    }

    /// The next whole request, or nil until more bytes come. After an error the parser is spent: the server answers
    /// and closes, since where the next request starts is unknown.
    package mutating func next() throws(WireError) -> WireRequest? {
        if pending == nil {
            guard let head = try parseHead() else { return nil }
            pending = head
        }
        guard let (request, bodyStart, framing) = pending else { return nil }
        let end: Int
        var body: Data
        switch framing {
        case let .length(length):
            guard buffer.count - bodyStart >= length else { return nil }
            // From the array's storage: a Data made from an array slice copies it byte by byte.
            body = length == 0 ? Data() : buffer.withUnsafeBufferPointer {
                Data(buffer: UnsafeBufferPointer(rebasing: $0[bodyStart..<bodyStart + length]))
            }
            end = bodyStart + length
        case .chunked:
            guard let (data, chunkedEnd) = try parseChunked(from: bodyStart) else { return nil }
            body = data
            end = chunkedEnd
        }
        var whole = request
        whole.body = body
        buffer.removeFirst(end)
        pending = nil
        return whole
    }

    /// Called when the client closed: an unfinished request is ``WireError/truncated``.
    package func finish() throws(WireError) {
        if hasPartialRequest { throw .truncated }
    }

    // MARK: Head

    private mutating func parseHead() throws(WireError) -> (WireRequest, Int, Framing)? {
        // Empty lines before the request line are allowed (RFC 9112 2.2).
        var start = 0
        while start + 1 < buffer.count, buffer[start] == 13, buffer[start + 1] == 10 { start += 2 }
        if start > 0 {
            buffer.removeFirst(start)
        }
        guard let headEnd = try findHeadEnd() else {
            if buffer.count > limits.headBytes { throw .headTooLarge }
            return nil
        }
        if headEnd > limits.headBytes { throw .headTooLarge }
        let fieldLimit = limits.fields
        let request = try buffer.withUnsafeBufferPointer { buffer throws(WireError) in
            try Self.request(head: UnsafeBufferPointer(rebasing: buffer[0..<headEnd - 2]), fieldLimit: fieldLimit)
        }
        return (request, headEnd, try framing(of: request))
    }

    /// The index just past the CRLFCRLF that ends the head; throws on a LF without CR before it.
    private func findHeadEnd() throws(WireError) -> Int? {
        var index = 0
        let count = min(buffer.count, limits.headBytes + 4)
        while index < count {
            let byte = buffer[index]
            if byte == 10 {
                if index == 0 || buffer[index - 1] != 13 { throw .bareLineFeed }
                if index >= 3, buffer[index - 2] == 10, buffer[index - 3] == 13 { return index + 1 }
            } else if byte == 13, index + 1 < buffer.count, buffer[index + 1] != 10 {
                throw .bareLineFeed
            }
            index += 1
        }
        return nil
    }

    /// The request line and fields of a head whose every line ends with CRLF (checked by `findHeadEnd`), the last
    /// CRLF excluded. Read in place, line by line: splitting it into arrays of slices first cost a tenth of a
    /// bridged request.
    private static func request(head: UnsafeBufferPointer<UInt8>, fieldLimit: Int) throws(WireError) -> WireRequest {
        /// The line starting at `start`: up to its CR, or the end.
        func line(at start: Int) -> UnsafeBufferPointer<UInt8> {
            let end = head[start...].firstIndex(of: Byte.carriageReturn) ?? head.count
            return UnsafeBufferPointer(rebasing: head[start..<end])
        }
        guard !head.isEmpty else { throw .badRequestLine }
        let requestLine = line(at: 0)
        var request = try parseRequestLine(requestLine)
        var start = requestLine.count + 2
        // Counted before any is read, so that too many fields is the error whatever they hold. Each line ends with
        // CRLF.
        let carriageReturn = Byte.carriageReturn
        let fieldCount = head[min(start, head.count)...].reduce(0) { $1 == carriageReturn ? $0 + 1 : $0 }
        if fieldCount > fieldLimit { throw .tooManyFields }
        request.fields.reserveCapacity(fieldCount)
        while start < head.count {
            let field = line(at: start)
            request.fields.append(try parseField(field))
            start += field.count + 2
        }
        return request
    }

    private static func parseRequestLine(_ line: UnsafeBufferPointer<UInt8>) throws(WireError) -> WireRequest {
        // Three parts, one space between each.
        guard let firstSpace = line.firstIndex(of: Byte.space),
              let secondSpace = line[(firstSpace + 1)...].firstIndex(of: Byte.space),
              !line[(secondSpace + 1)...].contains(Byte.space)
        else { throw .badRequestLine }
        let method = line[..<firstSpace], target = line[(firstSpace + 1)..<secondSpace]
        let versionBytes = line[(secondSpace + 1)...]
        guard !method.isEmpty, method.allSatisfy(isToken), !target.isEmpty, target.allSatisfy({ $0 > 32 && $0 < 127 })
        else { throw .badRequestLine }
        let version = String(decoding: UnsafeBufferPointer(rebasing: versionBytes), as: UTF8.self)
        guard version.hasPrefix("HTTP/"), version.utf8.count == 8 else { throw .badRequestLine }
        guard version == "HTTP/1.1" || version == "HTTP/1.0" else { throw .unsupportedVersion }
        return WireRequest(
            method: String(decoding: UnsafeBufferPointer(rebasing: method), as: UTF8.self),
            target: String(decoding: UnsafeBufferPointer(rebasing: target), as: UTF8.self),
            version: version,
            fields: [],
            body: Data()
        )
    }

    private static func parseField(_ line: UnsafeBufferPointer<UInt8>) throws(WireError) -> WireField {
        guard let colon = line.firstIndex(of: Byte.colon), colon > 0, line[..<colon].allSatisfy(isToken) else {
            throw .badField
        }
        // Named here: read inside the loops, the constants of `Byte` (another module's) were a call a byte.
        let (space, tab, delete) = (Byte.space, Byte.tab, Byte.delete)
        var valueStart = colon + 1
        var valueEnd = line.count
        while valueStart < valueEnd, line[valueStart] == space || line[valueStart] == tab { valueStart += 1 }
        while valueEnd > valueStart, line[valueEnd - 1] == space || line[valueEnd - 1] == tab { valueEnd -= 1 }
        let value = UnsafeBufferPointer(rebasing: line[valueStart..<valueEnd])
        // Control bytes other than tab are refused; bytes over 127 (obs-text) are kept.
        guard value.allSatisfy({ $0 == tab || ($0 >= space && $0 != delete) }) else { throw .badField }
        let name = String(decoding: UnsafeBufferPointer(rebasing: line[..<colon]), as: UTF8.self)
        // ASCII, nearly always, decodes without Foundation's encoding machinery.
        let text = value.allSatisfy { $0 < 128 } ? String(decoding: value, as: UTF8.self)
            : String(bytes: value, encoding: .utf8) ?? String(bytes: value, encoding: .isoLatin1) ?? ""
        return WireField(name, text)
    }

    private func framing(of request: WireRequest) throws(WireError) -> Framing {
        // One pass, keeping the first of each and whether the others agree.
        var length: String?
        var lengthsAgree = true
        var coding: String?
        var codings = 0
        for field in request.fields {
            if field.name.equalsIgnoringASCIICase("content-length") {
                if let first = length { lengthsAgree = lengthsAgree && field.value == first } else { length = field.value }
            } else if field.name.equalsIgnoringASCIICase("transfer-encoding") {
                codings += 1
                coding = coding ?? field.value
            }
        }
        if let coding {
            guard length == nil else { throw .conflictingFraming }
            guard codings == 1, coding.lowercased() == "chunked" else { throw .badFraming }
            return .chunked
        }
        guard let first = length else { return .length(0) }
        guard lengthsAgree, !first.isEmpty, first.count <= 18,
              first.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let length = Int(first)
        else { throw .badContentLength }
        if length > limits.bodyBytes { throw .bodyTooLarge }
        return .length(length)
    }

    // MARK: Chunked body

    /// The unframed body and the index past the chunked coding (trailers included), or nil until it is all here.
    private func parseChunked(from start: Int) throws(WireError) -> (Data, Int)? {
        var index = start
        var body = Data()
        while true {
            guard let lineEnd = try lineEnd(from: index, limit: 1024, error: .badChunkSize) else { return nil }
            var sizeBytes = buffer[index..<lineEnd]
            if let semicolon = sizeBytes.firstIndex(of: 59) { sizeBytes = sizeBytes[..<semicolon] }
            while let last = sizeBytes.last, last == 32 || last == 9 { sizeBytes = sizeBytes.dropLast() }
            guard !sizeBytes.isEmpty, sizeBytes.count <= 16, sizeBytes.allSatisfy(Self.isHexDigit),
                  let size = Int(String(decoding: sizeBytes, as: UTF8.self), radix: 16), size >= 0
            else { throw .badChunkSize }
            if size > limits.bodyBytes - body.count { throw .bodyTooLarge }
            index = lineEnd + 2
            if size == 0 { break }
            guard buffer.count >= index + size + 2 else { return nil }
            body.append(contentsOf: buffer[index..<index + size])
            index += size
            guard buffer[index] == 13, buffer[index + 1] == 10 else { throw .badFraming }
            index += 2
        }
        // Trailer fields, read and dropped, then the empty line.
        var trailers = 0
        while true {
            guard let lineEnd = try lineEnd(from: index, limit: limits.headBytes, error: .headTooLarge) else {
                return nil
            }
            if lineEnd == index { return (body, index + 2) }
            _ = try buffer.withUnsafeBufferPointer { buffer throws(WireError) in
                try Self.parseField(UnsafeBufferPointer(rebasing: buffer[index..<lineEnd]))
            }
            trailers += 1
            if trailers > limits.fields { throw .tooManyFields }
            index = lineEnd + 2
        }
    }

    /// Where the CR of the CRLF ending the line at `start` is, or nil until it arrives.
    private func lineEnd(from start: Int, limit: Int, error: WireError) throws(WireError) -> Int? {
        var index = start
        while index < buffer.count {
            switch buffer[index] {
            case 10: throw .bareLineFeed
            case 13:
                guard index + 1 < buffer.count else { return nil }
                guard buffer[index + 1] == 10 else { throw .bareLineFeed }
                return index
            default:
                index += 1
                if index - start > limit { throw error }
            }
        }
        return nil
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (48...57).contains(byte) || (65...70).contains(byte) || (97...102).contains(byte)
    }

    /// RFC 9110 tchar.
    private static func isToken(_ byte: UInt8) -> Bool {
        switch byte {
        case 48...57, 65...90, 97...122: true
        case 33, 35, 36, 37, 38, 39, 42, 43, 45, 46, 94, 95, 96, 124, 126: true
        default: false
        }
    }
}
