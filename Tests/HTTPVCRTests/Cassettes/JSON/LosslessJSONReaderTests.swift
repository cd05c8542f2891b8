import Foundation
@testable import HTTPVCR
import Testing

/// The one reader of JSON: what it keeps, and what it says about text that is not JSON (every JSON cassette file's
/// "not valid JSON" message is this).
@Suite struct LosslessJSONReaderTests {
    @Test func keepsKeyOrderRepeatedKeysAndNumberText() throws {
        let value = try LosslessJSONReader.document(Data(#"{"b": 1.0, "a": [1e3, -0], "b": "again"}"#.utf8)).get()
        #expect(value == .object([
            ("b", .number("1.0")), ("a", .array([.number("1e3"), .number("-0")])), ("b", .string("again")),
        ]))
    }

    @Test func aByteOrderMarkAndWhitespaceAroundTheValueAreTaken() throws {
        let data = Data([0xEF, 0xBB, 0xBF]) + Data(" \n[true, null]\r\n".utf8)
        #expect(try LosslessJSONReader.document(data).get() == .array([.bool(true), .null]))
        #expect(LosslessJSONReader.value(of: data) == .array([.bool(true), .null]))
    }

    /// What is wrong, and the line and column (counted in bytes from 1) where it was found.
    @Test(arguments: [
        (#"{"a": 1"#, "Unexpected end of file at line 1, column 8"),
        ("{\n  \"a\": 1,\n}", "Unexpected character '}' at line 3, column 1"),
        (#"{"a": 1} x"#, "Unexpected bytes after the value at line 1, column 10"),
        (#"[1, 01]"#, "Invalid number at line 1, column 5"),
        (#"[tru]"#, "Unexpected character 't' at line 1, column 2"),
        ("[\"a\u{1}b\"]", "Unescaped control character in a string at line 1, column 4"),
        (#"["\x"]"#, "Invalid escape sequence in a string at line 1, column 3"),
        (#"["\ud800"]"#, "Invalid escape sequence in a string at line 1, column 3"),
        ("\u{0}garbage", "Unexpected byte 0x0 at line 1, column 1"),
        ("", "Unexpected end of file at line 1, column 1"),
    ])
    func saysWhatIsWrongAndWhere(text: String, expected: String) {
        #expect(LosslessJSONReader.document(Data(text.utf8)).failureReason == expected, "\(text)")
        #expect(LosslessJSONReader.value(of: Data(text.utf8)) == nil)
    }

    @Test func invalidUTF8IsNamedAtItsString() {
        let data = Data(#"["ok", "a"#.utf8) + Data([0xC3, 0x28]) + Data(#""]"#.utf8)
        #expect(LosslessJSONReader.document(data).failureReason == "Invalid UTF-8 in a string at line 1, column 8")
    }

    /// It recurses once per level: past the limit it stops, whatever the depth, rather than overflow the stack.
    @Test(arguments: [NestingLimit.maximumDepth, NestingLimit.maximumDepth + 1, 100_000])
    func nestingStopsAtTheLimit(depth: Int) {
        let text = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        let result = LosslessJSONReader.document(Data(text.utf8))
        if depth <= NestingLimit.maximumDepth {
            #expect(result.failureReason == nil)
        } else {
            #expect(result.failureReason == "Too many nested arrays or dictionaries (more than 512 levels) at line 1, "
                + "column \(NestingLimit.maximumDepth + 1)")
        }
    }
}

extension Result where Failure == DecodeFailure {
    var failureReason: String? {
        guard case let .failure(failure) = self else { return nil }
        return failure.reason
    }
}
