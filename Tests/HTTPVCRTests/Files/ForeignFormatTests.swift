import Foundation
import Testing
@testable import HTTPVCR
import HTTPBinTestSupport

/// Reading cassettes written by other tools (YAHTTPVCR, VCR.py, HAR) from real fixtures, and writing HAR.
@Suite struct ForeignFormatTests {
    // MARK: Fixtures

    /// `<package root>/Tests/Fixtures`, the package root being the nearest folder above this file with a
    /// Package.swift: other tools' cassettes this project made itself (its README says how).
    static let fixtures: URL = {
        var folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while folder.path != "/",
              !FileManager.default.fileExists(atPath: folder.appendingPathComponent("Package.swift").path) {
            folder.deleteLastPathComponent()
        }
        return folder.appendingPathComponent("Tests/Fixtures")
    }()

    /// The YAHTTPVCR cassettes these tests know: each name says what its tape holds.
    static let knownYAHTTPVCRFixtures = [
        "get-cancelled.json", "get-empty-body.json", "get-followed-redirects.json", "get-json-response.json",
        "get-timed-out.json", "interleaved-slow-and-fast.json", "post-json-body.json", "post-json-body.plist",
    ]

    /// The JSON YAHTTPVCR cassettes on disk: none when the folder is missing, which `theFixturesArePresent` reports
    /// (listing the folder rather than the names keeps a missing folder to that one failure).
    static let yahttpvcrFixtureNames: [String] = {
        let folder = fixtures.appendingPathComponent("yahttpvcr")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { $0.hasSuffix(".json") }.sorted()
    }()

    static func yahttpvcrFixture(_ name: String) -> URL {
        fixtures.appendingPathComponent("yahttpvcr").appendingPathComponent(name)
    }

    /// Recorded by VCR.py with `Tests/Fixtures/vcrpy/make-fixtures`, its server moved to `vcrpyBase`.
    static let vcrpyFixture = fixtures.appendingPathComponent("vcrpy/httpbin-basics.json")
    static let vcrpyBase = "http://127.0.0.1:18765"

    /// What the YAHTTPVCR fixtures were written with (`Tests/Fixtures/yahttpvcr/make-fixtures.py`).
    static let yahttpvcrUserAgent = "HTTPVCRFixtures/1.0 CFNetwork/1410.0.3 Darwin/22.6.0"

    /// The error a malformed document fails with; records an issue when it reads.
    static func malformedError(_ text: String, path: String = "cassette.json") -> VCRError? {
        do {
            _ = try CassetteFile.decode(Data(text.utf8), path: path)
            Issue.record("\(path) read although it is malformed")
            return nil
        } catch {
            return error
        }
    }

    static func jsonObject(_ data: Data) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    // MARK: YAHTTPVCR

