import Foundation

/// HTTPVCR's own cassette format, version 1: a document `{"format": "HTTPVCR", "version": 1, "scenes": [...]}`
/// written as JSON or as a property list. `Docs/CassetteFormat.md` describes every field.
enum HTTPVCRFormat {
    static let formatName = "HTTPVCR"
    static let version = 1

    static func chapterOutOfRange(_ chapter: Int, at path: String) -> DecodeFailure {
        let largest = Tape.chapterNumbers.upperBound
        return DecodeFailure("\(path): chapter \(chapter) is out of range (chapter numbers run from 0 to \(largest))")
    }

    /// Whether a parsed document is one of ours (of any version).
    static func isReadable(_ object: Any) -> Bool {
        (object as? [String: Any])?["format"] as? String == formatName
    }

    // MARK: Writing

    static func document(_ tape: Tape) -> JSONValue {
        .object([
            ("format", .string(formatName)),
            ("version", .int(version)),
            ("scenes", .array(tape.scenes.map(scene))),
        ])
    }

    private static func scene(_ scene: Scene) -> JSONValue {
        var members: [(String, JSONValue)] = [("chapter", .int(scene.chapter)), ("time", .double(scene.time))]
        switch scene.event {
        case let .request(request):
            members.append(("request", Self.request(request)))
        case let .redirect(response, to: request):
            members.append(("redirect", .object([("response", Self.response(response)), ("to", Self.request(request))])))
        case let .response(response):
            members.append(("response", Self.response(response)))
        case let .data(data):
            members.append(body(data, textKey: "data", base64Key: "dataBase64"))
        case let .error(error):
            members.append(("error", .object([
                ("domain", .string(error.domain)),
                ("code", .int(error.code)),
                ("userInfo", stringMap(error.userInfo)),
            ])))
        case .completion:
            members.append(("complete", .bool(true)))
        }
        return .object(members)
    }

    private static func request(_ request: RecordedRequest) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("method", .string(request.method)),
            ("url", .string(request.url)),
            ("headers", headers(request.headers)),
        ]
        if let data = request.body { members.append(body(data, textKey: "body", base64Key: "bodyBase64")) }
        return .object(members)
    }

    private static func response(_ response: RecordedResponse) -> JSONValue {
        .object([
            ("url", .string(response.url)),
            ("status", .int(response.statusCode)),
            ("httpVersion", .string(response.httpVersion)),
            ("headers", headers(response.headers)),
        ])
    }

    /// Headers sorted by name, so a re-saved cassette is byte for byte what was loaded.
    private static func headers(_ headers: [HTTPHeader]) -> JSONValue {
        .object(headers.sorted { $0.name.lowercased() < $1.name.lowercased() }.map { ($0.name, .string($0.value)) })
    }

    private static func stringMap(_ map: [String: String]) -> JSONValue {
        .object(map.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })
    }

    private static func body(_ data: Data, textKey: String, base64Key: String) -> (String, JSONValue) {
        if let text = BodyText.text(data) { return (textKey, .string(text)) }
        return (base64Key, .string(data.base64EncodedString()))
    }

    // MARK: Reading

    static func tape(from object: Any) throws(DecodeFailure) -> Tape {
        let document = try FieldReader(object, path: "")
        let version = try document.int("version")
        guard version == Self.version else {
            throw DecodeFailure("unknown version \(version) (this HTTPVCR reads version \(Self.version))")
        }
        let scenes = try document.array("scenes")
        var result: [Scene] = []
        result.reserveCapacity(scenes.count)
        for (index, item) in scenes.enumerated() {
            result.append(try scene(FieldReader(item, path: "scenes[\(index)]")))
        }
        return Tape(scenes: result)
    }

    private static func scene(_ fields: FieldReader) throws(DecodeFailure) -> Scene {
        let chapter = try fields.int("chapter")
        guard Tape.chapterNumbers.contains(chapter) else {
            throw chapterOutOfRange(chapter, at: fields.join("chapter"))
        }
        let time = fields.has("time") ? try fields.double("time") : 0
        let event: Scene.Event
        if fields.has("request") {
            event = .request(try request(fields.child("request")))
        } else if fields.has("redirect") {
            let redirect = try fields.child("redirect")
            event = .redirect(try response(redirect.child("response")), to: try request(redirect.child("to")))
        } else if fields.has("response") {
            event = .response(try response(fields.child("response")))
        } else if fields.has("data") || fields.has("dataBase64") {
            event = .data(try body(fields, textKey: "data", base64Key: "dataBase64") ?? Data())
        } else if fields.has("error") {
            let error = try fields.child("error")
            event = .error(RecordedError(
                domain: try error.string("domain"),
                code: try error.int("code"),
                userInfo: try error.stringMap("userInfo")
            ))
        } else if fields.has("complete") {
            event = .completion
        } else {
            throw DecodeFailure("\(fields.path): a scene needs one of request, redirect, response, data, error, complete")
        }
        return Scene(chapter: chapter, time: time, event: event)
    }

    private static func request(_ fields: FieldReader) throws(DecodeFailure) -> RecordedRequest {
        RecordedRequest(
            method: try fields.string("method"),
            url: try fields.string("url"),
            headers: [HTTPHeader](try fields.stringMap("headers")),
            body: try body(fields, textKey: "body", base64Key: "bodyBase64")
        )
    }

    private static func response(_ fields: FieldReader) throws(DecodeFailure) -> RecordedResponse {
        RecordedResponse(
            url: try fields.string("url"),
            statusCode: try fields.int("status"),
            httpVersion: fields.optionalString("httpVersion") ?? "HTTP/1.1",
            headers: [HTTPHeader](try fields.stringMap("headers"))
        )
    }

    private static func body(_ fields: FieldReader, textKey: String, base64Key: String) throws(DecodeFailure) -> Data? {
        if fields.has(base64Key) { return try fields.base64(base64Key) }
        guard fields.has(textKey) else { return nil }
        if let data = fields.object[textKey] as? Data { return data }
        return Data(try fields.string(textKey).utf8)
    }
}
