import Foundation

/// HTTPVCR's own cassette format, version 1: a document `{"format": "HTTPVCR", "version": 1, "scenes": [...]}`
/// written as JSON or as a property list. `Docs/CassetteFormat.md` describes every field; the reader is in
/// `HTTPVCRFormat+Reading.swift`.
package enum HTTPVCRFormat {
    static let formatName = "HTTPVCR"
    package static let version = 1

    static func chapterOutOfRange(_ chapter: Int, at path: String) -> DecodeFailure {
        let largest = Tape.chapterNumbers.upperBound
        return DecodeFailure("\(path): chapter \(chapter) is out of range (chapter numbers run from 0 to \(largest))")
    }

    /// Whether a parsed document is one of ours (of any version).
    static func isReadable(_ object: Any) -> Bool {
        (object as? [String: Any])?["format"] as? String == formatName
    }

    /// The document for `tape`. With `structuresBodies` (JSON files; property lists cannot keep key order or a
    /// number's text), a JSON body whose exact bytes its structure and layout give back is written as that
    /// structure (``JSONLayout``), for a cassette that reads well in review.
    package static func document(_ tape: Tape, structuresBodies: Bool = false) -> JSONValue {
        .object([
            ("format", .string(formatName)),
            ("version", .int(version)),
            ("scenes", .array(tape.scenes.map { scene($0, structuresBodies: structuresBodies) })),
        ])
    }

    private static func scene(_ scene: Scene, structuresBodies: Bool) -> JSONValue {
        var members: [(String, JSONValue)] = [("chapter", .int(scene.chapter)), ("time", .double(scene.time))]
        switch scene.event {
        case let .request(request):
            members.append(("request", Self.request(request, structuresBodies: structuresBodies)))
        case let .redirect(response, to: request):
            members.append(("redirect", .object([
                ("response", Self.response(response)),
                ("to", Self.request(request, structuresBodies: structuresBodies)),
            ])))
        case let .response(response):
            members.append(("response", Self.response(response)))
        case let .data(data):
            let layoutKey = structuresBodies ? "dataLayout" : nil
            members += body(data, textKey: "data", base64Key: "dataBase64", layoutKey: layoutKey)
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

    private static func request(_ request: RecordedRequest, structuresBodies: Bool) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("method", .string(request.method)),
            ("url", .string(request.url)),
            ("headers", headers(request.headers)),
        ]
        if let data = request.body {
            let layoutKey = structuresBodies ? "bodyLayout" : nil
            members += body(data, textKey: "body", base64Key: "bodyBase64", layoutKey: layoutKey)
        }
        if let recordedAt = request.recordedAt {
            members.append(("recordedAt", .string(RecordingTime.text(of: recordedAt))))
        }
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

    /// Headers sorted by name, so a re-saved cassette is byte for byte what was loaded. A name that comes more than
    /// once (two `Set-Cookie` fields a door recording kept apart) is one member whose value is the array of its
    /// fields' values, in the order they came: the sort is stable.
    private static func headers(_ headers: [RecordedHeader]) -> JSONValue {
        var members: [(String, JSONValue)] = []
        members.reserveCapacity(headers.count)
        for header in headers.sortedByName() {
            guard let last = members.last, last.0 == header.name else {
                members.append((header.name, .string(header.value)))
                continue
            }
            switch last.1 {
            case let .array(values): members[members.count - 1].1 = .array(values + [.string(header.value)])
            default: members[members.count - 1].1 = .array([last.1, .string(header.value)])
            }
        }
        return .object(members)
    }

    private static func stringMap(_ map: [String: String]) -> JSONValue {
        .object(map.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })
    }

    /// A body as members of its object: its structure and layout (with a `layoutKey`, when they give back its
    /// bytes), its text, or its base64.
    private static func body(
        _ data: Data, textKey: String, base64Key: String, layoutKey: String?
    ) -> [(String, JSONValue)] {
        if let layoutKey, let (value, layout) = JSONLayout.structure(of: data) {
            return [(textKey, value), (layoutKey, .string(layout.name))]
        }
        if let text = BodyText.text(data) { return [(textKey, .string(text))] }
        return [(base64Key, .string(data.base64EncodedString()))]
    }
}
