import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import HTTPVCR
import HTTPBinTestSupport

/// A name a server sends more than once (two `Set-Cookie` fields, `X-Multi: one` then `X-Multi: two`) stays more
/// than one field on a cassette: one member whose value is the array of its values, in the order they came.
@Suite struct RepeatedFieldsFormatTests {
    static let fields = [
        RecordedHeader("X-Multi", "one"),
        RecordedHeader("Set-Cookie", "session=abc; Path=/"),
        RecordedHeader("Content-Type", "application/json"),
        RecordedHeader("X-Multi", "two"),
        RecordedHeader("Set-Cookie", "theme=dark"),
        RecordedHeader("X-Multi", "three"),
    ]

    static let tape = Tape(scenes: [
        Scene(chapter: 1, time: 0, event: .request(RecordedRequest(method: "GET", url: "http://x/fields"))),
        Scene(chapter: 1, time: 0.01, event: .response(RecordedResponse(url: "http://x/fields", statusCode: 200,
                                                                        headers: fields))),
        Scene(chapter: 1, time: 0.02, event: .completion),
    ])

    /// What reading gives back: names sorted, as for every header, and each name's fields in the order they came.
    static let fieldsAsRead = [
        RecordedHeader("Content-Type", "application/json"),
        RecordedHeader("Set-Cookie", "session=abc; Path=/"),
        RecordedHeader("Set-Cookie", "theme=dark"),
        RecordedHeader("X-Multi", "one"),
        RecordedHeader("X-Multi", "two"),
        RecordedHeader("X-Multi", "three"),
    ]

    static func responseFields(_ tape: Tape) -> [RecordedHeader]? {
        for scene in tape.scenes { if case let .response(response) = scene.event { return response.headers } }
        return nil
    }

    @Test func jsonListsARepeatedNamesValuesInOrderAndRoundTripsByteForByte() throws {
        let data = try CassetteFile.encode(Self.tape, as: .json)
        #expect(data.text.contains([
            #"        "headers": {"#,
            #"          "Content-Type": "application/json","#,
            #"          "Set-Cookie": ["#,
            #"            "session=abc; Path=/","#,
            #"            "theme=dark""#,
            #"          ],"#,
            #"          "X-Multi": ["#,
            #"            "one","#,
            #"            "two","#,
            #"            "three""#,
            #"          ]"#,
            #"        }"#,
        ].joined(separator: "\n")), "\(data.text)")
        let fast = try #require(HTTPVCRFormat.tape(readingWrittenLayout: data))
        #expect(Self.responseFields(fast) == Self.fieldsAsRead)
        #expect(CassetteFile.writtenLayoutDisagreement(data) == nil, "the one reader reads the same tape")
        let (tape, _) = try CassetteFile.decode(data, path: "fields.json")
        #expect(Self.responseFields(tape) == Self.fieldsAsRead)
        #expect(try CassetteFile.encode(tape, as: .json) == data)
    }

    @Test func propertyListsHoldThemToo() throws {
        let data = try CassetteFile.encode(Self.tape, as: .plist)
        let (tape, format) = try CassetteFile.decode(data, path: "fields.plist")
        #expect(format == .plist)
        #expect(Self.responseFields(tape) == Self.fieldsAsRead)
        #expect(try CassetteFile.encode(tape, as: .json) == CassetteFile.encode(Self.tape, as: .json))
    }

    /// A cassette without repeated fields (every one URLSession recorded) is written as it always was.
    @Test func singleFieldsStayStrings() throws {
        let single = Tape(scenes: [Scene(chapter: 1, event: .response(RecordedResponse(
            url: "http://x/", statusCode: 200, headers: [RecordedHeader("X-Multi", "one, two")]
        )))])
        #expect(try CassetteFile.encode(single, as: .json).text.contains(#""X-Multi": "one, two""#))
    }

    /// By hand: an array of one, numbers, keys in any order. What the writer never writes goes to the one reader.
    @Test func theOneReaderReadsWhatAHandWrote() throws {
        let json = Data(#"""
            {"format": "HTTPVCR", "version": 1, "scenes": [{"chapter": 1, "time": 0, "response": {
              "url": "http://x/", "status": 200, "headers": {"b": ["1"], "A": [2, "x"], "C": "3"}}}]}
            """#.utf8)
        let (tape, _) = try CassetteFile.decode(json, path: "hand.json")
        #expect(Self.responseFields(tape) == [
            RecordedHeader("A", "2"), RecordedHeader("A", "x"), RecordedHeader("b", "1"), RecordedHeader("C", "3"),
        ])
    }

    @Test func missingOrNullHeadersAreNone() throws {
        for headers in [#""#, #", "headers": null"#] {
            let json = Data(#"""
                {"format": "HTTPVCR", "version": 1, "scenes": [{"chapter": 1, "time": 0, "response": {
                  "url": "http://x/", "status": 200\#(headers)}}]}
                """#.utf8)
            let (tape, _) = try CassetteFile.decode(json, path: "hand.json")
            #expect(Self.responseFields(tape) == [], "\(headers)")
        }
    }

    @Test(arguments: [
        (#"{"A": ["1", {}]}"#, "scenes[0].response.headers.A[1]: expected a string, found an object"),
        (#"{"A": ["1", null]}"#, "scenes[0].response.headers.A[1]: expected a string, found null"),
        (#"{"A": {"B": "1"}}"#, "scenes[0].response.headers.A: expected a string or an array of strings, found an object"),
    ])
    func aWrongValueIsNamed(headers: String, message: String) throws {
        let json = Data(#"""
            {"format": "HTTPVCR", "version": 1, "scenes": [{"chapter": 1, "time": 0, "response": {
              "url": "http://x/", "status": 200, "httpVersion": "HTTP/1.1", "headers": \#(headers)}}]}
            """#.utf8)
        let error = #expect(throws: VCRError.self) { try CassetteFile.decode(json, path: "hand.json") }
        #expect(error?.message.contains(message) == true, "\(String(describing: error?.message))")
    }

    /// Foundation keeps one value per name: a repeated name's values joined, as URLSession joins them.
    @Test func foundationGetsTheValuesJoined() throws {
        #expect(Self.fields.dictionary["X-Multi"] == "one, two, three")
        #expect(Self.fields.dictionary["Set-Cookie"] == "session=abc; Path=/, theme=dark")
        let response = try #require(RecordedResponse(url: "http://x/", statusCode: 200, headers: Self.fields)
            .httpURLResponse(fallbackURL: nil))
        let cookies = HTTPCookie.cookies(
            withResponseHeaderFields: response.allHeaderFields as? [String: String] ?? [:], for: URL(string: "http://x/")!
        )
        #expect(cookies.map(\.name) == ["session", "theme"], "cookies split again as URLSession splits them")
    }
}
