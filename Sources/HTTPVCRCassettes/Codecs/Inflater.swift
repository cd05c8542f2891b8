import Foundation

// The DEFLATE core (RFC 1951): canonical Huffman tables and the block decoder that `Inflate`'s wrappers drive.

/// The format's fixed tables. Package-visible because the tests' gzip encoder (TestSupport) writes with them.
extension Inflate {
    // Length and distance codes (RFC 1951 section 3.2.5): base value and number of extra bits.
    package static let lengthBase: [Int] = [
        3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195,
        227, 258,
    ]
    package static let lengthExtra: [Int] = [
        0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
    ]
    package static let distanceBase: [Int] = [
        1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073,
        4097, 6145, 8193, 12289, 16385, 24577,
    ]
    package static let distanceExtra: [Int] = [
        0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13,
    ]
    /// The order in which a dynamic block lists the code length code's lengths.
    static let codeLengthOrder: [Int] = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]

    /// Code length of each literal/length symbol in the fixed code (section 3.2.6).
    package static func fixedLiteralLength(_ symbol: Int) -> Int {
        switch symbol {
        case 0..<144: 8
        case 144..<256: 9
        case 256..<280: 7
        default: 8
        }
    }
}

/// A canonical Huffman code: a direct lookup on the next `fastBits` input bits for short codes, and per-length
/// counts with the symbols in code order for walking the rare longer codes one bit at a time.
struct HuffmanTable {
    static let fastBits = 10
    static let fastMask: UInt64 = (1 << UInt64(fastBits)) - 1
    static let storageSize = (1 << fastBits) + 16 + 16 + 288

    /// Entry is symbol << 4 | code length; 0 when no code of at most `fastBits` bits matches.
    let fast: UnsafeMutablePointer<UInt16>
    let counts: UnsafeMutablePointer<UInt16>
    let offsets: UnsafeMutablePointer<UInt16>
    let symbols: UnsafeMutablePointer<UInt16>

    init(storage: UnsafeMutablePointer<UInt16>) {
        fast = storage
        counts = fast + (1 << Self.fastBits)
        offsets = counts + 16
        symbols = offsets + 16
    }

    /// Builds the code from per-symbol lengths (0 = unused). False when the lengths over-subscribe the code
    /// space, or leave it incomplete beyond what zlib accepts: no codes at all or a single one-bit code.
    func build(_ lengths: UnsafePointer<UInt8>, count: Int, allowIncomplete: Bool) -> Bool {
        counts.update(repeating: 0, count: 16)
        for index in 0..<count { counts[Int(lengths[index])] += 1 }
        let used = count - Int(counts[0])
        counts[0] = 0
        var left = 1
        for length in 1...15 {
            left = left << 1 - Int(counts[length])
            if left < 0 { return false }
        }
        if left > 0 && !(allowIncomplete && (used == 0 || (used == 1 && counts[1] == 1))) { return false }

        offsets[1] = 0
        for length in 1..<15 { offsets[length + 1] = offsets[length] + counts[length] }
        for symbol in 0..<count where lengths[symbol] != 0 {
            let length = Int(lengths[symbol])
            symbols[Int(offsets[length])] = UInt16(symbol)
            offsets[length] += 1
        }

        fast.update(repeating: 0, count: 1 << Self.fastBits)
        var code = 0
        var index = 0
        for length in 1...Self.fastBits {
            for _ in 0..<Int(counts[length]) {
                // Codes are sent most significant bit first, but the reader takes bits from the low end.
                var reversed = 0
                for bit in 0..<length where code & (1 << bit) != 0 { reversed |= 1 << (length - 1 - bit) }
                let entry = UInt16(truncatingIfNeeded: Int(symbols[index]) << 4 | length)
                var slot = reversed
                while slot < 1 << Self.fastBits {
                    fast[slot] = entry
                    slot += 1 << length
                }
                code += 1
                index += 1
            }
            code <<= 1
        }
        return true
    }

    /// Decodes a code longer than `fastBits` from the next input bits; same result format as `fast`.
    func decodeSlow(_ bits: UInt64) -> Int {
        var bits = bits
        var code = 0
        var first = 0
        var index = 0
        for length in 1...15 {
            code |= Int(bits & 1)
            bits >>= 1
            let count = Int(counts[length])
            if code - first < count { return Int(symbols[index + code - first]) << 4 | length }
            index += count
            first = (first + count) << 1
            code <<= 1
        }
        return 0
    }
}

struct Inflater: ~Copyable {
    package let input: UnsafeBufferPointer<UInt8>
    package var position = 0
    /// Input bits not yet consumed, next bit lowest. Bits above `bitCount` are zero or the input's next bits.
    var bitBuffer: UInt64 = 0
    var bitCount = 0

