import Foundation

/// The reader's tokens: whitespace, punctuation, literals and keys, each checked against the writer's layout.
extension WrittenLayoutReader {
    mutating func skipWhitespace() {
        guard let base = bytes.baseAddress else { return }
        let end = bytes.count
        var index = position
        // Most tokens follow the one before directly (`"key":`, `1,`).
        if index < end, base[index] > Byte.space { return }
        // The writer's whitespace: none, one space after a colon, or a line break and a run of spaces. The run is
        // passed eight bytes at a time, to the first byte that is not a space.
        if index < end, base[index] == Byte.lineFeed { index += 1 }
        while index + 8 <= end {
            let notSpaces = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self).littleEndian
                ^ 0x2020_2020_2020_2020
            index += notSpaces.trailingZeroBitCount / 8
            if notSpaces != 0 { break }
        }
        // Anything else (tabs, carriage returns, the last bytes of the file) a byte at a time.
        while index < end, Byte.isJSONWhitespace(base[index]) { index += 1 }
        position = index
    }

    package mutating func expect(_ byte: UInt8) throws(NotTheLayout) {
        skipWhitespace()
        guard position < bytes.count, bytes[position] == byte else { throw NotTheLayout() }
        position += 1
    }

    /// Consumes `closing` if it comes next (an empty object or array).
    package mutating func isClosed(by closing: UInt8) throws(NotTheLayout) -> Bool {
        skipWhitespace()
        guard position < bytes.count else { throw NotTheLayout() }
        guard bytes[position] == closing else { return false }
        position += 1
        return true
    }

    /// After a member: true on a comma, false on `closing`.
    mutating func hasMore(before closing: UInt8) throws(NotTheLayout) -> Bool {
        skipWhitespace()
        guard position < bytes.count else { throw NotTheLayout() }
        let byte = bytes[position]
        position += 1
        if byte == Byte.comma { return true }
        if byte == closing { return false }
        throw NotTheLayout()
    }

    mutating func literal(_ word: StaticString) throws(NotTheLayout) {
        skipWhitespace()
        let count = word.utf8CodeUnitCount
        guard position + count <= bytes.count,
              memcmp(bytes.baseAddress! + position, word.utf8Start, count) == 0
        else { throw NotTheLayout() }
        position += count
    }

    /// `"name":`, compared in place rather than scanned for its closing quote first.
    package mutating func key(_ name: StaticString) throws(NotTheLayout) {
        try expect(Byte.quote)
        let count = name.utf8CodeUnitCount
        guard position + count < bytes.count,
              memcmp(bytes.baseAddress! + position, name.utf8Start, count) == 0,
              bytes[position + count] == Byte.quote
        else { throw NotTheLayout() }
        position += count + 1
        try expect(Byte.colon)
    }

    /// `, "name":`: the next member, exactly.
    mutating func nextKey(_ name: StaticString) throws(NotTheLayout) {
        try expect(Byte.comma)
        try key(name)
    }

    /// A key without escapes and its colon; the range of its bytes.
    mutating func anyKey() throws(NotTheLayout) -> Range<Int> {
        try expect(Byte.quote)
        let start = position
        while position < bytes.count, bytes[position] != Byte.quote {
            guard bytes[position] != Byte.backslash else { throw NotTheLayout() }
            position += 1
        }
        guard position < bytes.count else { throw NotTheLayout() }
        let range = start..<position
        position += 1
        try expect(Byte.colon)
        return range
    }

    package func matches(_ range: Range<Int>, _ name: StaticString) -> Bool {
        range.count == name.utf8CodeUnitCount
            && memcmp(bytes.baseAddress! + range.lowerBound, name.utf8Start, range.count) == 0
    }
}
