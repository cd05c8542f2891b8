import Foundation
import HTTPVCR

/// The kinds of file the fuzzer mutates, one row each in its report.
public enum SeedFormat: String, Sendable, CaseIterable {
    case httpvcrJSON = "HTTPVCR JSON"
    case httpvcrPropertyList = "HTTPVCR plist"
    case har = "HAR"
    case yahttpvcrJSON = "YAHTTPVCR JSON"
    case yahttpvcrPropertyList = "YAHTTPVCR plist"
    case vcrpy = "VCR.py"

    /// What the unmutated seeds read as.
    public var cassetteFormat: CassetteFormat {
        switch self {
        case .httpvcrJSON: .json
        case .httpvcrPropertyList: .plist
        case .har: .har
        case .yahttpvcrJSON, .yahttpvcrPropertyList: .yahttpvcr
        case .vcrpy: .vcrpy
        }
    }
}

/// A valid cassette a mutant starts from, built in code so that any clone (and the fuzz runner, wherever it runs)
/// has them. Every URL is under `example.test`, a name that never resolves, and replay in `.never` mode never
/// sends anything anyway.
public struct SeedCassette: Sendable {
    public let name: String
    public let format: SeedFormat
    public let syntax: Node.Syntax
    public let fileExtension: String
    public let document: Node

    public var bytes: Data { document.serialized(as: syntax) }

    /// Every seed, at least one per format.
    public static let all: [SeedCassette] = {
        let tape = sampleTape
        func parsed(_ data: Data) -> Node {
            // Our own output: it parses, or there is nothing to fuzz.
            Node(foundation: (try? JSONSerialization.jsonObject(with: data)) ?? [:])
        }
        func encoded(_ format: CassetteFormat) -> Node {
            parsed((try? CassetteFile.encode(tape, as: format)) ?? Data())
        }
        let httpvcr = inWriterOrder(encoded(.json))
        let yahttpvcr = parsed(Data(yahttpvcrText.utf8))
        return [
            SeedCassette(
                name: "httpvcr", format: .httpvcrJSON, syntax: .json, fileExtension: "json", document: httpvcr
            ),
            SeedCassette(
                name: "httpvcr", format: .httpvcrPropertyList, syntax: .propertyList, fileExtension: "plist",
                document: withBase64AsData(httpvcr, renaming: ["bodyBase64": "body", "dataBase64": "data"])
            ),
            SeedCassette(
                name: "har-httpvcr", format: .har, syntax: .json, fileExtension: "har", document: encoded(.har)
            ),
            SeedCassette(
                name: "har-browser", format: .har, syntax: .json, fileExtension: "har",
                document: parsed(Data(browserHARText.utf8))
            ),
            SeedCassette(
                name: "yahttpvcr", format: .yahttpvcrJSON, syntax: .json, fileExtension: "json", document: yahttpvcr
            ),
            SeedCassette(
                name: "yahttpvcr", format: .yahttpvcrPropertyList, syntax: .propertyList, fileExtension: "plist",
                document: withBase64AsData(yahttpvcr, renaming: ["base64": "base64"])
            ),
            SeedCassette(
                name: "vcrpy", format: .vcrpy, syntax: .json, fileExtension: "json",
                document: parsed(Data(vcrpyText.utf8))
            ),
        ]
    }()

    public static func seeds(of format: SeedFormat) -> [SeedCassette] {
        all.filter { $0.format == format }
    }

