import Foundation
import HTTPVCRCassettes

/// Hides secrets inside JSON and form bodies by editing the recorded bytes in place: everything except the
/// replaced or removed values keeps its exact bytes, formatting and key order, so cassettes stay faithful and
/// diff well. Nothing here parses into Foundation objects, because re-serializing would reorder keys.
///
/// This file chooses between the formats; BodyRewriter+JSON.swift and BodyRewriter+Form.swift do the rewriting.
package enum BodyRewriter {
    /// Decides by Content-Type (application/json, anything +json, text/json → JSON; application/x-www-form-urlencoded
    /// → form) and, when the Content-Type is missing or generic (text/plain, application/octet-stream), by content
    /// (first non-whitespace byte `{` or `[` and it parses → JSON). Returns the body unchanged when neither applies
    /// or it does not parse.
    package static func rewrite(
        _ data: Data, contentType: String?, replacing replacements: [String: String?]
    ) -> Data {
        // Nothing to replace means nothing to change: skip the scan entirely.
        guard !replacements.isEmpty, !data.isEmpty else { return data }
        switch bodyKind(of: data, contentType: contentType) {
        case .json: return rewriteJSON(data, replacing: replacements) ?? data
        case .form: return rewriteForm(data, replacing: replacements) ?? data
        case nil: return data
        }
    }

    /// Every key of a JSON body (object keys at any depth) or form body (pair names, decoded); empty for other
    /// bodies. For the secure defaults, which filter keys by what they are called.
    package static func keys(in data: Data, contentType: String?) -> [String] {
        guard !data.isEmpty, let kind = bodyKind(of: data, contentType: contentType) else { return [] }
        switch kind {
        case .json:
            guard let object = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) else {
                return []
            }
            var keys: [String] = []
            var pending: [Any] = [object]
            while let value = pending.popLast() {
                if let dictionary = value as? [String: Any] {
                    keys.append(contentsOf: dictionary.keys)
                    pending.append(contentsOf: dictionary.values)
                } else if let array = value as? [Any] {
                    pending.append(contentsOf: array)
                }
            }
            return keys
        case .form:
            return withBytes(of: data) { bytes -> [String] in
                guard let pairs = FormCoding.bodySegments(of: bytes) else { return [] }
                return pairs.compactMap { pair in
                    pair.range.isEmpty ? nil : String(decoding: FormCoding.decode(bytes, pair.nameRange), as: UTF8.self)
                }
            }
        }
    }

    /// Every value found for these keys at any depth (JSON) or in pairs (form), for tests and linting.
    /// JSON strings come back unescaped; other JSON values (numbers, objects, ...) as their raw text.
    package static func values(forKeys keys: Set<String>, in data: Data, contentType: String?) -> [String] {
        guard !keys.isEmpty, !data.isEmpty, let kind = bodyKind(of: data, contentType: contentType) else { return [] }
        var targets: [[UInt8]: MemberAction] = [:]
        for key in keys { targets[Array(key.utf8)] = .collect }
        return withBytes(of: data) { bytes -> [String] in
            switch kind {
            case .json:
                var scanner = JSONSpanScanner(bytes: bytes, targets: targets)
                guard scanner.scanDocument() else { return [] }
                // Members finish inside out; report them in document order instead.
                return scanner.collected.sorted { $0.lowerBound < $1.lowerBound }.map { range in
                    if bytes[range.lowerBound] == Byte.quote {
                        let content = (range.lowerBound + 1)..<(range.upperBound - 1)
                        return String(decoding: JSONSpanScanner.unescaped(bytes, content), as: UTF8.self)
                    }
                    return String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
                }
            case .form:
                guard let pairs = FormCoding.bodySegments(of: bytes) else { return [] }
                return pairs.compactMap { pair in
                    guard !pair.range.isEmpty, targets[FormCoding.decode(bytes, pair.nameRange)] != nil else {
                        return nil
                    }
                    guard let valueRange = pair.valueRange else { return "" }
                    return String(decoding: FormCoding.decode(bytes, valueRange), as: UTF8.self)
                }
            }
        }
    }
}

// MARK: - Shared pieces

extension BodyRewriter {
    /// What to do with the value of a key that was asked for.
    enum MemberAction {
        /// Write these bytes instead of the value.
        case replace([UInt8])
        /// Drop the whole member (JSON) or pair (form).
        case remove
        /// Only note where the value is, for `values(forKeys:)`.
        case collect
    }

    /// The bytes in `range` of the original are to become `replacement` (empty to delete).
    struct ByteEdit {
        var range: Range<Int>
        var replacement: [UInt8]
    }

    enum BodyKind {
        case json
        case form
    }

    /// Data may be a slice or bridged storage; a plain byte buffer keeps the scanners simple and fast in debug.
    static func withBytes<Result>(of data: Data, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        data.withUnsafeBytes { raw in body(raw.bindMemory(to: UInt8.self)) }
    }

    /// Applies edits, given in document order and not overlapping, to the original bytes.
    static func splice(_ bytes: UnsafeBufferPointer<UInt8>, edits: [ByteEdit]) -> Data {
        var applied: [ByteEdit] = []
        var size = bytes.count
        var cursor = 0
        // The scanner never produces an edit overlapping an earlier one; skipping any would keep the copy in bounds.
        for edit in edits where edit.range.lowerBound >= cursor {
            applied.append(edit)
            size += edit.replacement.count - (edit.range.upperBound - edit.range.lowerBound)
            cursor = edit.range.upperBound
        }
        // Copying whole runs of memory keeps a multi-megabyte body fast even in debug builds.
        let output = [UInt8](unsafeUninitializedCapacity: size) { buffer, initializedCount in
            guard let source = bytes.baseAddress, let target = buffer.baseAddress else { return }
            var written = 0
            var cursor = 0
            for edit in applied {
                let keptCount = edit.range.lowerBound - cursor
                (target + written).initialize(from: source + cursor, count: keptCount)
                written += keptCount
                edit.replacement.withUnsafeBufferPointer { replacement in
                    guard let base = replacement.baseAddress else { return }
                    (target + written).initialize(from: base, count: replacement.count)
                }
                written += edit.replacement.count
                cursor = edit.range.upperBound
            }
            (target + written).initialize(from: source + cursor, count: bytes.count - cursor)
            initializedCount = written + bytes.count - cursor
        }
        return Data(output)
    }

    /// The media type decides when it is specific; generic or missing ones fall back to sniffing for JSON only,
    /// since almost any short text would pass for a form body.
    static func bodyKind(of data: Data, contentType: String?) -> BodyKind? {
        let essence = contentType
            .flatMap { $0.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first }
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        switch essence {
        case "application/json", "text/json": return .json
        case "application/x-www-form-urlencoded": return .form
        case "", "text/plain", "application/octet-stream":
            return withBytes(of: data) { bytes in
                var index = JSONSpanScanner.byteOrderMarkLength(bytes)
                while index < bytes.count, Byte.isJSONWhitespace(bytes[index]) { index += 1 }
                guard index < bytes.count else { return nil }
                return bytes[index] == Byte.openBrace || bytes[index] == Byte.openBracket ? .json : nil
            }
        default:
            return essence.hasSuffix("+json") ? .json : nil
        }
    }
}
