import Foundation

/// Cassettes written by VCR.py's JSON serializer: `{"version": 1, "interactions": [{"request": ..., "response":
/// ...}]}`, one interaction per HTTP exchange. A followed redirect is stored as one interaction per hop;
/// ``RedirectFolding`` folds the chain into one chapter. A 3xx nobody followed stays a chapter ending in the 3xx.
///
/// VCR.py keeps neither times nor header order (its headers are a map of name to list of values), and it
/// stores compressed responses decompressed; see ``DecodedBodyRepair``.
enum VCRPyFormat {
    package static let version = 1

    static func isReadable(_ document: JSONValue) -> Bool {
        guard let fields = try? FieldReader(document, path: ""), case .array? = fields["interactions"] else {
            return false
        }
        return fields["version"] != nil
    }

    package static func tape(from document: JSONValue) throws(DecodeFailure) -> Tape {
        let document = try FieldReader(document, path: "")
        let version = try document.int("version")
        guard version == Self.version else {
            throw DecodeFailure(
                "version: unknown VCR.py cassette version \(version) (HTTPVCR reads version \(Self.version))"
            )
        }
        let items = try document.array("interactions")
        var interactions: [Interaction] = []
        interactions.reserveCapacity(items.count)
        for (index, item) in items.enumerated() {
            let fields = try FieldReader(item, path: "interactions[\(index)]")
            interactions.append(try interaction(fields, chapter: index + 1))
        }
        return Tape(interactions: RedirectFolding.fold(interactions))
    }

    private static func interaction(_ fields: FieldReader, chapter: Int) throws(DecodeFailure) -> Interaction {
        let requestFields = try fields.child("request")
        let request = RecordedRequest(
            method: try requestFields.string("method"),
            url: try requestFields.string("uri"),
            headers: try headers(requestFields),
            body: try body(requestFields)
        )
        let responseFields = try fields.child("response")
        let responseBody = try body(responseFields) ?? Data()
        var responseHeaders = try headers(responseFields)
        DecodedBodyRepair.repair(&responseHeaders, body: responseBody)
        let response = RecordedResponse(
            url: request.url,
            statusCode: try statusCode(responseFields),
            headers: responseHeaders
        )
        return Interaction(
            chapter: chapter,
            request: request,
            response: response,
            chunks: responseBody.isEmpty ? [] : [responseBody]
        )
    }

    /// `{"code": 200, "message": "OK"}`; a bare number is taken too.
    private static func statusCode(_ fields: FieldReader) throws(DecodeFailure) -> Int {
        if fields.isNumber("status") { return try fields.int("status") }
        return try fields.child("status").int("code")
    }

    /// A map of name to list of values. Several values of one field are joined with ", " (the order of
    /// different fields is not in the file, so they are sorted by name).
    private static func headers(_ fields: FieldReader) throws(DecodeFailure) -> [RecordedHeader] {
        guard fields.has("headers") else { return [] }
        let map = try fields.child("headers")
        var result: [RecordedHeader] = []
        var byName: [String: JSONValue] = [:]
        for (name, value) in map.members { byName[name] = value }
        for name in byName.keys.sorted(by: { $0.lowercased() < $1.lowercased() }) {
            let value = byName[name]!
            let isList: Bool
            let values: [JSONValue]
            if case let .array(list) = value { (isList, values) = (true, list) } else { (isList, values) = (false, [value]) }
            var texts: [String] = []
            for (index, item) in values.enumerated() {
                guard let text = FieldReader.text(item) else {
                    let path = isList ? "\(map.join(name))[\(index)]" : map.join(name)
                    throw DecodeFailure("\(path): expected a string, found \(describe(item))")
                }
                texts.append(text)
            }
            result.append(RecordedHeader(name, texts.joined(separator: ", ")))
        }
        return result
    }

    /// A body in any of the shapes VCR.py versions write: a string, null, `{"string": ...}`, or base64 as
    /// `{"base64_string": ...}` (at the top or inside `string`).
    private static func body(_ fields: FieldReader) throws(DecodeFailure) -> Data? {
        guard fields.has("body") else { return nil }
        if let text = fields.optionalString("body") { return Data(text.utf8) }
        let body = try fields.child("body")
        if body.has("base64_string") { return try body.base64("base64_string") }
        guard body.has("string") else { return nil }
        if let text = body.optionalString("string") { return Data(text.utf8) }
        let nested = try body.child("string")
        return try nested.base64("base64_string")
    }
}

/// Repairs bodies that a tool stored decompressed while keeping the server's `Content-Encoding`.
///
/// VCR.py and browsers' HAR exports both do this: the file holds the JSON a `/gzip` endpoint sent, under a
/// `Content-Encoding: gzip` header. Replayed as is, a client would try to decompress plain text. When the body is
/// plainly not compressed, the header is removed and `Content-Length` (when present) is set to the real length.
enum DecodedBodyRepair {
    private static let compressingCodings: Set<String> = ["gzip", "x-gzip", "deflate", "br"]

    /// Returns whether the headers were changed.
    @discardableResult
    static func repair(_ headers: inout [RecordedHeader], body: Data) -> Bool {
        guard let encoding = headers[field: "Content-Encoding"] else { return false }
        let codings = encoding.lowercased().split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        guard codings.contains(where: compressingCodings.contains), !isCompressed(body, codings: codings) else {
            return false
        }
        headers[field: "Content-Encoding"] = nil
        if headers[field: "Content-Length"] != nil { headers[field: "Content-Length"] = String(body.count) }
        return true
    }

    /// gzip and zlib streams start with a recognisable header. Brotli and raw deflate have none, so for them a
    /// body that is readable text counts as decompressed and a binary one is left alone.
    static func isCompressed(_ body: Data, codings: [String]) -> Bool {
        guard !body.isEmpty else { return false }
        let bytes = Array(body.prefix(2))
        if codings.contains("gzip") || codings.contains("x-gzip"), bytes == [0x1F, 0x8B] { return true }
        if codings.contains("deflate"), bytes.count == 2, bytes[0] & 0x0F == 8,
           (Int(bytes[0]) << 8 | Int(bytes[1])) % 31 == 0 {
            return true
        }
        if codings.contains("deflate") || codings.contains("br") { return BodyText.text(body) == nil }
        return false
    }
}
