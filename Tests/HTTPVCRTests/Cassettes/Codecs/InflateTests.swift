import Foundation
import Testing
@testable import HTTPVCR
import HTTPBinTestSupport
import TestSupport

/// Test vectors were made with Python's gzip and zlib modules (zlib 1.2/1.3), so the decoder is checked against
/// a reference encoder rather than only against its own.
@Suite struct InflateTests {
    // MARK: Real streams

    @Test func decodesGzippedJSONWithDynamicBlocks() throws {
        // BTYPE 2 in the first block header: this vector exercises dynamic Huffman tables.
        #expect(Vectors.jsonRaw[0] >> 1 & 3 == 2)
        let decoded = try #require(Inflate.gunzip(Vectors.jsonGzip))
        #expect(decoded.count == Vectors.jsonLength)
        #expect(Inflate.crc32(decoded) == Vectors.jsonCRC)
        let object = try #require(try JSONSerialization.jsonObject(with: decoded) as? [String: Any])
        let items = try #require(object["items"] as? [[String: Any]])
        #expect(items.count == 40)
        #expect(items[7]["name"] as? String == Vectors.jsonItem7Name)
    }

    @Test func zlibAndRawDeflateOfTheSameDocumentAgree() throws {
        let expected = try #require(Inflate.gunzip(Vectors.jsonGzip))
        #expect(Inflate.zlibInflate(Vectors.jsonZlib) == expected)
        #expect(Inflate.rawInflate(Vectors.jsonRaw) == expected)
        // Each wrapper refuses the others' framing.
        #expect(Inflate.zlibInflate(Vectors.jsonGzip) == nil)
        #expect(Inflate.gunzip(Vectors.jsonZlib) == nil)
        #expect(Inflate.rawInflate(Vectors.jsonZlib) == nil)
    }

    @Test func gzipWithFileName() {
        #expect(Vectors.fileNameGzip[3] == 0x08)  // FNAME
        #expect(Inflate.gunzip(Vectors.fileNameGzip) == Data(#"{"hello": "named file"}"#.utf8 + [0x0A]))
    }

    @Test func gzipWithEveryOptionalHeaderField() {
        #expect(Vectors.allFlagsGzip[3] == 0x1E)  // FHCRC, FEXTRA, FNAME, FCOMMENT
        #expect(Inflate.gunzip(Vectors.allFlagsGzip) == Data("all the header fields\n".utf8))
        // A changed comment byte no longer matches the header CRC.
        var badHeader = Vectors.allFlagsGzip
        let comment = badHeader.firstRange(of: Data("a comment".utf8))!
        badHeader[comment.lowerBound] = UInt8(ascii: "A")
        #expect(Inflate.gunzip(badHeader) == nil)
        // Cutting the stream anywhere inside the header is caught too.
        for length in 0..<40 { #expect(Inflate.gunzip(Vectors.allFlagsGzip.prefix(length)) == nil) }
    }

    @Test func concatenatedMembers() {
        let expected = Data("first member\nsecond member\n".utf8)
        #expect(Inflate.gunzip(Vectors.twoMembers) == expected)
        // Zero padding after the last member is accepted, anything else is not.
        #expect(Inflate.gunzip(Vectors.twoMembers + Data(count: 7)) == expected)
        #expect(Inflate.gunzip(Vectors.twoMembers + Data([0x00, 0x41])) == nil)
        #expect(Inflate.gunzip(Vectors.twoMembers + Data([0x1F, 0x8B])) == nil)
    }

    @Test func emptyPayload() {
        #expect(Inflate.gunzip(Vectors.emptyGzip) == Data())
        #expect(Inflate.gunzip(Data()) == nil)
        #expect(Inflate.rawInflate(Data()) == nil)
        #expect(Inflate.zlibInflate(Data()) == nil)
    }

    @Test func storedBlocks() {
        #expect(Vectors.stored[0] >> 1 & 3 == 0)
        let expected = (0..<400).map { "line \($0)\n" }.joined()
        #expect(Inflate.rawInflate(Vectors.stored) == Data(expected.utf8))
    }

    @Test func fixedHuffmanBlocks() {
        #expect(Vectors.fixed[0] >> 1 & 3 == 1)
        #expect(Inflate.rawInflate(Vectors.fixed) == Data("hello hello hello hello, fixed huffman\n".utf8))
        // 'a' then a length-3 copy at distance 1: an overlapping copy.
        #expect(Inflate.rawInflate(Vectors.fixedOverlap) == Data("aaaa".utf8))
    }

    @Test func longBackReferences() throws {
        // 1000 random bytes and 31 000 zeros, repeated: references reach 32 000 bytes back.
        let decoded = try #require(Inflate.gunzip(Vectors.repetitiveGzip))
        #expect(decoded.count == 200_000)
        #expect(Inflate.crc32(decoded) == Vectors.repetitiveCRC)
        #expect(decoded[1000..<32_000].allSatisfy { $0 == 0 })
        #expect(decoded[32_000..<33_000] == decoded[0..<1000])
        #expect(decoded[192_000..<193_000] == decoded[0..<1000])
    }

    @Test func incompressibleBytes() throws {
        let decoded = try #require(Inflate.gunzip(Vectors.randomGzip))
        #expect(decoded.count == 3000)
        #expect(Inflate.crc32(decoded) == Vectors.randomCRC)
    }

    // MARK: Malformed input

    @Test func truncatedStreamsAreRejected() {
        for length in 0..<Vectors.jsonGzip.count {
            #expect(Inflate.gunzip(Vectors.jsonGzip.prefix(length)) == nil, "gzip cut at \(length)")
        }
        for length in 0..<Vectors.jsonZlib.count {
            #expect(Inflate.zlibInflate(Vectors.jsonZlib.prefix(length)) == nil, "zlib cut at \(length)")
        }
        for length in 0..<Vectors.jsonRaw.count {
            #expect(Inflate.rawInflate(Vectors.jsonRaw.prefix(length)) == nil, "deflate cut at \(length)")
        }
        for length in 0..<Vectors.stored.count {
            #expect(Inflate.rawInflate(Vectors.stored.prefix(length)) == nil, "stored cut at \(length)")
        }
        // Cut exactly after the first member, what remains is a complete gzip file.
        let firstMember = Vectors.twoMembers.dropFirst().firstRange(of: Data([0x1F, 0x8B, 8]))!.lowerBound
        #expect(firstMember == 33)
        for length in 0..<Vectors.twoMembers.count {
            let decoded = Inflate.gunzip(Vectors.twoMembers.prefix(length))
            #expect(decoded == (length == firstMember ? Data("first member\n".utf8) : nil), "cut at \(length)")
        }
    }

    @Test func checksumAndHeaderErrorsAreRejected() {
        let gzip = Vectors.jsonGzip
        let end = gzip.count
        #expect(Inflate.gunzip(flipping(gzip, at: end - 8)) == nil)  // CRC-32
        #expect(Inflate.gunzip(flipping(gzip, at: end - 1)) == nil)  // ISIZE
        #expect(Inflate.gunzip(flipping(gzip, at: 0)) == nil)        // magic
        #expect(Inflate.gunzip(flipping(gzip, at: 2)) == nil)        // compression method
        #expect(Inflate.gunzip(flipping(gzip, at: 3, bit: 7)) == nil)  // reserved flag bit
        #expect(Inflate.gunzip(flipping(gzip, at: 4)) != nil)        // MTIME is informational

        let zlib = Vectors.jsonZlib
        #expect(Inflate.zlibInflate(flipping(zlib, at: zlib.count - 1)) == nil)  // Adler-32
        #expect(Inflate.zlibInflate(flipping(zlib, at: 1)) == nil)    // header check bits
        #expect(Inflate.zlibInflate(zlib + Data([0])) == nil)          // trailing byte
        #expect(Inflate.rawInflate(Vectors.jsonRaw + Data([0])) == nil)
        // FDICT set with a valid header check: a preset dictionary is not supported.
        #expect(Inflate.zlibInflate(Data([0x78, 0xBB]) + zlib.dropFirst(2)) == nil)
        // Compression method 7.
        #expect(Inflate.zlibInflate(Data([0x77, 0x85]) + zlib.dropFirst(2)) == nil)
    }

    @Test func malformedDeflateIsRejected() {
        #expect(Inflate.rawInflate(Data([0x07, 0, 0, 0])) == nil)  // block type 3
        #expect(Inflate.rawInflate(Data([0x01, 5, 0, 0xFA, 0xFE]) + Data("hello".utf8)) == nil)  // LEN != ~NLEN
        #expect(Inflate.rawInflate(Data([0x01, 5, 0, 0xFA, 0xFF]) + Data("hell".utf8)) == nil)   // short stored
        #expect(Inflate.rawInflate(Data([0x01, 5, 0, 0xFA, 0xFF]) + Data("hello".utf8)) == Data("hello".utf8))
        #expect(Inflate.rawInflate(Vectors.distanceTooFar) == nil)
        #expect(Inflate.rawInflate(Vectors.oversubscribedCodeLengths) == nil)
        #expect(Inflate.rawInflate(Vectors.repeatWithNothingBefore) == nil)
        #expect(Inflate.rawInflate(Vectors.missingEndOfBlock) == nil)
        // A back-reference may not reach into the previous gzip member.
        let firstMember = Deflate.gzip(Data("abc".utf8))
        let secondMember = gzipMember(rawDeflate: Vectors.fixedOverlap, payload: Data("aaaa".utf8))
        #expect(Inflate.gunzip(firstMember + secondMember) == Data("abcaaaa".utf8))
        let reachingBack = gzipMember(rawDeflate: Vectors.distanceTooFar, payload: Data("aaaa".utf8))
        #expect(Inflate.gunzip(firstMember + reachingBack) == nil)
    }

    @Test func corruptedStreamsNeverCrash() {
        var random = SplitMix64(seed: 42)
        let original = Inflate.gunzip(Vectors.jsonGzip)
        var rejected = 0
        for _ in 0..<1500 {
            var corrupted = Vectors.jsonGzip
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let index = Int.random(in: 0..<corrupted.count, using: &random)
                corrupted[index] ^= UInt8.random(in: 1...255, using: &random)
            }
            let decoded = Inflate.gunzip(corrupted)
            // Either caught, or the damage was in a field that does not affect the content (MTIME, XFL, OS).
            #expect(decoded == nil || decoded == original)
            if decoded == nil { rejected += 1 }
        }
        #expect(rejected > 1300)

        // Garbage, including garbage that starts with each block type, must simply terminate.
        for index in 0..<3000 {
            var garbage = Data((0..<Int.random(in: 0..<300, using: &random)).map { _ in
                UInt8.random(in: 0...255, using: &random)
            })
            if !garbage.isEmpty { garbage[0] = garbage[0] & 0xF8 | UInt8(index % 8) }
            _ = Inflate.rawInflate(garbage)
            _ = Inflate.decode(garbage, contentEncoding: "deflate")
        }
    }

