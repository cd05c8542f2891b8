import Foundation

/// Case-insensitive comparison of header names, schemes and hosts, which are ASCII. Going through
/// `caseInsensitiveCompare` or `lowercased()` costs a bridge to NSString or a new string on every request.
extension StringProtocol {
    /// Equal when ASCII letters are folded; other bytes must be identical.
    @inlinable package func equalsIgnoringASCIICase(_ other: some StringProtocol) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        let contiguous = utf8.withContiguousStorageIfAvailable { lhs in
            other.utf8.withContiguousStorageIfAvailable { rhs in Self.equalFoldingASCII(lhs, rhs) }
        }
        return (contiguous ?? nil) ?? Self.equalFoldingASCII(Array(utf8), Array(other.utf8))
    }

    @inlinable
    static func equalFoldingASCII(_ lhs: some Collection<UInt8>, _ rhs: some Collection<UInt8>) -> Bool {
        zip(lhs, rhs).allSatisfy { a, b in a == b || (isASCIILetter(a) && a ^ 0x20 == b) }
    }

    /// Whether `part` (lowercase ASCII) occurs in this text, ASCII letters folded: `application/JSON` contains
    /// `json`. Without the string search and lowercased copy `contains` costs on Linux.
    @inlinable package func containsIgnoringASCIICase(_ part: StaticString) -> Bool {
        let needle = UnsafeBufferPointer(start: part.utf8Start, count: part.utf8CodeUnitCount)
        if let found = utf8.withContiguousStorageIfAvailable({ Self.search($0, for: needle) }) { return found }
        return Array(utf8).withUnsafeBufferPointer { Self.search($0, for: needle) }
    }

    @inlinable
    static func search(_ bytes: UnsafeBufferPointer<UInt8>, for needle: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let first = needle.first else { return true }
        guard needle.count <= bytes.count else { return false }
        for start in 0...(bytes.count - needle.count) where bytes[start] | 0x20 == first | 0x20 {
            var matches = true
            for offset in 1..<needle.count {
                let byte = bytes[start + offset]
                let wanted = needle[offset]
                if byte != wanted && !(isASCIILetter(byte) && byte ^ 0x20 == wanted) {
                    matches = false
                    break
                }
            }
            if matches { return true }
        }
        return false
    }

    /// Lowercased, without building a new string when there is nothing to lowercase.
    @inlinable package var lowercasedIfNeeded: String {
        containsByte { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") || $0 >= 0x80 } ? lowercased() : String(self)
    }

    /// Uppercased, without building a new string when there is nothing to uppercase.
    @inlinable package var uppercasedIfNeeded: String {
        containsByte { $0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z") || $0 >= 0x80 } ? uppercased() : String(self)
    }

    /// The same UTF-8 bytes: enough for `==`, which also takes canonically equivalent spellings as equal.
    @inlinable package func hasSameUTF8(as other: some StringProtocol) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        let contiguous = utf8.withContiguousStorageIfAvailable { lhs in
            other.utf8.withContiguousStorageIfAvailable { rhs in
                lhs.isEmpty || memcmp(lhs.baseAddress!, rhs.baseAddress!, lhs.count) == 0
            }
        }
        return (contiguous ?? nil) ?? utf8.elementsEqual(other.utf8)
    }

    /// Whether a byte of the UTF-8 form satisfies `predicate`, read from contiguous storage when there is some.
    @inlinable package func containsByte(where predicate: (UInt8) -> Bool) -> Bool {
        utf8.withContiguousStorageIfAvailable { $0.contains(where: predicate) } ?? utf8.contains(where: predicate)
    }

    @inlinable static func isASCIILetter(_ byte: UInt8) -> Bool {
        let folded = byte | 0x20
        return folded >= UInt8(ascii: "a") && folded <= UInt8(ascii: "z")
    }
}

extension URL {
    /// Whether the scheme is http or https, read off the URL's text: `scheme` takes the URL apart first, and
    /// this runs for every request any session sends while a cassette is in.
    @inlinable package var hasHTTPScheme: Bool {
        let text = absoluteString
        return text.utf8.withContiguousStorageIfAvailable(Self.startsWithHTTPScheme)
            ?? Self.startsWithHTTPScheme(Array(text.utf8))
    }

    @inlinable static func startsWithHTTPScheme(_ bytes: some Collection<UInt8>) -> Bool {
        var bytes = bytes.makeIterator()
        for expected in "http".utf8 {
            guard let byte = bytes.next(), (byte | 0x20) == expected else { return false }
        }
        switch bytes.next() {
        case UInt8(ascii: ":"): return true
        case let byte? where (byte | 0x20) == UInt8(ascii: "s"): return bytes.next() == UInt8(ascii: ":")
        default: return false
        }
    }

    /// The host, percent-decoded only when it has escapes: decoding costs more than reading it.
    @inlinable package var decodedHost: String? {
        guard let host = host(percentEncoded: true) else { return nil }
        return host.containsByte(where: { $0 == UInt8(ascii: "%") }) ? self.host(percentEncoded: false) : host
    }
}
