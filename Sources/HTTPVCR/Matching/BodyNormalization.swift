import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCRCassettes

/// The body matcher's view of a body: the same text for bodies that mean the same.
enum BodyNormalization {
    static func key(for request: RequestParts) -> String {
        guard var body = request.body, !body.isEmpty else { return "" }
        let encoding = request.header("Content-Encoding") ?? ""
        if !encoding.isEmpty, let decoded = Inflate.decode(body, contentEncoding: encoding) { body = decoded }
        let contentType = request.header("Content-Type")?.lowercased() ?? ""

        if let json = canonicalJSON(body) { return "json:" + json }
        if contentType.hasPrefix("application/x-www-form-urlencoded"), let text = BodyText.text(body) {
            return "form:" + canonicalForm(text)
        }
        return "bytes:" + body.base64EncodedString()
    }

    /// JSON re-serialized with sorted keys, so that key order and whitespace do not matter.
    private static func canonicalJSON(_ body: Data) -> String? {
        guard let first = body.first(where: { !Byte.isJSONWhitespace($0) }),
              first == Byte.openBrace || first == Byte.openBracket
        else { return nil }
        guard let object = try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed]),
              let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .fragmentsAllowed])
        else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    /// Pairs decoded and sorted, so that order and encoding variants (`+` or `%20`) do not matter.
    private static func canonicalForm(_ text: String) -> String {
        FormCoding.decodePairs(text).map { $0.name + "=" + $0.value }.sorted().joined(separator: "&")
    }
}