    @Test func outputIsBounded() {
        #expect(Inflate.gunzip(Vectors.repetitiveGzip, limit: 199_999) == nil)
        #expect(Inflate.gunzip(Vectors.repetitiveGzip, limit: 200_000)?.count == 200_000)
        #expect(Inflate.rawInflate(Vectors.jsonRaw, limit: 1000) == nil)
        #expect(Inflate.zlibInflate(Vectors.jsonZlib, limit: 1000) == nil)
        #expect(Inflate.maxOutputSize == 512 << 20)
    }

    // MARK: Content-Encoding

    @Test func decodesByContentEncoding() throws {
        let expected = try #require(Inflate.gunzip(Vectors.jsonGzip))
        #expect(Inflate.decode(Vectors.jsonGzip, contentEncoding: "gzip") == expected)
        #expect(Inflate.decode(Vectors.jsonGzip, contentEncoding: " GZip ") == expected)
        #expect(Inflate.decode(Vectors.jsonGzip, contentEncoding: "x-gzip") == expected)
        #expect(Inflate.decode(Vectors.jsonZlib, contentEncoding: "deflate") == expected)
        #expect(Inflate.decode(Vectors.jsonRaw, contentEncoding: "Deflate") == expected)
        #expect(Inflate.decode(expected, contentEncoding: "identity") == expected)
        #expect(Inflate.decode(expected, contentEncoding: "") == expected)
        #expect(Inflate.decode(Vectors.jsonGzip, contentEncoding: "br") == nil)
        #expect(Inflate.decode(expected, contentEncoding: "gzip") == nil)
        #expect(Inflate.decode(expected, contentEncoding: "deflate") == nil)
        // Codings are listed in the order applied, so "deflate, gzip" is gunzipped first.
        #expect(Inflate.decode(Vectors.stacked, contentEncoding: "deflate, gzip")
            == Data("deflate first, then gzip\n".utf8))
        #expect(Inflate.decode(Vectors.stacked, contentEncoding: "gzip, deflate") == nil)
        // HEAD and 304 responses name a coding but carry no body.
        #expect(Inflate.decode(Data(), contentEncoding: "gzip") == Data())
        #expect(Inflate.decode(Data(), contentEncoding: "deflate") == Data())
    }

    @Test func recognisesGzipMagic() {
        #expect(Inflate.isGzip(Vectors.jsonGzip))
        #expect(Inflate.isGzip(Vectors.jsonGzip.dropFirst(0)))
        #expect(!Inflate.isGzip(Vectors.jsonZlib))
        #expect(!Inflate.isGzip(Data([0x1F])))
        #expect(!Inflate.isGzip(Data()))
        // A slice whose indices do not start at zero.
        #expect(Inflate.isGzip((Data([0]) + Vectors.emptyGzip).dropFirst()))
    }

    @Test func checksums() {
        #expect(Inflate.crc32(Data("123456789".utf8)) == 0xCBF4_3926)
        #expect(Inflate.crc32(Data()) == 0)
        #expect(Inflate.crc32(Data("The quick brown fox jumps over the lazy dog".utf8)) == 0x414F_A339)
        #expect(Inflate.crc32(Data("xx123456789".utf8).dropFirst(2)) == 0xCBF4_3926)
        let wikipedia = Data("Wikipedia".utf8)
        #expect(wikipedia.withUnsafeBytes { Inflate.adler32($0.bindMemory(to: UInt8.self)) } == 0x11E6_0398)
    }

    // MARK: Encoder

    enum Content: CaseIterable, Sendable { case text, random, repetitive }

    @Test(arguments: [0, 1, 2, 3, 100, 258, 259, 32_768, 32_769, 65_535, 65_536, 70_000], Content.allCases)
    func gzipRoundTrip(size: Int, content: Content) throws {
        let original = sample(size, content)
        let encoded = Deflate.gzip(original)
        #expect(encoded.prefix(3) == Data([0x1F, 0x8B, 8]))
        #expect(Inflate.gunzip(encoded) == original)
        #expect(Inflate.rawInflate(Deflate.raw(original)) == original)
        // Stored blocks cap the growth of data that does not compress: 5 bytes a block, one block per 65 277.
        #expect(encoded.count <= original.count + 18 + 6 * (original.count / 65_277 + 1))
        if content != .random && size >= 32_768 { #expect(encoded.count < original.count / 2) }
    }

    @Test func decodesAMegabyte() throws {
        let original = sample(1 << 20, .text)
        let encoded = Deflate.gzip(original)
        let decoded = try #require(Inflate.gunzip(encoded))
        #expect(decoded == original)
    }

    // MARK: Helpers

    private func flipping(_ data: Data, at offset: Int, bit: Int = 0) -> Data {
        var copy = data
        copy[copy.startIndex + offset] ^= 1 << bit
        return copy
    }

    private func gzipMember(rawDeflate: Data, payload: Data) -> Data {
        var member = Data([0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 0xFF]) + rawDeflate
        let crc = Inflate.crc32(payload)
        let size = UInt32(payload.count)
        for shift in stride(from: 0, to: 32, by: 8) { member.append(UInt8(truncatingIfNeeded: crc >> shift)) }
        for shift in stride(from: 0, to: 32, by: 8) { member.append(UInt8(truncatingIfNeeded: size >> shift)) }
        return member
    }

    private func sample(_ size: Int, _ content: Content) -> Data {
        var random = SplitMix64(seed: UInt64(size))
        switch content {
        case .text:
            let words = ["request", "response", "header", "body", "cassette", "scene", "status", "200", "404",
                         "application/json", "gzip", "{\"id\":", "},", "\n", "true", "false", "null"]
            var text = Data()
            text.reserveCapacity(size + 20)
            while text.count < size {
                text.append(contentsOf: words[Int.random(in: 0..<words.count, using: &random)].utf8)
                text.append(Int.random(in: 0..<4, using: &random) == 0
                    ? UInt8(ascii: "0") + UInt8.random(in: 0...9, using: &random) : UInt8(ascii: " "))
            }
            return text.prefix(size)
        case .random:
            return Data((0..<size).map { _ in UInt8.random(in: 0...255, using: &random) })
        case .repetitive:
            return Data((0..<size).map { UInt8(ascii: "a") + UInt8($0 % 5) })
        }
    }
}

