import Foundation

/// Writes a JSON value's text in a ``JSONLayout`` in one pass over the text, without building a ``JSONValue``:
/// what `layout.bytes(of:)` gives for the value ``LosslessJSONReader`` reads at the same place, at a fraction of
/// the cost (Docs/Performance.md).
///
/// It accepts less than the reader, never more: at anything it is not sure of it answers nil, and the caller
/// takes the reader's path, which gives the value or the error. `JSONRelayoutTests` compares both on generated
/// bodies.
package struct JSONRelayout {
    private let bytes: UnsafeBufferPointer<UInt8>
    /// Just after the value once ``write(into:)`` has succeeded.
    package private(set) var position: Int
    private var depth: Int
    private let spacing: JSONLayout.Spacing
    private let escapesNonASCII: Bool
    /// The indentation unit's byte (a space or a tab) and count, for indented layouts.
    private let unitByte: UInt8
    private let unitCount: Int
    /// Whether a character above ASCII was written: only then does ``JSONLayout/escapesNonASCII`` change the bytes.
    private(set) var wroteNonASCII = false

    /// - Parameter depth: as for ``LosslessJSONReader/init(bytes:position:depth:)``, toward the same limit.
    package init(bytes: UnsafeBufferPointer<UInt8>, position: Int, depth: Int, layout: JSONLayout) {
        self.bytes = bytes
        self.position = position
        self.depth = depth
        spacing = layout.spacing
        escapesNonASCII = layout.escapesNonASCII
        if case let .indented(unit) = layout.spacing {
            unitByte = unit.utf8.first ?? Byte.space
            unitCount = unit.utf8.count
        } else {
            unitByte = Byte.space
            unitCount = 0
        }
    }

    /// Whether the bytes written in this layout are also `layout`'s (the trailing line break aside, which the
    /// caller adds).
    package func wroteSame(as layout: JSONLayout) -> Bool {
        layout.spacing == spacing && (layout.escapesNonASCII == escapesNonASCII || !wroteNonASCII)
    }

    /// Appends the value at `position` (after any whitespace) to `output`, without the layout's trailing line
    /// break; false when unsure (`output` then holds part of it).
    package mutating func write(into output: inout [UInt8]) -> Bool {
        (try? value(into: &output, level: 0)) != nil
    }

    private struct Unsure: Error {}

    private mutating func value(into output: inout [UInt8], level: Int) throws(Unsure) {
        skipWhitespace()
        guard position < bytes.count else { throw Unsure() }
        switch bytes[position] {
        case Byte.openBrace: try list(into: &output, level: level, close: Byte.closeBrace, isObject: true)
        case Byte.openBracket: try list(into: &output, level: level, close: Byte.closeBracket, isObject: false)
        case Byte.quote: try string(into: &output)
        case UInt8(ascii: "t"): try word("true", into: &output)
        case UInt8(ascii: "f"): try word("false", into: &output)
        case UInt8(ascii: "n"): try word("null", into: &output)
        default: try number(into: &output)
        }
    }

    /// An object or array, spaced as `JSONLayout.writeList` spaces it.
    private mutating func list(
        into output: inout [UInt8], level: Int, close: UInt8, isObject: Bool
    ) throws(Unsure) {
        depth += 1
        guard depth <= NestingLimit.maximumDepth else { throw Unsure() }
        output.append(bytes[position])
        position += 1
        skipWhitespace()
        guard position < bytes.count else { throw Unsure() }
        if bytes[position] == close {
            position += 1
            output.append(close)
            depth -= 1
            return
        }
        var first = true
        while true {
            if !first {
                output.append(Byte.comma)
                if spacing == .spaced { output.append(Byte.space) }
            }
            first = false
            if unitCount > 0 { newline(&output, level: level + 1) }
            if isObject {
                skipWhitespace()
                guard position < bytes.count, bytes[position] == Byte.quote else { throw Unsure() }
                try string(into: &output)
                skipWhitespace()
                guard position < bytes.count, bytes[position] == Byte.colon else { throw Unsure() }
                position += 1
                output.append(Byte.colon)
                if spacing != .compact { output.append(Byte.space) }
            }
            try value(into: &output, level: level + 1)
            skipWhitespace()
            guard position < bytes.count else { throw Unsure() }
            let byte = bytes[position]
            position += 1
            if byte == Byte.comma { continue }
            guard byte == close else { throw Unsure() }
            if unitCount > 0 { newline(&output, level: level) }
            output.append(close)
            depth -= 1
            return
        }
    }

    private func newline(_ output: inout [UInt8], level: Int) {
        output.append(Byte.lineFeed)
        output.append(contentsOf: repeatElement(unitByte, count: level * unitCount))
    }

    private mutating func skipWhitespace() {
        while position < bytes.count, Byte.isJSONWhitespace(bytes[position]) { position += 1 }
    }

    private mutating func word(_ text: StaticString, into output: inout [UInt8]) throws(Unsure) {
        let count = text.utf8CodeUnitCount
        guard position + count <= bytes.count, memcmp(bytes.baseAddress! + position, text.utf8Start, count) == 0
        else { throw Unsure() }
        output.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: count))
        position += count
    }

    /// A number, copied as written (``Byte/jsonNumberEnd(in:from:)``).
    private mutating func number(into output: inout [UInt8]) throws(Unsure) {
        guard let end = Byte.jsonNumberEnd(in: bytes, from: position) else { throw Unsure() }
        output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[position..<end]))
        position = end
    }

    /// A string literal at `position` (its opening quote), escaped again as `JSONLayout.writeString` escapes.
    private mutating func string(into output: inout [UInt8]) throws(Unsure) {
        position += 1
        output.append(Byte.quote)
        while true {
            // Printable ASCII but `"` and `\` is written as it is: copied in runs.
            let run = position
            position += Byte.plainStringPrefix(of: bytes, from: position)
            if position > run { output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run..<position])) }
            guard position < bytes.count else { throw Unsure() }
            let byte = bytes[position]
            if byte == Byte.quote {
                position += 1
                output.append(Byte.quote)
                return
            } else if byte == Byte.backslash {
                try escape(into: &output)
            } else if byte < 0x20 {
                throw Unsure()
            } else {
                guard let length = Byte.utf8SequenceLength(bytes, at: position) else { throw Unsure() }
                wroteNonASCII = true
                if escapesNonASCII {
                    try scalar(decodingUTF8: length, into: &output)
                } else {
                    output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[position..<(position + length)]))
                }
                position += length
            }
        }
    }

    /// The escape at `position` (its backslash), written as what it stands for.
    private mutating func escape(into output: inout [UInt8]) throws(Unsure) {
        guard position + 1 < bytes.count else { throw Unsure() }
        let escaped = bytes[position + 1]
        position += 2
        switch escaped {
        case Byte.quote, Byte.backslash, UInt8(ascii: "b"), UInt8(ascii: "f"), UInt8(ascii: "n"),
             UInt8(ascii: "r"), UInt8(ascii: "t"):
            output.append(Byte.backslash)
            output.append(escaped)
        case Byte.slash:
            output.append(Byte.slash)
        case UInt8(ascii: "u"):
            guard var scalar = Byte.hexQuad(bytes, at: position) else { throw Unsure() }
            position += 4
            if (0xD800...0xDBFF).contains(scalar) {
                guard position + 1 < bytes.count, bytes[position] == Byte.backslash,
                      bytes[position + 1] == UInt8(ascii: "u"),
                      let low = Byte.hexQuad(bytes, at: position + 2), (0xDC00...0xDFFF).contains(low)
                else { throw Unsure() }
                position += 6
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(scalar) {
                throw Unsure()
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw Unsure() }
            write(unicode, into: &output)
        default:
            throw Unsure()
        }
    }

    /// The UTF-8 sequence of `length` bytes at `position` (already checked), as a scalar.
    private mutating func scalar(decodingUTF8 length: Int, into output: inout [UInt8]) throws(Unsure) {
        var value = UInt32(bytes[position]) & (0xFF >> (length + 1))
        for offset in 1..<length { value = value << 6 | UInt32(bytes[position + offset] & 0x3F) }
        guard let unicode = Unicode.Scalar(value) else { throw Unsure() }
        write(unicode, into: &output)
    }

    /// One character as `JSONLayout.writeString` writes it.
    private mutating func write(_ scalar: Unicode.Scalar, into output: inout [UInt8]) {
        if scalar.isASCII {
            let byte = UInt8(scalar.value)
            switch byte {
            case Byte.quote, Byte.backslash: output.append(Byte.backslash); output.append(byte)
            case 0x08: output.append(Byte.backslash); output.append(UInt8(ascii: "b"))
            case 0x0C: output.append(Byte.backslash); output.append(UInt8(ascii: "f"))
            case 0x0A: output.append(Byte.backslash); output.append(UInt8(ascii: "n"))
            case 0x0D: output.append(Byte.backslash); output.append(UInt8(ascii: "r"))
            case 0x09: output.append(Byte.backslash); output.append(UInt8(ascii: "t"))
            case 0..<0x20: Self.escapeUnit(UInt16(byte), into: &output)
            default: output.append(byte)
            }
            return
        }
        wroteNonASCII = true
        if escapesNonASCII {
            for unit in String(scalar).utf16 { Self.escapeUnit(unit, into: &output) }
        } else {
            UTF8.encode(scalar) { output.append($0) }
        }
    }

    private static func escapeUnit(_ unit: UInt16, into output: inout [UInt8]) {
        output.append(Byte.backslash)
        output.append(UInt8(ascii: "u"))
        for shift in stride(from: 12, through: 0, by: -4) {
            output.append(Byte.hexDigit(UInt8((unit >> UInt16(shift)) & 0xF), lowercase: true))
        }
    }
}

extension Byte {
    /// How many bytes from `start` are printable ASCII other than `"` and `\` (what a JSON string holds as it
    /// is): eight at a time, as the cassette readers pass every byte of every body through it.
    static func plainStringPrefix(of bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        guard start < bytes.count, let base = bytes.baseAddress else { return 0 }
        let lows: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        /// A high bit in each byte of `word` that is zero (exact as to whether there is one).
        func zeroBytes(_ word: UInt64) -> UInt64 { (word &- lows) & ~word & highs }
        var index = start
        while index + 8 <= bytes.count {
            let word = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)
            let special = (word & highs)  // non-ASCII
                | ((word &- lows &* 0x20) & ~word & highs)  // below 0x20
                | zeroBytes(word ^ (lows &* UInt64(quote)))
                | zeroBytes(word ^ (lows &* UInt64(backslash)))
            // The lowest flagged byte is exact for each test (a borrow only flags bytes above a true one), so it
            // is the first byte that ends the run.
            if special != 0 { return index + special.trailingZeroBitCount / 8 - start }
            index += 8
        }
        while index < bytes.count {
            let byte = bytes[index]
            guard byte >= space, byte < 0x80, byte != quote, byte != backslash else { break }
            index += 1
        }
        return index - start
    }
}
