import Foundation

/// JSON for `--json` output, written with its keys in a chosen order (Foundation sorts them or scrambles them)
/// and two-space indentation.
indirect enum JSONOutput {
    case object([(String, JSONOutput)])
    case array([JSONOutput])
    case string(String)
    case int(Int)
    case double(Double)
    case bool(Bool)
    case null

    static func optional(_ value: String?) -> JSONOutput { value.map(JSONOutput.string) ?? .null }
    static func optional(_ value: Int?) -> JSONOutput { value.map(JSONOutput.int) ?? .null }
    static func optional(_ value: Double?) -> JSONOutput { value.map(JSONOutput.double) ?? .null }

    var text: String {
        var output = ""
        write(to: &output, indent: 0)
        return output
    }

    private func write(to output: inout String, indent: Int) {
        let pad = String(repeating: "  ", count: indent + 1)
        let closing = String(repeating: "  ", count: indent)
        switch self {
        case let .object(members):
            guard !members.isEmpty else { return output += "{}" }
            output += "{\n"
            for (index, (key, value)) in members.enumerated() {
                output += pad + Self.quoted(key) + ": "
                value.write(to: &output, indent: indent + 1)
                output += index == members.count - 1 ? "\n" : ",\n"
            }
            output += closing + "}"
        case let .array(items):
            guard !items.isEmpty else { return output += "[]" }
            output += "[\n"
            for (index, item) in items.enumerated() {
                output += pad
                item.write(to: &output, indent: indent + 1)
                output += index == items.count - 1 ? "\n" : ",\n"
            }
            output += closing + "]"
        case let .string(text):
            output += Self.quoted(text)
        case let .int(number):
            output += String(number)
        case let .double(number):
            output += number.isFinite ? String(number) : "null"
        case let .bool(flag):
            output += flag ? "true" : "false"
        case .null:
            output += "null"
        }
    }

    static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x2028 || scalar.value == 0x2029:
                result += String(format: "\\u%04X", scalar.value)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
