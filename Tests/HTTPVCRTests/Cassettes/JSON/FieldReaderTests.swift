import Foundation
@testable import HTTPVCR
import Testing

/// Every format's fields are read through `FieldReader`, from JSON (`LosslessJSONReader`) and property lists
/// (`JSONValue(propertyList:)`) alike; its messages name the field and what is wrong.
@Suite struct FieldReaderTests {
    static func fields(_ json: String, path: String = "scenes[0]") throws -> FieldReader {
        try FieldReader(LosslessJSONReader.document(Data(json.utf8)).get(), path: path)
    }

    static func failure(_ read: () throws(DecodeFailure) -> Void) -> String? {
        do throws(DecodeFailure) {
            try read()
            return nil
        } catch {
            return error.reason
        }
    }

    /// A whole number is one exactly and fits in an `Int`; what does not is named as the file wrote it, or as its
    /// value when it has a fraction or an exponent.
    @Test(arguments: [
        ("7", 7), ("-0", 0), ("1.0", 1), ("1E2", 100), ("true", 1), ("false", 0),
        ("9223372036854775807", Int.max), ("-9223372036854775808", Int.min),
    ])
    func wholeNumbers(text: String, expected: Int) throws {
        #expect(try Self.fields(#"{"chapter": \#(text)}"#).int("chapter") == expected)
    }

    @Test(arguments: [
        ("1.5", "found 1.5"), ("1e19", "found 1e+19"), ("9223372036854775808", "found 9223372036854775808"),
        ("18446744073709551616", "found 18446744073709551616"), ("1e400", "found a number out of range"),
    ])
    func numbersThatAreNotFittingWholeNumbers(text: String, found: String) throws {
        let fields = try Self.fields(#"{"chapter": \#(text)}"#)
        #expect(Self.failure { () throws(DecodeFailure) in _ = try fields.int("chapter") }
            == "scenes[0].chapter: expected a whole number that fits in 64 bits, \(found)")
    }

    /// Never rounded to infinity or to zero.
    @Test func finiteNumbers() throws {
        let fields = try Self.fields(#"{"a": 2.5e-7, "b": 0e5, "c": 1e400, "d": 1e-400, "e": "1", "f": true}"#)
        #expect(try fields.double("a") == 2.5e-7)
        #expect(try fields.double("b") == 0)
        #expect(try fields.double("f") == 1)
        #expect(Self.failure { () throws(DecodeFailure) in _ = try fields.double("c") }
            == "scenes[0].c: expected a finite number, found a number out of range")
        #expect(Self.failure { () throws(DecodeFailure) in _ = try fields.double("d") }
            == "scenes[0].d: expected a finite number, found a number out of range")
        #expect(Self.failure { () throws(DecodeFailure) in _ = try fields.double("e") }
            == "scenes[0].e: expected a number, found a string")
        let plist = try FieldReader(.object([("time", .double(.nan))]), path: "scenes[0]")
        #expect(Self.failure { () throws(DecodeFailure) in _ = try plist.double("time") }
            == "scenes[0].time: expected a finite number, found nan")
    }

    @Test func missingNullAndWrongTypesAreNamed() throws {
        let fields = try Self.fields(#"{"a": null, "b": [], "c": {"d": {}}}"#)
        #expect(!fields.has("a") && fields.has("b") && !fields.has("z"))
        #expect(Self.failure { () throws(DecodeFailure) in _ = try fields.string("z") }
            == "scenes[0].z: missing (expected a string)")
        #expect(Self.failure { () throws(DecodeFailure) in _ = try fields.string("a") }
            == "scenes[0].a: expected a string, found null")
        #expect(Self.failure { () throws(DecodeFailure) in _ = try fields.child("b") }
            == "scenes[0].b: expected an object, found an array")
        #expect(Self.failure { () throws(DecodeFailure) in _ = try fields.child("c").child("d").array("e") }
            == "scenes[0].c.d.e: missing (expected an array)")
        #expect(Self.failure { () throws(DecodeFailure) in _ = try FieldReader(.string("x"), path: "") }
            == "top level: expected an object, found a string")
    }

    @Test func aKeyTwiceIsReadAsItsLastValue() throws {
        #expect(try Self.fields(#"{"a": "1", "a": "2"}"#).string("a") == "2")
    }

    @Test func stringMapsTakeNumbersAsTheirText() throws {
        let fields = try Self.fields(#"{"m": {"a": "x", "b": 3, "c": 1.50, "d": true}, "n": {"a": []}}"#)
        #expect(try fields.stringMap("m") == ["a": "x", "b": "3", "c": "1.5", "d": "1"])
        #expect(try fields.stringMap("z").isEmpty)
        #expect(Self.failure { () throws(DecodeFailure) in _ = try fields.stringMap("n") }
            == "scenes[0].n.a: expected a string, found an array")
    }

    @Test func base64IsNamedWhenItDoesNotDecode() throws {
        let fields = try Self.fields(#"{"ok": "aGk=", "bad": "%%%"}"#)
        #expect(try fields.base64("ok") == Data("hi".utf8))
        #expect(Self.failure { () throws(DecodeFailure) in _ = try fields.base64("bad") }
            == "scenes[0].bad: not valid base64")
    }
}
