import Foundation

/// Reading HTTPVCR's own JSON with `JSONDecoder` straight into typed records.
///
/// Going through `JSONSerialization` builds Foundation objects and then casts every one of them back to Swift
/// types, which on Linux cost as much as parsing itself; decoding typed records skips both. This is only the fast
/// path: a file it cannot read is read again by ``tape(from:)``, which accepts the same files and says exactly
/// what is wrong (`JSONDecoder` calls a number too large for an `Int` "not valid JSON"). Property lists never
/// come here: `PropertyListDecoder` recurses without a limit and overflows the stack on deeply nested XML.
extension HTTPVCRFormat {
    /// Whether the bytes start like one of our JSON documents (the writer puts `format` first).
    static func looksLikeJSONDocument(_ data: Data) -> Bool {
        let prefix = data.prefix(64)
        return prefix.first == UInt8(ascii: "{") && prefix.range(of: Data(#""format": "HTTPVCR""#.utf8)) != nil
    }

    /// The tape, or nil when `JSONDecoder` cannot read the file for any reason.
    static func tape(decoding data: Data) -> Tape? {
        (try? JSONDecoder().decode(Document.self, from: data)).map { Tape(scenes: $0.scenes) }
    }

    /// What the fast path throws where it cannot read a file; ``tape(from:)`` then says what is wrong.
    private struct Unreadable: Error {}

    private struct Document: Decodable {
        let scenes: [Scene]

        enum CodingKeys: String, CodingKey { case format, version, scenes }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let version = try container.decode(Int.self, forKey: .version)
            guard version == HTTPVCRFormat.version else { throw Unreadable() }
            var scenes: [Scene] = []
            var list = try container.nestedUnkeyedContainer(forKey: .scenes)
            if let count = list.count { scenes.reserveCapacity(count) }
            while !list.isAtEnd { scenes.append(try list.decode(SceneRecord.self).scene) }
            self.scenes = scenes
        }
    }

    private struct SceneRecord: Decodable {
        let scene: Scene

        enum CodingKeys: String, CodingKey {
            case chapter, time, request, redirect, response, data, dataBase64, error, complete
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let chapter = try container.decode(Int.self, forKey: .chapter)
            guard Tape.chapterNumbers.contains(chapter) else { throw Unreadable() }
            let time = try container.decodeIfPresent(Double.self, forKey: .time) ?? 0
            let event: Scene.Event
            if let request = try container.decodeIfPresent(RequestRecord.self, forKey: .request) {
                event = .request(request.request)
            } else if let redirect = try container.decodeIfPresent(RedirectRecord.self, forKey: .redirect) {
                event = .redirect(redirect.response.response, to: redirect.to.request)
            } else if let response = try container.decodeIfPresent(ResponseRecord.self, forKey: .response) {
                event = .response(response.response)
            } else if let data = try decodeBody(container, text: .data, base64: .dataBase64) {
                event = .data(data)
            } else if let error = try container.decodeIfPresent(ErrorRecord.self, forKey: .error) {
                event = .error(RecordedError(domain: error.domain, code: error.code, userInfo: error.userInfo ?? [:]))
            } else if container.contains(.complete) {
                event = .completion
            } else {
                throw Unreadable()
            }
            scene = Scene(chapter: chapter, time: time, event: event)
        }
    }

    private struct RequestRecord: Decodable {
        let request: RecordedRequest

        enum CodingKeys: String, CodingKey { case method, url, headers, body, bodyBase64 }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            request = RecordedRequest(
                method: try container.decode(String.self, forKey: .method),
                url: try container.decode(String.self, forKey: .url),
                headers: [HTTPHeader](try container.decodeIfPresent([String: String].self, forKey: .headers) ?? [:]),
                body: try decodeBody(container, text: .body, base64: .bodyBase64)
            )
        }
    }

    private struct ResponseRecord: Decodable {
        let response: RecordedResponse

        enum CodingKeys: String, CodingKey { case url, status, httpVersion, headers }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            response = RecordedResponse(
                url: try container.decode(String.self, forKey: .url),
                statusCode: try container.decode(Int.self, forKey: .status),
                httpVersion: try container.decodeIfPresent(String.self, forKey: .httpVersion) ?? "HTTP/1.1",
                headers: [HTTPHeader](try container.decodeIfPresent([String: String].self, forKey: .headers) ?? [:])
            )
        }
    }

    private struct RedirectRecord: Decodable {
        let response: ResponseRecord
        let to: RequestRecord
    }

    private struct ErrorRecord: Decodable {
        let domain: String
        let code: Int
        let userInfo: [String: String]?
    }

    /// A body as text or as base64 (the base64 key wins when both are there); in a property list also as data.
    private static func decodeBody<Key: CodingKey>(
        _ container: KeyedDecodingContainer<Key>, text: Key, base64: Key
    ) throws -> Data? {
        if let encoded = try container.decodeIfPresent(String.self, forKey: base64) {
            guard let data = Data(base64Encoded: encoded, options: .ignoreUnknownCharacters) else { throw Unreadable() }
            return data
        }
        guard container.contains(text) else { return nil }
        if let string = try? container.decode(String.self, forKey: text) { return Data(string.utf8) }
        return try container.decode(Data.self, forKey: text)
    }
}
