import CassetteMutations
import Foundation
import Testing
@testable import HTTPVCR
import HTTPBinTestSupport

/// Our JSON has two readers: one for exactly what the writer lays out, and the one reader of every cassette file
/// (`LosslessJSONReader` and `FieldReader`) for everything else. The first may decline anything; what it reads must
/// be the tape the one reader reads.
@Suite struct WrittenLayoutReaderTests {
    /// Every kind of scene, with what strings can hold: escapes, control characters, non-ASCII, a NUL, emoji.
    static let richTape = Tape(scenes: [
        Scene(chapter: 0, time: 0, event: .request(RecordedRequest(
            method: "POST", url: "https://api.example.com/v1/items?q=a/b&é=ü",
            headers: [RecordedHeader("Content-Type", "application/json"), RecordedHeader("x-a", "1"), RecordedHeader("X-A", "2")],
            body: Data(#"{"name":"Ada \"the\" first\\","tab":"\#t","nul":"\#u{0}","emoji":"🧪"}"#.utf8),
            recordedAt: Date(timeIntervalSince1970: 1_764_000_000)
        ))),
        Scene(chapter: 0, time: 1.5e-05, event: .redirect(
            RecordedResponse(url: "https://api.example.com/v1/items", statusCode: 302, headers: [RecordedHeader("Location", "/v2")]),
            to: RecordedRequest(method: "GET", url: "https://api.example.com/v2")
        )),
        Scene(chapter: 0, time: 0.25, event: .response(RecordedResponse(
            url: "https://api.example.com/v2", statusCode: 200, httpVersion: "HTTP/2",
            headers: [
                RecordedHeader("Ünïcode", "värde"), RecordedHeader("Set-Cookie", "b=2"), RecordedHeader("Content-Length", "3"),
                RecordedHeader("Set-Cookie", "a=1; Path=/"),
            ]
        ))),
        Scene(chapter: 0, time: 0.5, event: .data(Data("line one\r\nline two\u{1}\u{1F}\"\\/".utf8))),
        Scene(chapter: 0, time: 0.75, event: .data(Data([0xFF, 0x00, 0xC3, 0x28]))),
        Scene(chapter: 0, time: 123_456.789, event: .completion),
        Scene(chapter: 2_147_483_647, time: 0, event: .request(RecordedRequest(method: "GET", url: "http://x/", body: Data()))),
        Scene(chapter: 2_147_483_647, time: 0, event: .error(RecordedError(
            domain: NSURLErrorDomain, code: -1001,
            userInfo: ["NSLocalizedDescription": "The request timed out.", "b": "\u{7F}\u{2028}"]
        ))),
        Scene(chapter: 7, time: 1e-300, event: .response(RecordedResponse(url: "http://x/", statusCode: 204))),
    ])

    @Test func readsWhatTheWriterWritesAsTheOneReaderDoes() throws {
        let bytes = try CassetteFile.encode(Self.richTape, as: .json)
        let fast = try #require(HTTPVCRFormat.tape(readingWrittenLayout: bytes))
        #expect(fast == Self.richTape.withHeadersSortedAsRead)
        #expect(CassetteFile.writtenLayoutDisagreement(bytes) == nil)
        #expect(try CassetteFile.decode(bytes, path: "/rich.json").tape == fast)
    }

    @Test func readsEveryCommittedCassette() throws {
        let folder = packageRoot.appendingPathComponent("Cassettes.bundle")
        let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "json" } ?? []
        #expect(files.count >= 9)
        for file in files {
            let bytes = try Data(contentsOf: file)
            #expect(HTTPVCRFormat.tape(readingWrittenLayout: bytes) != nil, "\(file.path)")
            #expect(CassetteFile.writtenLayoutDisagreement(bytes) == nil, "\(file.path)")
        }
    }

