import Foundation

/// DEFLATE decoding (RFC 1951) with the zlib (RFC 1950) and gzip (RFC 1952) wrappers, and a small gzip encoder.
///
/// Everything works on raw byte buffers; malformed input of any kind yields nil rather than a trap, every loop
/// consumes input or output, and output is capped so a small hostile body cannot exhaust memory.
package enum Inflate {
    /// The most any decode will produce; DEFLATE can expand input about 1000-fold.
    package static let maxOutputSize = 512 << 20

    /// Decodes a body by its Content-Encoding value. Codings listed as "deflate, gzip" were applied in that
    /// order, so they are undone last to first. Returns nil for an unknown coding or data not validly encoded.
    package static func decode(_ data: Data, contentEncoding: String) -> Data? {
        var body = data
        for coding in contentEncoding.split(separator: ",").reversed() {
            switch coding.trimmingCharacters(in: .whitespaces).lowercased() {
            case "", "identity":
                continue
            case "gzip", "x-gzip":
                // HEAD, 204 and 304 responses carry the header with no body at all.
                guard !body.isEmpty else { continue }
                guard let decoded = gunzip(body) else { return nil }
                body = decoded
            case "deflate":
                guard !body.isEmpty else { continue }
                // The HTTP spec says zlib-wrapped, but some servers send raw deflate.
                guard let decoded = zlibInflate(body) ?? rawInflate(body) else { return nil }
                body = decoded
            default:
                return nil
            }
        }
        return body
    }

    package static func isGzip(_ data: Data) -> Bool {
        data.count >= 2 && data[data.startIndex] == 0x1F && data[data.startIndex + 1] == 0x8B
    }

    /// RFC 1952: one or more members, each with its CRC-32 and size checked. Zero bytes after the last member
    /// are tolerated, as gzip(1) and Python's gzip module do.
    package static func gunzip(_ data: Data) -> Data? {
        gunzip(data, limit: maxOutputSize)
    }

    static func gunzip(_ data: Data, limit: Int) -> Data? {
        data.withUnsafeBytes { raw -> Data? in
            let input = raw.bindMemory(to: UInt8.self)
            var inflater = Inflater(input: input, limit: limit)
            var position = 0
            repeat {
                guard let start = gzipHeaderEnd(input, from: position) else { return nil }
                let memberStart = inflater.outCount
                guard let end = inflater.inflate(from: start), end + 8 <= input.count else { return nil }
                let crc = readLE32(input, at: end)
                let size = readLE32(input, at: end + 4)
                guard crc == inflater.outputCRC32(from: memberStart),
                      size == UInt32(truncatingIfNeeded: inflater.outCount - memberStart) else { return nil }
                position = end + 8
            } while input[position...].contains { $0 != 0 }
            return inflater.takeData()
        }
    }

    /// RFC 1950: header check, no preset dictionary, Adler-32 of the output; nothing may follow it.
    package static func zlibInflate(_ data: Data) -> Data? {
        zlibInflate(data, limit: maxOutputSize)
    }

    static func zlibInflate(_ data: Data, limit: Int) -> Data? {
        data.withUnsafeBytes { raw -> Data? in
            let input = raw.bindMemory(to: UInt8.self)
            guard input.count >= 2 else { return nil }
            let cmf = input[0]
            let flags = input[1]
            guard cmf & 0x0F == 8, cmf >> 4 <= 7, (UInt(cmf) << 8 | UInt(flags)) % 31 == 0,
                  flags & 0x20 == 0 else { return nil }
            var inflater = Inflater(input: input, limit: limit)
            guard let end = inflater.inflate(from: 2), end + 4 == input.count else { return nil }
            let expected = UInt32(input[end]) << 24 | UInt32(input[end + 1]) << 16
                | UInt32(input[end + 2]) << 8 | UInt32(input[end + 3])
            guard inflater.outputAdler32() == expected else { return nil }
            return inflater.takeData()
        }
    }

    /// RFC 1951 with no wrapper. Bytes after the final block make the input invalid.
    package static func rawInflate(_ data: Data) -> Data? {
        rawInflate(data, limit: maxOutputSize)
    }

    static func rawInflate(_ data: Data, limit: Int) -> Data? {
        data.withUnsafeBytes { raw -> Data? in
            let input = raw.bindMemory(to: UInt8.self)
            var inflater = Inflater(input: input, limit: limit)
            guard let end = inflater.inflate(from: 0), end == input.count else { return nil }
            return inflater.takeData()
        }
    }

    /// Encodes as a single gzip member (no file name, no timestamp) using fixed-Huffman or stored blocks.
    package static func gzip(_ data: Data) -> Data {
        var out: [UInt8] = [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 0xFF]
        let crc = data.withUnsafeBytes { raw -> UInt32 in
            let input = raw.bindMemory(to: UInt8.self)
            out += Deflater.compress(input)
            return crc32(input)
        }
        let size = UInt32(truncatingIfNeeded: data.count)
        for shift in stride(from: 0, to: 32, by: 8) { out.append(UInt8(truncatingIfNeeded: crc >> shift)) }
        for shift in stride(from: 0, to: 32, by: 8) { out.append(UInt8(truncatingIfNeeded: size >> shift)) }
        return Data(out)
    }

    /// Raw DEFLATE encoding, as `gzip` uses it.
    static func rawDeflate(_ data: Data) -> Data {
        data.withUnsafeBytes { raw in Data(Deflater.compress(raw.bindMemory(to: UInt8.self))) }
    }

    /// CRC-32 as gzip and PNG use it (reflected polynomial 0xEDB88320).
    package static func crc32(_ data: Data) -> UInt32 {
        data.withUnsafeBytes { raw in crc32(raw.bindMemory(to: UInt8.self)) }
    }

    static func crc32(_ bytes: UnsafeBufferPointer<UInt8>, continuing previous: UInt32 = 0) -> UInt32 {
        guard let base = bytes.baseAddress else { return previous }
        return crcTables.withUnsafeBufferPointer { tables in
            var crc = ~previous
            var index = 0
            // Slicing by 8: eight table lookups fold in eight bytes at once (table k advances a byte k + 1 steps).
            while bytes.count - index >= 8 {
                let raw = UnsafeRawPointer(base + index)
                let low = crc ^ UInt32(littleEndian: raw.loadUnaligned(as: UInt32.self))
                let high = UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 4, as: UInt32.self))
                crc = tables[7 * 256 + Int(low & 0xFF)] ^ tables[6 * 256 + Int(low >> 8 & 0xFF)]
                    ^ tables[5 * 256 + Int(low >> 16 & 0xFF)] ^ tables[4 * 256 + Int(low >> 24)]
                    ^ tables[3 * 256 + Int(high & 0xFF)] ^ tables[2 * 256 + Int(high >> 8 & 0xFF)]
                    ^ tables[256 + Int(high >> 16 & 0xFF)] ^ tables[Int(high >> 24)]
                index += 8
            }
            while index < bytes.count {
                crc = tables[Int((crc ^ UInt32(base[index])) & 0xFF)] ^ (crc >> 8)
                index += 1
            }
            return ~crc
        }
    }

    static func adler32(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt32 {
        guard let base = bytes.baseAddress else { return 1 }
        var a: UInt32 = 1
        var b: UInt32 = 0
        var index = 0
        while index < bytes.count {
            // 5552 is the longest run for which b cannot overflow 32 bits before the modulo.
            let end = min(bytes.count, index + 5552)
            while index < end {
                a &+= UInt32(base[index])
                b &+= a
                index += 1
            }
            a %= 65521
            b %= 65521
        }
        return b << 16 | a
    }

    /// Eight 256-entry tables; entry n of table k is the CRC register after n is shifted through k + 1 bytes.
    private static let crcTables: [UInt32] = {
        var tables = [UInt32](repeating: 0, count: 8 * 256)
        for byte in 0..<256 {
            var value = UInt32(byte)
            for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
            tables[byte] = value
        }
        for index in 256..<(8 * 256) {
            let previous = tables[index - 256]
            tables[index] = (previous >> 8) ^ tables[Int(previous & 0xFF)]
        }
        return tables
    }()

    private static func readLE32(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> UInt32 {
        UInt32(bytes[index]) | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2]) << 16
            | UInt32(bytes[index + 3]) << 24
    }

    /// Parses a gzip member header starting at `start`, returning where its deflate data begins.
    private static func gzipHeaderEnd(_ input: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        guard input.count - start >= 10, input[start] == 0x1F, input[start + 1] == 0x8B, input[start + 2] == 8
        else { return nil }
        let flags = input[start + 3]
        guard flags & 0xE0 == 0 else { return nil }  // reserved bits must be zero
        var position = start + 10
        if flags & 0x04 != 0 {  // FEXTRA
            guard input.count - position >= 2 else { return nil }
            let length = Int(input[position]) | Int(input[position + 1]) << 8
            position += 2
            guard input.count - position >= length else { return nil }
            position += length
        }
        for flag: UInt8 in [0x08, 0x10] where flags & flag != 0 {  // FNAME, FCOMMENT: zero-terminated
            while position < input.count, input[position] != 0 { position += 1 }
            guard position < input.count else { return nil }
            position += 1
        }
        if flags & 0x02 != 0 {  // FHCRC: low 16 bits of the CRC-32 of the header so far
            guard input.count - position >= 2 else { return nil }
            let header = UnsafeBufferPointer(rebasing: input[start..<position])
            let expected = UInt16(input[position]) | UInt16(input[position + 1]) << 8
            guard UInt16(truncatingIfNeeded: crc32(header)) == expected else { return nil }
            position += 2
        }
        return position
    }

    // Length and distance codes (RFC 1951 section 3.2.5): base value and number of extra bits.
    fileprivate static let lengthBase: [Int] = [
        3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195,
        227, 258,
    ]
    fileprivate static let lengthExtra: [Int] = [
        0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
    ]
    fileprivate static let distanceBase: [Int] = [
        1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073,
        4097, 6145, 8193, 12289, 16385, 24577,
    ]
    fileprivate static let distanceExtra: [Int] = [
        0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13,
    ]
    /// The order in which a dynamic block lists the code length code's lengths.
    fileprivate static let codeLengthOrder: [Int] = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]

    /// Code length of each literal/length symbol in the fixed code (section 3.2.6).
    fileprivate static func fixedLiteralLength(_ symbol: Int) -> Int {
        switch symbol {
        case 0..<144: 8
        case 144..<256: 9
        case 256..<280: 7
        default: 8
        }
    }
}

