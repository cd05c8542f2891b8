import Foundation
import HTTPVCR

/// A small gzip encoder, for tests that need compressed bodies: HTTPVCR itself only ever decodes (``Inflate``),
/// so this lives out of the library. It writes with the library's DEFLATE tables, so the two agree on the format.
package enum Deflate {
    /// Encodes as a single gzip member (no file name, no timestamp) using fixed-Huffman or stored blocks.
    package static func gzip(_ data: Data) -> Data {
        var out: [UInt8] = [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 0xFF]
        out += data.withUnsafeBytes { raw in Deflater.compress(raw.bindMemory(to: UInt8.self)) }
        let crc = Inflate.crc32(data)
        let size = UInt32(truncatingIfNeeded: data.count)
        for shift in stride(from: 0, to: 32, by: 8) { out.append(UInt8(truncatingIfNeeded: crc >> shift)) }
        for shift in stride(from: 0, to: 32, by: 8) { out.append(UInt8(truncatingIfNeeded: size >> shift)) }
        return Data(out)
    }

    /// Raw DEFLATE, as `gzip` wraps it.
    package static func raw(_ data: Data) -> Data {
        data.withUnsafeBytes { raw in Data(Deflater.compress(raw.bindMemory(to: UInt8.self))) }
    }
}

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