/// Deterministic pseudo-random numbers (SplitMix64), so failures reproduce.
private struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

private func base64(_ text: String) -> Data {
    Data(base64Encoded: text.filter { !$0.isWhitespace })!
}

private enum Vectors {
    // A 10790-byte JSON document: gzip -9, zlib and raw deflate of it.
    static let jsonLength = 10790
    static let jsonCRC: UInt32 = 0x4E665368
    static let jsonItem7Name = "delta-alpha"

    /// gzip.compress(document, compresslevel=9, mtime=0)
    static let jsonGzip = base64("""
        H4sIAAAAAAACA7Va227jOAx9n68w8twIluXr/MbO0yzmwdu6bXYzTZF6BgsM5t/XEe2YtETairJAkUK2I5iH5OEhlV+fkmT3szt/
        HE5vu8+JebisX7q37tz23dNwZZelWb5Pi32qv+jsc5oOf1939rFD333/GB75c1gkyS/7ebl8+Vr6MC3f2u/dZZ/XU98d94+v7fl4
        6HbX2+/nw+PlvilzlV+v9u3LvLO90j2+nq7fGtZP3bFv8YWX0/F5Ny6/XTc6vP3Rnx7/GfZ6bo8f3fX6U/fxeD6892D28NjToU3s
        nol90eT59G9/PvXJZdsEbv/9Y3jzfnzKvo/d7feDx37t2G/32I/buvZnZap0KQDgGGzfE1+YsBVA6M8/WAza4/trS+0GKP46tz9P
        ybg7fWBaTP/hJXlYMgeW8Zt76z4XlbRSVS2gAj6JCgwJE/A1IHPx+BgJkxd5Q41jKLwpY6cZ7MyMYOcybnyG2ne7OQUm/4LJk0Mh
        AsbInx6xSFj/jzfW8chZx9MwviKSm1RVUj4smUQC6Ubv08CHKJhWAMxavBes2dR7s9lalVE0CHDeaDBEt/Ws/YBYABis0+ePCYcx
        AubkENAoHTTs1lwIaD1QYhZCiSS54hlxyW4QAaPFCCsAyH4K1leO9fb993ZXD/UVjTJFiPXwAvczf3Lx9J+mwwgDXCSYjAuCFjwG
        98lreaGqQ6unltlzmTUU8nikRiOJQCALrCwog0yxZRMILiFqSebi5QWq4coMy6qZSoPKqYdmozgVzFqKCTAZIgZCheYcfGtOOUl5
        udLT7sExrklzVUp5BqwmCS8IpyjOncyFFWZYyVTNUMrCjbP768FWSU4tCfTelDLXD5oLNA6Q9twsMLQrLcfNOYI1daGMpDAc4z36
        IkZcgq8h3CHMreFIba7JC22Yisq3GVUmtxn/PwOgkonFw9xoSQbnrJc5QVU2cgfhpLfj9nhrvSoac9qcFzTgSQd21WUSQK7ivGwr
        BEShla5DZIYbISQ7b66eMwa4WgI+KCeQML2uJUBKRkvwk4isVEWIBnciaANJiq0Ytp8BB6lPIsepqECFyQ9OFdim5pVqApsyJ51i
        KNOlDac336SbdB3KI6YYOvQiICocu6M6M+Jk3HoDIh7JSZp18k2i4yWQmsBpjS5z1VRhUwwneeLZ1teaTtcQ3aJEkiZWKRspTI5U
        qSp1CKF6kmZ1lLMaK57uC40yZ6Ehma5Dh7jaNApFzaYAcNT0WF/iiglTPEgeUK6EZ+k12vmuhkrGlBpCDVewmkZlUuHlgLlf4UVh
        gTBC04wEcZbfZMOECMOiWWlUHZQcnoiZR++3DrlxDcXdtrWfdOS0DV0wC2ywGhZ5oCTTlVGZlEXO+MIDUlwWeUqIm1E0O+D+yrFI
        5srTS/ixM7C0VHWY3Lh7kjiD0CkkCNPwI0IJjdKPBjcPTTOV5iENq1NcY7SXO5wCY3FgoFExBWsViorVGtQqIjbELNnAnzFMgpQE
        buEdeb6coiLoJDxqZorlryVGy129hyDu3dYjJOiJCeFRPAemlZeyyfrAJ2v8tMpQSZ7mcrl1o+Ou2UMpk9QYzKnbjpVMGnqcljWq
        MZF1Fx1w3MoeWFtgDlk7OzGaVeEsWRby3GfDXGO1YxO7eFF7u3PexcErrcBoPi6hxM9A/bRh62sZc8IWd+Y8nzSSYQeqImt1wxg/
        C3AT8CpXpo6c+d6lQaH+pRS4prpNzox9OavNoByaPKRWLv28brPo6IVmWizx4IZmw/gAalFWA6JgOhLK5jNP1ENHEnJ2yGvOuIBg
        W1IsrxFteBUnmhxKGJXMuRHDErpRedwIPfLYaJ5zuj/CWWgOrNRRf0ZgkqCpwhraPCvkH2xsalGiKitFg8QGPUVYn/iZOsx6U2tV
        mRBecSIj6uzUo6npyZIvKjbA0DD8yrYijaqzqMZsVXpvkRruQMPt1kh8zHmFscMUO3x++/T7P2hTZk4mKgAA
        """)

