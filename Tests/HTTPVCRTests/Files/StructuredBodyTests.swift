import Foundation
@testable import HTTPVCR
import Testing

@Suite struct StructuredBodyTests {
    static let responseBody = Data("{\n  \"id\": 7,\n  \"price\": 1.0,\n  \"tags\": [\n    \"a\"\n  ]\n}\n".utf8)
    static let requestBody = Data(#"{"name":"Ada","age":36.0}"#.utf8)

    static var tape: Tape {
        Tape(interactions: [
            Interaction(
                chapter: 1,
                request: RecordedRequest(
                    method: "POST", url: "https://api.example.com/users",
                    headers: [RecordedHeader("Content-Type", "application/json")], body: requestBody
                ),
                response: RecordedResponse(
                    url: "https://api.example.com/users", statusCode: 201, httpVersion: "HTTP/1.1",
                    headers: [RecordedHeader("Content-Type", "application/json")]
                ),
                chunks: [responseBody]
            ),
            Interaction(
                chapter: 2,
                request: RecordedRequest(method: "GET", url: "https://api.example.com/raw", headers: [], body: nil),
                response: RecordedResponse(
                    url: "https://api.example.com/raw", statusCode: 200, httpVersion: "HTTP/1.1", headers: []
                ),
                chunks: [Data(#"{"a":"\/"}"#.utf8)]  // an escaped slash: no layout gives it back, so text
            ),
        ])
    }

    @Test func jsonBodiesAreWrittenAsJSONAndReadBackByteForByte() throws {
        let data = try CassetteFile.encode(Self.tape, as: .json)
        let text = String(decoding: data, as: UTF8.self)
        let lines = text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
        #expect(lines.contains(#""body": { "name": "Ada", "age": 36.0 }, "bodyLayout": "compact""#), "\(text)")
        #expect(lines.contains(
            #""data": { "id": 7, "price": 1.0, "tags": [ "a" ] }, "dataLayout": "indent2 newline""#
        ), "\(text)")
        #expect(text.contains(#""data": "{\"a\":\"\\/\"}""#), "\(text)")
        let (tape, format) = try CassetteFile.decode(data, path: "structured.json")
        #expect(format == .json)
        #expect(tape == Self.tape)
        #expect(tape.interactions[0].body == Self.responseBody)
        #expect(tape.interactions[0].request.body == Self.requestBody)
        // Read by both readers alike, and written again the same.
        #expect(HTTPVCRFormat.tape(readingWrittenLayout: data) == Self.tape)
        #expect(CassetteFile.writtenLayoutDisagreement(data) == nil)
        #expect(try CassetteFile.encode(tape, as: .json) == data)
    }

    @Test func theDecoderReadsStructuredBodiesInAHandEditedFile() throws {
        // Keys in another order, the layout before the body, a redirect's request: not the writer's layout.
        let text = """
            {"version": 1, "format": "HTTPVCR", "scenes": [
              {"chapter": 1, "time": 0, "request": {"bodyLayout": "spaced", "body": {"b": [1, 2.50]},
                "url": "https://a.example/", "method": "POST"}},
              {"chapter": 1, "time": 0, "redirect": {"response": {"url": "https://a.example/", "status": 307,
                "headers": {}}, "to": {"method": "POST", "url": "https://b.example/", "body": [true]}}},
              {"time": 0.1, "chapter": 1, "data": {"x": null}},
              {"chapter": 1, "time": 0.2, "complete": true}
            ]}
            """
        let tape = try CassetteFile.decode(Data(text.utf8), path: "edited.json").tape
        let interaction = try #require(tape.interactions.first)
        #expect(interaction.request.body == Data(#"{"b": [1, 2.50]}"#.utf8))
        #expect(interaction.redirects.first?.request.body == Data("[true]".utf8))
        #expect(interaction.body == Data(#"{"x":null}"#.utf8))
    }

    @Test func aLayoutThatIsNotOneIsNamed() throws {
        let text = """
            {"format": "HTTPVCR", "version": 1, "scenes": [
              {"chapter": 1, "time": 0, "request": {"method": "GET", "url": "https://a.example/", "headers": {}}},
              {"chapter": 1, "time": 0, "data": {}, "dataLayout": "sideways"}
            ]}
            """
        #expect {
            try CassetteFile.decode(Data(text.utf8), path: "bad.json")
        } throws: { error in
            (error as? VCRError)?.message.contains("scenes[1].dataLayout: expected a JSON layout") == true
        }
    }

    @Test func propertyListsKeepBodiesAsText() throws {
        let data = try CassetteFile.encode(Self.tape, as: .plist)
        #expect(!String(decoding: data, as: UTF8.self).contains("dataLayout"))
        #expect(try CassetteFile.decode(data, path: "x.plist").tape == Self.tape)
    }
}
