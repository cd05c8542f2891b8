import Foundation

/// Reading HTTPVCR's own format, JSON or property list, from the value ``LosslessJSONReader`` or
/// ``JSONValue/init(propertyList:)`` made of the file: the reader of our files whatever their layout or key order,
/// through ``FieldReader``, which names every field it cannot read: "scenes[3].response.status: expected a number,
/// found a string". Files in exactly the writer's layout are read faster in place
/// (`HTTPVCRFormat+WrittenLayout.swift`), which must read the same tape.
extension HTTPVCRFormat {
    /// Whether the bytes start like one of our JSON documents (the writer puts `format` first).
    package static func looksLikeJSONDocument(_ data: Data) -> Bool {
        let marker: StaticString = #""format": "HTTPVCR""#
        // A search of our own, in the first 64 bytes: `Data.range(of:)` goes through NSData on Linux, and indexing
        // a `Data` byte by byte cost more than reading the rest of a small cassette's structure.
        return data.withUnsafeBytes { bytes in
            let prefix = UnsafeRawBufferPointer(rebasing: bytes.prefix(64))
            guard prefix.first == UInt8(ascii: "{"), prefix.count >= marker.utf8CodeUnitCount else { return false }
            return (0...(prefix.count - marker.utf8CodeUnitCount)).contains { start in
                memcmp(prefix.baseAddress! + start, marker.utf8Start, marker.utf8CodeUnitCount) == 0
            }
        }
    }

    /// Whether a file's value is one of our documents (of any version).
    static func isReadable(_ document: JSONValue) -> Bool {
        guard let fields = try? FieldReader(document, path: "") else { return false }
        return fields.optionalString("format") == formatName
    }

    /// The tape in a document ``isReadable(_:)`` said is ours. A field that is missing or wrong throws, naming it.
    package static func tape(from document: JSONValue) throws(DecodeFailure) -> Tape {
        let fields = try FieldReader(document, path: "")
        let version = try fields.int("version")
        guard version == HTTPVCRFormat.version else {
            throw DecodeFailure("unknown version \(version) (this HTTPVCR reads version \(HTTPVCRFormat.version))")
        }
        let list = try fields.array("scenes")
        var scenes: [Scene] = []
        scenes.reserveCapacity(list.count)
        for (index, value) in list.enumerated() {
            scenes.append(try scene(FieldReader(value, path: "scenes[\(index)]")))
        }
        return Tape(scenes: scenes)
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
        } else if let data = try body(fields, text: "data", base64: "dataBase64", layout: "dataLayout") {
            event = .data(data)
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
            headers: try headerFields(fields, "headers"),
            body: try body(fields, text: "body", base64: "bodyBase64", layout: "bodyLayout"),
            recordedAt: try date(fields, "recordedAt")
        )
    }

    private static func response(_ fields: FieldReader) throws(DecodeFailure) -> RecordedResponse {
        RecordedResponse(
            url: try fields.string("url"),
            statusCode: try fields.int("status"),
            httpVersion: fields.optionalString("httpVersion") ?? "HTTP/1.1",
            headers: try headerFields(fields, "headers")
        )
    }

    /// An ISO 8601 time (`2026-11-23T22:00:00Z`), or nil when there is none.
    private static func date(_ fields: FieldReader, _ key: String) throws(DecodeFailure) -> Date? {
        guard fields.has(key) else { return nil }
        if case let .date(date)? = fields[key] { return date }
        let text = try fields.string(key)
        guard let date = RecordingTime.date(from: text) else {
            throw DecodeFailure("\(fields.join(key)): expected an ISO 8601 time like 2026-11-23T22:00:00Z, found \"\(text)\"")
        }
        return date
    }

    /// Header fields: each name maps to its value, or to the array of the values of a name that came more than
    /// once, in the order they came; numbers and booleans are taken as their text. Empty when missing or null;
    /// sorted by name, as the writer writes them. A name twice is read as its last member.
    private static func headerFields(_ fields: FieldReader, _ key: String) throws(DecodeFailure) -> [RecordedHeader] {
        guard fields.has(key) else { return [] }
        let map = try fields.child(key)
        var headers: [RecordedHeader] = []
        headers.reserveCapacity(map.members.count)
        var lastPositions: [String: Int] = [:]
        for (position, (name, _)) in map.members.enumerated() { lastPositions[name] = position }
        for (position, (name, value)) in map.members.enumerated() where lastPositions[name] == position {
            if let text = FieldReader.text(value) {
                headers.append(RecordedHeader(name, text))
            } else if case let .array(values) = value {
                for (index, value) in values.enumerated() {
                    guard let text = FieldReader.text(value) else {
                        throw DecodeFailure("\(map.join(name))[\(index)]: expected a string, found \(describe(value))")
                    }
                    headers.append(RecordedHeader(name, text))
                }
            } else {
                throw map.wrongType(name, "a string or an array of strings", value)
            }
        }
        return headers.sortedByName()
    }

    /// A body as text, as base64 (the base64 key wins when both are there), as a JSON structure written in the
    /// layout its layout key names (``JSONLayout``; compact when there is none), or in a property list as data.
    private static func body(
        _ fields: FieldReader, text: String, base64: String, layout: String
    ) throws(DecodeFailure) -> Data? {
        if fields.has(base64) { return try fields.base64(base64) }
        guard fields.has(text), let value = fields[text] else { return nil }
        switch value {
        case let .string(text): return Data(text.utf8)
        case let .data(data): return data
        case .object, .array:
            var chosen = JSONLayout.compact
            if let named = fields[layout] {
                guard case let .string(name) = named, let known = JSONLayout(name: name) else {
                    throw DecodeFailure(
                        "\(fields.join(layout)): expected a JSON layout (compact, spaced, indentN or tab, then ascii "
                            + "and newline where they apply)"
                    )
                }
                chosen = known
            }
            return Data(chosen.bytes(of: value))
        default:
            throw fields.wrongType(text, "a string", value)
        }
    }
}