    /// Every kind of scene, interleaved: a redirected GET answered in two chunks, a POST with a binary body and a
    /// gzip response, a timeout, and a 204 with an empty chunk.
    public static let sampleTape: Tape = {
        let json = "https://api.example.test/v2/users/42?fields=name,email"
        let get = RecordedRequest(
            method: "GET",
            url: "https://api.example.test/v1/users/42?fields=name,email",
            headers: [RecordedHeader("Accept", "application/json"), RecordedHeader("Authorization", "[FILTERED]")]
        )
        let upload = RecordedRequest(
            method: "POST",
            url: "https://upload.example.test/files?name=a%20b",
            headers: [RecordedHeader("Content-Type", "application/octet-stream")],
            body: Data([0x00, 0xFF, 0x10, 0x80, 0x7F, 0xC3])
        )
        let health = RecordedRequest(method: "GET", url: "https://status.example.test/health")
        let empty = RecordedRequest(method: "DELETE", url: "https://api.example.test/v1/sessions/7", body: Data())
        return Tape(scenes: [
            Tape.Scene(chapter: 1, time: 0, event: .request(get)),
            Tape.Scene(chapter: 2, time: 0, event: .request(upload)),
            Tape.Scene(chapter: 1, time: 0.084, event: .redirect(
                RecordedResponse(url: get.url, statusCode: 301, headers: [RecordedHeader("Location", json)]),
                to: RecordedRequest(method: "GET", url: json, headers: get.headers)
            )),
            Tape.Scene(chapter: 1, time: 0.162, event: .response(RecordedResponse(
                url: json,
                statusCode: 200,
                headers: [
                    RecordedHeader("Content-Length", "42"), RecordedHeader("Content-Type", "application/json"),
                    RecordedHeader("Set-Cookie", "session=abc; Path=/; Expires=Wed, 09 Jun 2100 10:18:14 GMT; HttpOnly"),
                    RecordedHeader("Set-Cookie", "theme=dark"),  // a field the server sent twice, kept apart
                ]
            ))),
            Tape.Scene(chapter: 3, time: 0, event: .request(health)),
            Tape.Scene(chapter: 1, time: 0.163, event: .data(Data(#"{"id": 42, "name": "Ada "#.utf8))),
            Tape.Scene(chapter: 2, time: 0.2, event: .response(RecordedResponse(
                url: upload.url,
                statusCode: 201,
                headers: [RecordedHeader("Content-Encoding", "gzip"), RecordedHeader("Content-Length", "4")]
            ))),
            Tape.Scene(chapter: 2, time: 0.21, event: .data(Data([0x1F, 0x8B, 0x08, 0x00]))),
            Tape.Scene(chapter: 1, time: 0.171, event: .data(Data(#"Lovelace", "email": "ada@example.test"}"#.utf8))),
            Tape.Scene(chapter: 1, time: 0.172, event: .completion),
            Tape.Scene(chapter: 3, time: 30.001, event: .error(RecordedError(
                domain: NSURLErrorDomain,
                code: -1001,
                userInfo: ["NSErrorFailingURLStringKey": health.url, "NSLocalizedDescription": "timed out"]
            ))),
            Tape.Scene(chapter: 2, time: 0.3, event: .completion),
            Tape.Scene(chapter: 4, time: 0, event: .request(empty)),
            Tape.Scene(chapter: 4, time: 0.05, event: .response(RecordedResponse(url: empty.url, statusCode: 204))),
            Tape.Scene(chapter: 4, time: 0.05, event: .data(Data())),
            Tape.Scene(chapter: 4, time: 0.06, event: .completion),
        ])
    }()

    /// Our keys in the order HTTPVCR writes them (parsing lost it), so that mutants of our JSON reach the reader
    /// for exactly that layout as well as the one reader. Other keys (header names) follow, sorted.
    private static func inWriterOrder(_ node: Node) -> Node {
        let order = [
            "format", "version", "scenes", "chapter", "time", "request", "redirect", "response", "data", "dataBase64",
            "error", "complete", "method", "url", "status", "httpVersion", "headers", "body", "bodyBase64",
            "recordedAt", "to", "domain", "code", "userInfo",
        ]
        switch node {
        case let .object(members):
            let rank = { (key: String) in order.firstIndex(of: key) ?? order.count }
            return .object(members.map { Node.Member($0.key, inWriterOrder($0.value)) }
                .sorted { (rank($0.key), $0.key) < (rank($1.key), $1.key) })
        case let .array(elements):
            return .array(elements.map(inWriterOrder))
        default:
            return node
        }
    }

    /// Property lists may hold bytes as data: base64 text under these keys becomes data under the new key.
    private static func withBase64AsData(_ node: Node, renaming keys: [String: String]) -> Node {
        switch node {
        case let .object(members):
            return .object(members.map { member in
                if let key = keys[member.key], case let .string(text) = member.value,
                   let bytes = Data(base64Encoded: text) {
                    return Node.Member(key, .data(Array(bytes)))
                }
                return Node.Member(member.key, withBase64AsData(member.value, renaming: keys))
            })
        case let .array(elements):
            return .array(elements.map { withBase64AsData($0, renaming: keys) })
        default:
            return node
        }
    }

    // MARK: Foreign seeds, written as their tools write them

    /// Two requests at once (`/delay/2` answers after `/get`), a timeout with a nested error, a POST.
    static let yahttpvcrText = #"""
    [
      {"id": "A1B2", "type": 0, "data": {"cls": "NSURLRequest", "method": "get",
        "url": "https://api.example.test/delay/2", "headers": {"Accept": "*/*", "X-Count": 3},
        "timeout": 60, "cellular": true}},
      {"id": "C3D4", "type": 0, "data": {"cls": "NSURLRequest", "method": "GET",
        "url": "https://api.example.test/get"}},
      {"id": "C3D4", "type": 1, "data": {"cls": "NSHTTPURLResponse", "status": 200,
        "url": "https://api.example.test/get",
        "headers": {"Content-Type": "application/json", "Set-Cookie": "id=7; Domain=api.example.test"}}},
      {"id": "C3D4", "type": 2, "data": {"cls": "NSData", "base64": "eyJhcmdzIjoge319"}},
      {"id": "C3D4", "type": 2, "data": {"cls": "NSData", "base64": ""}},
      {"id": "C3D4", "type": 4},
      {"id": "A1B2", "type": 1, "data": {"cls": "NSHTTPURLResponse", "status": 200, "headers": {}}},
      {"id": "A1B2", "type": 2, "data": {"cls": "NSData", "base64": "b2s="}},
      {"id": "A1B2", "type": 4},
      {"id": 77, "type": 0, "data": {"cls": "NSURLRequest", "method": "POST", "url": "https://api.example.test/post",
        "body": {"cls": "NSData", "base64": "eyJuYW1lIjogIkFkYSJ9"}}},
      {"id": 77, "type": 3, "data": {"cls": "NSError", "domain": "NSURLErrorDomain", "code": -1001,
        "info": {"NSLocalizedDescription": "The request timed out.", "_kCFStreamErrorCodeKey": -2102,
          "NSUnderlyingError": {"cls": "NSError", "domain": "kCFErrorDomainCFNetwork", "code": -1001},
          "Other": [1, 2]}}}
    ]
    """#

    /// A GET, a POST with a body object, a 302 hop, a gzip body stored decompressed, a base64 body.
    static let vcrpyText = #"""
    {
      "version": 1,
      "interactions": [
        {"request": {"body": null, "headers": {"Accept": ["*/*"], "X-Two": ["a", "b"]}, "method": "GET",
          "uri": "https://api.example.test/get?q=swift"},
         "response": {"body": {"string": "{\"args\": {\"q\": \"swift\"}}"},
          "headers": {"Content-Type": ["application/json"], "Content-Length": ["25"],
            "Set-Cookie": ["a=1; Path=/", "b=2; Max-Age=60"]},
          "status": {"code": 200, "message": "OK"}}},
        {"request": {"body": "name=Ada", "headers": {"Content-Type": ["application/x-www-form-urlencoded"]},
          "method": "POST", "uri": "https://api.example.test/post"},
         "response": {"body": {"string": {"base64_string": "AAEC/w=="}}, "headers": {},
          "status": {"code": 201, "message": "Created"}}},
        {"request": {"body": {"base64_string": "AP8="}, "headers": {}, "method": "GET",
          "uri": "https://api.example.test/redirect/1"},
         "response": {"body": {"string": ""}, "headers": {"Location": ["/get"], "Content-Length": [0]},
          "status": 302}},
        {"request": {"body": null, "headers": {}, "method": "GET", "uri": "https://api.example.test/gzip"},
         "response": {"body": {"base64_string": "eyJnemlwcGVkIjogdHJ1ZX0="},
          "headers": {"Content-Encoding": ["gzip"], "Content-Length": ["99"]},
          "status": {"code": 200, "message": "OK"}}}
      ]
    }
    """#

    /// A browser's export: pseudo-headers, a form given as params and its redirect (read as one chapter), a 304, a
    /// failed request (status 0), timings with -1.
    static let browserHARText = #"""
    {
      "log": {
        "version": "1.2",
        "creator": {"name": "WebInspector", "version": "537.36"},
        "entries": [
          {"startedDateTime": "2025-03-04T10:15:00.000Z", "time": 120.5,
           "request": {"method": "POST", "url": "https://api.example.test/login", "httpVersion": "h2",
             "headers": [{"name": ":authority", "value": "api.example.test"}, {"name": "Accept", "value": "*/*"},
               {"name": "accept", "value": "text/html"}, {"name": "X-Number", "value": 5}],
             "postData": {"mimeType": "application/x-www-form-urlencoded",
               "params": [{"name": "user", "value": "ada lovelace"}, {"name": "remember"}]}},
           "response": {"status": 302, "statusText": "Found", "httpVersion": "", "headers": [],
             "content": {"size": 0, "mimeType": ""}, "redirectURL": "https://api.example.test/home"},
           "timings": {"blocked": -1, "dns": 1.5, "connect": 10, "send": 0.2, "wait": 80, "receive": 28.8}},
          {"startedDateTime": "2025-03-04T10:15:00.200Z", "time": 300,
           "request": {"method": "GET", "url": "https://api.example.test/home", "headers": []},
           "response": {"status": 200, "httpVersion": "HTTP/2",
             "headers": [{"name": "Content-Type", "value": "image/png"},
               {"name": "Set-Cookie", "value": "theme=dark; Max-Age=3600; SameSite=Lax"}],
             "content": {"size": 4, "mimeType": "image/png", "text": "iVBORw==", "encoding": "base64"}},
           "timings": {"wait": 50, "receive": 250}},
          {"startedDateTime": "2025-03-04T10:15:00.600Z", "time": 12,
           "request": {"method": "GET", "url": "https://api.example.test/avatar?size=2", "headers": []},
           "response": {"status": 304, "statusText": "Not Modified", "httpVersion": "HTTP/2", "headers": [],
             "content": {"size": 0, "mimeType": ""}},
           "timings": {"wait": 12}},
          {"startedDateTime": "2025-03-04T10:15:01.000Z", "time": 0,
           "request": {"method": "GET", "url": "https://gone.example.test/", "headers": []},
           "response": {"status": 0, "headers": [], "content": {"size": 0}, "_error": "net::ERR_NAME_NOT_RESOLVED"},
           "timings": {}}
        ]
      }
    }
    """#
}
