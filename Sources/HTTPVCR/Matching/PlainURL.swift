import HTTPVCRCassettes

/// A URL written `scheme://host[:port][/path][?query]` in lowercase ASCII, with nothing in it that `URL` would
/// encode, decode or read otherwise: its parts are read off the text. Nil for any other URL.
struct PlainURL {
    let scheme: String
    let host: String
    let port: Int?
    let path: String
    let query: String

    init?(_ text: String) {
        var text = text
        let parts: (scheme: String, host: String, port: Int?, path: String, query: String)? = text.withUTF8 { bytes in
            func string(_ range: Range<Int>) -> String {
                String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
            }
            // scheme: a lowercase letter, then letters, digits, + - .
            var index = 0
            guard let first = bytes.first, Self.isLowercaseLetter(first) else { return nil }
            while index < bytes.count, Self.isSchemeByte(bytes[index]) { index += 1 }
            let schemeEnd = index
            guard index + 3 <= bytes.count, bytes[index] == Byte.colon, bytes[index + 1] == Byte.slash,
                  bytes[index + 2] == Byte.slash
            else { return nil }
            // host: lowercase letters, digits, - and . (no user, no IPv6, nothing encoded); then maybe :port
            index += 3
            let hostStart = index
            while index < bytes.count, Self.isHostByte(bytes[index]) { index += 1 }
            let hostEnd = index
            guard hostEnd > hostStart else { return nil }
            var port: Int?
            if index < bytes.count, bytes[index] == Byte.colon {
                index += 1
                let digitsStart = index
                var value = 0
                while index < bytes.count, Self.isDigit(bytes[index]), index - digitsStart < 5 {
                    value = value * 10 + Int(bytes[index] - Byte.zero)
                    index += 1
                }
                let digits = index - digitsStart
                guard digits > 0, digits == 1 || bytes[digitsStart] != Byte.zero, value <= 65_535 else { return nil }
                port = value
            }
            // path, then query: allowed bytes and %XX only; no fragment
            let pathStart = index
            guard index == bytes.count || bytes[index] == Byte.slash || bytes[index] == UInt8(ascii: "?"),
                  Self.skipEncodedText(bytes, &index, allowing: Self.isPathByte)
            else { return nil }
            let pathEnd = index
            var queryStart = index
            if index < bytes.count {
                guard bytes[index] == UInt8(ascii: "?") else { return nil }
                index += 1
                queryStart = index
                guard Self.skipEncodedText(bytes, &index, allowing: Self.isQueryByte) else { return nil }
            }
            guard index == bytes.count else { return nil }
            return (string(0..<schemeEnd), string(hostStart..<hostEnd), port, string(pathStart..<pathEnd),
                    string(queryStart..<index))
        }
        guard let parts else { return nil }
        (scheme, host, port, path, query) = parts
    }

    /// Moves `index` past allowed bytes and `%XX`; false on a `%` not followed by two hex digits.
    private static func skipEncodedText(
        _ bytes: UnsafeBufferPointer<UInt8>,
        _ index: inout Int,
        allowing isAllowed: (UInt8) -> Bool
    ) -> Bool {
        while index < bytes.count {
            let byte = bytes[index]
            if byte == Byte.percent {
                guard index + 2 < bytes.count, Byte.hexValue(bytes[index + 1]) != nil,
                      Byte.hexValue(bytes[index + 2]) != nil
                else { return false }
                index += 3
            } else if isAllowed(byte) {
                index += 1
            } else {
                return true
            }
        }
        return true
    }

    private static func isLowercaseLetter(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z") }
    private static func isDigit(_ byte: UInt8) -> Bool { byte >= Byte.zero && byte <= Byte.nine }

    private static func isSchemeByte(_ byte: UInt8) -> Bool {
        isLowercaseLetter(byte) || isDigit(byte) || byte == Byte.plus || byte == Byte.minus || byte == Byte.dot
    }

    private static func isHostByte(_ byte: UInt8) -> Bool {
        isLowercaseLetter(byte) || isDigit(byte) || byte == Byte.minus || byte == Byte.dot
    }

    /// RFC 3986 `pchar` and `/`: unreserved, sub-delims, `:` and `@` (percent-encoding checked apart).
    private static func isPathByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), Byte.zero...Byte.nine: true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"): true
        case UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("),
             UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"),
             UInt8(ascii: "="): true
        case UInt8(ascii: ":"), UInt8(ascii: "@"), UInt8(ascii: "/"): true
        default: false
        }
    }

    private static func isQueryByte(_ byte: UInt8) -> Bool { isPathByte(byte) || byte == UInt8(ascii: "?") }
}
