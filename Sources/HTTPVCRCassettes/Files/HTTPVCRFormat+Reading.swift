import Foundation

/// Reading HTTPVCR's own format, JSON or property list, with `JSONDecoder` / `PropertyListDecoder` straight into
/// typed records: the one reader of our files, whatever their syntax or key order.
///
/// Why the decoders: going through `JSONSerialization` builds Foundation objects and then casts every one of them
/// back to Swift types, which on Linux costs as much as parsing itself (`vcr-bench` load ratio 2.2–2.4 that way,
/// about 1.0 this way, against a target of 2.0). What the decoders say about a wrong field is vague (a number too
/// large for an `Int` is "not valid JSON", with no path), so each field is read through ``DecodedFields``, which
/// names it in the words of the other formats' `FieldReader`: "scenes[3].response.status: expected a number, found a
/// string". Where the bytes themselves are wrong, `JSONSerialization` says where (see `CassetteFile.decode`).
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

    /// What the decoder made of a file.
    package enum Decoded {
        case tape(Tape)
        /// The decoder could not parse the bytes; the reason is its own, without a position.
        case unparsable(String)
    }

    /// The tape in `data`, or why the decoder cannot parse the bytes (`JSONSerialization` says where, better). A
    /// field that is missing or wrong throws, naming it.
    ///
    /// Property lists must have been parsed by `PropertyListSerialization` first: `PropertyListDecoder` recurses
    /// without a limit (``NestingLimit`` guards XML, Foundation's own parser binary ones).
    package static func tape(decoding data: Data, asPropertyList: Bool) throws(DecodeFailure) -> Decoded {
        do {
            // Structured bodies (JSON written as JSON) are turned back into their text first: the decoder keeps
            // neither key order nor a number's text.
            let data = asPropertyList ? data : try StructuredBodies.asText(data) ?? data
            let document = asPropertyList
                ? try PropertyListDecoder().decode(Document.self, from: data)
                : try JSONDecoder().decode(Document.self, from: data)
            return .tape(Tape(scenes: document.scenes))
        } catch let failure as DecodeFailure {
            throw failure
        } catch let unfit as UnfitNumber {
            let found = unfit.written(in: data) ?? unfit.value
            throw DecodeFailure("\(unfit.path): expected a whole number that fits in 64 bits, found \(found)")
        } catch let DecodingError.dataCorrupted(context) {
            // Every field goes through a helper that names it: anything else is the parser's.
            return .unparsable(context.debugDescription)
        } catch {
            return .unparsable(CassetteFile.reason(error))
        }
    }

    private struct Document: Decodable {
        let scenes: [Scene]

        init(from decoder: any Decoder) throws {
            let fields = try DecodedFields(decoder)
            let version = try fields.integer("version")
            guard version == HTTPVCRFormat.version else {
                throw DecodeFailure("unknown version \(version) (this HTTPVCR reads version \(HTTPVCRFormat.version))")
            }
            var list = try fields.list("scenes")
            var scenes: [Scene] = []
            if let count = list.count { scenes.reserveCapacity(count) }
            while !list.isAtEnd {
                // The decoders fail on a null record before it can name itself.
                if (try? list.decodeNil()) == true {
                    let index = list.currentIndex - 1
                    throw DecodeFailure("\(fields.path("scenes"))[\(index)]: expected an object, found null")
                }
                scenes.append(try list.decode(SceneRecord.self).scene)
            }
            self.scenes = scenes
        }
    }

    private struct SceneRecord: Decodable {
        let scene: Scene

        init(from decoder: any Decoder) throws {
            let fields = try DecodedFields(decoder)
            let chapter = try fields.integer("chapter")
            guard Tape.chapterNumbers.contains(chapter) else {
                throw chapterOutOfRange(chapter, at: fields.path("chapter"))
            }
            let time = fields.has("time") ? try fields.finite("time") : 0
            let event: Scene.Event
            if let request = try fields.recordIfPresent(RequestRecord.self, "request") {
                event = .request(request.request)
            } else if let redirect = try fields.recordIfPresent(RedirectRecord.self, "redirect") {
                event = .redirect(redirect.response, to: redirect.request)
            } else if let response = try fields.recordIfPresent(ResponseRecord.self, "response") {
                event = .response(response.response)
            } else if let data = try fields.body(text: "data", base64: "dataBase64") {
                event = .data(data)
            } else if let error = try fields.recordIfPresent(ErrorRecord.self, "error") {
                event = .error(error.error)
            } else if fields.has("complete") {
                event = .completion
            } else {
                throw DecodeFailure(
                    "\(fields.path): a scene needs one of request, redirect, response, data, error, complete"
                )
            }
            scene = Scene(chapter: chapter, time: time, event: event)
        }
    }

    private struct RequestRecord: Decodable {
        let request: RecordedRequest

        init(from decoder: any Decoder) throws {
            let fields = try DecodedFields(decoder)
            request = RecordedRequest(
                method: try fields.string("method"),
                url: try fields.string("url"),
                headers: try fields.headerFields("headers"),
                body: try fields.body(text: "body", base64: "bodyBase64"),
                recordedAt: try fields.date("recordedAt")
            )
        }
    }

    private struct ResponseRecord: Decodable {
        let response: RecordedResponse

        init(from decoder: any Decoder) throws {
            let fields = try DecodedFields(decoder)
            response = RecordedResponse(
                url: try fields.string("url"),
                statusCode: try fields.integer("status"),
                httpVersion: try fields.optionalString("httpVersion") ?? "HTTP/1.1",
                headers: try fields.headerFields("headers")
            )
        }
    }

    private struct RedirectRecord: Decodable {
        let response: RecordedResponse
        let request: RecordedRequest

        init(from decoder: any Decoder) throws {
            let fields = try DecodedFields(decoder)
            response = try fields.record(ResponseRecord.self, "response").response
            request = try fields.record(RequestRecord.self, "to").request
        }
    }

    private struct ErrorRecord: Decodable {
        let error: RecordedError

        init(from decoder: any Decoder) throws {
            let fields = try DecodedFields(decoder)
            error = RecordedError(
                domain: try fields.string("domain"),
                code: try fields.integer("code"),
                userInfo: try fields.stringMap("userInfo")
            )
        }
    }
}