    package var out: UnsafeMutablePointer<UInt8>
    var outCount = 0
    var outCapacity: Int
    let limit: Int

    let tableStorage: UnsafeMutablePointer<UInt16>
    let literals: HuffmanTable
    let distances: HuffmanTable
    let lengths: UnsafeMutablePointer<UInt8>
    var fixedTablesLoaded = false

    init(input: UnsafeBufferPointer<UInt8>, limit: Int) {
        self.input = input
        self.limit = limit
        outCapacity = max(4096, min(input.count, 1 << 24) * 4)
        out = .allocate(capacity: outCapacity)
        tableStorage = .allocate(capacity: 2 * HuffmanTable.storageSize)
        tableStorage.initialize(repeating: 0, count: 2 * HuffmanTable.storageSize)
        literals = HuffmanTable(storage: tableStorage)
        distances = HuffmanTable(storage: tableStorage + HuffmanTable.storageSize)
        lengths = .allocate(capacity: 320)
        lengths.initialize(repeating: 0, count: 320)
    }

    deinit {
        out.deallocate()
        tableStorage.deallocate()
        lengths.deallocate()
    }

    func takeData() -> Data { Data(bytes: out, count: outCount) }

    func outputCRC32(from start: Int) -> UInt32 {
        Inflate.crc32(UnsafeBufferPointer(start: out + start, count: outCount - start))
    }

    func outputAdler32() -> UInt32 { Inflate.adler32(UnsafeBufferPointer(start: out, count: outCount)) }

    /// Decodes one DEFLATE stream starting at byte `start`, appending to the output. Returns the index of the
    /// first byte after the stream, or nil when the stream is invalid, truncated or too large.
    mutating func inflate(from start: Int) -> Int? {
        position = start
        bitBuffer = 0
        bitCount = 0
        // Back-references may not reach into an earlier gzip member's output.
        let streamStart = outCount
        var isFinal = false
        while !isFinal {
            guard let header = bits(3) else { return nil }
            isFinal = header & 1 == 1
            switch header >> 1 {
            case 0:
                guard storedBlock() else { return nil }
            case 1:
                if !fixedTablesLoaded {
                    loadFixedTables()
                    fixedTablesLoaded = true
                }
                guard codes(streamStart: streamStart) else { return nil }
            case 2:
                fixedTablesLoaded = false
                guard dynamicTables(), codes(streamStart: streamStart) else { return nil }
            default:
                return nil
            }
        }
        // Whole bytes still in the bit buffer were read ahead; the partial one is the final block's padding.
        return position - bitCount / 8
    }

    @inline(__always)
    mutating func refill() {
        if position + 8 <= input.count {
            // One unaligned load; bits that do not fit are the input's next bits, so keeping them is harmless.
            let word = UInt64(littleEndian: UnsafeRawPointer(input.baseAddress! + position)
                .loadUnaligned(as: UInt64.self))
            bitBuffer |= word &<< UInt64(bitCount)
            let taken = (63 - bitCount) >> 3
            position += taken
            bitCount += taken << 3
        } else {
            while bitCount <= 56 && position < input.count {
                bitBuffer |= UInt64(input[position]) &<< UInt64(bitCount)
                position += 1
                bitCount += 8
            }
        }
    }

    @inline(__always)
    mutating func bits(_ count: Int) -> Int? {
        if bitCount < count {
            refill()
            if bitCount < count { return nil }
        }
        let value = Int(truncatingIfNeeded: bitBuffer & ((1 &<< UInt64(count)) &- 1))
        bitBuffer &>>= UInt64(count)
        bitCount -= count
        return value
    }

    /// Decodes one symbol; nil for a bit pattern that is not a code or runs past the input.
    @inline(__always)
    mutating func symbol(_ table: HuffmanTable) -> Int? {
        if bitCount < 15 { refill() }
        var entry = Int(table.fast[Int(bitBuffer & HuffmanTable.fastMask)])
        if entry == 0 { entry = table.decodeSlow(bitBuffer) }
        let length = entry & 15
        guard length != 0, length <= bitCount else { return nil }
        bitBuffer &>>= UInt64(length)
        bitCount -= length
        return entry >> 4
    }

    mutating func reserve(_ extra: Int) -> Bool {
        let needed = outCount + extra
        if needed <= outCapacity { return true }
        guard needed <= limit else { return false }
        let capacity = min(limit, max(needed, outCapacity * 2))
        let bigger = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        bigger.initialize(from: out, count: outCount)
        out.deallocate()
        out = bigger
        outCapacity = capacity
        return true
    }

