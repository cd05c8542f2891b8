import HTTPVCRCassettes

/// ``VCRConfiguration/secureHeaders`` with a quick test in front: a bit for the length and first byte (ASCII case
/// folded) of each name, so that most headers are told apart from them without going through the set, whose
/// iteration cost more than the rest of filtering a header. A cassette makes it once.
struct SecureHeaderNames {
    let names: Set<String>
    private let sketch: UInt64

    init(_ names: Set<String>) {
        self.names = names
        sketch = names.reduce(0) { $0 | Self.bit(of: $1) }
    }

    /// Whether `field` is one of the names, ASCII case folded.
    func contains(_ field: String) -> Bool {
        // Names equal with ASCII case folded have the same length and first byte once folded: the same bit.
        guard sketch & Self.bit(of: field) != 0 else { return false }
        for name in names where name.equalsIgnoringASCIICase(field) { return true }
        return false
    }

    private static func bit(of name: String) -> UInt64 {
        let first = UInt64(name.utf8.first ?? 0) | 0x20
        return 1 << ((UInt64(name.utf8.count) &* 31 &+ first) & 63)
    }
}
