import Foundation

/// The one reader of JSON: every JSON cassette file, whatever its format (HTTPVCR's, HAR, YAHTTPVCR, VCR.py), and
/// every JSON body. Reads JSON text into a ``JSONValue`` that keeps what the text said: object keys in their order
/// (a repeated key too), numbers as written (`1.0` stays `1.0`, `1e3` stays `1e3`), strings as the characters they
/// escape. A structured body must give back its exact bytes, and ``FieldReader`` names a number as the file wrote
/// it.
///
/// Strict (RFC 8259): whatever is not JSON (a trailing comma, a control character in a string, a lone surrogate
/// escape, invalid UTF-8) is refused, as is nesting deeper than ``NestingLimit/maximumDepth``: it recurses once per
/// level. What is wrong, and where, is in the ``Invalid`` it throws. It reads bytes in place from `position`, so the
/// cassette's written-layout reader can hand it a value in the middle of a file.
package struct LosslessJSONReader {
    /// Why the text is not JSON, and the byte where that was found.
    package struct Invalid: Error {
        package enum Reason: Equatable {
            case unexpectedEnd, unexpectedByte(UInt8), invalidUTF8, controlCharacter, invalidEscape, invalidNumber
            case tooDeep, trailingBytes
        }

        package let reason: Reason
        package let position: Int

        init(_ reason: Reason, at position: Int) {
            self.reason = reason
            self.position = position
        }

        /// "Unexpected end of file at line 1, column 58": what the file's error message says after "not valid JSON".
        package func description(in bytes: UnsafeBufferPointer<UInt8>) -> String {
            let what = switch reason {
            case .unexpectedEnd: "Unexpected end of file"
            case let .unexpectedByte(byte):
                (0x20..<0x7F).contains(byte)
                    ? "Unexpected character '\(Character(Unicode.Scalar(byte)))'"
                    : "Unexpected byte 0x\(String(byte, radix: 16, uppercase: true))"
            case .invalidUTF8: "Invalid UTF-8 in a string"
            case .controlCharacter: "Unescaped control character in a string"
            case .invalidEscape: "Invalid escape sequence in a string"
            case .invalidNumber: "Invalid number"
            case .tooDeep: "Too many nested arrays or dictionaries (more than \(NestingLimit.maximumDepth) levels)"
            case .trailingBytes: "Unexpected bytes after the value"
            }
            let end = min(position, bytes.count)
            var line = 1
            var lineStart = 0
            for index in 0..<end where bytes[index] == Byte.lineFeed {
                line += 1
                lineStart = index + 1
            }
            return "\(what) at line \(line), column \(end - lineStart + 1)"
        }
    }

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
        try? document(data).get()
    }

    /// The one JSON value `data` holds (after a byte order mark, when there is one), whitespace around it allowed;
    /// or what is wrong, in words and with its line and column.
    package static func document(_ data: Data) -> Result<JSONValue, DecodeFailure> {
        data.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            let byteOrderMark = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
            var reader = LosslessJSONReader(bytes: bytes, position: byteOrderMark)
            do throws(Invalid) {
                let value = try reader.value()
                reader.skipWhitespace()
                guard reader.position == bytes.count else { throw Invalid(.trailingBytes, at: reader.position) }
                return .success(value)
            } catch {
                return .failure(DecodeFailure(error.description(in: bytes)))
            }
        }
    }

    /// The value at `position` (after any whitespace); `position` ends just after it.
    package mutating func value() throws(Invalid) -> JSONValue {
        skipWhitespace()
        guard position < bytes.count else { throw Invalid(.unexpectedEnd, at: position) }
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
        guard depth <= NestingLimit.maximumDepth else { throw Invalid(.tooDeep, at: position) }
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
                    throw reader.unexpected()
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
        guard position < bytes.count else { throw Invalid(.unexpectedEnd, at: position) }
        let byte = bytes[position]
        if byte == Byte.comma || byte == closing {
            position += 1
            return byte == closing
        }
        throw unexpected()
    }

    /// The byte at `position` is not what JSON allows there.
    private func unexpected() -> Invalid {
        position < bytes.count ? Invalid(.unexpectedByte(bytes[position]), at: position) : Invalid(.unexpectedEnd, at: position)
    }

    private mutating func expect(_ byte: UInt8) throws(Invalid) {
        skipWhitespace()
        guard position < bytes.count, bytes[position] == byte else { throw unexpected() }
        position += 1
    }

    private mutating func word(_ text: StaticString) throws(Invalid) {
        let count = text.utf8CodeUnitCount
        guard position + count <= bytes.count,
              memcmp(bytes.baseAddress! + position, text.utf8Start, count) == 0
        else { throw unexpected() }
        position += count
    }

    /// A number, as written (``Byte/jsonNumberEnd(in:from:)``).
    private mutating func number() throws(Invalid) -> String {
        guard let end = Byte.jsonNumberEnd(in: bytes, from: position) else {
            let first = bytes[position]
            let startsNumber = first == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first)
            throw startsNumber ? Invalid(.invalidNumber, at: position) : unexpected()
        }
        defer { position = end }
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[position..<end]), as: UTF8.self)
    }

    /// A string literal at `position` (its opening quote), unescaped.
    package mutating func string() throws(Invalid) -> String {
        let opening = position
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
            guard position < bytes.count else { throw Invalid(.unexpectedEnd, at: position) }
            let byte = bytes[position]
            position += 1
            switch byte {
            case Byte.quote:
                let text = String(decoding: utf8, as: UTF8.self)
                // Invalid UTF-8 is repaired by decoding: refused here instead, as any strict parser does.
                guard !copiedNonASCII || text.utf8.count == utf8.count && text.utf8.elementsEqual(utf8) else {
                    throw Invalid(.invalidUTF8, at: opening)
                }
                return text
            case Byte.backslash:
                try escape(into: &utf8)
            default:
                throw Invalid(.controlCharacter, at: position - 1)
            }
        }
    }

    private mutating func escape(into utf8: inout [UInt8]) throws(Invalid) {
        let backslash = position - 1
        guard position < bytes.count else { throw Invalid(.unexpectedEnd, at: position) }
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
                      bytes[position + 1] == UInt8(ascii: "u") else { throw Invalid(.invalidEscape, at: backslash) }
                position += 2
                let low = try hexQuad()
                guard (0xDC00...0xDFFF).contains(low) else { throw Invalid(.invalidEscape, at: backslash) }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(scalar) {
                throw Invalid(.invalidEscape, at: backslash)
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw Invalid(.invalidEscape, at: backslash) }
            Unicode.UTF8.encode(unicode) { utf8.append($0) }
        default:
            throw Invalid(.invalidEscape, at: backslash)
        }
    }

    private mutating func hexQuad() throws(Invalid) -> UInt32 {
        guard let value = Byte.hexQuad(bytes, at: position) else { throw Invalid(.invalidEscape, at: position - 2) }
        position += 4
        return value
    }
}
