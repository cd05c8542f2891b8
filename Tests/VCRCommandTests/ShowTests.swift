import Foundation
import HTTPVCR
import Testing

@Suite struct ShowTests {
    /// The rows of the table: the lines after the header row.
    func rows(_ result: VCRTool.Result) -> [String] {
        let lines = result.lines
        guard let header = lines.firstIndex(where: { $0.contains("METHOD") && $0.contains("STATUS") }) else { return [] }
        return Array(lines[(header + 1)...])
    }

    /// The last four words of a row: bytes, chunks, and the time to first byte with its unit.
    func tail(_ row: String) -> [String] {
        Array(row.split(separator: " ").suffix(4).map(String.init))
    }

    func json(_ result: VCRTool.Result) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
        return try #require(object as? [String: Any])
    }

    @Test func vcrPyFixture() throws {
        let result = try VCRTool.run("show", VCRTool.vcrPyFixture.path)
        #expect(result.status == 0, "\(result)")
        // Nine interactions; the two hops of /redirect/2 are folded into its chapter.
        #expect(result.lines.first?.hasSuffix(": VCR.py, 7 requests") == true, "\(result)")
        let rows = rows(result)
        try #require(rows.count == 7, "\(result)")
        let firstBody = try #require(CassetteFile.read(at: VCRTool.vcrPyFixture).tape.interactions.first).body
        #expect(rows[0].contains("GET") && rows[0].contains("http://127.0.0.1:18765/get?q=swift+vcr&page=2"))
        #expect(rows[0].contains(" 200 ") && rows[0].contains(" \(firstBody.count) "), "\(rows[0])")
        #expect(rows[3].contains("/status/404") && rows[3].contains(" 404 "))
        #expect(rows[4].contains("/redirect/2") && rows[4].contains(" 302 → 302 → 200 "), "\(rows[4])")
        #expect(rows[1].hasPrefix("2  POST"))
    }

    @Test func everyYAHTTPVCRFixture() throws {
        let fixtures = VCRTool.yahttpvcrFixtures
        let folder = VCRTool.fixtures.appendingPathComponent("yahttpvcr").path
        try #require(!fixtures.isEmpty, "no YAHTTPVCR fixtures in \(folder)")
        #expect(fixtures.contains { $0.pathExtension == "plist" }, "the property list form is there too")
        for fixture in fixtures {
            let result = try VCRTool.run("show", fixture.path)
            #expect(result.status == 0, "\(fixture.lastPathComponent): \(result)")
            #expect(result.lines.first?.contains(": YAHTTPVCR, ") == true, "\(result)")
            let tape = try CassetteFile.read(at: fixture).tape
            #expect(rows(result).count == tape.interactions.count, "\(fixture.lastPathComponent): \(result)")
        }
    }

    @Test func errorsAreShownWithDomainAndCode() throws {
        let fixture = VCRTool.yahttpvcrFixture("get-timed-out.json")
        let result = try VCRTool.run("show", fixture.path)
        #expect(result.status == 0)
        #expect(rows(result).first?.contains("error NSURLErrorDomain -1001") == true, "\(result)")

        let data = try VCRTool.run("show", fixture.path, "--json")
        let requests = try #require(try json(data)["requests"] as? [[String: Any]])
        let error = try #require(requests.first?["error"] as? [String: Any])
        #expect(error["domain"] as? String == "NSURLErrorDomain")
        #expect(error["code"] as? Int == -1001)
        #expect(requests.first?["status"] is NSNull)
    }

    /// A cassette shaped like the recorder's: chunks, a redirect, a timeout, interleaved requests.
    @Test func recordedCassette() throws {
        let folder = try TemporaryFolder()
        let path = try folder.write(Tapes.recorded, "recorded.json")
        let result = try VCRTool.run("show", path)
        #expect(result.status == 0, "\(result)")
        let rows = rows(result)
        #expect(rows.count == 6)
        // #, method, URL, status, bytes, chunks, TTFB
        #expect(rows[0].contains("https://api.example.com/v1/items?page=2"))
        #expect(tail(rows[0]) == ["55", "3", "120", "ms"], "\(rows[0])")
        #expect(rows[1].contains("POST") && rows[1].contains(" 201 "))
        #expect(rows[2].contains("301 → 200"), "\(rows[2])")
        #expect(rows[3].contains("error NSURLErrorDomain -1001"), "\(rows[3])")
        #expect(tail(rows[3]) == ["0", "0", "1000", "ms"], "\(rows[3])")
        #expect(rows[4].contains("https://api.example.com/a"), "\(rows[4])")
        #expect(tail(rows[4]) == ["4", "2", "42", "ms"], "\(rows[4])")
    }

    @Test func jsonOutputParsesAndHasEveryRequest() throws {
        let folder = try TemporaryFolder()
        let path = try folder.write(Tapes.recorded, "recorded.json")
        let result = try VCRTool.run("show", path, "--json")
        #expect(result.status == 0, "\(result)")
        let document = try json(result)
        #expect(document["format"] as? String == "json")
        #expect(document["path"] as? String == path)
        let requests = try #require(document["requests"] as? [[String: Any]])
        #expect(requests.count == 6)
        #expect(requests.map { $0["index"] as? Int } == [1, 2, 3, 4, 5, 6])
        #expect(requests[0]["method"] as? String == "GET")
        #expect(requests[0]["status"] as? Int == 200)
        #expect(requests[0]["bodySize"] as? Int == 55)
        #expect(requests[0]["chunks"] as? Int == 3)
        #expect(requests[0]["timeToFirstByteMs"] as? Double == 120)
        #expect(requests[1]["requestBodySize"] as? Int == 16)
        let redirects = try #require(requests[2]["redirects"] as? [[String: Any]])
        #expect(redirects.first?["status"] as? Int == 301)
        #expect(redirects.first?["location"] as? String == "https://api.example.com/new")
        #expect(requests[3]["status"] is NSNull)
    }

    @Test func longURLsAreShortenedToFitUnlessWide() throws {
        let folder = try TemporaryFolder()
        let long = "https://api.example.com/v1/search?" + (1...30).map { "field\($0)=value\($0)" }.joined(separator: "&")
        let path = try folder.write(Tapes.tape(Tapes.exchange(url: long)), "long.json")
        let table = try VCRTool.run("show", path)
        #expect(table.status == 0)
        for row in rows(table) { #expect(row.count <= 120, "\(row.count): \(row)") }
        #expect(table.stdout.contains("…"))

        let wide = try VCRTool.run("show", path, "--wide")
        #expect(wide.stdout.contains(long))

        let json = try VCRTool.run("show", path, "--json")
        #expect(json.stdout.contains(long))
    }

    @Test func everyFormat() throws {
        let folder = try TemporaryFolder()
        let tape = Tapes.recorded
        let json = try folder.write(tape, "tape.json")
        let plist = try folder.write(tape, "tape.plist", as: .plist)
        let har = try folder.write(tape, "tape.har", as: .har)
        for (path, name) in [(json, "HTTPVCR JSON"), (plist, "HTTPVCR property list"), (har, "HAR")] {
            let result = try VCRTool.run("show", path)
            #expect(result.status == 0, "\(result)")
            // HAR writes chapter 3's hop as an entry of its own; read back, it is folded into chapter 3 again.
            #expect(result.lines.first == "\(path): \(name), 6 requests", "\(result)")
        }
    }

    @Test func emptyTape() throws {
        let folder = try TemporaryFolder()
        let path = try folder.write(Tape(), "empty-tape.json")
        let result = try VCRTool.run("show", path)
        #expect(result.status == 0)
        #expect(result.stdout == "\(path): HTTPVCR JSON, 0 requests\n")
        let json = try VCRTool.run("show", path, "--json")
        #expect((try self.json(json)["requests"] as? [Any])?.isEmpty == true)
    }

    @Test func showsHowOldTheCassetteIs() throws {
        let folder = try TemporaryFolder()
        let threeDaysAgo = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 - 3 * 86_400 - 60).rounded(.down))
        let url = "https://api.example.com/v1/items"
        let tape = Tape(interactions: [
            Interaction(
                chapter: 1, request: RecordedRequest(method: "GET", url: url, recordedAt: threeDaysAgo),
                response: RecordedResponse(url: url, statusCode: 200)
            ),
            Interaction(
                chapter: 2, request: RecordedRequest(method: "GET", url: url, recordedAt: Date()),
                response: RecordedResponse(url: url, statusCode: 200)
            ),
        ])
        let path = try folder.write(tape, "dated.json")
        let stamp = RecordingTime.text(of: threeDaysAgo)
        let result = try VCRTool.run("show", path)
        #expect(result.lines.first == "\(path): HTTPVCR JSON, 2 requests, recorded 3 days ago (oldest interaction \(stamp))")
        let document = try json(try VCRTool.run("show", path, "--json"))
        #expect(document["oldestRecording"] as? String == stamp)
        #expect((document["requests"] as? [[String: Any]])?.first?["recordedAt"] as? String == stamp)
        // Cassettes that do not say when they were recorded show no age.
        let undated = try folder.write(Tapes.recorded, "undated.json")
        #expect(try VCRTool.run("show", undated).lines.first?.contains("recorded") == false)
    }

    @Test func committedExamples() throws {
        let examples = VCRTool.packageRoot.appendingPathComponent("Cassettes.bundle/Examples")
        let names = try FileManager.default.contentsOfDirectory(atPath: examples.path).filter { $0.hasSuffix(".json") }
        #expect(!names.isEmpty)
        for name in names {
            // Run as the README does, from the package root with a relative path.
            let result = try VCRTool.run("show", "Cassettes.bundle/Examples/\(name)")
            #expect(result.status == 0, "\(result)")
            #expect(rows(result).count >= 5, "\(result)")
        }
    }
}

extension ShowTests {
    @Test func jsonEscapesWhatItMust() throws {
        let folder = try TemporaryFolder()
        let url = "https://api.example.com/search?q=%22quoted%22&emoji=🎞️&tab=\t\\"
        let tape = Tape(interactions: [Interaction(
            chapter: 1,
            request: RecordedRequest(method: "GET", url: url),
            response: nil,
            error: RecordedError(domain: "Custom\"Domain", code: 7, userInfo: [NSLocalizedDescriptionKey: "line\nbreak"])
        )])
        let path = try folder.write(tape, "escapes.json")
        let result = try VCRTool.run("show", path, "--json")
        #expect(result.status == 0, "\(result)")
        let document = try json(result)
        let request = try #require((document["requests"] as? [[String: Any]])?.first)
        #expect(request["url"] as? String == url)
        let error = try #require(request["error"] as? [String: Any])
        #expect(error["domain"] as? String == "Custom\"Domain")
        #expect(error["description"] as? String == "line\nbreak")
    }
}
