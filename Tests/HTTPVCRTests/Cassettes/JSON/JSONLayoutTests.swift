import Foundation
@testable import HTTPVCR
import Testing

@Suite struct JSONLayoutTests {
    /// httpbin's (Flask's) layout: two spaces, `"key": value`, a final newline, non-ASCII escaped.
    static let httpbin = """
        {
          "args": {},
          "json": {
            "price": 1.0,
            "big": 1e3,
            "name": "caf\\u00e9 \\ud83d\\ude00",
            "list": [
              1,
              -0,
              null
            ],
            "empty": [],
            "zebra": true,
            "apple": false
          },
          "url": "http://127.0.0.1/post"
        }

        """

    @Test(arguments: [
        (httpbin, "indent2 ascii newline"),
        (#"{"b":1,"a":[1.50,2E+3,"x\"\\\/"],"c":{}}"#, nil),
        (#"{"b":1,"a":[1.50,2E+3,"x\"\\\t"],"c":{}}"#, "compact"),
        (#"{"z": 1, "a": [true, null], "é": "ü"}"#, "spaced"),
        ("[\n\t{\n\t\t\"a\": \"\\u001f\\b\\f\"\n\t}\n]", "tab"),
        ("{\n    \"a\": [\n        1\n    ]\n}\n", "indent4 newline"),
        (#"{"dup": 1, "dup": 2}"#, "spaced"),
        ("{\"a\":1} ", nil),          // trailing space
        ("{\r\n  \"a\": 1\r\n}", nil),  // CRLF
        (#"{"a":"\u00E9"}"#, nil),    // upper-case hex
        (#"{"a": 1,"b": 2}"#, nil),   // mixed spacing
        (#""just a string""#, nil),
        (#"{"a": 01}"#, nil),          // not JSON
    ] as [(String, String?)])
    func structuresOnlyWhatItGivesBackExactly(text: String, layout: String?) throws {
        let data = Data(text.utf8)
        let structure = JSONLayout.structure(of: data)
        #expect(structure?.layout.name == layout)
        if let (value, found) = structure {
            #expect(Data(found.bytes(of: value)) == data)
            #expect(JSONLayout(name: found.name) == found)
        }
    }

    @Test func keyOrderAndNumberTextAreKept() throws {
        let value = try #require(LosslessJSONReader.value(of: Data(#"{"z": 1.0, "a": 1e3, "m": -0}"#.utf8)))
        #expect(value == .object([("z", .number("1.0")), ("a", .number("1e3")), ("m", .number("-0"))]))
    }

    @Test(arguments: ["", "{", "[1,]", #"{"a" 1}"#, "\"\u{01}\"", #""\ud800""#, "tru", "1.", "-", "[1] [2]"])
    func refusesWhatIsNotJSON(text: String) {
        #expect(LosslessJSONReader.value(of: Data(text.utf8)) == nil)
    }

    @Test func refusesInvalidUTF8AndDeepNesting() {
        #expect(LosslessJSONReader.value(of: Data([0x22, 0xFF, 0x22])) == nil)
        let deep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
        #expect(LosslessJSONReader.value(of: Data(deep.utf8)) == nil)
    }

    @Test(arguments: ["indent0", "indent17", "compact compact", "compact newline ascii", "loose", "", "tab newline newline"])
    func refusesLayoutNamesThatAreNotOne(name: String) {
        #expect(JSONLayout(name: name) == nil)
    }
}
