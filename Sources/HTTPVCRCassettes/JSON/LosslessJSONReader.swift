import Foundation

/// Reads JSON text into a ``JSONValue`` that keeps what the text said: object keys in their order (a repeated key
/// too), numbers as written (`1.0` stays `1.0`, `1e3` stays `1e3`), strings as the characters they escape.
/// `JSONSerialization` keeps neither order nor number text, and a structured body must give back its exact bytes.
///
/// Strict (RFC 8259): whatever is not JSON (a trailing comma, a control character in a string, a lone surrogate
/// escape, invalid UTF-8) is refused, as is nesting deeper than ``NestingLimit/maximumDepth``: it recurses once per
/// level. It reads bytes in place from `position`, so the cassette's written-layout reader can hand it a value in
/// the middle of a file.
package struct LosslessJSONReader {
    package struct Invalid: Error {}

    package let bytes: UnsafeBufferPointer<UInt8>
    package var position: Int
    private var depth = 0

    /// - Parameter depth: how deeply the value at `position` is nested in the document around it, which counts
    ///   toward the limit.
    package init(bytes: UnsafeBufferPointer<UInt8>, position: Int = 0, depth: Int = 0) {
        self.bytes = bytes
        self.position = position
        self.depth = depth
    }

    /// The one JSON value `data` holds, whitespace around it allowed; nil when it is not exactly one.
    package static func value(of data: Data) -> JSONValue? {
        data.withUnsafeBytes { raw in
            var reader = LosslessJSONReader(bytes: raw.bindMemory(to: UInt8.self))
            guard let value = try? reader.value() else { return nil }
            reader.skipWhitespace()
            return reader.position == reader.bytes.count ? value : nil
        }
    }

    /// The value at `position` (after any whitespace); `position` ends just after it.
    package mutating func value() throws(Invalid) -> JSONValue {
        skipWhitespace()
        guard position < bytes.count else { throw Invalid() }
        switch bytes[position] {
        case Byte.openBrace: return try object()
        case Byte.openBracket: return try array()
        case Byte.quote: return .string(try string())
        case UInt8(ascii: "t"): try word("true"); return .bool(true)
        case UInt8(ascii: "f"): try word("false"); return .bool(false)
        case UInt8(ascii: "n"): try word("null"); return .null
        default: return .number(try number())
        }
    }

    mutating func skipWhitespace() {
        while position < bytes.count, Byte.isJSONWhitespace(bytes[position]) { position += 1 }
    }

    private mutating func nested<T>(_ read: (inout LosslessJSONReader) throws(Invalid) -> T) throws(Invalid) -> T {
        depth += 1
        guard depth <= NestingLimit.maximumDepth else { throw Invalid() }
        defer { depth -= 1 }
        return try read(&self)
    }

    private mutating func object() throws(Invalid) -> JSONValue {
        try nested { reader throws(Invalid) in
            reader.position += 1
            var members: [(String, JSONValue)] = []
            reader.skipWhitespace()
            if reader.position < reader.bytes.count, reader.bytes[reader.position] == Byte.closeBrace {
                reader.position += 1
                return .object(members)
            }
            while true {
                reader.skipWhitespace()
                guard reader.position < reader.bytes.count, reader.bytes[reader.position] == Byte.quote else {
                    throw Invalid()
                }
                let key = try reader.string()
                try reader.expect(Byte.colon)
                members.append((key, try reader.value()))
                if try reader.endsList(Byte.closeBrace) { return .object(members) }
            }
        }
    }

    private mutating func array() throws(Invalid) -> JSONValue {
        try nested { reader throws(Invalid) in
            reader.position += 1
            var values: [JSONValue] = []
            reader.skipWhitespace()
            if reader.position < reader.bytes.count, reader.bytes[reader.position] == Byte.closeBracket {
                reader.position += 1
                return .array(values)
            }
            while true {
                values.append(try reader.value())
                if try reader.endsList(Byte.closeBracket) { return .array(values) }
            }
        }
    }

    /// After a member: false on a comma, true on `closing`.
    private mutating func endsList(_ closing: UInt8) throws(Invalid) -> Bool {
        skipWhitespace()
        guard position < bytes.count else { throw Invalid() }
        let byte = bytes[position]
        position += 1
        if byte == Byte.comma { return false }
        if byte == closing { return true }
        throw Invalid()
    }

    private mutating func expect(_ byte: UInt8) throws(Invalid) {
        skipWhitespace()
        guard position < bytes.count, bytes[position] == byte else { throw Invalid() }
        position += 1
    }

    private mutating func word(_ text: StaticString) throws(Invalid) {
        let count = text.utf8CodeUnitCount
        guard position + count <= bytes.count,
              memcmp(bytes.baseAddress! + position, text.utf8Start, count) == 0
        else { throw Invalid() }
        position += count
    }

    /// A number, as written (``Byte/jsonNumberEnd(in:from:)``).
    private mutating func number() throws(Invalid) -> String {
        guard let end = Byte.jsonNumberEnd(in: bytes, from: position) else { throw Invalid() }
        defer { position = end }
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[position..<end]), as: UTF8.self)
    }

    /// A string literal at `position` (its opening quote), unescaped.
    package mutating func string() throws(Invalid) -> String {
        position += 1
        var utf8: [UInt8] = []
        /// Raw bytes over 127 were copied: only then can the text be invalid UTF-8 (escapes encode valid scalars).
        var copiedNonASCII = false
        while true {
            // A run that needs no unescaping is copied at once.
            let run = position
            while position < bytes.count {
                let byte = bytes[position]
                if byte == Byte.quote || byte == Byte.backslash || byte < 0x20 { break }
                if byte >= 0x80 { copiedNonASCII = true }
                position += 1
            }
            if position > run { utf8.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run..<position])) }
            guard position < bytes.count else { throw Invalid() }
            let byte = bytes[position]
            position += 1
            switch byte {
            case Byte.quote:
                let text = String(decoding: utf8, as: UTF8.self)
                // Invalid UTF-8 is repaired by decoding: refused here instead, as any strict parser does.
                guard !copiedNonASCII || text.utf8.count == utf8.count && text.utf8.elementsEqual(utf8) else {
                    throw Invalid()
                }
                return text
            case Byte.backslash:
                try escape(into: &utf8)
            default:
                throw Invalid()  // a control byte
            }
        }
    }

    private mutating func escape(into utf8: inout [UInt8]) throws(Invalid) {
        guard position < bytes.count else { throw Invalid() }
        let byte = bytes[position]
        position += 1
        switch byte {
        case Byte.quote, Byte.backslash, Byte.slash: utf8.append(byte)
        case UInt8(ascii: "b"): utf8.append(0x08)
        case UInt8(ascii: "f"): utf8.append(0x0C)
        case UInt8(ascii: "n"): utf8.append(Byte.lineFeed)
        case UInt8(ascii: "r"): utf8.append(Byte.carriageReturn)
        case UInt8(ascii: "t"): utf8.append(Byte.tab)
        case UInt8(ascii: "u"):
            var scalar = try hexQuad()
            if (0xD800...0xDBFF).contains(scalar) {
                // A high surrogate must be followed by its low one; a lone half is no character at all.
                guard position + 1 < bytes.count, bytes[position] == Byte.backslash,
                      bytes[position + 1] == UInt8(ascii: "u") else { throw Invalid() }
                position += 2
                let low = try hexQuad()
                guard (0xDC00...0xDFFF).contains(low) else { throw Invalid() }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(scalar) {
                throw Invalid()
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw Invalid() }
            Unicode.UTF8.encode(unicode) { utf8.append($0) }
        default:
            throw Invalid()
        }
    }

    private mutating func hexQuad() throws(Invalid) -> UInt32 {
        guard let value = Byte.hexQuad(bytes, at: position) else { throw Invalid() }
        position += 4
        return value
    }
}
