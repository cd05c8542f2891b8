import CassetteMutations
import Foundation
import Testing
@testable import HTTPVCR

extension VCRTests {
    /// A malformed cassette, whatever is wrong with it, gives a `VCRError` that names the file; none may trap and
    /// take the test process down with it: not when it is read, laid out as a cassette, replayed, or recorded onto.
    ///
    /// The mutants come from `CassetteMutations`, which `scripts/fuzz-cassettes` runs by the ten thousand. In the
    /// serialized suite: inserting is global, and the seconds of CPU these take would upset the playback tests
    /// there, which measure time.
    @Suite struct MalformedCassetteMutationTests {
        static let runSeed: UInt64 = 2_025_0304
        static let mutantCount = 1_200

        @Test func theSeedsAreValidCassettesOfEveryFormat() throws {
            for format in SeedFormat.allCases {
                #expect(!SeedCassette.seeds(of: format).isEmpty, "no seed for \(format.rawValue)")
            }
            for seed in SeedCassette.all {
                let decoded = try CassetteFile.decode(seed.bytes, path: "/seeds/\(seed.name).\(seed.fileExtension)")
                #expect(decoded.format == seed.format.cassetteFormat, "\(seed.format.rawValue) \(seed.name)")
                #expect(decoded.tape.interactions.count >= 3, "\(seed.format.rawValue) \(seed.name)")
            }
        }

        @Test func aMutantIsTheSameOnEveryRun() {
            for index in [0, 7, 999] {
                let first = Mutant.make(index: index, runSeed: 42)
                let again = Mutant.make(index: index, runSeed: 42)
                #expect(first.bytes == again.bytes && first.mutations == again.mutations)
            }
            #expect(Mutant.make(index: 7, runSeed: 42).bytes != Mutant.make(index: 7, runSeed: 43).bytes)
        }

        /// Reading either works or fails naming the file. What reads goes through the tape's API, gets a new chapter,
        /// is written and read back, and is laid out as a cassette (chapters, match index, player) that reserves
        /// chapters for recordings; a cassette that refuses it names the file too.
        @Test func mutantsReadOrFailNamingTheFile() throws {
            let folder = try TemporaryFolder()
            var read: [SeedFormat: Int] = [:]
            var rejected: [SeedFormat: Int] = [:]
            for index in 0..<Self.mutantCount {
                let mutant = Mutant.make(index: index, runSeed: Self.runSeed)
                let url = folder.url.appendingPathComponent(mutant.fileName)
                try mutant.bytes.write(to: url)
                let tape: Tape
                do {
                    tape = try CassetteFile.read(at: url).tape
                } catch {
                    #expect(error.code == .malformedCassette, "\(mutant.summary)")
                    #expect(error.message.contains(url.path), "\(mutant.summary): \(error)")
                    #expect(error.cassettePath == url.path, "\(mutant.summary): \(error)")
                    rejected[mutant.seed.format, default: 0] += 1
                    continue
                }
                read[mutant.seed.format, default: 0] += 1
                let problem = MutantCheck.exercise(tape, path: url.path)
                #expect(problem == nil, "\(mutant.summary): \(problem ?? "")")
                do {
                    let configuration = MutantCheck.configuration(for: mutant, at: url)
                    let cassette = try Cassette(configuration: configuration, url: url)
                    let chapters = [cassette.reserveChapter(), cassette.reserveChapter(), cassette.reserveChapter()]
                    #expect(Set(chapters).count == 3, "\(mutant.summary): \(chapters)")
                    #expect(chapters.allSatisfy { Tape.chapterNumbers.contains($0) }, "\(mutant.summary): \(chapters)")
                    #expect(!tape.scenes.contains { chapters.contains($0.chapter) }, "\(mutant.summary): \(chapters)")
                    _ = (cassette.requests, cassette.responses, cassette.unplayedRequests, cassette.tape)
                } catch {
                    // A chapter before its request (or, under VCR_RECORD_MODE=new, a foreign cassette).
                    #expect(error.message.contains(url.path), "\(mutant.summary): \(error)")
                }
            }
            // Both outcomes, for every format: the mutations neither all break the file nor all miss.
            for format in SeedFormat.allCases {
                #expect(read[format, default: 0] > 20, "\(format.rawValue): \(read[format, default: 0]) read")
                let count = rejected[format, default: 0]
                #expect(count > 20, "\(format.rawValue): \(count) rejected")
            }
        }