// MARK: - Decoding

/// A canonical Huffman code: a direct lookup on the next `fastBits` input bits for short codes, and per-length
/// counts with the symbols in code order for walking the rare longer codes one bit at a time.
private struct HuffmanTable {
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

private struct Inflater: ~Copyable {
    let input: UnsafeBufferPointer<UInt8>
    var position = 0
    /// Input bits not yet consumed, next bit lowest. Bits above `bitCount` are zero or the input's next bits.
    var bitBuffer: UInt64 = 0
    var bitCount = 0

    var out: UnsafeMutablePointer<UInt8>
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

// MARK: - Encoding

/// Greedy LZ77 with hash chains, written as fixed-Huffman blocks, or stored blocks where those come out smaller.
private enum Deflater {
    static let hashBits = 15
    static let window = 32768
    static let maxChain = 32
    /// Input bytes covered by one block before its encoding is chosen; small enough that a segment, even
    /// overrun by a final 258-byte match, fits in one stored block.
    static let segmentSize = 65_535 - 258

    static func compress(_ input: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        var writer = BitWriter()
        writer.bytes.reserveCapacity(input.count / 2 + 64)
        guard let base = input.baseAddress, !input.isEmpty else {
            writer.write(0b011, 3)  // final fixed block holding only end-of-block
            writer.writeLiteral(256)
            writer.flush()
            return writer.bytes
        }
        let count = input.count
        var head = [Int32](repeating: -1, count: 1 << hashBits)
        var previous = [Int32](repeating: -1, count: window)
        var tokens: [UInt32] = []
        var position = 0

        head.withUnsafeMutableBufferPointer { head in
            previous.withUnsafeMutableBufferPointer { previous in
                func hash(_ at: Int) -> Int {
                    let value = UInt32(base[at]) << 16 | UInt32(base[at + 1]) << 8 | UInt32(base[at + 2])
                    return Int((value &* 2_654_435_761) >> UInt32(32 - hashBits))
                }
                func insert(_ at: Int) {
                    guard at + 3 <= count else { return }
                    let slot = hash(at)
                    previous[at & (window - 1)] = head[slot]
                    head[slot] = Int32(at)
                }

                while position < count {
                    let segmentStart = position
                    let segmentEnd = min(count, position + segmentSize)
                    tokens.removeAll(keepingCapacity: true)
                    var fixedBits = 3 + 7
                    while position < segmentEnd {
                        var bestLength = 0
                        var bestDistance = 0
                        if position + 3 <= count {
                            let maxLength = min(258, count - position)
                            var candidate = Int(head[hash(position)])
                            var chain = maxChain
                            while candidate >= 0, position - candidate <= window, chain > 0 {
                                var length = 0
                                while length < maxLength, base[candidate + length] == base[position + length] {
                                    length += 1
                                }
                                if length > bestLength {
                                    bestLength = length
                                    bestDistance = position - candidate
                                    if length == maxLength { break }
                                }
                                // Chains only ever point backwards; anything else is a stale slot.
                                let next = Int(previous[candidate & (window - 1)])
                                guard next < candidate else { break }
                                candidate = next
                                chain -= 1
                            }
                        }
                        if bestLength >= 3 {
                            tokens.append(1 << 31 | UInt32(bestLength) << 16 | UInt32(bestDistance))
                            fixedBits += matchBits(length: bestLength, distance: bestDistance)
                            for at in position..<(position + bestLength) { insert(at) }
                            position += bestLength
                        } else {
                            tokens.append(UInt32(base[position]))
                            fixedBits += Inflate.fixedLiteralLength(Int(base[position]))
                            insert(position)
                            position += 1
                        }
                    }
                    let isFinal = position == count
                    let storedLength = position - segmentStart
                    // Each stored block costs its header, padding to a byte, then LEN and NLEN.
                    let storedBits = 8 * storedLength + (3 + 7 + 32) * (storedLength / 65535 + 1)
                    if fixedBits <= storedBits {
                        writer.write(isFinal ? 0b011 : 0b010, 3)
                        for token in tokens { writer.writeToken(token) }
                        writer.writeLiteral(256)
                    } else {
                        writer.writeStored(UnsafeBufferPointer(start: base + segmentStart, count: storedLength),
                                           isFinal: isFinal)
                    }
                }
            }
        }
        writer.flush()
        return writer.bytes
    }