    /// zlib.compress(document, 9)
    static let jsonZlib = base64("""
        eNq1Wttu4zgMfZ+vMPLcCJbl6/zGztMs5sHbum12M02RegYLDObf1xHtmLRE2oqyQJFCtiOYh+ThIZVfn5Jk97M7fxxOb7vPiXm4
        rF+6t+7c9t3TcGWXpVm+T4t9qr/o7HOaDn9fd/axQ999/xge+XNYJMkv+3m5fPla+jAt39rv3WWf11PfHfePr+35eOh219vv58Pj
        5b4pc5Vfr/bty7yzvdI9vp6u3xrWT92xb/GFl9PxeTcuv103Orz90Z8e/xn2em6PH931+lP38Xg+vPdg9vDY06FN7J6JfdHk+fRv
        fz71yWXbBG7//WN48358yr6P3e33g8d+7dhv99iP27r2Z2WqdCkA4Bhs3xNfmLAVQOjPP1gM2uP7a0vtBij+Orc/T8m4O31gWkz/
        4SV5WDIHlvGbe+s+F5W0UlUtoAI+iQoMCRPwNSBz8fgYCZMXeUONYyi8KWOnGezMjGDnMm58htp3uzkFJv+CyZNDIQLGyJ8esUhY
        /4831vHIWcfTML4ikptUVVI+LJlEAulG79PAhyiYVgDMWrwXrNnUe7PZWpVRNAhw3mgwRLf1rP2AWAAYrNPnjwmHMQLm5BDQKB00
        7NZcCGg9UGIWQokkueIZccluEAGjxQgrAMh+CtZXjvX2/fd2Vw/1FY0yRYj18AL3M39y8fSfpsMIA1wkmIwLghY8BvfJa3mhqkOr
        p5bZc5k1FPJ4pEYjiUAgC6wsKINMsWUTCC4haknm4uUFquHKDMuqmUqDyqmHZqM4FcxaigkwGSIGQoXmHHxrTjlJebnS0+7BMa5J
        c1VKeQasJgkvCKcozp3MhRVmWMlUzVDKwo2z++vBVklOLQn03pQy1w+aCzQOkPbcLDC0Ky3HzTmCNXWhjKQwHOM9+iJGXIKvIdwh
        zK3hSG2uyQttmIrKtxlVJrcZ/z8DoJKJxcPcaEkG56yXOUFVNnIH4aS34/Z4a70qGnPanBc04EkHdtVlEkCu4rxsKwREoZWuQ2SG
        GyEkO2+unjMGuFoCPignkDC9riVASkZL8JOIrFRFiAZ3ImgDSYqtGLafAQepTyLHqahAhckPThXYpuaVagKbMiedYijTpQ2nN9+k
        m3QdyiOmGDr0IiAqHLujOjPiZNx6AyIeyUmadfJNouMlkJrAaY0uc9VUYVMMJ3ni2dbXmk7XEN2iRJImVikbKUyOVKkqdQihepJm
        dZSzGiue7guNMmehIZmuQ4e42jQKRc2mAHDU9Fhf4ooJUzxIHlCuhGfpNdr5roZKxpQaQg1XsJpGZVLh5YC5X+FFYYEwQtOMBHGW
        32TDhAjDollpVB2UHJ6ImUfvtw65cQ3F3ba1n3TktA1dMAtssBoWeaAk05VRmZRFzvjCA1JcFnlKiJtRNDvg/sqxSObK00v4sTOw
        tFR1mNy4e5I4g9ApJAjT8CNCCY3SjwY3D00zleYhDatTXGO0lzucAmNxYKBRMQVrFYqK1RrUKiI2xCzZwJ8xTIKUBG7hHXm+nKIi
        6CQ8amaK5a8lRstdvYcg7t3WIyToiQnhUTwHppWXssn6wCdr/LTKUEme5nK5daPjrtlDKZPUGMyp246VTBp6nJY1qjGRdRcdcNzK
        HlhbYA5ZOzsxmlXhLFkW8txnw1xjtWMTu3hRe7tz3sXBK63AaD4uocTPQP20YetrGXPCFnfmPJ80kmEHqiJrdcMYPwtwE/AqV6aO
        nPnepUGh/qUUuKa6Tc6MfTmrzaAcmjykVi79vG6z6OiFZlos8eCGZsP4AGpRVgOiYDoSyuYzT9RDRxJydshrzriAYFtSLK8RbXgV
        J5ocShiVzLkRwxK6UXncCD3y2Giec7o/wlloDqzUUX9GYJKgqcIa2jwr5B9sbGpRoiorRYPEBj1FWJ/4mTrMelNrVZkQXnEiI+rs
        1KOp6cmSLyo2wNAw/Mq2Io2qs6jGbFV6b5Ea7kDD7dZIfMx5hbHDFDt8fvv0+z81QPw7
        """)

    /// Raw deflate (wbits -15), level 9.
    static let jsonRaw = base64("""
        tVrbbuM4DH2frzDy3AiW5ev8xs7TLObB27ptdjNNkXoGCwzm39cR7Zi0RNqKskCRQrYjmIfk4SGVX5+SZPezO38cTm+7z4l5uKxf
        urfu3Pbd03Bll6VZvk+Lfaq/6Oxzmg5/X3f2sUPfff8YHvlzWCTJL/t5uXz5WvowLd/a791ln9dT3x33j6/t+Xjodtfb7+fD4+W+
        KXOVX6/27cu8s73SPb6ert8a1k/dsW/xhZfT8Xk3Lr9dNzq8/dGfHv8Z9npujx/d9fpT9/F4Prz3YPbw2NOhTeyeiX3R5Pn0b38+
        9cll2wRu//1jePN+fMq+j93t94PHfu3Yb/fYj9u69mdlqnQpAOAYbN8TX5iwFUDozz9YDNrj+2tL7QYo/jq3P0/JuDt9YFpM/+El
        eVgyB5bxm3vrPheVtFJVLaACPokKDAkT8DUgc/H4GAmTF3lDjWMovCljpxnszIxg5zJufIbad7s5BSb/gsmTQyECxsifHrFIWP+P
        N9bxyFnH0zC+IpKbVFVSPiyZRALpRu/TwIcomFYAzFq8F6zZ1Huz2VqVUTQIcN5oMES39az9gFgAGKzT548JhzEC5uQQ0CgdNOzW
        XAhoPVBiFkKJJLniGXHJbhABo8UIKwDIfgrWV4719v33dlcP9RWNMkWI9fAC9zN/cvH0n6bDCANcJJiMC4IWPAb3yWt5oapDq6eW
        2XOZNRTyeKRGI4lAIAusLCiDTLFlEwguIWpJ5uLlBarhygzLqplKg8qph2ajOBXMWooJMBkiBkKF5hx8a045SXm50tPuwTGuSXNV
        SnkGrCYJLwinKM6dzIUVZljJVM1QysKNs/vrwVZJTi0J9N6UMtcPmgs0DpD23CwwtCstx805gjV1oYykMBzjPfoiRlyCryHcIcyt
        4UhtrskLbZiKyrcZVSa3Gf8/A6CSicXD3GhJBueslzlBVTZyB+Gkt+P2eGu9Khpz2pwXNOBJB3bVZRJAruK8bCsERKGVrkNkhhsh
        JDtvrp4zBrhaAj4oJ5Awva4lQEpGS/CTiKxURYgGdyJoA0mKrRi2nwEHqU8ix6moQIXJD04V2KbmlWoCmzInnWIo06UNpzffpJt0
        Hcojphg69CIgKhy7ozoz4mTcegMiHslJmnXyTaLjJZCawGmNLnPVVGFTDCd54tnW15pO1xDdokSSJlYpGylMjlSpKnUIoXqSZnWU
        sxornu4LjTJnoSGZrkOHuNo0CkXNpgBw1PRYX+KKCVM8SB5QroRn6TXa+a6GSsaUGkINV7CaRmVS4eWAuV/hRWGBMELTjARxlt9k
        w4QIw6JZaVQdlByeiJlH77cOuXENxd22tZ905LQNXTALbLAaFnmgJNOVUZmURc74wgNSXBZ5SoibUTQ74P7KsUjmytNL+LEzsLRU
        dZjcuHuSOIPQKSQI0/AjQgmN0o8GNw9NM5XmIQ2rU1xjtJc7nAJjcWCgUTEFaxWKitUa1CoiNsQs2cCfMUyClARu4R15vpyiIugk
        PGpmiuWvJUbLXb2HIO7d1iMk6IkJ4VE8B6aVl7LJ+sAna/y0ylBJnuZyuXWj467ZQymT1BjMqduOlUwaepyWNaoxkXUXHXDcyh5Y
        W2AOWTs7MZpV4SxZFvLcZ8NcY7VjE7t4UXu7c97FwSutwGg+LqHEz0D9tGHraxlzwhZ35jyfNJJhB6oia3XDGD8LcBPwKlemjpz5
        3qVBof6lFLimuk3OjH05q82gHJo8pFYu/bxus+johWZaLPHghmbD+ABqUVYDomA6EsrmM0/UQ0cScnbIa864gGBbUiyvEW14FSea
        HEoYlcy5EcMSulF53Ag98thonnO6P8JZaA6s1FF/RmCSoKnCGto8K+QfbGxqUaIqK0WDxAY9RVif+Jk6zHpTa1WZEF5xIiPq7NSj
        qenJki8qNsDQMPzKtiKNqrOoxmxVem+RGu5Aw+3WSHzMeYWxwxQ7fH779Ps/
        """)

