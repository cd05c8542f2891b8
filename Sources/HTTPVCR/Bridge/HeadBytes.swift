import HTTPVCRCassettes

/// Writing an HTTP head as bytes, piece by piece. Each piece is copied from its storage at once: appending a
/// `String`'s UTF-8 view goes through the generic path of `append(contentsOf:)`, and string interpolation through
/// more, which together cost a bridged request's two heads (the launched process's request, the bridge's answer)
/// a fifth of their writing.
extension [UInt8] {
    mutating func appendUTF8(_ text: String) {
        var text = text
        text.withUTF8 { append(contentsOf: $0) }
    }

    mutating func appendUTF8(_ text: StaticString) {
        append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// `number` (not negative) in decimal digits.
    mutating func appendDecimal(_ number: Int) {
        if number >= 10 { appendDecimal(number / 10) }
        append(Byte.zero + UInt8(number % 10))
    }

    /// `name: value` and its CRLF. A CR or LF inside the name or the value would end the field and start another
    /// (the app's header names are not checked by the loader, a cassette's may be edited by hand): they go as
    /// spaces.
    mutating func appendField(_ name: String, _ value: String) {
        appendWithinLine(name)
        appendUTF8(": ")
        appendWithinLine(value)
        appendUTF8("\r\n")
    }

    /// `text`, its CR and LF as spaces. Text without them (nearly all) is copied at once: appended byte by byte, a
    /// 64-byte token cost more than the rest of the request's head.
    private mutating func appendWithinLine(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            // Literals: read inside the loops, the constants of `Byte` (another module's) were a call a byte.
            if !bytes.contains(where: { $0 == 13 || $0 == 10 }) { return append(contentsOf: bytes) }
            for byte in bytes { append(byte == 13 || byte == 10 ? 32 : byte) }
        }
    }
}