    /// Valid cassettes laid out otherwise (by hand, by another tool) go to the one reader, which reads them.
    @Test(arguments: [
        ("keys in another order", #"{"version": 1, "format": "HTTPVCR", "scenes": []}"#),
        ("no time", #"{"format": "HTTPVCR", "version": 1, "scenes": [{"chapter": 1, "complete": true}]}"#),
        ("an unknown key", #"{"format": "HTTPVCR", "version": 1, "scenes": [], "note": "hi"}"#),
        ("a null", #"{"format": "HTTPVCR", "version": 1, "scenes": [{"chapter": 1, "time": null, "complete": true}]}"#),
        ("a header that is a number", Self.response(headers: #"{"A": 2}"#)),
        ("no httpVersion", #"{"format": "HTTPVCR", "version": 1, "scenes": [{"chapter": 1, "time": 0.0, "response": "#
            + #"{"url": "http://x/", "status": 200, "headers": {}}}]}"#),
        ("an escaped key", #"{"format": "HTTPVCR", "version": 1, "\u0073cenes": []}"#),
        ("a repeated name's one value in an array", Self.response(headers: #"{"A": ["1"]}"#)),
        ("a repeated name's values with a number", Self.response(headers: #"{"A": ["1", 2]}"#)),
        ("a name twice", Self.response(headers: #"{"A": "1", "A": "2"}"#)),
        ("a name twice, once repeated", Self.response(headers: #"{"A": ["1", "2"], "b": "3", "A": "4"}"#)),
        ("a chapter with a fraction",
         #"{"format": "HTTPVCR", "version": 1, "scenes": [{"chapter": 1.0, "time": 0.0, "complete": true}]}"#),
    ])
    func declinesOtherLayoutsWhichTheOneReaderReads(layout: String, json: String) throws {
        let bytes = Data(json.utf8)
        #expect(HTTPVCRFormat.tape(readingWrittenLayout: bytes) == nil, "\(layout)")
        let tape = try HTTPVCRFormat.tape(from: CassetteFile.value(of: bytes, isPropertyList: false))
        #expect(try CassetteFile.decode(bytes, path: "/hand.json").tape == tape, "\(layout)")
    }

    /// Small departures it reads, as the one reader does.
    @Test(arguments: [
        ("a time written as a whole number",
         #"{"format": "HTTPVCR", "version": 1, "scenes": [{"chapter": 1, "time": 2, "complete": true}]}"#),
        ("headers out of order", Self.response(headers: #"{"b": "1", "A": "2"}"#)),
        ("repeated fields out of order", Self.response(headers: #"{"b": ["1", "2"], "A": "3", "a": ["4", "5"]}"#)),
        ("no whitespace", #"{"format":"HTTPVCR","version":1,"scenes":[{"chapter":1,"time":0.5,"complete":true}]}"#),
    ])
    func readsSmallDeparturesAsTheOneReaderDoes(layout: String, json: String) throws {
        let bytes = Data(json.utf8)
        #expect(HTTPVCRFormat.tape(readingWrittenLayout: bytes) != nil, "\(layout)")
        #expect(CassetteFile.writtenLayoutDisagreement(bytes) == nil, "\(layout)")
    }

    /// Two headers in either order come out in the one reader's order: names that differ only in case, one a prefix of
    /// the other, and bytes that sort one way as written and another case-folded (`_` lies between `Z` and `a`).
    @Test func headerPairsComeOutInTheOneReadersOrder() throws {
        let letters = ["a", "A", "b", "B", "z", "Z", "_", "-", "0"]
        let names = letters + letters.flatMap { first in letters.map { first + $0 } }
        var read = 0
        for first in names {
            for second in names where second != first {
                let bytes = Data(Self.response(headers: #"{"\#(first)": "1", "\#(second)": "2"}"#).utf8)
                if HTTPVCRFormat.tape(readingWrittenLayout: bytes) != nil { read += 1 }
                #expect(CassetteFile.writtenLayoutDisagreement(bytes) == nil, "\(first), \(second)")
            }
        }
        #expect(read == names.count * (names.count - 1))
    }

    /// Strings of random bytes, the specials at every offset of the eight-byte words the reader scans: whatever it
    /// reads, it reads as the one reader does, and what the one reader refuses it declines.
    @Test func randomStringsReadAsTheOneReaderReadsThem() {
        let pieces: [[UInt8]] = [
            Array("a".utf8), Array("Z".utf8), Array(" ".utf8), Array("~".utf8), Array("\\\"".utf8), Array("\\n".utf8),
            Array("\\u00e9".utf8), [0x7F], [0x01], [0x1F], Array("é".utf8), Array("🎞".utf8), [0xC3], [0xFF],
        ]
        var generator = SplitMix64(seed: 2_026_1125)
        var read = 0
        for round in 0..<3_000 {
            var text: [UInt8] = []
            for _ in 0..<generator.below(24) {
                // Mostly plain letters, so that runs of eight come up.
                text += generator.below(4) == 0 ? pieces[generator.below(pieces.count)] : pieces[generator.below(4)]
            }
            var bytes = Data(#"{"format": "HTTPVCR", "version": 1, "scenes": [{"chapter": 1, "time": 0.0, "data": ""#.utf8)
            bytes.append(contentsOf: text)
            bytes.append(contentsOf: Data(#""}]}"#.utf8))
            if HTTPVCRFormat.tape(readingWrittenLayout: bytes) != nil { read += 1 }
            #expect(CassetteFile.writtenLayoutDisagreement(bytes) == nil, "round \(round): \(text)")
        }
        #expect(read > 500 && read < 2_500, "the fast reader read \(read) of 3,000")
    }

    /// Our JSON is told from other JSON by `"format": "HTTPVCR"` within its first 64 bytes.
    @Test(arguments: [
        (#"{"format": "HTTPVCR", "version": 1, "scenes": []}"#, true),
        ("{" + String(repeating: " ", count: 44) + #""format": "HTTPVCR""#, true),
        ("{" + String(repeating: " ", count: 45) + #""format": "HTTPVCR""#, false),
        (#"["format": "HTTPVCR"]"#, false),
        (#"{"format": "HTTPVC"}"#, false),
        ("{", false),
        ("", false),
    ])
    func ourJSONIsToldByItsFirstBytes(json: String, isOurs: Bool) {
        #expect(HTTPVCRFormat.looksLikeJSONDocument(Data(json.utf8)) == isOurs, "\(json)")
    }

    /// Times are read exactly as the one reader reads them, on the short way (few digits, no exponent) and the long.
    @Test(arguments: [
        "0.0", "-0.0", "0.1", "0.25", "1234.5678", "12345678901234.5", "123456789012345.6", "0.30000000000000004",
        "0.0000000000000000000001", "0.00000000000000000000001", "2.5e-07", "1E+3", "9007199254740993",
        "0.012345678912345",
    ])
    func timesReadAsTheOneReaderReadsThem(time: String) throws {
        let bytes = Data(#"{"format": "HTTPVCR", "version": 1, "scenes": [{"chapter": 1, "time": \#(time), "complete": true}]}"#.utf8)
        let fast = try #require(HTTPVCRFormat.tape(readingWrittenLayout: bytes), "\(time)")
        #expect(CassetteFile.writtenLayoutDisagreement(bytes) == nil, "\(time)")
        #expect(fast.scenes.first?.time.bitPattern == Double(time)?.bitPattern, "\(time)")
    }

    /// Bad files are declined, so the one reader names what is wrong, as it always has.
    @Test(arguments: [
        ("truncated", #"{"format": "HTTPVCR", "version": 1, "scenes": [{"chapter": 1, "time": 0.0, "comp"#),
        ("a raw control character", "{\"format\": \"HTTPVCR\", \"version\": 1, \"scenes\": [{\"chapter\": 1, "
            + "\"time\": 0.0, \"data\": \"a\u{1}b\"}]}"),
        ("a lone surrogate", #"{"format": "HTTPVCR", "version": 1, "scenes": [{"chapter": 1, "time": 0.0, "data": "\ud800"}]}"#),
        ("a chapter too large", #"{"format": "HTTPVCR", "version": 1, "scenes": [{"chapter": 2147483648, "time": 0.0, "complete": true}]}"#),
        ("a number too large for an Int",
         #"{"format": "HTTPVCR", "version": 1, "scenes": [{"chapter": 99999999999999999999, "time": 0.0, "complete": true}]}"#),
        ("a time too small to hold", #"{"format": "HTTPVCR", "version": 1, "scenes": [{"chapter": 1, "time": 1e-400, "complete": true}]}"#),
        ("a time too large to hold", #"{"format": "HTTPVCR", "version": 1, "scenes": [{"chapter": 1, "time": 1e400, "complete": true}]}"#),
        ("a leading zero", #"{"format": "HTTPVCR", "version": 1, "scenes": [{"chapter": 01, "time": 0.0, "complete": true}]}"#),
        ("bad base64", #"{"format": "HTTPVCR", "version": 1, "scenes": [{"chapter": 1, "time": 0.0, "dataBase64": "@@@"}]}"#),
        ("trailing bytes", #"{"format": "HTTPVCR", "version": 1, "scenes": []} x"#),
        ("version 2", #"{"format": "HTTPVCR", "version": 2, "scenes": []}"#),
    ])
    func declinesBadFilesSoTheOneReaderNamesTheProblem(problem: String, json: String) throws {
        let bytes = Data(json.utf8)
        #expect(HTTPVCRFormat.tape(readingWrittenLayout: bytes) == nil, "\(problem)")
        #expect(throws: VCRError.self, "\(problem)") { try CassetteFile.decode(bytes, path: "/bad.json") }
    }

    @Test func invalidUTF8IsDeclined() {
        var bytes = Data(#"{"format": "HTTPVCR", "version": 1, "scenes": [{"chapter": 1, "time": 0.0, "data": "a"#.utf8)
        bytes.append(contentsOf: [0xC3, 0x28])
        bytes.append(contentsOf: Data(#""}]}"#.utf8))
        #expect(HTTPVCRFormat.tape(readingWrittenLayout: bytes) == nil)
        #expect(throws: VCRError.self) { try CassetteFile.decode(bytes, path: "/bad.json") }
    }

    /// Thousands of mutants of our JSON seed: many keep the writer's layout with odd values, many break it. Where
    /// the fast reader reads one, the one reader reads the same tape.
    @Test func agreesWithTheOneReaderOnMutants() {
        var read = 0
        var mutants = 0
        for index in stride(from: 0, to: 18_000, by: SeedFormat.allCases.count) {
            let mutant = Mutant.make(index: index, runSeed: 2_026_1125)
            guard mutant.seed.format == .httpvcrJSON else { continue }
            mutants += 1
            if HTTPVCRFormat.tape(readingWrittenLayout: mutant.bytes) != nil { read += 1 }
            #expect(CassetteFile.writtenLayoutDisagreement(mutant.bytes) == nil, "\(mutant.summary)")
        }
        #expect(mutants == 3_000)
        // Enough of both kinds for the comparison to mean something.
        #expect(read > 300 && mutants - read > 300, "the fast reader read \(read) of \(mutants) mutants")
    }

    static func response(headers: String) -> String {
        #"{"format": "HTTPVCR", "version": 1, "scenes": [{"chapter": 1, "time": 0.0, "response": "#
            + #"{"url": "http://x/", "status": 200, "httpVersion": "HTTP/1.1", "headers": \#(headers)}}]}"#
    }
}

private extension Tape {
    /// Headers as reading gives them back: sorted by name.
    var withHeadersSortedAsRead: Tape {
        Tape(scenes: scenes.map { scene in
            var scene = scene
            switch scene.event {
            case var .request(request):
                request.headers = request.headers.sortedByName()
                scene.event = .request(request)
            case var .response(response):
                response.headers = response.headers.sortedByName()
                scene.event = .response(response)
            case .redirect(var response, to: var request):
                response.headers = response.headers.sortedByName()
                request.headers = request.headers.sortedByName()
                scene.event = .redirect(response, to: request)
            default:
                break
            }
            return scene
        })
    }
}
