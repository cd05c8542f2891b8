import Foundation

/// A cassette document as a tree that mutations edit and that is written back as JSON or as an XML property list.
///
/// Objects keep their members in order and may repeat a key; `raw` is text written as it is, for what no valid
/// document holds (`1e400`, `NaN`, `<real>nan</real>`, nesting thousands of levels deep).
public indirect enum Node: Sendable, Equatable {
    case object([Member])
    case array([Node])
    case string(String)
    case integer(Int)
    case real(Double)
    case bool(Bool)
    case null
    case data([UInt8])
    case raw(String)

    public struct Member: Sendable, Equatable {
        public var key: String
        public var value: Node

        public init(_ key: String, _ value: Node) {
            self.key = key
            self.value = value
        }
    }

    /// The syntax a document is written in.
    public enum Syntax: String, Sendable {
        case json
        case propertyList
    }

    // MARK: From Foundation

    /// A tree from what `JSONSerialization` or `PropertyListSerialization` parsed. Keys are sorted: dictionaries
    /// have no order, and a mutant must not depend on the order of this process's hashing.
    public init(foundation value: Any) {
        switch value {
        case let dictionary as [String: Any]:
            self = .object(dictionary.keys.sorted().map { Member($0, Node(foundation: dictionary[$0] as Any)) })
        case let array as [Any]:
            self = .array(array.map(Node.init(foundation:)))
        case let text as String:
            self = .string(text)
        case let data as Data:
            self = .data(Array(data))
        case let number as NSNumber:
            switch UInt8(bitPattern: number.objCType.pointee) {
            case UInt8(ascii: "c"), UInt8(ascii: "B"): self = .bool(number.boolValue)
            case UInt8(ascii: "d"), UInt8(ascii: "f"): self = .real(number.doubleValue)
            default: self = .integer(number.intValue)
            }
        default:
            self = .null
        }
    }

    /// The tree as Foundation objects, for a binary property list; nil when it holds `raw` text or nulls, which
    /// a property list cannot hold.
    public var foundationObject: Any? {
        switch self {
        case let .object(members):
            var dictionary: [String: Any] = [:]
            for member in members {
                guard let value = member.value.foundationObject else { return nil }
                dictionary[member.key] = value
            }
            return dictionary
        case let .array(elements):
            var array: [Any] = []
            for element in elements {
                guard let value = element.foundationObject else { return nil }
                array.append(value)
            }
            return array
        case let .string(text): return text
        case let .integer(value): return value
        case let .real(value): return value
        case let .bool(value): return value
        case let .data(bytes): return Data(bytes)
        case .null, .raw: return nil
        }
    }

    // MARK: Writing

    /// The document's bytes: pretty-printed JSON (so `"format": "HTTPVCR"` comes first, as HTTPVCR writes it), or
    /// an XML property list.
    public func serialized(as syntax: Syntax) -> Data {
        var output = ""
        switch syntax {
        case .json:
            writeJSON(to: &output, indent: 0)
        case .propertyList:
            output = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"
                + #"<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "#
                + #""http://www.apple.com/DTDs/PropertyList-1.0.dtd">"# + "\n"
                + #"<plist version="1.0">"# + "\n"
            writePropertyList(to: &output)
            output += "\n</plist>"
        }
        output += "\n"
        return Data(output.utf8)
    }

    private func writeJSON(to output: inout String, indent: Int) {
        let padding = String(repeating: "  ", count: indent + 1)
        switch self {
        case let .object(members):
            guard !members.isEmpty else { return output += "{}" }
            output += "{"
            for (index, member) in members.enumerated() {
                output += (index == 0 ? "\n" : ",\n") + padding
                Self.writeJSONString(member.key, to: &output)
                output += ": "
                member.value.writeJSON(to: &output, indent: indent + 1)
            }
            output += "\n" + String(repeating: "  ", count: indent) + "}"
        case let .array(elements):
            guard !elements.isEmpty else { return output += "[]" }
            output += "["
            for (index, element) in elements.enumerated() {
                output += (index == 0 ? "\n" : ",\n") + padding
                element.writeJSON(to: &output, indent: indent + 1)
            }
            output += "\n" + String(repeating: "  ", count: indent) + "]"
        case let .string(text): Self.writeJSONString(text, to: &output)
        case let .integer(value): output += String(value)
        case let .real(value): output += value.isFinite ? "\(value)" : (value.isNaN ? "NaN" : "Infinity")
        case let .bool(value): output += value ? "true" : "false"
        case .null: output += "null"
        case let .data(bytes): Self.writeJSONString(Data(bytes).base64EncodedString(), to: &output)
        case let .raw(text): output += text
        }
    }

    private static func writeJSONString(_ text: String, to output: inout String) {
        output += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case _ where scalar.value < 0x20:
                output += "\\u00" + (scalar.value < 0x10 ? "0" : "") + String(scalar.value, radix: 16)
            default: output.unicodeScalars.append(scalar)
            }
        }
        output += "\""
    }

    private func writePropertyList(to output: inout String) {
        switch self {
        case let .object(members):
            output += "<dict>"
            for member in members {
                output += "<key>" + Self.escapedXML(member.key) + "</key>"
                member.value.writePropertyList(to: &output)
            }
            output += "</dict>"
        case let .array(elements):
            output += "<array>"
            for element in elements { element.writePropertyList(to: &output) }
            output += "</array>"
        case let .string(text): output += "<string>" + Self.escapedXML(text) + "</string>"
        case let .integer(value): output += "<integer>\(value)</integer>"
        case let .real(value):
            output += "<real>" + (value.isFinite ? "\(value)" : value.isNaN ? "nan" : value < 0 ? "-inf" : "inf")
                + "</real>"
        case let .bool(value): output += value ? "<true/>" : "<false/>"
        // Property lists have no null; a date is the type they have and JSON does not.
        case .null: output += "<date>1970-01-01T00:00:00Z</date>"
        case let .data(bytes): output += "<data>" + Data(bytes).base64EncodedString() + "</data>"
        case let .raw(text): output += text
        }
    }

    private static func escapedXML(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