    @Test func theFixturesArePresent() {
        for name in Self.knownYAHTTPVCRFixtures {
            let path = Self.yahttpvcrFixture(name).path
            #expect(
                FileManager.default.fileExists(atPath: path),
                "missing fixture \(path): rewrite it with `python3 Tests/Fixtures/yahttpvcr/make-fixtures.py`"
            )
        }
        let unknown = Set(Self.yahttpvcrFixtureNames).subtracting(Self.knownYAHTTPVCRFixtures)
        #expect(unknown.isEmpty, "fixtures these tests do not know: add them to knownYAHTTPVCRFixtures")
        #expect(
            FileManager.default.fileExists(atPath: Self.vcrpyFixture.path),
            "missing fixture \(Self.vcrpyFixture.path): record it with `Tests/Fixtures/vcrpy/make-fixtures`"
        )
    }

    @Test(arguments: yahttpvcrFixtureNames)
    func yahttpvcrFixtureReadsAsItsNameSays(_ name: String) throws {
        let (tape, format) = try CassetteFile.read(at: Self.yahttpvcrFixture(name))
        #expect(format == .yahttpvcr)
        #expect(format.isForeign)
        let interactions = tape.interactions
        #expect(!interactions.isEmpty)
        #expect(interactions.map(\.chapter) == Array(1...max(1, interactions.count)))
        #expect(tape.scenes.allSatisfy { $0.time == 0 })
        for interaction in interactions {
            #expect(interaction.request.method == interaction.request.method.uppercased())
            #expect(interaction.request.url.hasPrefix("https://httpbin.org/"))
            #expect(interaction.request.headers[field: "User-Agent"] == Self.yahttpvcrUserAgent)
            #expect(interaction.request.headers[field: "Authorization"] == "Basic YWRhOmxvdmVsYWNl")
            #expect(interaction.redirects.isEmpty)
        }
        let first = try #require(interactions.first)

        if name.hasPrefix("post-") {
            #expect(first.request.method == "POST")
            let body = try #require(first.request.body)
            let fields = try Self.jsonObject(body)
            #expect(fields["title"] as? String == "Mixtape")
            #expect(first.response?.statusCode == 200)
            let echoed = try Self.jsonObject(first.body)["json"] as? [String: Any]
            #expect(echoed?["tracks"] as? Int == 12)
        } else {
            #expect(first.request.method == "GET")
            #expect(first.request.body == nil)
        }

        if name.contains("timed-out") || name.contains("cancelled") {
            let error = try #require(first.error)
            #expect(error.domain == "NSURLErrorDomain")
            #expect(error.code == (name.contains("cancelled") ? -999 : -1001))
            #expect(error.userInfo["NSErrorFailingURLStringKey"] == first.request.url)
            #expect(first.response == nil)
            #expect(first.scenes.count == 2)
            if error.code == -1001 {
                #expect(error.userInfo["NSLocalizedDescription"] == "The request timed out.")
                #expect(error.userInfo["_kCFStreamErrorCodeKey"] == "-2102")
                #expect(error.userInfo["NSUnderlyingError"] == "Error Domain=kCFErrorDomainCFNetwork Code=-1001")
            }
        } else {
            #expect(first.error == nil)
            #expect(first.response?.statusCode == 200)
            #expect(first.response?.headers[field: "Content-Length"] == String(first.body.count))
            if case .completion = first.scenes.last?.event {} else { Issue.record("\(name) does not complete") }
        }

        if name.contains("followed-redirects") {
            // URLSession followed the redirects itself: the tape holds the final 200 for the original URL.
            #expect(first.request.url.hasSuffix("/redirect/3"))
            #expect(first.response?.url == first.request.url)
            #expect(first.response?.statusCode == 200)
            #expect(try Self.jsonObject(first.body)["url"] as? String == "https://httpbin.org/get")
        }

        if name.contains("empty-body") {
            #expect(first.body.isEmpty)
            #expect(first.chunks == [Data()])
            #expect(first.response?.headers[field: "Content-Length"] == "0")
        }

        if name.hasPrefix("interleaved-") {
            try #require(interactions.count == 2)
            #expect(interactions[0].request.url.hasSuffix("/delay/2"))
            #expect(interactions[1].request.url.hasSuffix("/get"))
            #expect(interactions[0].chunks.count == 2, "the slow answer came in two pieces")
            // The order of the scenes is the order things happened: /get finished before /delay/2 answered.
            let getCompletion = tape.scenes.firstIndex {
                if case .completion = $0.event { $0.chapter == 2 } else { false }
            }
            let delayResponse = tape.scenes.firstIndex {
                if case .response = $0.event { $0.chapter == 1 } else { false }
            }
            let completion = try #require(getCompletion)
            let response = try #require(delayResponse)
            #expect(completion < response)
            #expect(tape.scenes[1].chapter == 2)
        } else {
            #expect(interactions.count == 1)
        }

        if name.hasPrefix("get-json-response") {
            let args = try Self.jsonObject(first.body)["args"] as? [String: Any]
            #expect(args?["lang"] as? String == "swift")
            #expect(first.response?.headers[field: "content-type"] == "application/json")
        }
    }

    /// YAHTTPVCR saves a cassette not named .json as a property list of the same objects.
    @Test func yahttpvcrPropertyListFixtureReadsAsItsJSONTwin() throws {
        let (plist, format) = try CassetteFile.read(at: Self.yahttpvcrFixture("post-json-body.plist"))
        #expect(format == .yahttpvcr)
        let (json, _) = try CassetteFile.read(at: Self.yahttpvcrFixture("post-json-body.json"))
        #expect(plist == json)
    }

    /// Property lists: YAHTTPVCR writes `{cls, base64}` strings; a plist may also hold the bytes themselves.
    @Test(arguments: yahttpvcrFixtureNames)
    func yahttpvcrAsPropertyListReadsTheSame(_ name: String) throws {
        let url = Self.yahttpvcrFixture(name)
        let (tape, _) = try CassetteFile.read(at: url)
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: url))

        let variants: [(Any, PropertyListSerialization.PropertyListFormat)] = [
            (object, .xml),
            (object, .binary),
            (Self.replacingBase64(object, wholeValue: true), .xml),
            (Self.replacingBase64(object, wholeValue: false), .xml),
        ]
        for (variant, plistFormat) in variants {
            let data = try PropertyListSerialization.data(fromPropertyList: variant, format: plistFormat, options: 0)
            let (read, format) = try CassetteFile.decode(data, path: "cassette.plist")
            #expect(format == .yahttpvcr)
            #expect(read == tape)
        }
    }

    /// Replaces `{"cls": "NSData", "base64": text}` by the bytes, or by `{"cls": "NSData", "base64": bytes}`.
    static func replacingBase64(_ value: Any, wholeValue: Bool) -> Any {
        if let dictionary = value as? [String: Any] {
            if dictionary["cls"] as? String == "NSData", let text = dictionary["base64"] as? String,
               let data = Data(base64Encoded: text) {
                return wholeValue ? data : ["cls": "NSData", "base64": data] as [String: Any]
            }
            return dictionary.mapValues { replacingBase64($0, wholeValue: wholeValue) }
        }
        if let array = value as? [Any] { return array.map { replacingBase64($0, wholeValue: wholeValue) } }
        return value
    }

    @Test func yahttpvcrMalformedScenesNameTheField() throws {
        let request = """
            {"id": "A", "type": 0, "data": {"cls": "NSURLRequest", "method": "get", "url": "https://x.test/", \
            "headers": {}}}
            """
        let response = """
            {"id": "A", "type": 1, "data": {"cls": "NSHTTPURLResponse", "status": 200, "url": "https://x.test/", \
            "headers": {}}}
            """
        let badBase64 = #"{"id": "A", "type": 2, "data": {"cls": "NSData", "base64": "e30"}}"#
        let error = try #require(Self.malformedError("[\(request), \(response), \(badBase64)]"))
        #expect(error.code == .malformedCassette)
        #expect(error.message.contains("scene[2].data.base64: not valid base64"))

        let unknownType = try #require(Self.malformedError(#"[\#(request), {"id": "A", "type": 9}]"#))
        #expect(unknownType.message.contains("scene[1].type: unknown scene type 9"))

        let noRequest = try #require(Self.malformedError("[\(response)]"))
        #expect(noRequest.message.contains("scene[0]: chapter A starts with a response scene"))

        let statusText = response.replacingOccurrences(of: "200", with: "\"200\"")
        let badStatus = try #require(Self.malformedError("[\(request), \(statusText)]"))
        #expect(badStatus.message.contains("scene[1].data.status: expected a number, found a string"))
    }

    @Test func anEmptyArrayIsNotAYAHTTPVCRCassette() throws {
        let error = try #require(Self.malformedError("[]"))
        #expect(error.message.contains("not a cassette format HTTPVCR knows"))
    }

    // MARK: VCR.py

    @Test func vcrpyFixtureReads() throws {
        let (tape, format) = try CassetteFile.read(at: Self.vcrpyFixture)
        #expect(format == .vcrpy)
        let interactions = tape.interactions
        // Nine interactions; the three of /redirect/2 (two hops and the 200) are one chapter.
        try #require(interactions.count == 7, "\(Self.vcrpyFixture.path)")
        #expect(interactions.map(\.chapter) == Array(1...7))
        let methods = ["GET", "POST", "POST", "GET", "GET", "GET", "GET"]
        #expect(interactions.map(\.request.method) == methods)
        let base = Self.vcrpyBase
        #expect(interactions.map(\.request.url) == [
            "\(base)/get?q=swift+vcr&page=2", "\(base)/post", "\(base)/post", "\(base)/status/404",
            "\(base)/redirect/2", "\(base)/gzip", "\(base)/cookies/set?session=abc123&theme=dark",
        ])
        #expect(interactions.map { $0.response?.statusCode } == [200, 200, 200, 404, 200, 200, 302])
        #expect(interactions.allSatisfy {
            $0.response?.url == ($0.redirects.last?.request.url ?? $0.request.url) && $0.error == nil
        })

        let first = interactions[0]
        #expect(first.request.body == nil)
        #expect(first.request.headers[field: "Accept-Encoding"] == "gzip, deflate")
        let args = try Self.jsonObject(first.body)["args"] as? [String: Any]
        #expect(args?["q"] as? String == "swift vcr")

        let jsonPost = interactions[1]
        let sent = try Self.jsonObject(try #require(jsonPost.request.body))
        #expect(sent["name"] as? String == "Ada")
        #expect(jsonPost.request.headers[field: "Content-Type"] == "application/json")

        let formPost = interactions[2]
        #expect(formPost.request.body == Data("user=bob&password=hunter2".utf8))
        let form = try Self.jsonObject(formPost.body)["form"] as? [String: Any]
        #expect(form?["user"] as? String == "bob")

        #expect(interactions[3].body.isEmpty)
        let redirected = interactions[4]
        #expect(redirected.redirects.map(\.response.statusCode) == [302, 302])
        #expect(redirected.redirects.map { $0.response.headers[field: "Location"] } == ["/relative-redirect/1", "/get"])
        #expect(redirected.redirects.map(\.response.url) == ["\(base)/redirect/2", "\(base)/relative-redirect/1"])
        #expect(redirected.redirects.map(\.request.url) == ["\(base)/relative-redirect/1", "\(base)/get"])
        #expect(try Self.jsonObject(redirected.body)["url"] as? String == "\(base)/get")

        // VCR.py stored the gzip body decompressed: the header that says otherwise is gone.
        let gzip = interactions[5]
        let headers = try #require(gzip.response?.headers)
        #expect(headers[field: "Content-Encoding"] == nil)
        #expect(headers[field: "Content-Length"] == String(gzip.body.count))
        #expect(headers[field: "Content-Type"] == "application/json")
        #expect(try Self.jsonObject(gzip.body)["gzipped"] as? Bool == true)

        // Not followed (its Location, /cookies, is not the next interaction): the client gets the 302.
        let cookies = interactions[6]
        #expect(cookies.redirects.isEmpty)
        #expect(cookies.response?.headers[field: "Location"] == "/cookies")
        #expect(cookies.response?.headers[field: "Set-Cookie"] == "session=abc123; Path=/, theme=dark; Path=/")
    }

    @Test func vcrpyBodyShapes() throws {
        let document = """
            {"version": 1, "interactions": [
              {"request": {"method": "PUT", "uri": "https://x.test/a", "body": {"base64_string": "AAEC/w=="},
                           "headers": {"X-Count": [1]}},
               "response": {"status": {"code": 201, "message": "Created"}, "headers": {},
                            "body": {"string": {"base64_string": "/wA="}}}},
              {"request": {"method": "GET", "uri": "https://x.test/b", "body": null, "headers": {}},
               "response": {"status": {"code": 200, "message": "OK"},
                            "headers": {"Content-Encoding": ["gzip"], "Content-Length": ["3"]},
                            "body": {"base64_string": "H4sIAA=="}}}
            ]}
            """
        let (tape, format) = try CassetteFile.decode(Data(document.utf8), path: "cassette.json")
        #expect(format == .vcrpy)
        let interactions = tape.interactions
        #expect(interactions[0].request.body == Data([0, 1, 2, 255]))
        #expect(interactions[0].request.headers[field: "X-Count"] == "1")
        #expect(interactions[0].body == Data([255, 0]))
        #expect(interactions[1].request.body == nil)
        // A body that really is gzip keeps its header.
        #expect(interactions[1].response?.headers[field: "Content-Encoding"] == "gzip")
        #expect(interactions[1].response?.headers[field: "Content-Length"] == "3")
    }

    @Test func vcrpyUnknownVersionIsRefused() throws {
        let error = try #require(Self.malformedError(#"{"version": 2, "interactions": []}"#))
        #expect(error.code == .malformedCassette)
        #expect(error.message.contains("unknown VCR.py cassette version 2"))

        let badHeader = """
            {"version": 1, "interactions": [{"request": {"method": "GET", "uri": "https://x.test/", "body": null,
              "headers": {"Accept": [["nested"]]}}, "response": {"status": {"code": 200}, "headers": {},
              "body": {"string": ""}}}]}
            """
        let headerError = try #require(Self.malformedError(badHeader))
        #expect(headerError.message.contains("interactions[0].request.headers.Accept[0]: expected a string"))
    }

    // MARK: HAR

    /// The VCR.py tape plus a binary exchange and a transport error: everything HAR can hold.
    static func richTape() throws -> Tape {
        let (vcrpy, _) = try CassetteFile.read(at: vcrpyFixture)
        let binary = Interaction(
            chapter: vcrpy.interactions.count + 1,
            request: RecordedRequest(
                method: "PUT",
                url: "https://example.test/upload?name=a%20b&flag",
                headers: [RecordedHeader("Content-Type", "application/octet-stream")],
                body: Data([0x00, 0xFF, 0xFE, 0x80, 0x0A])
            ),
            response: RecordedResponse(
                url: "https://example.test/upload?name=a%20b&flag",
                statusCode: 201,
                httpVersion: "HTTP/2",
                headers: [RecordedHeader("Content-Type", "image/png"), RecordedHeader("X-Request-Id", "42")]
            ),
            chunks: [Data((0...255).map { UInt8($0) })],
            timeToFirstByte: 0.25,
            duration: 0.5
        )
        let failure = Interaction(
            chapter: vcrpy.interactions.count + 2,
            request: RecordedRequest(method: "GET", url: "https://gone.example.test/"),
            response: nil,
            error: RecordedError(
                domain: "NSURLErrorDomain",
                code: -1003,
                userInfo: ["NSLocalizedDescription": "A server with the specified hostname could not be found."]
            ),
            timeToFirstByte: 0.125,
            duration: 0.125
        )
        return Tape(interactions: vcrpy.interactions + [binary, failure])
    }

    @Test func harRoundTripKeepsRequestsResponsesAndBodies() throws {
        let tape = try Self.richTape()
        let data = try CassetteFile.encode(tape, as: .har)
        let (read, format) = try CassetteFile.decode(data, path: "x.har")
        #expect(format == .har)
        let written = tape.interactions
        let back = read.interactions
        try #require(back.count == written.count)
        for (original, copy) in zip(written, back) {
            #expect(copy.chapter == original.chapter)
            #expect(copy.request == original.request)
            #expect(copy.redirects == original.redirects)
            #expect(copy.response == original.response)
            #expect(copy.body == original.body)
            #expect(copy.error == original.error)
            #expect(copy.timeToFirstByte == original.timeToFirstByte)
        }
        #expect(back[4].redirects.count == 2)
        #expect(back[7].body == Data((0...255).map { UInt8($0) }))
        #expect(back[7].request.body == Data([0x00, 0xFF, 0xFE, 0x80, 0x0A]))
        #expect(back[7].response?.httpVersion == "HTTP/2")
        #expect(back[8].response == nil)
        #expect(back[8].error?.code == -1003)
        #expect(HARFormat.lossNotes(tape).isEmpty)
    }

    @Test func harDocumentHasTheFieldsHARViewersExpect() throws {
        let data = try CassetteFile.encode(try Self.richTape(), as: .har)
        let log = try #require(try Self.jsonObject(data)["log"] as? [String: Any])
        #expect(log["version"] as? String == "1.2")
        let creator = log["creator"] as? [String: Any]
        #expect(creator?["name"] as? String == "HTTPVCR")
        #expect(creator?["version"] as? String == "1")
        let entries = try #require(log["entries"] as? [[String: Any]])
        try #require(entries.count == 11)
        #expect(entries[0]["startedDateTime"] as? String == "1970-01-01T00:00:00.000Z")
        #expect(entries[1]["startedDateTime"] as? String == "1970-01-01T00:00:00.001Z")
        #expect((entries[0]["cache"] as? [String: Any])?.isEmpty == true)

        let request = try #require(entries[0]["request"] as? [String: Any])
        let query = request["queryString"] as? [[String: String]]
        #expect(query == [["name": "q", "value": "swift+vcr"], ["name": "page", "value": "2"]])
        #expect(request["headersSize"] as? Int == -1)
        #expect(request["bodySize"] as? Int == 0)
        #expect(request["postData"] == nil)
        let headers = try #require(request["headers"] as? [[String: String]])
        #expect(headers.contains(["name": "User-Agent", "value": "python-requests/2.34.2"]))

        let post = try #require((entries[1]["request"] as? [String: Any])?["postData"] as? [String: Any])
        #expect(post["mimeType"] as? String == "application/json")
        #expect(post["encoding"] == nil)

        let redirect = try #require(entries[4]["response"] as? [String: Any])
        #expect(redirect["status"] as? Int == 302)
        #expect(redirect["statusText"] as? String == "Found")
        #expect(redirect["redirectURL"] as? String == "/relative-redirect/1")

        let binary = try #require(entries[9]["response"] as? [String: Any])
        let content = try #require(binary["content"] as? [String: Any])
        #expect(content["encoding"] as? String == "base64")
        #expect(content["size"] as? Int == 256)
        #expect(content["mimeType"] as? String == "image/png")
        let timings = try #require(entries[9]["timings"] as? [String: Double])
        #expect(timings["wait"] == 250)
        #expect(timings["receive"] == 250)
        #expect(entries[9]["time"] as? Double == 500)
        let binaryPost = try #require((entries[9]["request"] as? [String: Any])?["postData"] as? [String: Any])
        #expect(binaryPost["encoding"] as? String == "base64")

        let failure = try #require(entries[10]["response"] as? [String: Any])
        #expect(failure["status"] as? Int == 0)
        #expect(failure["_error"] as? String == "net::ERR_NAME_NOT_RESOLVED")
    }

    @Test func harIsDetectedByContentWhateverTheName() throws {
        let data = try CassetteFile.encode(try Self.richTape(), as: .har)
        let (tape, format) = try CassetteFile.decode(data, path: "recorded.json")
        #expect(format == .har)
        #expect(tape.interactions.count == 9)
    }

    @Test func harFromABrowserReads() throws {
        let document = """
            {"log": {"version": "1.2", "creator": {"name": "WebInspector", "version": "537.36"}, "entries": [
              {"startedDateTime": "2026-01-01T10:00:00.000Z", "time": 120.5,
               "request": {"method": "POST", "url": "https://example.test/login", "httpVersion": "http/2.0",
                 "headers": [{"name": ":authority", "value": "example.test"},
                             {"name": "accept", "value": "text/html"}, {"name": "Accept", "value": "*/*"}],
                 "postData": {"mimeType": "application/x-www-form-urlencoded",
                              "params": [{"name": "user", "value": "a b"}, {"name": "next", "value": "/x&y"}]}},
               "response": {"status": 301, "statusText": "", "httpVersion": "http/2.0",
                 "headers": [{"name": "content-encoding", "value": "br"},
                             {"name": "content-length", "value": "1"},
                             {"name": "set-cookie", "value": "a=1"}, {"name": "set-cookie", "value": "b=2"}],
                 "content": {"size": 5, "mimeType": "text/html", "text": "moved"},
                 "redirectURL": "https://example.test/home"},
               "timings": {"blocked": 10, "dns": -1, "connect": -1, "ssl": -1, "send": 0.5, "wait": 60,
                           "receive": 50}},
              {"startedDateTime": "2026-01-01T10:00:01.000Z", "time": 3,
               "request": {"method": "GET", "url": "https://gone.example.test/", "headers": []},
               "response": {"status": 0, "headers": [], "content": {"size": 0},
                            "_error": "net::ERR_NAME_NOT_RESOLVED"},
               "timings": {"send": 0, "wait": 3, "receive": 0}},
              {"startedDateTime": "2026-01-01T10:00:02.000Z", "time": 1,
               "request": {"method": "GET", "url": "https://example.test/aborted", "headers": []},
               "response": {"status": 200, "headers": [], "content": {"size": 2, "text": "ok"},
                            "_error": "net::ERR_ABORTED"}}
            ]}}
            """
        let (tape, format) = try CassetteFile.decode(Data(document.utf8), path: "browser.har")
        #expect(format == .har)
        let interactions = tape.interactions
        #expect(interactions.count == 3)

        let login = interactions[0]
        #expect(login.request.headers == [RecordedHeader("accept", "text/html, */*")])
        #expect(login.request.body == Data("user=a+b&next=%2Fx%26y".utf8))
        let response = try #require(login.response)
        #expect(response.statusCode == 301)
        #expect(response.httpVersion == "http/2.0")
        #expect(response.headers == [
            RecordedHeader("content-length", "5"),
            RecordedHeader("set-cookie", "a=1, b=2"),
            RecordedHeader("Location", "https://example.test/home"),
        ])
        #expect(login.body == Data("moved".utf8))
        #expect(abs((login.timeToFirstByte ?? 0) - 0.0705) < 1e-9)
        #expect(abs((login.scenes.last?.time ?? 0) - 0.1205) < 1e-9)

        let gone = interactions[1]
        #expect(gone.response == nil)
        #expect(gone.error?.domain == "NSURLErrorDomain")
        #expect(gone.error?.code == -1003)
        #expect(gone.error?.userInfo["NSLocalizedDescription"] == "net::ERR_NAME_NOT_RESOLVED")
        #expect(gone.timeToFirstByte == 0.003)

        let aborted = interactions[2]
        #expect(aborted.response?.statusCode == 200)
        #expect(aborted.error == nil)
        #expect(aborted.body == Data("ok".utf8))
    }

    @Test func harWritesRedirectHopsAsEntriesAndSaysWhatIsLost() throws {
        let start = RecordedRequest(method: "GET", url: "https://example.test/old")
        let next = RecordedRequest(method: "GET", url: "https://example.test/new")
        let hop = RecordedResponse(
            url: start.url,
            statusCode: 301,
            headers: [RecordedHeader("Location", "/new")]
        )
        let final = RecordedResponse(url: next.url, statusCode: 200, headers: [RecordedHeader("Content-Length", "6")])
        var tape = Tape(scenes: [
            Scene(chapter: 1, time: 0, event: .request(start)),
            Scene(chapter: 2, time: 0, event: .request(RecordedRequest(method: "GET", url: "https://example.test/2"))),
            Scene(chapter: 1, time: 0.1, event: .redirect(hop, to: next)),
            Scene(chapter: 1, time: 0.3, event: .response(final)),
            Scene(chapter: 1, time: 0.3, event: .data(Data("abc".utf8))),
            Scene(chapter: 1, time: 0.4, event: .data(Data("def".utf8))),
            Scene(chapter: 1, time: 0.5, event: .completion),
        ])
        let notes = HARFormat.lossNotes(tape)
        // The hop is an entry of its own, which the reader folds back: nothing to say about it.
        #expect(notes.count == 3)
        #expect(notes.contains { $0.hasPrefix("chapter 2 start") && $0.contains("interleaved") })
        #expect(!notes.contains { $0.contains("redirect") })
        #expect(notes.contains { $0.contains("chunk boundaries are merged") })
        #expect(notes.contains { $0.contains("chapter 2") && $0.contains("left out") })

        let data = try CassetteFile.encode(tape, as: .har)
        let entries = (try Self.jsonObject(data)["log"] as? [String: Any])?["entries"] as? [[String: Any]]
        #expect(entries?.count == 2, "the hop, then the final entry")
        let (read, _) = try CassetteFile.decode(data, path: "x.har")
        let back = read.interactions
        #expect(back.count == 1)
        #expect(back[0].request == start)
        #expect(back[0].redirects == [Interaction.Redirect(response: hop, request: next)])
        #expect(back[0].scenes[1].time == 0.1)
        #expect(back[0].response == final)
        #expect(back[0].body == Data("abcdef".utf8))
        #expect(abs((back[0].timeToFirstByte ?? 0) - 0.3) < 1e-9)
        #expect(abs((back[0].scenes.last?.time ?? 0) - 0.5) < 1e-9)

        // Once the unfinished chapter is gone and the chunks are one, nothing more is lost.
        tape = Tape(interactions: back)
        #expect(HARFormat.lossNotes(tape).isEmpty)
    }

    @Test func harMalformedEntriesNameTheField() throws {
        let document = """
            {"log": {"entries": [{"request": {"method": "GET", "url": "https://x.test/", "headers": []},
              "response": {"status": "200", "headers": [], "content": {"size": 0}}}]}}
            """
        let error = try #require(Self.malformedError(document))
        #expect(error.code == .malformedCassette)
        #expect(error.message.contains("log.entries[0].response.status: expected a number, found a string"))

        let badBody = document
            .replacingOccurrences(of: "\"200\"", with: "200")
            .replacingOccurrences(of: #"{"size": 0}"#, with: #"{"size": 1, "text": "e30", "encoding": "base64"}"#)
        let bodyError = try #require(Self.malformedError(badBody))
        #expect(bodyError.message.contains("log.entries[0].response.content.text: not valid base64"))

        let badHeader = """
            {"log": {"entries": [{"request": {"method": "GET", "url": "u", "headers": [{"name": 1}]}}]}}
            """
        let headerError = try #require(Self.malformedError(badHeader))
        #expect(headerError.message.contains("log.entries[0].request.headers[0].name: expected a string"))

        let notHAR = try #require(Self.malformedError("[1, 2]", path: "x.har"))
        #expect(notHAR.message.contains("top level: expected an object"))
    }
}