    static func lengthCode(_ length: Int) -> Int {
        var code = 28
        while Inflate.lengthBase[code] > length { code -= 1 }
        return code
    }

    static func distanceCode(_ distance: Int) -> Int {
        var code = 29
        while Inflate.distanceBase[code] > distance { code -= 1 }
        return code
    }

    static func matchBits(length: Int, distance: Int) -> Int {
        let code = lengthCode(length)
        return Inflate.fixedLiteralLength(257 + code) + Inflate.lengthExtra[code]
            + 5 + Inflate.distanceExtra[distanceCode(distance)]
    }
}

private struct BitWriter {
    var bytes: [UInt8] = []
    var buffer: UInt64 = 0
    var count = 0

    /// Appends the low `bits` bits of `value`, least significant first.
    mutating func write(_ value: Int, _ bits: Int) {
        buffer |= UInt64(value) << UInt64(count)
        count += bits
        while count >= 8 {
            bytes.append(UInt8(truncatingIfNeeded: buffer))
            buffer >>= 8
            count -= 8
        }
    }

    /// Writes a Huffman code, which goes most significant bit first.
    mutating func writeCode(_ code: Int, _ bits: Int) {
        var reversed = 0
        for bit in 0..<bits where code & (1 << bit) != 0 { reversed |= 1 << (bits - 1 - bit) }
        write(reversed, bits)
    }

