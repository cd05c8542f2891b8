import Foundation
import Testing
@testable import HTTPVCR

/// Heads written as bytes, piece by piece: what the two ends of a bridge put on the wire.
@Suite struct HeadBytesTests {
    @Test func aFieldIsItsNameAColonItsValueAndCRLF() {
        var bytes: [UInt8] = []
        bytes.appendField("X-VCR-Bridge-Token", String(repeating: "ab", count: 32))
        #expect(String(decoding: bytes, as: UTF8.self) == "X-VCR-Bridge-Token: \(String(repeating: "ab", count: 32))\r\n")
    }

    @Test func aCROrLFInAValueGoesAsASpaceAndStartsNoOtherField() {
        var bytes: [UInt8] = []
        bytes.appendField("X-Note", "one\r\nSet-Cookie: evil=1\rtwo\nthree")
        #expect(String(decoding: bytes, as: UTF8.self) == "X-Note: one  Set-Cookie: evil=1 two three\r\n")
    }

    /// corelibs checks a field's value, not its name; a cassette edited by hand may hold any name.
    @Test func aCROrLFInANameGoesAsASpaceAndStartsNoOtherField() {
        var bytes: [UInt8] = []
        bytes.appendField("X-Note\r\nX-VCR-Bridge-Origin: http://elsewhere.test\rX", "kept")
        #expect(String(decoding: bytes, as: UTF8.self) == "X-Note  X-VCR-Bridge-Origin: http://elsewhere.test X: kept\r\n")
    }

    @Test func aValueBeyondASCIIIsCopiedAsItsUTF8() {
        var bytes: [UInt8] = []
        bytes.appendField("X-Name", "café ☕")
        #expect(bytes == Array("X-Name: café ☕\r\n".utf8))
    }

    @Test func numbersAreWrittenInDecimal() {
        var bytes: [UInt8] = []
        for number in [0, 7, 10, 512, 65_535] {
            bytes.appendDecimal(number)
            bytes.appendUTF8(" ")
        }
        #expect(String(decoding: bytes, as: UTF8.self) == "0 7 10 512 65535 ")
    }
}