        /// Mutants inserted for real (`.never`), their first requests replayed through URLSession, then ejected.
        @Test func readableMutantsInsertReplayAndEject() async throws {
            let folder = try TemporaryFolder()
            var inserted = 0
            try await holdingCassettes {
                for index in 0..<600 {
                    let mutant = Mutant.make(index: index, runSeed: Self.runSeed)
                    let result = await MutantCheck.check(mutant, in: folder.url) { configure, whileInserted in
                        try await withCassette(mutant.fileName, in: folder.path, configure) { cassette in
                            await whileInserted(cassette)
                            let chapters = [cassette.reserveChapter(), cassette.reserveChapter()]
                            #expect(chapters[0] != chapters[1], "\(mutant.summary)")
                        }
                    }
                    #expect(!result.outcome.isFailure, "\(mutant.summary): \(result.message ?? "")")
                    if result.outcome == .inserted { inserted += 1 }
                }
            }
            #expect(VCR.cassette == nil)
            #expect(inserted > 100, "only \(inserted) of 600 mutants were inserted")
        }
    }
}

// MARK: - Regressions

/// Each of these trapped, or read a wrong value, before.
@Suite struct MalformedCassetteRegressionTests {
    static func document(chapter: String, time: String = "0.0") -> String {
        #"{"format": "HTTPVCR", "version": 1, "scenes": [{"chapter": \#(chapter), "time": \#(time), "#
            + #""request": {"method": "GET", "url": "https://api.example.test/a"}}]}"#
    }

    /// The error reading `content` as the file `name` gives, after checking that it names the file, and that
    /// laying the file out as a cassette (what inserting it does) fails the same way.
    static func readError(_ content: Data, name: String) throws -> VCRError {
        let folder = try TemporaryFolder()
        let url = folder.url.appendingPathComponent(name)
        try content.write(to: url)
        var configuration = VCRConfiguration()
        configuration.recordMode = .never
        #expect(throws: VCRError.self) { _ = try Cassette(configuration: configuration, url: url) }
        do {
            let tape = try CassetteFile.read(at: url).tape
            Issue.record("\(name) was read: \(tape.scenes.map(\.chapter))")
            return VCRError(.malformedCassette, "")
        } catch {
            #expect(error.code == .malformedCassette)
            #expect(error.message.contains("Malformed cassette \(url.path): "), "\(error.message)")
            return error
        }
    }

