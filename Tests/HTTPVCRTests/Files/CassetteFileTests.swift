import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import HTTPVCR
import HTTPBinTestSupport

/// Our own format: stable, reviewable, round-tripping files, and clear errors for bad ones.
@Suite struct CassetteFileTests {
    /// Headers are listed sorted by name, as files store them.
    static let sampleTape = Tape(scenes: [
        Scene(chapter: 1, time: 0, event: .request(RecordedRequest(
            method: "POST", url: "https://api.example.com/v1/items?q=a/b",
            headers: [RecordedHeader("Content-Type", "application/json")], body: Data(#"{"name":"Ada"}"#.utf8)
        ))),
        Scene(chapter: 2, time: 0, event: .request(RecordedRequest(method: "GET", url: "https://api.example.com/bin"))),
        Scene(chapter: 1, time: 0.012, event: .redirect(
            RecordedResponse(url: "https://api.example.com/v1/items?q=a/b", statusCode: 302,
                             headers: [RecordedHeader("Location", "/v2/items")]),
            to: RecordedRequest(method: "GET", url: "https://api.example.com/v2/items")
        )),
        Scene(chapter: 1, time: 0.02, event: .response(RecordedResponse(
            url: "https://api.example.com/v2/items", statusCode: 200, httpVersion: "HTTP/1.1",
            headers: [RecordedHeader("Content-Length", "24"), RecordedHeader("Content-Type", "application/json")]
        ))),
        Scene(chapter: 1, time: 0.021, event: .data(Data(#"{"items":["é", "\u0001"],"#.utf8))),
        Scene(chapter: 2, time: 0.03, event: .error(RecordedError(
            domain: NSURLErrorDomain, code: NSURLErrorTimedOut,
            userInfo: [NSLocalizedDescriptionKey: "The request timed out.", "NSErrorFailingURLKey": "https://api.example.com/bin"]
        ))),
        Scene(chapter: 1, time: 0.022, event: .data(Data([0xFF, 0x00, 0x7B]))),
        Scene(chapter: 1, time: 0.023, event: .completion),
    ])

    @Test func jsonIsPrettyStableAndRoundTripsByteForByte() throws {
        let data = try CassetteFile.encode(Self.sampleTape, as: .json)
        let text = data.text
        #expect(text.hasPrefix("{\n  \"format\": \"HTTPVCR\",\n  \"version\": 1,\n  \"scenes\": ["))
        #expect(text.contains("https://api.example.com/v1/items?q=a/b"), "slashes are not escaped")
        #expect(text.contains(#""bodyLayout": "compact""#), "JSON bodies are stored as JSON")
        #expect(text.contains(#""dataBase64": "/wB7""#), "binary bodies are base64")
        #expect(text.hasSuffix("}\n"))
        let (tape, format) = try CassetteFile.decode(data, path: "sample.json")
        #expect(format == .json)
        #expect(tape == Self.sampleTape)
        #expect(try CassetteFile.encode(tape, as: .json) == data)
    }

    @Test func propertyListsHoldTheSameTape() throws {
        let data = try CassetteFile.encode(Self.sampleTape, as: .plist)
        #expect(data.text.hasPrefix("<?xml"))
        let (tape, format) = try CassetteFile.decode(data, path: "sample.plist")
        #expect(format == .plist)
        #expect(tape == Self.sampleTape)
    }

    @Test func anUnchangedCassetteIsNotRewritten() async throws {
        let folder = try TemporaryFolder()
        let file = folder.url.appendingPathComponent("kept.json")
        try CassetteFile.write(Self.sampleTape, to: file, as: .json)
        let modified = try FileManager.default.attributesOfItem(atPath: file.path)[.modificationDate] as? Date
        let cassette = try Cassette(configuration: { var c = VCRConfiguration(); c.cassettePath = file.path; return c }(), url: file)
        #expect(!cassette.hasUnsavedChanges)
        try cassette.saveIfChanged()
        #expect(try FileManager.default.attributesOfItem(atPath: file.path)[.modificationDate] as? Date == modified)
        #expect(cassette.tape == Self.sampleTape)
        #expect(cassette.requests.map { $0.url?.path } == ["/v1/items", "/bin"])
        guard case let .response(response, body) = cassette.responses[0] else {
            Issue.record("no response")
            return
        }
        #expect(response.statusCode == 200 && body.count == 29)
        guard case let .error(error) = cassette.responses[1] else {
            Issue.record("no error")
            return
        }
        #expect((error as NSError).code == NSURLErrorTimedOut)
    }

    @Test(arguments: [
        ("truncated", #"{"format": "HTTPVCR", "version": 1, "scenes": [{"chapter": 1"#,
         "not valid JSON (truncated or corrupt?): Unexpected end of file at line 1, column 61"),
        ("wrong type", #"{"format": "HTTPVCR", "version": 1, "scenes": [{"chapter": "one", "complete": true}]}"#,
         "scenes[0].chapter: expected a number, found a string"),
        ("bad base64", #"{"format": "HTTPVCR", "version": 1, "scenes": [{"chapter": 1, "dataBase64": "%%%"}]}"#,
         "scenes[0].dataBase64: not valid base64"),
        ("unknown version", #"{"format": "HTTPVCR", "version": 99, "scenes": []}"#, "unknown version 99"),
        ("no scene kind", #"{"format": "HTTPVCR", "version": 1, "scenes": [{"chapter": 1}]}"#, "scenes[0]: a scene needs one of"),
        ("unknown format", #"{"hello": "world"}"#, "not a cassette format HTTPVCR knows"),
        ("empty", "", "the file is empty"),
        ("binary junk", "\u{0}\u{1}\u{2}garbage", "not valid JSON (truncated or corrupt?): Unexpected byte 0x0 at line 1, column 1"),
    ])
    func malformedCassettesNameTheFileAndTheProblem(name: String, content: String, expected: String) async throws {
        let folder = try TemporaryFolder()
        let file = folder.url.appendingPathComponent("\(name).json")
        try Data(content.utf8).write(to: file)
        do {
            _ = try CassetteFile.read(at: file)
            Issue.record("\(name) was read")
        } catch {
            #expect(error.code == .malformedCassette)
            #expect(error.message.contains(file.path), "\(error.message)")
            #expect(error.message.contains(expected), "\(error.message)")
        }
        await VCRCassetteLock.shared.withLock {
            #expect(throws: VCRError.self) {
                try VCR.insertCassette { $0 = VCRConfiguration(); $0.cassettePath = file.path }
            }
            #expect(VCR.cassette == nil)
        }
    }

    @Test func aChapterWithoutItsRequestIsRefusedOnInsert() throws {
        let folder = try TemporaryFolder()
        let file = folder.url.appendingPathComponent("orphan.json")
        try Data(#"{"format": "HTTPVCR", "version": 1, "scenes": [{"chapter": 1, "complete": true}]}"#.utf8).write(to: file)
        #expect(throws: VCRError.self) {
            _ = try Cassette(configuration: VCRConfiguration(), url: file)
        }
    }

    @Test func aFailedSaveLeavesWhatWasOnDisk() throws {
        let folder = try TemporaryFolder()
        let blocker = folder.url.appendingPathComponent("not-a-folder")
        try Data("keep me".utf8).write(to: blocker)
        let target = blocker.appendingPathComponent("cassette.json")
        do {
            try CassetteFile.write(Self.sampleTape, to: target, as: .json)
            Issue.record("saving under a file succeeded")
        } catch {
            #expect(error.code == .saveFailed)
            #expect(error.message.contains(target.path))
        }
        #expect(try Data(contentsOf: blocker) == Data("keep me".utf8))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        #expect(leftovers == ["not-a-folder"], "no temporary file is left behind")
    }

    @Test func savingReplacesAtomically() throws {
        let folder = try TemporaryFolder()
        let file = folder.url.appendingPathComponent("deep/er/cassette.json")
        try CassetteFile.write(Tape(), to: file, as: .json)
        try CassetteFile.write(Self.sampleTape, to: file, as: .json)
        #expect(try CassetteFile.read(at: file).tape == Self.sampleTape)
        #expect(try FileManager.default.contentsOfDirectory(atPath: file.deletingLastPathComponent().path) == ["cassette.json"])
    }

    /// JSON in UTF-16 or UTF-32, with a byte order mark or without, reads as its UTF-8 does (as Foundation's JSON
    /// parser read it before the one reader).
    @Test(arguments: [
        (String.Encoding.utf16LittleEndian, true), (.utf16LittleEndian, false), (.utf16BigEndian, true),
        (.utf16BigEndian, false), (.utf32LittleEndian, true), (.utf32BigEndian, false),
    ])
    func jsonInUTF16OrUTF32ReadsAsItsUTF8(encoding: String.Encoding, withByteOrderMark: Bool) throws {
        let utf8 = try CassetteFile.encode(Self.sampleTape, as: .json)
        let text = (withByteOrderMark ? "\u{FEFF}" : "") + String(decoding: utf8, as: UTF8.self)
        let encoded = try #require(text.data(using: encoding))
        let read = try CassetteFile.decode(encoded, path: "/wide.json")
        #expect(read.tape == Self.sampleTape && read.format == .json, "\(encoding) \(withByteOrderMark)")
    }
}
