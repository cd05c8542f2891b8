import Foundation

/// `application/x-www-form-urlencoded`, the one codec for form bodies and URL queries: the body and query filters,
/// the body matcher and `vcr lint` all read names and values through it.
package enum FormCoding {
    /// How an encoded value is spelled.
    package enum Spelling {
        /// As browsers write form bodies: letters, digits and `*-._` stay, space becomes `+`, every other byte
        /// (including & = + % and all of non-ASCII UTF-8) is percent-encoded.
        case body
        /// As a URL query holds it: what a query may hold stays (`/`, `:`, `@`, …), except `& = + #`, which would
        /// change how it splits; space becomes `%20`.
        case query
    }

    /// `value` encoded, its UTF-8 bytes percent-encoded where the spelling says.
    package static func encode(_ value: String, as spelling: Spelling) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(value.utf8.count)
        for byte in value.utf8 {
            if isUnreservedInForms(byte) || (spelling == .query && isAllowedInQueries(byte)) {
                output.append(byte)
            } else if byte == Byte.space && spelling == .body {
                output.append(Byte.plus)
            } else {
                output += [Byte.percent, Byte.hexDigit(byte >> 4), Byte.hexDigit(byte & 0x0F)]
            }
        }
        return output
    }

    /// Letters, digits and `*-._`: what every spelling leaves as it is.
    private static func isUnreservedInForms(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, UInt8(ascii: "*"), Byte.minus, Byte.dot, UInt8(ascii: "_"): true
        default: false
        }
    }

    /// The rest of what `CharacterSet.urlQueryAllowed` holds, less `& = + #`.
    private static func isAllowedInQueries(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"),
             Byte.comma, Byte.slash, Byte.colon, UInt8(ascii: ";"), UInt8(ascii: "?"), UInt8(ascii: "@"),
             UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    /// Percent-decoded bytes with `+` as space. A `%` not followed by two hex digits is kept literally, as
    /// lenient servers do, so that a sloppy body still has its secrets found.
    package static func decode(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(range.count)
        var index = range.lowerBound
        while index < range.upperBound {
            let byte = bytes[index]
            if byte == Byte.plus {
                output.append(Byte.space)
                index += 1
            } else if byte == Byte.percent, index + 2 < range.upperBound,
                let high = Byte.hexValue(bytes[index + 1]), let low = Byte.hexValue(bytes[index + 2]) {
                output.append(high << 4 | low)
                index += 3
            } else {
                output.append(byte)
                index += 1
            }
        }
        return output
    }

    /// A name or value as text, decoded as above; text that does not decode to UTF-8 is returned as written.
    @inlinable
    package static func decode(_ text: some StringProtocol) -> String {
        Array(text.utf8).withUnsafeBufferPointer { decodedText($0, 0..<$0.count) }
    }

    /// `bytes[range]` decoded as text, or as written when the decoded bytes are not UTF-8.
    @usableFromInline
    static func decodedText(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String {
        let decoded = decode(bytes, range)
        let string = String(decoding: decoded, as: UTF8.self)
        // Decoding repairs invalid UTF-8; only bytes that survive unchanged were text.
        return string.utf8.elementsEqual(decoded)
            ? string : String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }

    /// The decoded name and value of one `name=value` segment; a bare name has an empty value.
    @inlinable
    package static func decodePair(_ segment: some StringProtocol) -> (name: String, value: String) {
        guard let equals = segment.firstIndex(of: "=") else { return (decode(segment), "") }
        return (decode(segment[..<equals]), decode(segment[segment.index(after: equals)...]))
    }

    /// The decoded pairs of a form body or query, in order; empty segments (`a=1&&b=2`) are skipped. Lenient: any
    /// text splits, as a server reading it would split it.
    package static func decodePairs(_ text: some StringProtocol) -> [(name: String, value: String)] {
        var text = String(text)
        return text.withUTF8 { bytes in
            segments(of: bytes, strict: false)?.compactMap { segment in
                guard !segment.range.isEmpty else { return nil }
                return (decodedText(bytes, segment.nameRange), segment.valueRange.map { decodedText(bytes, $0) } ?? "")
            } ?? []
        }
    }

    // MARK: Segments

    /// One `name=value` segment between ampersands, by byte ranges into the text.
    package struct Segment: Equatable {
        package var range: Range<Int>
        package var nameRange: Range<Int>
        /// Nil for a bare name without `=`.
        package var valueRange: Range<Int>?
    }

    /// The segments of a form body, in order, empty ones from `&&` included (joining the kept ones with `&` gives
    /// back the original bytes); nil when the bytes cannot be a form body: invalid UTF-8, whitespace or control
    /// characters, or a JSON-looking start. What the body filters rewrite in place.
    package static func bodySegments(of bytes: UnsafeBufferPointer<UInt8>) -> [Segment]? {
        segments(of: bytes, strict: true)
    }

    /// `strict`: nil for what ``bodySegments(of:)`` refuses; else every text splits.
    private static func segments(of bytes: UnsafeBufferPointer<UInt8>, strict: Bool) -> [Segment]? {
        guard !bytes.isEmpty else { return [] }
        if strict, bytes[0] == Byte.openBrace || bytes[0] == Byte.openBracket { return nil }
        var segments: [Segment] = []
        var start = 0
        var equals: Int?
        var index = 0
        while index <= bytes.count {
            let byte = index < bytes.count ? bytes[index] : Byte.ampersand
            if byte == Byte.ampersand {
                segments.append(Segment(
                    range: start..<index, nameRange: start..<(equals ?? index), valueRange: equals.map { ($0 + 1)..<index }
                ))
                start = index + 1
                equals = nil
                index += 1
            } else if byte == Byte.equals {
                if equals == nil { equals = index }
                index += 1
            } else if byte < 0x80 || !strict {
                if strict, byte <= Byte.space || byte == Byte.delete { return nil }
                index += 1
            } else {
                guard let length = Byte.utf8SequenceLength(bytes, at: index) else { return nil }
                index += length
            }
        }
        return segments
    }
}
