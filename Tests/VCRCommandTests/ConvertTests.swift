import Foundation
import HTTPVCR
import Testing

@Suite struct ConvertTests {
    /// What a request and its outcome are, whatever file they went through: header order and the response URL
    /// (HAR has none) left out.
    struct Exchange: Equatable, CustomStringConvertible {
        var method: String
        var url: String
        var requestHeaders: [String: String]
        var requestBody: Data?
        var status: Int?
        var responseHeaders: [String: String]
        var body: Data
        var error: RecordedError?

        init(_ interaction: Interaction) {
            method = interaction.request.method
            url = interaction.request.url
            requestHeaders = interaction.request.headers.dictionary
            requestBody = interaction.request.body
            status = interaction.response?.statusCode
            responseHeaders = interaction.response?.headers.dictionary ?? [:]
            body = interaction.body
            error = interaction.error
        }

        var description: String { "\(method) \(url) → \(status.map(String.init) ?? "error")" }
    }

    func exchanges(_ path: String) throws -> [Exchange] {
        try CassetteFile.read(at: URL(fileURLWithPath: path)).tape.interactions.map(Exchange.init)
    }

    @Test func vcrPyToJSON() throws {
        let folder = try TemporaryFolder()
        let output = folder.file("httpbin-basics.json").path
        let result = try VCRTool.run("convert", VCRTool.vcrPyFixture.path, output)
        #expect(result.status == 0, "\(result)")
        // Nine interactions; the two hops of /redirect/2 are folded into its chapter.
        #expect(result.stdout.contains("(VCR.py, 7 requests) to \(output) (HTTPVCR JSON)"), "\(result)")
        #expect(result.stderr.isEmpty, "converting to our JSON loses nothing: \(result)")
        let (tape, format) = try CassetteFile.read(at: URL(fileURLWithPath: output))
        #expect(format == .json)
        #expect(tape == (try CassetteFile.read(at: VCRTool.vcrPyFixture).tape))
    }

    @Test func everyYAHTTPVCRFixtureToJSONAndHAR() throws {
        let folder = try TemporaryFolder()
        let fixtures = VCRTool.yahttpvcrFixtures
        try #require(!fixtures.isEmpty, "no YAHTTPVCR fixtures in \(VCRTool.fixtures.path)/yahttpvcr")
        for fixture in fixtures {
            let original = try CassetteFile.read(at: fixture).tape
            // The whole name: post-json-body.json and post-json-body.plist get outputs of their own.
            let json = folder.file(fixture.lastPathComponent + ".json").path
            let toJSON = try VCRTool.run("convert", fixture.path, json)
            #expect(toJSON.status == 0, "\(toJSON)")
            #expect(try CassetteFile.read(at: URL(fileURLWithPath: json)).tape == original, "\(fixture.lastPathComponent)")

            let har = folder.file(fixture.lastPathComponent + ".har").path
            let toHAR = try VCRTool.run("convert", fixture.path, har)
            #expect(toHAR.status == 0, "\(toHAR)")
            let readBack = try exchanges(har)
            #expect(readBack == original.interactions.map(Exchange.init), "\(fixture.lastPathComponent)")
        }
    }

    /// JSON → HAR → JSON keeps every request, response and body.
    @Test func jsonToHARAndBack() throws {
        let folder = try TemporaryFolder()
        let tape = Tapes.tape(
            Tapes.exchange(chapter: 1, url: "https://api.example.com/v1/items?q=a%20b&page=2"),
            Tapes.exchange(
                chapter: 2,
                method: "POST",
                url: "https://api.example.com/v1/items",
                requestHeaders: [RecordedHeader("Content-Type", "application/json"), RecordedHeader("Authorization", "[FILTERED]")],
                requestBody: #"{"name":"três","n":1}"#,
                status: 201,
                chunks: [#"{"id":3}"#]
            ),
            Tapes.exchange(chapter: 3, url: "https://api.example.com/v1/missing", status: 404, chunks: []),
            Interaction(
                chapter: 4,
                request: RecordedRequest(method: "GET", url: "https://api.example.com/v1/image.png"),
                response: RecordedResponse(
                    url: "https://api.example.com/v1/image.png",
                    statusCode: 200,
                    headers: [RecordedHeader("Content-Type", "image/png")]
                ),
                chunks: [Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0xFF])]
            ),
            Interaction(
                chapter: 5,
                request: RecordedRequest(method: "GET", url: "https://api.example.com/slow"),
                response: nil,
                error: RecordedError(
                    domain: NSURLErrorDomain,
                    code: -1001,
                    userInfo: [NSLocalizedDescriptionKey: "The request timed out."]
                ),
                timeToFirstByte: 1,
                duration: 1
            )
        )
        let json = try folder.write(tape, "original.json")
        let har = folder.file("converted.har").path
        let back = folder.file("back.json").path