    /// GzipFile(filename="data.json"): FNAME set.
    static let fileNameGzip = base64("""
        H4sICAAAAAAC/2RhdGEuanNvbgCrVspIzcnJV7JSUMpLzE1NUUjLzElVquUCANbh34wYAAAA
        """)

    /// Hand-built header with FEXTRA, FNAME, FCOMMENT and FHCRC.
    static let allFlagsGzip = base64("""
        H4sIHgDxU2UCAwYAQUICAHh5bmFtZS50eHQAYSBjb21tZW50AAz+S8zJUSjJSFXISE1MSS1SSMtMzUkp5gIAUcNFTBYAAAA=
        """)

    /// gzip("first member\n") + gzip("second member\n").
    static let twoMembers = base64("""
        H4sIAAAAAAACA0vLLCouUchNzU1KLeICAKf0hQoNAAAAH4sIAAAAAAACAytOTc7PS1HITc1NSi3iAgA2GEsODgAAAA==
        """)

    /// gzip.compress(b"").
    static let emptyGzip = base64("""
        H4sIAAAAAAACAwMAAAAAAAAAAAA=
        """)

    /// Level 0 with full flushes every 1000 bytes: several stored blocks, some empty.
    static let stored = base64("""
        AOgDF/xsaW5lIDAKbGluZSAxCmxpbmUgMgpsaW5lIDMKbGluZSA0CmxpbmUgNQpsaW5lIDYKbGluZSA3CmxpbmUgOApsaW5lIDkK
        bGluZSAxMApsaW5lIDExCmxpbmUgMTIKbGluZSAxMwpsaW5lIDE0CmxpbmUgMTUKbGluZSAxNgpsaW5lIDE3CmxpbmUgMTgKbGlu
        ZSAxOQpsaW5lIDIwCmxpbmUgMjEKbGluZSAyMgpsaW5lIDIzCmxpbmUgMjQKbGluZSAyNQpsaW5lIDI2CmxpbmUgMjcKbGluZSAy
        OApsaW5lIDI5CmxpbmUgMzAKbGluZSAzMQpsaW5lIDMyCmxpbmUgMzMKbGluZSAzNApsaW5lIDM1CmxpbmUgMzYKbGluZSAzNwps
        aW5lIDM4CmxpbmUgMzkKbGluZSA0MApsaW5lIDQxCmxpbmUgNDIKbGluZSA0MwpsaW5lIDQ0CmxpbmUgNDUKbGluZSA0NgpsaW5l
        IDQ3CmxpbmUgNDgKbGluZSA0OQpsaW5lIDUwCmxpbmUgNTEKbGluZSA1MgpsaW5lIDUzCmxpbmUgNTQKbGluZSA1NQpsaW5lIDU2
        CmxpbmUgNTcKbGluZSA1OApsaW5lIDU5CmxpbmUgNjAKbGluZSA2MQpsaW5lIDYyCmxpbmUgNjMKbGluZSA2NApsaW5lIDY1Cmxp
        bmUgNjYKbGluZSA2NwpsaW5lIDY4CmxpbmUgNjkKbGluZSA3MApsaW5lIDcxCmxpbmUgNzIKbGluZSA3MwpsaW5lIDc0CmxpbmUg
        NzUKbGluZSA3NgpsaW5lIDc3CmxpbmUgNzgKbGluZSA3OQpsaW5lIDgwCmxpbmUgODEKbGluZSA4MgpsaW5lIDgzCmxpbmUgODQK
        bGluZSA4NQpsaW5lIDg2CmxpbmUgODcKbGluZSA4OApsaW5lIDg5CmxpbmUgOTAKbGluZSA5MQpsaW5lIDkyCmxpbmUgOTMKbGlu
        ZSA5NApsaW5lIDk1CmxpbmUgOTYKbGluZSA5NwpsaW5lIDk4CmxpbmUgOTkKbGluZSAxMDAKbGluZSAxMDEKbGluZSAxMDIKbGlu
        ZSAxMDMKbGluZSAxMDQKbGluZSAxMDUKbGluZSAxMDYKbGluZSAxMDcKbGluZSAxMDgKbGluZSAxMDkKbGluZSAxMTAKbGluZSAx
        MTEKbGluZSAxMTIKbGluZSAxMTMKbGluZSAxMTQKbGluZSAxMTUKbGluZSAxMTYKbGluZSAxMTcKbGluZSAxMTgKbGluZSAxMTkK
        bGluZSAxMjAKbGluZSAxMjEKbGluZSAxMjIKbGluAAAA//8A6AMX/GUgMTIzCmxpbmUgMTI0CmxpbmUgMTI1CmxpbmUgMTI2Cmxp
        bmUgMTI3CmxpbmUgMTI4CmxpbmUgMTI5CmxpbmUgMTMwCmxpbmUgMTMxCmxpbmUgMTMyCmxpbmUgMTMzCmxpbmUgMTM0CmxpbmUg
        MTM1CmxpbmUgMTM2CmxpbmUgMTM3CmxpbmUgMTM4CmxpbmUgMTM5CmxpbmUgMTQwCmxpbmUgMTQxCmxpbmUgMTQyCmxpbmUgMTQz
        CmxpbmUgMTQ0CmxpbmUgMTQ1CmxpbmUgMTQ2CmxpbmUgMTQ3CmxpbmUgMTQ4CmxpbmUgMTQ5CmxpbmUgMTUwCmxpbmUgMTUxCmxp
        bmUgMTUyCmxpbmUgMTUzCmxpbmUgMTU0CmxpbmUgMTU1CmxpbmUgMTU2CmxpbmUgMTU3CmxpbmUgMTU4CmxpbmUgMTU5CmxpbmUg
        MTYwCmxpbmUgMTYxCmxpbmUgMTYyCmxpbmUgMTYzCmxpbmUgMTY0CmxpbmUgMTY1CmxpbmUgMTY2CmxpbmUgMTY3CmxpbmUgMTY4
        CmxpbmUgMTY5CmxpbmUgMTcwCmxpbmUgMTcxCmxpbmUgMTcyCmxpbmUgMTczCmxpbmUgMTc0CmxpbmUgMTc1CmxpbmUgMTc2Cmxp
        bmUgMTc3CmxpbmUgMTc4CmxpbmUgMTc5CmxpbmUgMTgwCmxpbmUgMTgxCmxpbmUgMTgyCmxpbmUgMTgzCmxpbmUgMTg0CmxpbmUg
        MTg1CmxpbmUgMTg2CmxpbmUgMTg3CmxpbmUgMTg4CmxpbmUgMTg5CmxpbmUgMTkwCmxpbmUgMTkxCmxpbmUgMTkyCmxpbmUgMTkz
        CmxpbmUgMTk0CmxpbmUgMTk1CmxpbmUgMTk2CmxpbmUgMTk3CmxpbmUgMTk4CmxpbmUgMTk5CmxpbmUgMjAwCmxpbmUgMjAxCmxp
        bmUgMjAyCmxpbmUgMjAzCmxpbmUgMjA0CmxpbmUgMjA1CmxpbmUgMjA2CmxpbmUgMjA3CmxpbmUgMjA4CmxpbmUgMjA5CmxpbmUg
        MjEwCmxpbmUgMjExCmxpbmUgMjEyCmxpbmUgMjEzCmxpbmUgMjE0CmxpbmUgMjE1CmxpbmUgMjE2CmxpbmUgMjE3CmxpbmUgMjE4
        CmxpbmUgMjE5CmxpbmUgMjIwCmxpbmUgMjIxCmxpbmUgMjIyCmxpbmUgMjIzCmxpbmUgMjI0CmxpbmUgMjI1CmxpbmUgMjI2Cmxp
        bmUgMjI3CmxpbmUgMjI4CmxpbmUgMjI5CmxpbmUgMjMwCmxpbmUgMjMxCmxpbmUgMjMyCmxpbmUgMjMzCmxpbmUAAAD//wDoAxf8
        IDIzNApsaW5lIDIzNQpsaW5lIDIzNgpsaW5lIDIzNwpsaW5lIDIzOApsaW5lIDIzOQpsaW5lIDI0MApsaW5lIDI0MQpsaW5lIDI0
        MgpsaW5lIDI0MwpsaW5lIDI0NApsaW5lIDI0NQpsaW5lIDI0NgpsaW5lIDI0NwpsaW5lIDI0OApsaW5lIDI0OQpsaW5lIDI1MAps
        aW5lIDI1MQpsaW5lIDI1MgpsaW5lIDI1MwpsaW5lIDI1NApsaW5lIDI1NQpsaW5lIDI1NgpsaW5lIDI1NwpsaW5lIDI1OApsaW5l
        IDI1OQpsaW5lIDI2MApsaW5lIDI2MQpsaW5lIDI2MgpsaW5lIDI2MwpsaW5lIDI2NApsaW5lIDI2NQpsaW5lIDI2NgpsaW5lIDI2
        NwpsaW5lIDI2OApsaW5lIDI2OQpsaW5lIDI3MApsaW5lIDI3MQpsaW5lIDI3MgpsaW5lIDI3MwpsaW5lIDI3NApsaW5lIDI3NQps
        aW5lIDI3NgpsaW5lIDI3NwpsaW5lIDI3OApsaW5lIDI3OQpsaW5lIDI4MApsaW5lIDI4MQpsaW5lIDI4MgpsaW5lIDI4MwpsaW5l
        IDI4NApsaW5lIDI4NQpsaW5lIDI4NgpsaW5lIDI4NwpsaW5lIDI4OApsaW5lIDI4OQpsaW5lIDI5MApsaW5lIDI5MQpsaW5lIDI5
        MgpsaW5lIDI5MwpsaW5lIDI5NApsaW5lIDI5NQpsaW5lIDI5NgpsaW5lIDI5NwpsaW5lIDI5OApsaW5lIDI5OQpsaW5lIDMwMAps
        aW5lIDMwMQpsaW5lIDMwMgpsaW5lIDMwMwpsaW5lIDMwNApsaW5lIDMwNQpsaW5lIDMwNgpsaW5lIDMwNwpsaW5lIDMwOApsaW5l
        IDMwOQpsaW5lIDMxMApsaW5lIDMxMQpsaW5lIDMxMgpsaW5lIDMxMwpsaW5lIDMxNApsaW5lIDMxNQpsaW5lIDMxNgpsaW5lIDMx
        NwpsaW5lIDMxOApsaW5lIDMxOQpsaW5lIDMyMApsaW5lIDMyMQpsaW5lIDMyMgpsaW5lIDMyMwpsaW5lIDMyNApsaW5lIDMyNQps
        aW5lIDMyNgpsaW5lIDMyNwpsaW5lIDMyOApsaW5lIDMyOQpsaW5lIDMzMApsaW5lIDMzMQpsaW5lIDMzMgpsaW5lIDMzMwpsaW5l
        IDMzNApsaW5lIDMzNQpsaW5lIDMzNgpsaW5lIDMzNwpsaW5lIDMzOApsaW5lIDMzOQpsaW5lIDM0MApsaW5lIDM0MQpsaW5lIDM0
        MgpsaW5lIDM0MwpsaW5lIDM0NApsaW5lIAAAAP//AOoBFf4zNDUKbGluZSAzNDYKbGluZSAzNDcKbGluZSAzNDgKbGluZSAzNDkK
        bGluZSAzNTAKbGluZSAzNTEKbGluZSAzNTIKbGluZSAzNTMKbGluZSAzNTQKbGluZSAzNTUKbGluZSAzNTYKbGluZSAzNTcKbGlu
        ZSAzNTgKbGluZSAzNTkKbGluZSAzNjAKbGluZSAzNjEKbGluZSAzNjIKbGluZSAzNjMKbGluZSAzNjQKbGluZSAzNjUKbGluZSAz
        NjYKbGluZSAzNjcKbGluZSAzNjgKbGluZSAzNjkKbGluZSAzNzAKbGluZSAzNzEKbGluZSAzNzIKbGluZSAzNzMKbGluZSAzNzQK
        bGluZSAzNzUKbGluZSAzNzYKbGluZSAzNzcKbGluZSAzNzgKbGluZSAzNzkKbGluZSAzODAKbGluZSAzODEKbGluZSAzODIKbGlu
        ZSAzODMKbGluZSAzODQKbGluZSAzODUKbGluZSAzODYKbGluZSAzODcKbGluZSAzODgKbGluZSAzODkKbGluZSAzOTAKbGluZSAz
        OTEKbGluZSAzOTIKbGluZSAzOTMKbGluZSAzOTQKbGluZSAzOTUKbGluZSAzOTYKbGluZSAzOTcKbGluZSAzOTgKbGluZSAzOTkK
        AAAA//8BAAD//w==
        """)

