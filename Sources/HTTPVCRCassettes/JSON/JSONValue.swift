import Foundation

/// A JSON document whose objects keep their key order, so that files written from it are stable and read well
/// in a diff. `JSONSerialization` cannot promise an order, hence this small writer.
///
/// It is also what every cassette file is read into: JSON by ``LosslessJSONReader``, a property list through
/// ``init(propertyList:)``, whose data and dates are the two cases JSON has not. ``FieldReader`` reads fields out of
/// it.
package indirect enum JSONValue: Sendable, Equatable {
    case object([(String, JSONValue)])
    case array([JSONValue])
    case string(String)
    case int(Int)
    case double(Double)
    /// A number exactly as its JSON text had it (`1.0`, `1e3`, `-0`): a structured body's, written back as is.
    case number(String)
    case bool(Bool)
    case null
    /// A property list's `<data>`: never in JSON text (written as its base64 when written as JSON).
    case data(Data)
    /// A property list's `<date>`: never in JSON text (written as its ISO 8601 text when written as JSON).
    case date(Date)

    package static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case let (.object(a), .object(b)): a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        case let (.array(a), .array(b)): a == b
        case let (.string(a), .string(b)): a == b
        case let (.int(a), .int(b)): a == b
        case let (.double(a), .double(b)): a == b
        case let (.number(a), .number(b)): a == b
        case let (.bool(a), .bool(b)): a == b
        case (.null, .null): true
        case let (.data(a), .data(b)): a == b
        case let (.date(a), .date(b)): a == b
        default: false
        }
    }

    /// Pretty-printed UTF-8: two-space indent, `"key": value`, slashes and non-ASCII left unescaped, a final
    /// newline.
    package func serialized() -> Data {
        var output: [UInt8] = []
        output.reserveCapacity(4096)
        write(to: &output, indent: 0)
        output.append(UInt8(ascii: "\n"))
        return Data(output)
    }

    /// The same document as Foundation objects, for `PropertyListSerialization`. Nulls are dropped: property
    /// lists cannot hold them.
    package var foundationObject: Any? {
        switch self {
        case let .object(members):
            var dictionary: [String: Any] = [:]
            for (key, value) in members { dictionary[key] = value.foundationObject }
            return dictionary
        case let .array(values): return values.compactMap(\.foundationObject)
        case let .string(value): return value
        case let .int(value): return value
        case let .double(value): return value
        case let .number(text): return Double(text) ?? 0
        case let .bool(value): return value
        case .null: return nil
        case let .data(value): return value
        case let .date(value): return value
        }
    }

    /// What `PropertyListSerialization` made of a file, as a value: dictionaries (their keys sorted, since a
    /// property list keeps no order), arrays, strings, numbers, booleans, data and dates. Nil for anything else.
    package init?(propertyList object: Any) {
        switch object {
        case let text as String: self = .string(text)
        case let dictionary as [String: Any]:
            var members: [(String, JSONValue)] = []
            members.reserveCapacity(dictionary.count)
            for (key, value) in dictionary.sorted(by: { $0.key < $1.key }) {
                guard let member = JSONValue(propertyList: value) else { return nil }
                members.append((key, member))
            }
            self = .object(members)
        case let array as [Any]:
            var values: [JSONValue] = []
            values.reserveCapacity(array.count)
            for element in array {
                guard let value = JSONValue(propertyList: element) else { return nil }
                values.append(value)
            }
            self = .array(values)
        case let data as Data: self = .data(data)
        case let date as Date: self = .date(date)
        case let flag as Bool where type(of: object) == Bool.self: self = .bool(flag)
        case let number as NSNumber:
            switch UInt8(bitPattern: number.objCType.pointee) {
            case UInt8(ascii: "f"), UInt8(ascii: "d"): self = .double(number.doubleValue)
            case UInt8(ascii: "Q"), UInt8(ascii: "L"):
                let value = number.uint64Value
                self = value <= UInt64(Int.max) ? .int(Int(value)) : .number(String(value))
            default: self = .int(Int(number.int64Value))
            }
        default: return nil
        }
    }

    /// An object or an array: what a structured body is.
    package var isContainer: Bool {
        switch self {
        case .object, .array: true
        default: false
        }
    }

    private func write(to output: inout [UInt8], indent: Int) {
        switch self {
        case let .object(members):
            guard !members.isEmpty else { return output.append(contentsOf: Array("{}".utf8)) }
            output.append(UInt8(ascii: "{"))
            for (index, (key, value)) in members.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                Self.newline(&output, indent: indent + 1)
                Self.writeString(key, to: &output)
                output.append(contentsOf: [UInt8(ascii: ":"), UInt8(ascii: " ")])
                value.write(to: &output, indent: indent + 1)
            }
            Self.newline(&output, indent: indent)
            output.append(UInt8(ascii: "}"))
        case let .array(values):
            guard !values.isEmpty else { return output.append(contentsOf: Array("[]".utf8)) }
            output.append(UInt8(ascii: "["))
            for (index, value) in values.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                Self.newline(&output, indent: indent + 1)
                value.write(to: &output, indent: indent + 1)
            }
            Self.newline(&output, indent: indent)
            output.append(UInt8(ascii: "]"))
        case let .string(value):
            Self.writeString(value, to: &output)
        case let .int(value):
            output.append(contentsOf: Array(String(value).utf8))
        case let .double(value):
            if value.isFinite {
                output.append(contentsOf: Array(String(value).utf8))
            } else {
                output.append(contentsOf: Array("null".utf8))
            }
        case let .number(text):
            output.append(contentsOf: Array(text.utf8))
        case let .bool(value):
            output.append(contentsOf: Array((value ? "true" : "false").utf8))
        case .null:
            output.append(contentsOf: Array("null".utf8))
        case let .data(value):
            Self.writeString(value.base64EncodedString(), to: &output)
        case let .date(value):
            Self.writeString(RecordingTime.text(of: value), to: &output)
        }
    }

    private static func newline(_ output: inout [UInt8], indent: Int) {
        output.append(UInt8(ascii: "\n"))
        output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent * 2))
    }

    /// `string` as a JSON string literal, quotes included: for the body rewriter, which writes replacement values
    /// into recorded JSON the way cassettes write strings.
    package static func stringLiteral(_ string: String) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(string.utf8.count + 2)
        writeString(string, to: &output)
        return output
    }

    /// The one JSON string escaper: `"`, `\` and control characters escaped (`\n`, `\r`, `\t`, `\u00xx`), the rest
    /// (slashes and non-ASCII too) written as it is; see "Minimal escaping" in Docs/CassetteFormat.md.
    static func writeString(_ string: String, to output: inout [UInt8]) {
        output.append(Byte.quote)
        for byte in string.utf8 {
            switch byte {
            case Byte.quote, Byte.backslash: output += [Byte.backslash, byte]
            case Byte.lineFeed: output += [Byte.backslash, UInt8(ascii: "n")]
            case Byte.carriageReturn: output += [Byte.backslash, UInt8(ascii: "r")]
            case Byte.tab: output += [Byte.backslash, UInt8(ascii: "t")]
            case 0..<0x20:
                output += Array("\\u00".utf8)
                output += [Byte.hexDigit(byte >> 4, lowercase: true), Byte.hexDigit(byte & 0xF, lowercase: true)]
            default: output.append(byte)
            }
        }
        output.append(Byte.quote)
    }
}