    mutating func writeLiteral(_ symbol: Int) {
        switch symbol {
        case 0..<144: writeCode(0x30 + symbol, 8)
        case 144..<256: writeCode(0x190 + symbol - 144, 9)
        case 256..<280: writeCode(symbol - 256, 7)
        default: writeCode(0xC0 + symbol - 280, 8)
        }
    }

    mutating func writeToken(_ token: UInt32) {
        guard token & (1 << 31) != 0 else { return writeLiteral(Int(token)) }
        let length = Int(token >> 16 & 0x1FF)
        let distance = Int(token & 0xFFFF)
        let code = Deflater.lengthCode(length)
        writeLiteral(257 + code)
        write(length - Inflate.lengthBase[code], Inflate.lengthExtra[code])
        let distanceCode = Deflater.distanceCode(distance)
        writeCode(distanceCode, 5)
        write(distance - Inflate.distanceBase[distanceCode], Inflate.distanceExtra[distanceCode])
    }

    mutating func writeStored(_ data: UnsafeBufferPointer<UInt8>, isFinal: Bool) {
        var start = 0
        repeat {
            let length = min(65535, data.count - start)
            let isLast = start + length == data.count
            write(isFinal && isLast ? 1 : 0, 3)
            flush()
            bytes += [UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8(~length >> 8 & 0xFF)]
            bytes += UnsafeBufferPointer(rebasing: data[start..<(start + length)])
            start += length
        } while start < data.count
    }

    /// Pads to a byte boundary with zero bits.
    mutating func flush() {
        if count > 0 {
            bytes.append(UInt8(truncatingIfNeeded: buffer))
            buffer = 0
            count = 0
        }
    }
}