    /// A short input, which zlib writes as one fixed-Huffman block.
    static let fixed = base64("""
        y0jNyclXyEAndRTSMitSUxQyStPSchPzuAA=
        """)

    static let repetitiveCRC: UInt32 = 0xE66C865A

    /// 200 000 bytes: (1000 random bytes + 31 000 zeros) repeated.
    static let repetitiveGzip = base64("""
        H4sIAAAAAAACA+3d+XcIhgEA4Ojqteko4swoIdQZdSS00ZaIqjY0WYVo4owjlHhMHbHuFUFCp0sPraDUo1UbTUadc61CiFtHUWpZ
        luC5EoZU0P0yv+8P+L5/5BtTf2xKeKW0YQ+bPt8x6Yd3sl96sDdsxns3I6+3z+4a8EaDJuV9M777qVKrOjnjY7qV7Vuxbfbm6snr
        +xVlnD/TNudI+74bErOL5hXN+qVOk6kvlP6jw9blf2kU9YeChOodkxeUjm2UX7QlelvF0jZnV3y6oVla56m7LxW8knq5ZEHtowc+
        CN0xJPJK+omo3knD/7Z7/rnKW3O+OZw4rlPsoopnz+eFThl47zdr9lf6Puz5SZ+dmZPQ+MODgdv7d418qXZw0sibLRKmbe5b9lZG
        +dLR6/qWRO87Fj69zoSyoGkzOzyMy+oVlPJz+JWnDg+426NT6ckPHg6+Velg77Pjll5sGT713JGBQZPjH4TcLLx+fP7+zG+Sc2vV
        i4uZkvXRvtllPaeURAza2CH1y8eWjJo3aUrPgsB7Z1qGVr2xe25SlT7VGjfv0K1zZPMTt/qEb76S/23NzbfKW7WM/nbgrry7Gws+
        jKg1sXuv1EWD93539eyCZRUx56aFFTdaVZbz9vEZt0cGrjlzqlpYlUvvBnZIqt9g20t3Kze4dqJ1eKueaRf/XiPnubyTxzsFvzJ2
        8OV9tSLHFdyon3BpXOjmgyvS+1WuU/fswqa5M2Njm8VXXTbknUmVorsuGJZUIyU+9nRek7x1D+Y83LonJTw6pWP6xBEly+/NPZB7
        p/fPLXLbPl1tyq2V2z8P6XR7zaiJ5+aVRs2oWPn+tHsTUkLKu3yfXj1zT0LmgJA77T9OTEy7X7r/d1f+2jTz32ljute+OrnG608v
        S53dOLawxo6H01udL15bsjn4dHp2zs7R+QnFr+0qeDH92TbNv14y8fH/lHaPmzs6Iv1Uo8EhG+qNqjuiYa9q+U2/KM2L+fKZT9oc
        a7rtQVDY9LDQ+ddGP3ixW7NfAj+5WvVKaMSRi8MLoyYt+VO9O7m//bQoem9w5/z3eqS9emhoj8Iu99YuOd3ufllUbG6lhgUNPv/x
        YOqcE1nzFw08+P7i5/rmfLXujWcyg7YcjJuxa9Xq1zZ8cfaxZjdvLDwd2eRkq8XhVSqHJvfPLhraeU/yzKG3p7UeFTkrov/qr+ae
        6Lb07tGKHV1HTbhzKHlkWMDbfy7uc6z4zfLBH/c7lNnizJa64wtGtE0b0bowY83ywCeDe1/dv/LdIf/auHPLy8tTf3wYHzjqfFb8
        3gY9vp4494kbkUdCt8Z2TJx9NnjCrNX7Q396oeYP3Vef2RG7JT8sI/apt4Lq1//j4QuXfxWcW2/SzC3rLw6KO516p3P76gv33P2o
        zdH+Rc03ddu0bO2gKW021cy91vXWinbJ2QMuxBRXtJiwalPy7uW/zrg9OSK9Vvn9q4X319eaEH/08NhXn9x+J7TLwEvtmn0WFRh/
        qkbC74/MqBzweEzIipcvJWbF5syLL77wRFbQm5N35R/Y2TB0+j9zZmUGT1oYkjA88PrixsOKH9zfFdWvJG58u+Y5hfV6TH09AAAA
        AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA4P80xn/uP/ef+88BAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAD+x3/uP/ef
        +88BAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAe8Z/7z/3n/nMAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAIBH/Of+
        c/+5/xwAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAOAR/7n/3H/uPwcAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAHjE
        f+4/95/7zwEAAAAAAICAgP8CWoZs5kANAwA=
        """)

