import Foundation

/// Reading structured bodies for `JSONDecoder`: a body stored as JSON (`"data": {...}, "dataLayout": "indent2"`)
/// is turned back into its text (`"data": "{\n  ..."`), exactly as ``JSONLayout`` writes it, before the decoder
/// reads the file. The written-layout reader does the same in place.
enum StructuredBodies {
    /// `data` with every structured body as its text; nil when it has none, or when it is not JSON the lossless
    /// reader takes (the decoder then says what is wrong).
    /// - Throws: a layout that is not one, naming its field.
    static func asText(_ data: Data) throws(DecodeFailure) -> Data? {
        guard case var .object(document) = LosslessJSONReader.value(of: data) else { return nil }
        var changed = false
        for (member, (key, value)) in document.enumerated() where key == "scenes" {
            guard case var .array(scenes) = value else { continue }
            for (index, scene) in scenes.enumerated() {
                guard case var .object(fields) = scene else { continue }
                let path = "scenes[\(index)]"
                changed = try restore(&fields, text: "data", layout: "dataLayout", path: path) || changed
                changed = try restoreRequest(in: &fields, key: "request", path: path) || changed
                for (position, (name, redirect)) in fields.enumerated() where name == "redirect" {
                    guard case var .object(redirectFields) = redirect else { continue }
                    if try restoreRequest(in: &redirectFields, key: "to", path: "\(path).redirect") {
                        fields[position].1 = .object(redirectFields)
                        changed = true
                    }
                }
                scenes[index] = .object(fields)
            }
            document[member].1 = .array(scenes)
        }
        return changed ? JSONValue.object(document).serialized() : nil
    }

    private static func restoreRequest(
        in fields: inout [(String, JSONValue)], key: String, path: String
    ) throws(DecodeFailure) -> Bool {
        var changed = false
        for (position, (name, request)) in fields.enumerated() where name == key {
            guard case var .object(requestFields) = request else { continue }
            if try restore(&requestFields, text: "body", layout: "bodyLayout", path: "\(path).\(key)") {
                fields[position].1 = .object(requestFields)
                changed = true
            }
        }
        return changed
    }

    /// Turns the structured member `text` of `fields` into its text, in the layout `layout` names (compact when
    /// there is none), and removes the layout. Returns whether there was one.
    private static func restore(
        _ fields: inout [(String, JSONValue)], text: String, layout: String, path: String
    ) throws(DecodeFailure) -> Bool {
        guard fields.contains(where: { name, value in name == text && value.isContainer }) else { return false }
        var chosen = JSONLayout.compact
        for (name, value) in fields where name == layout {
            guard case let .string(written) = value, let named = JSONLayout(name: written) else {
                throw DecodeFailure(
                    "\(path).\(layout): expected a JSON layout (compact, spaced, indentN or tab, then ascii "
                        + "and newline where they apply)"
                )
            }
            chosen = named
        }
        fields.removeAll { $0.0 == layout }
        for position in fields.indices where fields[position].0 == text && fields[position].1.isContainer {
            fields[position].1 = .string(String(decoding: chosen.bytes(of: fields[position].1), as: UTF8.self))
        }
        return true
    }
}

extension JSONValue {
    /// An object or an array: what a structured body is.
    package var isContainer: Bool {
        switch self {
        case .object, .array: true
        default: false
        }
    }
}
