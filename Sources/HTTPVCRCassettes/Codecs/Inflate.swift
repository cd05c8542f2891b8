import Foundation

/// DEFLATE decoding (RFC 1951) with the zlib (RFC 1950) and gzip (RFC 1952) wrappers. The DEFLATE core is in
/// Inflater.swift; the tests' encoder is in TestSupport, since nothing in production compresses.
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
    package static func gunzip(_ data: Data, limit: Int = maxOutputSize) -> Data? {
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
    package static func zlibInflate(_ data: Data, limit: Int = maxOutputSize) -> Data? {
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
    package static func rawInflate(_ data: Data, limit: Int = maxOutputSize) -> Data? {
        data.withUnsafeBytes { raw -> Data? in
            let input = raw.bindMemory(to: UInt8.self)
            var inflater = Inflater(input: input, limit: limit)
            guard let end = inflater.inflate(from: 0), end == input.count else { return nil }
            return inflater.takeData()
        }
    }

    /// CRC-32 as gzip and PNG use it (reflected polynomial 0xEDB88320).
    package static func crc32(_ data: Data) -> UInt32 {
        data.withUnsafeBytes { raw in crc32(raw.bindMemory(to: UInt8.self)) }
    }

    package static func crc32(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt32 {
        guard let base = bytes.baseAddress else { return 0 }
        return crcTables.withUnsafeBufferPointer { tables in
            var crc = ~UInt32(0)
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

    package static func adler32(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt32 {
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
}