    static let randomCRC: UInt32 = 0x9218C430

    /// 3000 random bytes.
    static let randomGzip = base64("""
        H4sIAAAAAAACAwG4C0f0OLTmUuRNp/I3DZ4mDicTZVCko6bQf1wMMy+LEiQIP9IrkC+JEegYGPjJnV1dmDGVdQTZDpRd4uj1TueB
        zHX2NthQmQlaowAWWmcDb5tUDWuPC+IRJBecPdn3OBfObhGNJkqtbLbdIQ+vlKzTz5LBkCN8sR9dEIzyWTAmOTizcKG1dp+g8Ug/
        lakNnfLxMNYPzwS9k/UK5pUU2oxlnOKxDMza6/mQ0Zg4sNfsCz6XgY7LlsTbrb4XIpbVI0pCskxrpObtJOxjaorAoSceWGYnkjiq
        +E5YBW2PL6jt0JS6l66LFUQu4tthGpG/45RpczqSR9WPo8VQGDADclVf0jXxGCn7OIwi5Ey2N/ASEMNwepC0BUIPsWl3nt+1uTQk
        BRV/VLEurmLRHoh+sHZtGHf4xu/ya1AQrzF30WHnlYenZuww5AN0WKmQXK2HvUx34pg/J3Rcy5oxBS6UTPGyIOqix/sbfT4/c/QU
        r24Nk1Ug3UwhR3OGBvK/fscCCeDNBe5XIO28ujrM5nIISrZJ/Lzkmzi97PrOSr0SEI85HrwHDoPoGApr1PQ6Kv/808Eu+JBXVXXo
        JuLL6u6Cryx9aWz0a5d8CQr04Ub20DEQq4bv3hOe6rrDeg3ejvLTsZJeEwLKV1Af4Mqaf9HMwVFQQkISV4/g/rF7SqVZzZ8omEsU
        Jn8bA3SU3RwBzGrfyXTRcpoR/iAI1zfo9RfWntbxgb0aRSmCXnlFWXGyGuEFqrLWoxALCIgPD0Ituzb7lLPLbUJPgTyqpbNI9JML
        iTv+M49lrqWpadJwgxVyr0DbSFLrdLdPOsNiiBIV4x7TLKs9VtVYB6/GBTVYzvCSqTF2KbL/WuY3BSs4OWWceP35HQqqYn4AoxcP
        +3bcN8HqqsSZI5VJz3AcIeZhBb2Dr2M/UJ/cZZxHFWTSd7TqsIIV3zwQG3/n+aAUGvuWKgLy/XJ2KNJmERiojB93IEdZcSXifpcN
        I9lSvNGwqjZuCRYu3V8w24xNmkZHOmrWtE3fUGpKG4n8QG3YWyTwxq4FdlriyZlkYV3fLfX/hxI7vcCiJip8PhXwmhwtvX27JnaG
        YTuJjJSo6um7O56QFgN/hCZ8LozC1F/M0JbPBa4uxVxDQ7ycLEhZRwwBTgxLJe8TQGsB9NqI7WaHXveqHJwRvfuQ9YiQUcA5/vMm
        NiAgLTHEsLKo9NsWP/eDeuBB8/SOGp7C4aun23IbrYGIYr1letINXZrmdI/LR+Y0g/jekRSsx7bQrvOTGODffys6rqNpQczIbiyP
        o/FyZCPk52UEeiNmrQzlZCxogRpcFEV7C81gooZog2Yoee8PfcnLMH2xPRENLRP8CoFxNTHszHCls4wp+UIkHJXBDVcJQ8mZXZh1
        DaCMNRrISQ8AFrsYkX9MuSaz11+JnJH5GUVO7vIvihVdoOIdnfo5hwadMwASNz/U3xxjPDUcoDOdSpFQYJ1nByaHqmii3vaTQHyN
        mfRxhe5YD/gumqjQOV2S/WF5q5ZyH8POhx0m7lPZJAfyfNr6O/6jm1L61xVLd2gs+3qLltx7vo3VT56J/BVa4uQks/coGlWh6r9+
        +7ZXZaiHvZobx0Oi94Z6u90v1PahKrFuClQpwn8uhPOZ6QV2+Ig0U8pz8w2lt/N44DuHNc+bXGu+hyXlRKiwC1kNi0N1BeqtQewG
        KqgVwiUuMocGm09Mqw5/+qI2lqSS3gLdondMF8fzObL2QG/YCHLYQhiotYSXCeBd1KGD6EZEwypv5w5bFrmdxSfyCDmk+VeIjCSk
        iiAkcMeLwLCAwuxkVL3b7aJCQhk5Uob8nGAzv8+xiNTJCx0k/AJrIcKK4UXaBxf1MZIqW86lgkg9l0R+0TZAk2ZnUWi9/camzWWZ
        Czox0y0zuPiDhGrzJn6OJQZb9RMjuzY+awcmqVb9XOImB4brRMo7+YdHjbnkeFJAWUIEt5IxJB5JsSlk6poILN70d8siWEmDfXIf
        Kv7OB5/g7+XpHrnsD/D8zx56Wd3revRK0Hn5BcdYXZslnhQAOHA4ifgmGnyREjp2KVd43VVbMq32dVYT0FE0tSqPe6HQwp8kRzn8
        dZt65s0jOpxryCbXNBB9ADnFvnpDR8HouZEppw7WEFjZc7XM/16kpOsKtBVNi6vVOSQcqQkBsh6JJ+foBxR3Y3AARchxZyS2kjQJ
        wKGYBjORWmB6vjmW43+Zsy2tthVvn8cEykWOxqL52B9VAz01FuHFAs1a5DfyMYi++HqBybj+q1Vlb7CRdk5JwWbmXEy+7Ulh8o9E
        vRXCZ4y5UcqqKB9chSuPnDz+NJaFIAlxDQf8z7Emhnk/lwljpOeebiF39Ol2zptS5qf5rWsl7xGQnNYwltP784qYllT1+q10b3kZ
        vEKo6t7975JOtFlv4OknHvx0jF9xXIx+KIghskB6BcFspQMrqaLMK0KM+Fxj87lFFFGm+URPGvkDzoYV/N6/CwkC74jvpSOJIg5v
        s4CO/HmLKt/0xN4xFel+0w1cuN/83gY20pgqBwo/eECNvHg20dz/StYlTIBM/ZM9oISAww2/IJYCCXRTMbtlQu6zWosGaERrtM2N
        1XsLjiFEcJcPveD26BqIa73wlpFa+u3P5c0JSnVR85epXlhWlRfsptBI/n/nNHBKhFtLrmsBbb/T0sTv6kyrz+C1EGyAfbN5IVau
        JYjbv94mGYcEhpk1s4KN18kEFzBw36wGrHCSG8nGnSjgLrc8ypsRuAEBVX2qxkZvlsyndFkmH+oeLHA1PSQ21TZ5N2t9ni5Eprld
        Yc4e3y91jsoxzw/lkHNTsEStrlSAsoS3rt2HQXAxjtFEhHuyFMbIKw7Ixpn8KRvKNxviX5Fvj5Tsiw75Up0/WHD5MJAJ5Ebhi80K
        WueyxZHVBRlSi/mBLM3Bc0B/zY/CNSIHB+mOwrn53eTu0JjptfA4EAq6eHFDaltTmKDOnDkjLvkG7muBwNYrm78DHYOjFgwzrdFW
        sbSh9UYD78xzj4UWguhkhYgVSa/Og5Zgep4G/IHONwbx3l5mP3vx/7JbEfGFFKFk4FwBQOAtvzLxHumE7eujdEIFljvs40s8j2KW
        i+TS8nnxf9fcM9E5Cte9NZFyFD4bI+C5qGrQnSIf5P1xZLOmLnFUDeRQhWGSEvvX0Kt5gJo9h5qnbe0KuBKu1nI2zYZiq6z+gk3u
        B7DIZVJSHz6Go+XyDeXGWdCJJ4Vgg/DuoVO3xKm5pC+SBqkjML5dhEWaJNCsy0AiVQHiHh4jI98Dsfcfib13Zeg2OKCOJr+CT9fz
        9JoYGIYp9GUE9oriWh+9fKXxrCk7N2j98xn3qhUYG9VrM0U58NZVKcGe0bSkNnhu5Ip7/nux/oNnE2BnzVDQVnbG2GuWUhwydRtL
        W1LkilEeB5oXgeDeuG0Qr11V1fwEJNaFVrk81o2Jcmt1odzBcIW6AbRHBaEEumdkYqUL3VSMi3aEUK+5n2Hhokv1niOD7VT19Zdc
        dRAMvOMcWWou/KH4JetQKdLJWYGCOvsQwfgTPlvg8dXSGgMKhRUnBfxDXJScRYVzIgr2+ejnP2Bsx+kmei6R9DtFYpJ6wZuNKiFT
        7NzRgtkYbHuWftlpalLptpsMrTebqNGCKC3yVDM0Qmoy7Gde+jwma4teiePSTusoy8iDTIISkh3lnn7Ojk6zd3O5U8P+5haHoHBH
        qA66Dh3FscyNPS6weaLvLsKT4WxgaTHl+rqJElMq2ETGrzfwdBVPBK6gaqKRQawWDog3zVWHs0JrJnAV4YOxm9LMMdvruu84tiwO
        EWYPs0ME0t7cqkImH2OAKnRCs/QCjKbSVqHUiv4xnJWNSFfyaqgyOu2aZ1nq0nSSRCz1J59o4BQhO4cPCybn44bPMqS1CycKPTEF
        KfDGAgUc3VQe+Fy6VCntkQtDaa/lDAyVXy5oFaczZLun7uy73k/alvCgcdUUTt099YdCem7CYP+zNJnfOkr/iBhydM4FgJN+EqzA
        2IotJvRARRsP1VhH573NMMQYkrgLAAA=
        """)

