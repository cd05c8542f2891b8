import Foundation
import Testing
@testable import HTTPVCR
import HTTPVCRCassettes

/// The one form codec: what the query and body filters, the body matcher, volatile values and `vcr lint` read
/// names and values through.
@Suite struct FormCodingTests {
    private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    private func bodySegments(_ body: String) -> [FormCoding.Segment]? {
        var body = body
        return body.withUTF8 { FormCoding.bodySegments(of: $0) }
    }

    @Test func encodesAsEachSpellingWrites() {
        #expect(text(FormCoding.encode("a b&c=d+e/f@g", as: .body)) == "a+b%26c%3Dd%2Be%2Ff%40g")
        #expect(text(FormCoding.encode("a b&c=d+e/f@g", as: .query)) == "a%20b%26c%3Dd%2Be/f@g")
        #expect(text(FormCoding.encode("café#1", as: .query)) == "caf%C3%A9%231")
    }

    @Test func decodesPlusAsSpaceAndKeepsBrokenEscapes() {
        #expect(FormCoding.decode("full+name%3D%C3%A9") == "full name=é")
        #expect(FormCoding.decode("100%zz%2") == "100%zz%2")
        // Escapes that decode to bytes that are not UTF-8 leave the text as written.
        #expect(FormCoding.decode("a%FFb") == "a%FFb")
    }

    @Test func decodesPairsSkippingEmptySegments() {
        let pairs = FormCoding.decodePairs("a=1&&b&c=x=y&=v&d%20e=%F0%9F%98%80&bad=%FF&")
        #expect(pairs.map(\.name) == ["a", "b", "c", "", "d e", "bad"])
        #expect(pairs.map(\.value) == ["1", "", "x=y", "v", "😀", "%FF"])
        #expect(FormCoding.decodePairs("").isEmpty)
        // Lenient: a query or body with spaces still splits, as a server would split it.
        #expect(FormCoding.decodePairs("a b=c d").map(\.value) == ["c d"])
    }

    @Test func bodySegmentsKeepEveryByteInPlace() throws {
        let body = "a=1&&b&c=x=y&é=2&"
        let segments = try #require(bodySegments(body))
        let bytes = Array(body.utf8)
        #expect(segments.map { text(Array(bytes[$0.range])) } == ["a=1", "", "b", "c=x=y", "é=2", ""])
        #expect(segments.map { text(Array(bytes[$0.range])) }.joined(separator: "&") == body)
        #expect(segments.map { text(Array(bytes[$0.nameRange])) } == ["a", "", "b", "c", "é", ""])
        #expect(segments.map { $0.valueRange.map { text(Array(bytes[$0])) } } == ["1", nil, nil, "x=y", "2", nil])
        #expect(bodySegments("") == [])
    }

    @Test func bodySegmentsRefuseWhatCannotBeAForm() {
        #expect(bodySegments("a=1 b") == nil)
        #expect(bodySegments("a=1\nb=2") == nil)
        #expect(bodySegments("{\"a\":1}") == nil)
        #expect(bodySegments("[1]") == nil)
        var invalid: [UInt8] = Array("a=".utf8) + [0xC3, 0x28]
        #expect(invalid.withUnsafeBufferPointer { FormCoding.bodySegments(of: $0) } == nil)
        invalid = Array("a=".utf8) + [0x7F]
        #expect(invalid.withUnsafeBufferPointer { FormCoding.bodySegments(of: $0) } == nil)
    }
}
