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
        let decoded = Array(text.utf8).withUnsafeBufferPointer { decode($0, 0..<$0.count) }
        let string = String(decoding: decoded, as: UTF8.self)
        // Decoding repairs invalid UTF-8; only bytes that survive unchanged were text.
        return string.utf8.elementsEqual(decoded) ? string : String(text)
    }

    /// The decoded name and value of one `name=value` segment; a bare name has an empty value.
    @inlinable
    package static func decodePair(_ segment: some StringProtocol) -> (name: String, value: String) {
        guard let equals = segment.firstIndex(of: "=") else { return (decode(segment), "") }
        return (decode(segment[..<equals]), decode(segment[segment.index(after: equals)...]))
    }

    /// The decoded pairs of a form body or query, in order; empty segments (`a=1&&b=2`) are skipped.
    @inlinable
    package static func decodePairs(_ text: some StringProtocol) -> [(name: String, value: String)] {
        text.split(separator: "&").map { decodePair($0) }
    }
}