    /// gzip.compress(zlib.compress(payload)): Content-Encoding "deflate, gzip".
    static let stacked = base64("""
        H4sIAAAAAAACA6uY4+3pe9pTxzPU47SOlt7FQI2THmeDPdaf0nnAxFAZzvEXAP4jRHIhAAAA
        """)

    /// Fixed block: literal "a", then length 3 at distance 1.
    static let fixedOverlap = Data([0x4B, 0x04, 0x02, 0x00])

    /// As above but distance 2, before the start of the output.
    static let distanceTooFar = Data([0x4B, 0x04, 0x42, 0x00])

    /// Dynamic block: 19 one-bit code length codes.
    static let oversubscribedCodeLengths = Data([
        0x05, 0xE0, 0x93, 0x24, 0x49, 0x92, 0x24, 0x49, 0x92, 0x00, 0x00, 0x00,
    ])

    /// Dynamic block starting with "repeat previous".
    static let repeatWithNothingBefore = Data([0x05, 0x80, 0xB6, 0x6D, 0xDB, 0x0A, 0x00, 0x00])

    /// Dynamic block where symbol 256 (end of block) has no code.
    static let missingEndOfBlock = Data([
        0x05, 0x80, 0xB6, 0x6D, 0xDB, 0xDC, 0x7B, 0xEF, 0xBD, 0xF7, 0xDE, 0x7B,
        0xEF, 0xBD, 0xF7, 0xDE, 0x7B, 0xEF, 0xBD, 0xF7, 0xDE, 0x7B, 0xEF, 0xBD,
        0xF7, 0xDE, 0x7B, 0xEF, 0xBD, 0xF7, 0xDE, 0x7B, 0x01, 0x00, 0x00, 0x00,
    ])
}
