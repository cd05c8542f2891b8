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

    @Test func theOneReaderReadsStructuredBodiesInAHandEditedFile() throws {
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

    /// Random JSON in every layout: each body is stored as JSON, and both readers give back its exact bytes.
    @Test func randomBodiesInEveryLayoutComeBackByteForByte() throws {
        var generator = SplitMix(seed: 30)
        let layouts = ["compact", "spaced", "indent2", "indent4 newline", "tab", "spaced ascii", "indent2 ascii newline"]
            .compactMap(JSONLayout.init(name:))
        var interactions: [Interaction] = []
        for index in 0..<300 {
            let value = Self.randomValue(&generator, depth: 0, container: true)
            let layout = layouts[index % layouts.count]
            let body = Data(layout.bytes(of: value))
            let structure = try #require(JSONLayout.structure(of: body), "\(String(decoding: body, as: UTF8.self))")
            #expect(Data(structure.layout.bytes(of: structure.value)) == body)
            interactions.append(Interaction(
                chapter: index,
                request: RecordedRequest(method: "POST", url: "https://a.example/\(index)", headers: [], body: body),
                response: RecordedResponse(url: "https://a.example/\(index)", statusCode: 200),
                chunks: [body]
            ))
        }
        let tape = Tape(interactions: interactions)
        let data = try CassetteFile.encode(tape, as: .json)
        #expect(HTTPVCRFormat.tape(readingWrittenLayout: data) == tape)
        #expect(CassetteFile.writtenLayoutDisagreement(data) == nil)
        // The one reader's path too: the same file with its keys' order changed at the top.
        var text = String(decoding: data, as: UTF8.self)
        text = text.replacingOccurrences(
            of: "{\n  \"format\": \"HTTPVCR\",\n  \"version\": 1,", with: "{\n  \"version\": 1,\n  \"format\": \"HTTPVCR\","
        )
        #expect(HTTPVCRFormat.tape(readingWrittenLayout: Data(text.utf8)) == nil)
        #expect(try CassetteFile.decode(Data(text.utf8), path: "shuffled.json").tape == tape)
    }

    struct SplitMix {
        var state: UInt64
        init(seed: UInt64) { state = seed }
        mutating func next(_ bound: Int) -> Int {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return Int((z ^ (z >> 31)) % UInt64(bound))
        }
    }

    static let strings = ["", "a", "caf\u{e9}", "\u{1F600}", "line\nbreak", "tab\t\"quote\" \\", "\u{01}\u{7F}", "/slash"]
    static let numbers = ["0", "-0", "1.0", "1e3", "2E-7", "-12.50", "123456789012345678901234567890"]

    static func randomValue(_ generator: inout SplitMix, depth: Int, container: Bool = false) -> JSONValue {
        let kind = container || depth < 3 && generator.next(3) == 0 ? generator.next(2) : 2 + generator.next(5)
        switch kind {
        case 0:
            return .object((0..<generator.next(4)).map { index in
                (strings[generator.next(strings.count)] + "\(index)", randomValue(&generator, depth: depth + 1))
            })
        case 1: return .array((0..<generator.next(4)).map { _ in randomValue(&generator, depth: depth + 1) })
        case 2: return .string(strings[generator.next(strings.count)])
        case 3: return .number(numbers[generator.next(numbers.count)])
        case 4: return .bool(generator.next(2) == 0)
        default: return .null
        }
    }
}
