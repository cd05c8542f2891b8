import Foundation

/// Reading HTTPVCR's own format with `JSONDecoder` / `PropertyListDecoder` straight into typed records.
///
/// Going through `JSONSerialization` builds Foundation objects and then casts every one of them back to Swift
/// types, which on Linux cost as much as parsing itself; decoding typed records skips both.
extension HTTPVCRFormat {
    /// Whether the bytes start like one of our JSON documents (the writer puts `format` first).
    static func looksLikeJSONDocument(_ data: Data) -> Bool {
        let prefix = data.prefix(64)
        return prefix.first == UInt8(ascii: "{") && prefix.range(of: Data(#""format": "HTTPVCR""#.utf8)) != nil
    }

    static func tape(decoding data: Data, isPropertyList: Bool) throws(DecodeFailure) -> Tape {
        let document: Document
        do {
            document = isPropertyList
                ? try PropertyListDecoder().decode(Document.self, from: data)
                : try JSONDecoder().decode(Document.self, from: data)
        } catch let error as DecodeFailure {
            throw error
        } catch let error as DecodingError {
            throw DecodeFailure(describe(error))
        } catch {
            throw DecodeFailure("\(error)")
        }
        return Tape(scenes: document.scenes)
    }

    private struct Document: Decodable {
        let scenes: [Scene]

        enum CodingKeys: String, CodingKey { case format, version, scenes }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let version = try container.decode(Int.self, forKey: .version)
            guard version == HTTPVCRFormat.version else {
                throw DecodeFailure("unknown version \(version) (this HTTPVCR reads version \(HTTPVCRFormat.version))")
            }
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
                let path = decoder.codingPath.map(HTTPVCRFormat.pathComponent).joined()
                throw DecodeFailure("\(path): a scene needs one of request, redirect, response, data, error, complete")
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
            guard let data = Data(base64Encoded: encoded, options: .ignoreUnknownCharacters) else {
                let path = (container.codingPath + [base64]).map(HTTPVCRFormat.pathComponent).joined()
                throw DecodeFailure("\(path): not valid base64")
            }
            return data
        }
        guard container.contains(text) else { return nil }
        if let string = try? container.decode(String.self, forKey: text) { return Data(string.utf8) }
        return try container.decode(Data.self, forKey: text)
    }

    /// `scenes[3].response.status` from a coding path.
    static func pathComponent(_ key: any CodingKey) -> String {
        if let index = key.intValue { return "[\(index)]" }
        return ".\(key.stringValue)"
    }

    /// "scenes[0].chapter: expected a number, found a string", from a decoding error.
    static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context, _ key: (any CodingKey)? = nil) -> String {
            let components = context.codingPath + (key.map { [$0] } ?? [])
            let text = components.map(pathComponent).joined()
            return text.hasPrefix(".") ? String(text.dropFirst()) : (text.isEmpty ? "top level" : text)
        }
        func expected(_ type: Any.Type) -> String {
            switch type {
            case is Int.Type, is Double.Type: "a number"
            case is String.Type: "a string"
            case is Bool.Type: "a boolean"
            case is Data.Type: "data"
            default: type is [Any].Type || type is any Collection.Type ? "an array" : "an object"
            }
        }
        func found(_ context: DecodingError.Context) -> String {
            let text = context.debugDescription.lowercased()
            for (word, name) in [("string", "a string"), ("number", "a number"), ("array", "an array"),
                                 ("dictionary", "an object"), ("object", "an object"), ("bool", "a boolean"),
                                 ("null", "null")] where text.contains("found \(word)") || text.contains("found a \(word)")
                || text.contains("found an \(word)") {
                return ", found \(name)"
            }
            return ""
        }
        switch error {
        case let .typeMismatch(type, context):
            return "\(path(context)): expected \(expected(type))\(found(context))"
        case let .valueNotFound(type, context):
            return "\(path(context)): expected \(expected(type)), found null"
        case let .keyNotFound(key, context):
            return "\(path(context, key)): missing"
        case let .dataCorrupted(context):
            let underlying = (context.underlyingError as NSError?)?.userInfo[NSDebugDescriptionErrorKey] as? String
            let detail = underlying ?? context.debugDescription
            // Same words as for files that JSONSerialization cannot parse.
            if context.codingPath.isEmpty { return "not valid JSON (truncated or corrupt?): \(detail)" }
            return "\(path(context)): \(detail)"
        @unknown default:
            return "\(error)"
        }
    }
}