    /// `Tape.nextChapter` did `max + 1`, and the whole test process died inserting this file.
    @Test(arguments: [
        ("9223372036854775807",
         "chapter 9223372036854775807 is out of range (chapter numbers run from 0 to 2147483647)"),
        ("2147483648", "chapter 2147483648 is out of range"),
        ("-1", "chapter -1 is out of range"),
        // Read through NSNumber.intValue, these wrapped around to Int.min rather than failing.
        ("9223372036854775808", "expected a whole number that fits in 64 bits, found 9223372036854775808"),
        ("1e19", "expected a whole number that fits in 64 bits, found 1e+19"),
        ("1e308", "expected a whole number that fits in 64 bits, found 1e+308"),
        ("1.5", "expected a whole number that fits in 64 bits, found 1.5"),
    ])
    func chaptersOutOfRangeAreErrors(chapter: String, expected: String) throws {
        // The same document with its keys in two orders, then as a property list: every way in says the same.
        let json = Self.document(chapter: chapter)
        let general = json.replacingOccurrences(of: #"{"format": "HTTPVCR", "version": 1, "#,
                                                with: #"{"version": 1, "format": "HTTPVCR", "#)
        for (content, name) in [(json, "fast.json"), (general, "general.json")] {
            let error = try Self.readError(Data(content.utf8), name: name)
            #expect(error.message.contains("scenes[0].chapter: \(expected)"), "\(error.message)")
        }
        if let value = Int(chapter) {
            let plist = try PropertyListSerialization.data(fromPropertyList: [
                "format": "HTTPVCR", "version": 1,
                "scenes": [["chapter": value, "request": ["method": "GET", "url": "https://api.example.test/a"]]],
            ] as [String: Any], format: .xml, options: 0)
            let error = try Self.readError(plist, name: "chapter.plist")
            #expect(error.message.contains("scenes[0].chapter: \(expected)"), "\(error.message)")
        }
    }

    @Test func aCassetteAtTheLargestChapterTakesNewChaptersBelowIt() throws {
        let folder = try TemporaryFolder()
        let url = folder.url.appendingPathComponent("largest.json")
        let request = RecordedRequest(method: "GET", url: "https://api.example.test/a")
        let tape = Tape(scenes: [1, 3, 2_147_483_647].map { Scene(chapter: $0, event: .request(request)) })
        try CassetteFile.write(tape, to: url, as: .json)
        #expect(try CassetteFile.read(at: url).tape == tape)
        #expect(tape.nextChapter == 2)

        var configuration = VCRConfiguration()
        configuration.recordMode = .never
        let cassette = try Cassette(configuration: configuration, url: url)
        #expect((0..<3).map { _ in cassette.reserveChapter() } == [2, 4, 5])

        // Below the largest, chapters still count up from the highest.
        let below = Tape(scenes: [Scene(chapter: 2_147_483_646, event: .request(request))])
        #expect(below.nextChapter == 2_147_483_647)
    }

    @Test func aTapeBuiltWithTheLargestIntHasANextChapter() {
        let request = RecordedRequest(method: "GET", url: "https://api.example.test/a")
        let tape = Tape(scenes: [Int.max, 1, Int.min].map { Scene(chapter: $0, event: .request(request)) })
        #expect(tape.nextChapter == 2)
        #expect(Tape(scenes: [Scene(chapter: -5, event: .request(request))]).nextChapter == 1)
    }

    @Test func numbersThatDoNotFitAreErrorsInEveryFormat() throws {
        let har = #"{"log": {"entries": [{"request": {"method": "GET", "url": "https://api.example.test/"}, "#
            + #""response": {"status": 18446744073709551616}}]}}"#
        #expect(try Self.readError(Data(har.utf8), name: "status.har").message
            .contains("log.entries[0].response.status: expected a whole number that fits in 64 bits"))
        let yahttpvcr = #"[{"id": "a", "type": 0.5, "data": {}}]"#
        #expect(try Self.readError(Data(yahttpvcr.utf8), name: "type.json").message
            .contains("scene[0].type: expected a whole number that fits in 64 bits, found 0.5"))
        let vcrpy = #"{"version": 1, "interactions": [{"request": {"method": "GET", "uri": "https://a.test/"}, "#
            + #""response": {"status": {"code": 1e300}}}]}"#
        #expect(try Self.readError(Data(vcrpy.utf8), name: "code.json").message
            .contains("interactions[0].response.status.code: expected a whole number that fits in 64 bits"))
    }

    /// Property lists can hold `nan` and `inf`; no time is either.
    @Test func timesThatAreNotFiniteAreErrors() throws {
        let scene = "<dict><key>chapter</key><integer>1</integer><key>time</key><real>nan</real><key>request</key>"
            + "<dict><key>method</key><string>GET</string><key>url</key><string>https://a.test/</string></dict></dict>"
        let plist = #"<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict><key>format</key>"#
            + "<string>HTTPVCR</string><key>version</key><integer>1</integer><key>scenes</key><array>\(scene)"
            + "</array></dict></plist>"
        #expect(try Self.readError(Data(plist.utf8), name: "time.plist").message
            .contains("scenes[0].time: expected a finite number, found nan"))

        let har: [String: Any] = ["log": ["entries": [[
            "request": ["method": "GET", "url": "https://a.test/"],
            "response": ["status": 200],
            "timings": ["wait": Double.infinity],
        ]]]]
        let data = try PropertyListSerialization.data(fromPropertyList: har, format: .binary, options: 0)
        #expect(try Self.readError(data, name: "timings.har").message
            .contains("log.entries[0].timings.wait: expected a finite number"))
        let huge: [String: Any] = ["log": ["entries": [[
            "request": ["method": "GET", "url": "https://a.test/"],
            "response": ["status": 200],
            "timings": ["dns": 1e308, "connect": 1e308],
        ]]]]
        #expect(try Self.readError(PropertyListSerialization.data(fromPropertyList: huge, format: .xml, options: 0),
                                   name: "sum.har").message.contains("log.entries[0].timings: the phases"))
    }

    /// A stack overflow is a crash too: nesting stops at 512 levels, in every parser HTTPVCR uses.
    @Test(arguments: [513, 10_000, 100_000])
    func deepNestingIsAnError(depth: Int) throws {
        let deepJSON = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        let json = #"{"format": "HTTPVCR", "version": 1, "scenes": [{"chapter": 1, "x": "# + deepJSON + "}]}"
        #expect(try Self.readError(Data(json.utf8), name: "deep.json").message.contains("Too many nested"))

        let deepXML = String(repeating: "<array>", count: depth) + String(repeating: "</array>", count: depth)
        let plist = #"<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict><key>format</key>"#
            + "<string>HTTPVCR</string><key>scenes</key>\(deepXML)</dict></plist>"
        #expect(try Self.readError(Data(plist.utf8), name: "deep.plist").message
            .contains("not valid property list: nested more than 512 levels deep"))

        // A binary property list nests through references; Foundation stops it.
        _ = try Self.readError(Self.deepBinaryPropertyList(depth), name: "deep-binary.plist")
    }

    @Test func nestingWithinTheLimitStillReads() throws {
        let deepXML = String(repeating: "<array>", count: 400) + String(repeating: "</array>", count: 400)
        let plist = #"<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict><key>format</key>"#
            + "<string>HTTPVCR</string><key>version</key><integer>1</integer><key>scenes</key><array></array>"
            + "<key>extra</key>\(deepXML)<!-- <array><array> --></dict></plist>"
        #expect(try CassetteFile.decode(Data(plist.utf8), path: "/x.plist").tape.scenes.isEmpty)
    }

    /// What a plain `JSONDecoder` rejects with only "not valid JSON" (a number as a header value, bad UTF-8): the
    /// reader accepts the first and names the problem, and where it is, in the second.
    @Test func numericHeadersReadAndBadUTF8IsNamed() throws {
        let numericHeader = #"{"format": "HTTPVCR", "version": 1, "scenes": [{"chapter": 1, "request": "#
            + #"{"method": "GET", "url": "https://a.test/", "headers": {"X-Count": 3}}}]}"#
        let tape = try CassetteFile.decode(Data(numericHeader.utf8), path: "/numeric.json").tape
        #expect(tape.interactions.first?.request.headers == [RecordedHeader("X-Count", "3")])
        let badUTF8 = Data(#"{"format": "HTTPVCR", "version": 1, "scenes": [{"chapter": 1, "data": ""#.utf8)
            + Data([0xC3, 0x28]) + Data(#""}]}"#.utf8)
        #expect(try Self.readError(badUTF8, name: "utf8.json").message.contains("Invalid UTF-8 in a string at line 1, column 71"))
    }

    /// Object `i` is a one-element array holding object `i + 1`.
    static func deepBinaryPropertyList(_ depth: Int) -> Data {
        var bytes = Array("bplist00".utf8)
        var offsets: [Int] = []
        for index in 0...depth {
            offsets.append(bytes.count)
            if index == depth {
                bytes.append(0xA0)
            } else {
                bytes.append(0xA1)
                bytes += [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: (index + 1) >> $0) }
            }
        }
        let table = bytes.count
        for offset in offsets { bytes += [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: offset >> $0) } }
        func bigEndian64(_ value: Int) -> [UInt8] {
            (0..<8).reversed().map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) }
        }
        bytes += [0, 0, 0, 0, 0, 0, 4, 4] + bigEndian64(depth + 1) + bigEndian64(0) + bigEndian64(table)
        return Data(bytes)
    }
}
