import Foundation

/// The reader's strings and bodies: a string's bytes found eight at a time, checked as UTF-8, unescaped only
/// when they hold an escape.
extension WrittenLayoutReader {

    package mutating func string() throws(NotTheLayout) -> String {
        try string(from: stringToken())
    }

    /// The next string, as `earlier` when it is the same text, sharing its storage rather than taking another
    /// allocation.
    package mutating func string(sameAs earlier: String?) throws(NotTheLayout) -> String {
        let token = try stringToken()
        if var earlier, !token.hasEscapes {
            let isSame = earlier.withUTF8 { known in
                known.count == token.bytes.count
                    && (known.isEmpty || memcmp(known.baseAddress!, token.bytes.baseAddress!, known.count) == 0)
            }
            if isSame { return earlier }
        }
        return try string(from: token)
    }

    private func string(from token: StringToken) throws(NotTheLayout) -> String {
        guard token.hasEscapes else { return String(decoding: token.bytes, as: UTF8.self) }
        var failed = false
        let string = String(unsafeUninitializedCapacity: token.bytes.count) { output in
            guard let count = try? Self.unescape(token.bytes, into: output) else {
                failed = true
                return 0
            }
            return count
        }
        guard !failed else { throw NotTheLayout() }
        return string
    }

    /// Whether the next string is `known`'s bytes as they are, without escapes: passed over when it is, left
    /// where it is when not.
    mutating func skipString(equalTo known: [UInt8]) throws(NotTheLayout) -> Bool {
        let start = position
        let token = try stringToken()
        if !token.hasEscapes, token.bytes.elementsEqual(known) { return true }
        position = start
        return false
    }

    /// A text body: the string's bytes, as `Data(text.utf8)` has them.
    package mutating func text() throws(NotTheLayout) -> Data {
        let token = try stringToken()
        guard token.hasEscapes else { return Data(token.bytes) }
        // Unescaped into scratch memory (on the stack when small), then copied into a `Data` of exactly its size.
        let data = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: token.bytes.count) { buffer in
            (try? Self.unescape(token.bytes, into: buffer)).map { Data(UnsafeBufferPointer(rebasing: buffer[..<$0])) }
        }
        guard let data else { throw NotTheLayout() }
        return data
    }

    mutating func base64() throws(NotTheLayout) -> Data {
        guard let data = Data(base64Encoded: try string(), options: .ignoreUnknownCharacters) else {
            throw NotTheLayout()
        }
        return data
    }

    /// A string's bytes between its quotes, escapes not yet undone. They are well-formed UTF-8: escapes are ASCII
    /// and stand for whole characters, so unescaping cannot make bytes valid or invalid.
    private struct StringToken {
        let bytes: UnsafeBufferPointer<UInt8>
        let hasEscapes: Bool
    }

    private mutating func stringToken() throws(NotTheLayout) -> StringToken {
        try expect(Byte.quote)
        let start = position
        var index = start
        var hasEscapes = false
        var isASCII = true
        while true {
            index += Byte.plainStringPrefix(of: bytes, from: index)
            guard index < bytes.count else { throw NotTheLayout() }
            let byte = bytes[index]
            if byte == Byte.quote { break }
            if byte < Byte.space { throw NotTheLayout() }
            if byte == Byte.backslash {
                hasEscapes = true
                index += 2  // the escaped byte is checked when unescaping
            } else {
                isASCII = false
                index += 1
            }
        }
        position = index + 1
        let raw = UnsafeBufferPointer(rebasing: bytes[start..<index])
        if !isASCII && !Self.isWellFormedUTF8(raw) { throw NotTheLayout() }
        return StringToken(bytes: raw, hasEscapes: hasEscapes)
    }

    /// Writes what an escaped string stands for into `output` (at least as long as `raw`); returns the count.
    private static func unescape(
        _ raw: UnsafeBufferPointer<UInt8>,
        into output: UnsafeMutableBufferPointer<UInt8>
    ) throws(NotTheLayout) -> Int {
        guard let source = raw.baseAddress, let target = output.baseAddress else { return 0 }
        var index = 0
        var written = 0
        func put(_ byte: UInt8) {
            target[written] = byte
            written += 1
        }
        while index < raw.count {
            // The run up to the next escape, in one copy.
            var next = raw.count
            if let found = memchr(source + index, Int32(Byte.backslash), raw.count - index) {
                next = UnsafePointer(found.assumingMemoryBound(to: UInt8.self)) - source
            }
            (target + written).update(from: source + index, count: next - index)
            written += next - index
            index = next + 1
            guard next < raw.count else { break }
            guard index < raw.count else { throw NotTheLayout() }  // a backslash last
            let escaped = raw[index]
            index += 1
            switch escaped {
            case Byte.quote, Byte.backslash, Byte.slash: put(escaped)
            case UInt8(ascii: "b"): put(0x08)
            case UInt8(ascii: "f"): put(0x0C)
            case UInt8(ascii: "n"): put(Byte.lineFeed)
            case UInt8(ascii: "r"): put(Byte.carriageReturn)
            case UInt8(ascii: "t"): put(Byte.tab)
            case UInt8(ascii: "u"):
                var scalar = try hexQuad(raw, &index)
                if (0xD800..<0xDC00).contains(scalar) {
                    // A high surrogate must be followed by an escaped low one; anything else is the one reader's call.
                    guard index + 1 < raw.count, raw[index] == Byte.backslash, raw[index + 1] == UInt8(ascii: "u")
                    else { throw NotTheLayout() }
                    index += 2
                    let low = try hexQuad(raw, &index)
                    guard (0xDC00..<0xE000).contains(low) else { throw NotTheLayout() }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                }
                // At most 4 bytes for the 6 or 12 of the escape: `output` is long enough.
                guard let unicode = Unicode.Scalar(scalar), let encoded = UTF8.encode(unicode) else {
                    throw NotTheLayout()
                }
                for byte in encoded { put(byte) }
            default:
                throw NotTheLayout()
            }
        }
        return written
    }

    private static func hexQuad(_ raw: UnsafeBufferPointer<UInt8>, _ index: inout Int) throws(NotTheLayout) -> UInt32 {
        guard let value = Byte.hexQuad(raw, at: index) else { throw NotTheLayout() }
        index += 4
        return value
    }

    private static func isWellFormedUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        while index < bytes.count {
            if bytes[index] < 0x80 {
                index += 1
            } else if let length = Byte.utf8SequenceLength(bytes, at: index) {
                index += length
            } else {
                return false
            }
        }
        return true
    }
}