        let toHAR = try VCRTool.run("convert", json, har)
        #expect(toHAR.status == 0, "\(toHAR)")
        #expect(toHAR.stderr.isEmpty, "nothing is lost: \(toHAR)")
        let document = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: har)))
        let entries = ((document as? [String: Any])?["log"] as? [String: Any])?["entries"] as? [Any]
        #expect(entries?.count == 5)

        let toJSON = try VCRTool.run("convert", har, back)
        #expect(toJSON.status == 0, "\(toJSON)")
        #expect(try exchanges(back) == tape.interactions.map(Exchange.init))

        let show = try VCRTool.run("show", har)
        #expect(show.lines.first == "\(har): HAR, 5 requests")
    }

    /// What HAR cannot hold is said on stderr; the conversion still succeeds.
    @Test func lossesAreNotedOnStderr() throws {
        let folder = try TemporaryFolder()
        let json = try folder.write(Tapes.recorded, "recorded.json")
        let har = folder.file("recorded.har").path
        let result = try VCRTool.run("convert", json, har)
        #expect(result.status == 0, "\(result)")
        let notes = result.stderr.split(separator: "\n").map(String.init)
        #expect(!notes.isEmpty)
        #expect(notes.allSatisfy { $0.hasPrefix("note: ") }, "\(result)")
        #expect(notes.contains { $0.contains("chapter 1 ") && $0.contains("chunk") }, "\(result)")
        // Chapter 3's hop is an entry of its own, which the reader folds back: nothing is lost.
        #expect(!notes.contains { $0.contains("chapter 3 ") }, "\(result)")
        #expect(notes.contains { $0.contains("chapter 6") && $0.contains("earlier request") }, "\(result)")
        // Bodies and requests all arrive, joined.
        let original = Tapes.recorded.interactions
        let readBack = try CassetteFile.read(at: URL(fileURLWithPath: har)).tape.interactions
        for interaction in original {
            let match = readBack.first { $0.request.url == interaction.request.url }
            #expect(match?.body == interaction.body, "\(interaction.request.url)")
        }
    }

    @Test func plistRoundTripIsByteForByte() throws {
        let folder = try TemporaryFolder()
        let json = try folder.write(Tapes.recorded, "recorded.json")
        let plist = folder.file("recorded.plist").path
        let back = folder.file("back.json").path
        #expect(try VCRTool.run("convert", json, plist).status == 0)
        let text = try String(contentsOfFile: plist, encoding: .utf8)
        #expect(text.hasPrefix("<?xml"))
        let readBack = try CassetteFile.read(at: URL(fileURLWithPath: plist))
        #expect(readBack.format == .plist)
        #expect(readBack.tape == Tapes.recorded)
        #expect(try VCRTool.run("convert", plist, back).status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: back)) == Data(contentsOf: URL(fileURLWithPath: json)))
    }

    @Test func refusesToOverwriteTheInputWithoutForce() throws {
        let folder = try TemporaryFolder()
        let path = try folder.write(Tapes.recorded, "tape.json")
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        for output in ["tape.json", "./tape.json", "sub/../tape.json"] {
            try FileManager.default.createDirectory(at: folder.file("sub"), withIntermediateDirectories: true)
            let result = try VCRTool.run(["convert", "tape.json", output], in: folder.url)
            #expect(result.status == 2, "\(output): \(result)")
            #expect(result.stderr.contains("--force"), "\(result)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)

        let forced = try VCRTool.run(["convert", "tape.json", "tape.json", "--force"], in: folder.url)
        #expect(forced.status == 0, "\(forced)")
        #expect(try CassetteFile.read(at: URL(fileURLWithPath: path)).tape == Tapes.recorded)
    }

    @Test func outputFormatComesFromTheExtensionOrTheOption() throws {
        let folder = try TemporaryFolder()
        let path = try folder.write(Tapes.recorded, "tape.json")

        let yaml = try VCRTool.run("convert", path, folder.file("tape.yaml").path)
        #expect(yaml.status == 2)
        #expect(yaml.stderr.contains("does not write .yaml files"), "\(yaml)")
        #expect(yaml.stderr.contains("USAGE: vcr convert"), "\(yaml)")

        let bare = try VCRTool.run("convert", path, folder.file("tape").path)
        #expect(bare.status == 2)
        #expect(bare.stderr.contains("cannot tell the format"), "\(bare)")

        let text = folder.file("tape.txt").path
        let forced = try VCRTool.run("convert", path, text, "--format", "har")
        #expect(forced.status == 0, "\(forced)")
        #expect(try CassetteFile.read(at: URL(fileURLWithPath: text)).format == .har)

        let unknown = try VCRTool.run("convert", path, text, "--format=yaml")
        #expect(unknown.status == 2)
        #expect(unknown.stderr.contains("unknown format 'yaml'"), "\(unknown)")

        let upper = folder.file("TAPE.PLIST").path
        #expect(try VCRTool.run("convert", path, upper).status == 0)
        #expect(try CassetteFile.read(at: URL(fileURLWithPath: upper)).format == .plist)
    }

    @Test func writesAtomicallyAndLeavesNothingBehind() throws {
        let folder = try TemporaryFolder()
        let input = try folder.copy(VCRTool.vcrPyFixture, as: "in.json")
        let output = folder.file("deeper/folder/out.har").path
        let result = try VCRTool.run("convert", input, output)
        #expect(result.status == 0, "\(result)")
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.file("deeper/folder").path)
        #expect(left == ["out.har"])
        #expect(try CassetteFile.read(at: URL(fileURLWithPath: output)).tape.interactions.count == 7)
    }

    @Test func outputThatIsAFolder() throws {
        let folder = try TemporaryFolder()
        let input = try folder.write(Tapes.recorded, "in.json")
        try FileManager.default.createDirectory(at: folder.file("out.json"), withIntermediateDirectories: true)
        let result = try VCRTool.run("convert", input, folder.file("out.json").path)
        #expect(result.status == 2)
        #expect(result.stderr.contains("is a folder"), "\(result)")
    }
}
