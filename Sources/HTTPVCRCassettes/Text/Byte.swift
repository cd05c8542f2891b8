import Foundation

/// Byte values and small byte-level checks shared by the body scanners (JSON, forms) and the codecs.
package enum Byte {
    @inlinable package static var tab: UInt8 { 0x09 }
    @inlinable package static var lineFeed: UInt8 { 0x0A }
    @inlinable package static var carriageReturn: UInt8 { 0x0D }
    @inlinable package static var space: UInt8 { 0x20 }
    @inlinable package static var quote: UInt8 { 0x22 }
    @inlinable package static var percent: UInt8 { 0x25 }
    @inlinable package static var ampersand: UInt8 { 0x26 }
    @inlinable package static var plus: UInt8 { 0x2B }
    @inlinable package static var comma: UInt8 { 0x2C }
    @inlinable package static var minus: UInt8 { 0x2D }
    @inlinable package static var dot: UInt8 { 0x2E }
    @inlinable package static var slash: UInt8 { 0x2F }
    @inlinable package static var zero: UInt8 { 0x30 }
    @inlinable package static var nine: UInt8 { 0x39 }
    @inlinable package static var colon: UInt8 { 0x3A }
    @inlinable package static var equals: UInt8 { 0x3D }
    @inlinable package static var openBracket: UInt8 { 0x5B }
    @inlinable package static var backslash: UInt8 { 0x5C }
    @inlinable package static var closeBracket: UInt8 { 0x5D }
    @inlinable package static var openBrace: UInt8 { 0x7B }
    @inlinable package static var closeBrace: UInt8 { 0x7D }
    @inlinable package static var delete: UInt8 { 0x7F }

    @inlinable package static func isJSONWhitespace(_ byte: UInt8) -> Bool {
        byte == space || byte == lineFeed || byte == carriageReturn || byte == tab
    }

    /// The four hex digits at `index` (a `\u` escape's) as a number; nil when there are not four.
    @inlinable package static func hexQuad(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> UInt32? {
        guard index + 4 <= bytes.count else { return nil }
        var value: UInt32 = 0
        for offset in 0..<4 {
            guard let digit = hexValue(bytes[index + offset]) else { return nil }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    @inlinable package static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x41...0x46: byte - 0x41 + 10
        case 0x61...0x66: byte - 0x61 + 10
        default: nil
        }
    }

    /// The hex digit for a value below 16: uppercase as percent-encoding writes it, lowercase as cassettes do.
    @inlinable package static func hexDigit(_ value: UInt8, lowercase: Bool = false) -> UInt8 {
        value < 10 ? 0x30 + value : (lowercase ? 0x61 : 0x41) + value - 10
    }

    /// Length of the well-formed UTF-8 sequence starting with a non-ASCII byte at `index`, or nil when it is
    /// malformed (stray continuation byte, overlong form, surrogate, beyond U+10FFFF or cut short).
    @inlinable package static func utf8SequenceLength(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> Int? {
        let lead = bytes[index]
        let length: Int
        var secondRange: ClosedRange<UInt8> = 0x80...0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; secondRange = 0xA0...0xBF
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; secondRange = 0x80...0x9F
        case 0xF0: length = 4; secondRange = 0x90...0xBF
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; secondRange = 0x80...0x8F
        default: return nil
        }
        guard index + length <= bytes.count, secondRange.contains(bytes[index + 1]) else { return nil }
        for offset in 2..<length where bytes[index + offset] & 0xC0 != 0x80 { return nil }
        return length
    }
}

extension Byte {
    /// Where the JSON number at `start` ends, `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`; nil when
    /// there is none. The readers that keep a number's text as written share it.
    @inlinable package static func jsonNumberEnd(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        var position = start
        func digits() -> Int {
            let first = position
            while position < bytes.count, (zero...nine).contains(bytes[position]) { position += 1 }
            return position - first
        }
        if position < bytes.count, bytes[position] == minus { position += 1 }
        let integerStart = position
        let integerDigits = digits()
        guard integerDigits > 0, integerDigits == 1 || bytes[integerStart] != zero else { return nil }
        if position < bytes.count, bytes[position] == dot {
            position += 1
            guard digits() > 0 else { return nil }
        }
        if position < bytes.count, bytes[position] | 0x20 == UInt8(ascii: "e") {
            position += 1
            if position < bytes.count, bytes[position] == plus || bytes[position] == minus { position += 1 }
            guard digits() > 0 else { return nil }
        }
        return position
    }
}
