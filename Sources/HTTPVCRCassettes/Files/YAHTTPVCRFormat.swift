import Foundation

/// Cassettes written by YAHTTPVCR, the Objective-C library HTTPVCR follows: a top-level array of scenes
/// `{"id": chapter UUID, "type": 0...4, "data": ...}`, as JSON or as a property list.
///
/// Its tape is already HTTPVCR's model (ordered scenes grouped by chapter), so reading it keeps the scene order
/// exactly: chronological playback of interleaved requests depends on it. YAHTTPVCR records no times, so every
/// scene is at time 0. Its scene types are request (0), response (1), data (2), error (3) and completion (4);
/// it has no redirect scene (the URL loading system follows redirects before YAHTTPVCR sees the final response).
enum YAHTTPVCRFormat {
    private enum SceneType: Int {
        case request = 0
        case response = 1
        case data = 2
        case error = 3
        case completion = 4
    }

    /// A non-empty array whose first element is a scene: an object with `id` and `type`. Only the first element
    /// is looked at, so that a cassette with one broken scene gets a precise error rather than "unknown format".
    static func isReadable(_ document: JSONValue) -> Bool {
        guard case let .array(scenes) = document, let first = scenes.first,
              let fields = try? FieldReader(first, path: "") else { return false }
        return fields["id"] != nil && fields["type"] != nil
    }

    package static func tape(from document: JSONValue) throws(DecodeFailure) -> Tape {
        guard case let .array(items) = document else {
            throw DecodeFailure("top level: expected an array of YAHTTPVCR scenes, found \(describe(document))")
        }
        var chapters: [String: Int] = [:]
        var requests: [Int: RecordedRequest] = [:]
        var scenes: [Scene] = []
        scenes.reserveCapacity(items.count)
        for (index, item) in items.enumerated() {
            let fields = try FieldReader(item, path: "scene[\(index)]")
            let identifier = try chapterIdentifier(fields)
            let type = try sceneType(fields)
            let isNewChapter = chapters[identifier] == nil
            let chapter = chapters[identifier] ?? chapters.count + 1
            chapters[identifier] = chapter

            // Every chapter starts with its request: a tape whose chapter opens with anything else cannot be
            // played, so say where rather than silently dropping the chapter.
            if isNewChapter, type != .request {
                throw DecodeFailure(
                    "\(fields.path): chapter \(identifier) starts with a \(type) scene; "
                        + "its request scene must come first"
                )
            }
            if !isNewChapter, type == .request {
                throw DecodeFailure("\(fields.path): a second request scene for chapter \(identifier)")
            }

            let event: Scene.Event
            switch type {
            case .request:
                let request = try self.request(fields.child("data"))
                requests[chapter] = request
                event = .request(request)
            case .response:
                event = .response(try response(fields.child("data"), requestURL: requests[chapter]?.url ?? ""))
            case .data:
                event = .data(try data(fields, key: "data"))
            case .error:
                event = .error(try error(fields.child("data")))
            case .completion:
                event = .completion
            }
            scenes.append(Scene(chapter: chapter, time: 0, event: event))
        }
        return Tape(scenes: scenes)
    }

    // MARK: Fields

    private static func chapterIdentifier(_ fields: FieldReader) throws(DecodeFailure) -> String {
        guard let value = fields["id"] else { throw fields.missing("id", "a string") }
        if let text = FieldReader.text(value) { return text }
        throw fields.wrongType("id", "a string", value)
    }

    private static func sceneType(_ fields: FieldReader) throws(DecodeFailure) -> SceneType {
        let code = try fields.int("type")
        guard let type = SceneType(rawValue: code) else {
            throw DecodeFailure(
                "\(fields.join("type")): unknown scene type \(code) "
                    + "(YAHTTPVCR writes 0 request, 1 response, 2 data, 3 error, 4 completion)"
            )
        }
        return type
    }

    private static func request(_ fields: FieldReader) throws(DecodeFailure) -> RecordedRequest {
        RecordedRequest(
            method: try fields.string("method").uppercased(),
            url: try fields.string("url"),
            headers: [RecordedHeader](try fields.stringMap("headers")),
            body: fields.has("body") ? try data(fields, key: "body") : nil
        )
    }

    private static func response(_ fields: FieldReader, requestURL: String) throws(DecodeFailure) -> RecordedResponse {
        RecordedResponse(
            url: fields.optionalString("url") ?? requestURL,
            statusCode: try fields.int("status"),
            headers: [RecordedHeader](try fields.stringMap("headers"))
        )
    }

    /// YAHTTPVCR writes `NSError` as domain, code and a user info that may hold numbers and, under
    /// `NSUnderlyingError`, another serialized error. HTTPVCR keeps string user info only: numbers become their
    /// text, a nested error becomes its `Error Domain=... Code=...` summary, anything else is dropped.
    private static func error(_ fields: FieldReader) throws(DecodeFailure) -> RecordedError {
        var userInfo: [String: String] = [:]
        if fields.has("info") {
            let info = try fields.child("info")
            for (key, value) in info.members {
                if let text = userInfoText(value) { userInfo[key] = text }
            }
        }
        return RecordedError(domain: try fields.string("domain"), code: try fields.int("code"), userInfo: userInfo)
    }

    private static func userInfoText(_ value: JSONValue) -> String? {
        if let text = FieldReader.text(value) { return text }
        guard let nested = try? FieldReader(value, path: ""), let domain = nested.optionalString("domain"),
              case let .success(code)? = nested["code"].flatMap(FieldReader.integer) else { return nil }
        return "Error Domain=\(domain) Code=\(code)"
    }

    /// Bytes stored as `{"cls": "NSData", "base64": "..."}`. A property list may hold the bytes themselves, either
    /// as the whole value or under `base64`.
    private static func data(_ fields: FieldReader, key: String) throws(DecodeFailure) -> Data {
        guard fields.has(key), let value = fields[key] else { throw fields.missing(key, "NSData") }
        if case let .data(bytes) = value { return bytes }
        let wrapper = try FieldReader(value, path: fields.join(key))
        if case let .data(bytes)? = wrapper["base64"] { return bytes }
        return try wrapper.base64("base64")
    }
}