    mutating func storedBlock() -> Bool {
        // Skip to a byte boundary and hand the read-ahead bytes back to the input.
        position -= bitCount / 8
        bitBuffer = 0
        bitCount = 0
        guard input.count - position >= 4 else { return false }
        let length = Int(input[position]) | Int(input[position + 1]) << 8
        let complement = Int(input[position + 2]) | Int(input[position + 3]) << 8
        guard length == complement ^ 0xFFFF else { return false }
        position += 4
        guard input.count - position >= length, reserve(length) else { return false }
        if length > 0 { (out + outCount).initialize(from: input.baseAddress! + position, count: length) }
        outCount += length
        position += length
        return true
    }

    mutating func loadFixedTables() {
        for symbol in 0..<288 { lengths[symbol] = UInt8(Inflate.fixedLiteralLength(symbol)) }
        _ = literals.build(lengths, count: 288, allowIncomplete: false)
        // All 32 five-bit codes exist; 30 and 31 are rejected when they occur.
        for symbol in 0..<32 { lengths[symbol] = 5 }
        _ = distances.build(lengths, count: 32, allowIncomplete: false)
    }

    mutating func dynamicTables() -> Bool {
        guard let literalCountBits = bits(5), let distanceCountBits = bits(5), let codeLengthCountBits = bits(4)
        else { return false }
        let literalCount = literalCountBits + 257
        let distanceCount = distanceCountBits + 1
        // 286 and 30 are the most codes that mean anything; zlib rejects more too.
        guard literalCount <= 286, distanceCount <= 30 else { return false }

        // The code length code is built in the literal table's space, which is rebuilt after.
        lengths.update(repeating: 0, count: 19)
        for index in 0..<(codeLengthCountBits + 4) {
            guard let length = bits(3) else { return false }
            lengths[Inflate.codeLengthOrder[index]] = UInt8(length)
        }
        guard literals.build(lengths, count: 19, allowIncomplete: false) else { return false }

        // Literal/length and distance lengths form one sequence; a repeat may cross from one into the other.
        let total = literalCount + distanceCount
        var index = 0
        while index < total {
            guard let code = symbol(literals) else { return false }
            if code < 16 {
                lengths[index] = UInt8(code)
                index += 1
                continue
            }
            var value: UInt8 = 0
            let repeatCount: Int
            switch code {
            case 16:
                guard index > 0, let extra = bits(2) else { return false }
                value = lengths[index - 1]
                repeatCount = 3 + extra
            case 17:
                guard let extra = bits(3) else { return false }
                repeatCount = 3 + extra
            default:
                guard let extra = bits(7) else { return false }
                repeatCount = 11 + extra
            }
            guard total - index >= repeatCount else { return false }
            (lengths + index).update(repeating: value, count: repeatCount)
            index += repeatCount
        }
        // A block without an end-of-block code could never end.
        guard lengths[256] != 0 else { return false }
        return literals.build(lengths, count: literalCount, allowIncomplete: true)
            && distances.build(lengths + literalCount, count: distanceCount, allowIncomplete: true)
    }

    /// Decodes literal/length and distance codes until end-of-block.
    mutating func codes(streamStart: Int) -> Bool {
        let literalFast = literals.fast
        let lengthBase = Inflate.lengthBase
        let lengthExtra = Inflate.lengthExtra
        let distanceBase = Inflate.distanceBase
        let distanceExtra = Inflate.distanceExtra
        while true {
            // After a refill there are at least 57 bits unless input is running out: enough for the longest
            // length plus distance (15 + 5 + 15 + 13 bits), so the steps below rarely refill.
            if bitCount < 48 { refill() }
            var entry = Int(literalFast[Int(bitBuffer & HuffmanTable.fastMask)])
            if entry == 0 { entry = literals.decodeSlow(bitBuffer) }
            let codeLength = entry & 15
            guard codeLength != 0, codeLength <= bitCount else { return false }
            bitBuffer &>>= UInt64(codeLength)
            bitCount -= codeLength
            let literal = entry >> 4

            if literal < 256 {
                if outCount == outCapacity {
                    guard reserve(1) else { return false }
                }
                out[outCount] = UInt8(truncatingIfNeeded: literal)
                outCount += 1
                continue
            }
            if literal == 256 { return true }
            let lengthCode = literal - 257
            guard lengthCode < 29, let lengthBits = bits(lengthExtra[lengthCode]) else { return false }
            let length = lengthBase[lengthCode] + lengthBits

            guard let distanceCode = symbol(distances), distanceCode < 30,
                  let distanceBits = bits(distanceExtra[distanceCode]) else { return false }
            let distance = distanceBase[distanceCode] + distanceBits
            guard distance <= outCount - streamStart, reserve(length) else { return false }

            let destination = out + outCount
            let source = destination - distance
            if distance >= length {
                destination.update(from: source, count: length)
            } else {
                // Overlapping copy repeats the last `distance` bytes, so it must go byte by byte.
                for offset in 0..<length { destination[offset] = source[offset] }
            }
            outCount += length
        }
    }
}
