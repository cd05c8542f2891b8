import Foundation

/// Reads the fields of one object of a cassette file, read into a ``JSONValue`` (JSON or a property list, every
/// format), and says exactly where and what is wrong when a field is missing or has the wrong type:
/// "scenes[3].response.status: expected a number, found a string".
///
/// A key given twice in one object is read as its last value, as a dictionary would keep it. A whole number must be
/// one exactly (`1.0` is 1, `1.5` is an error, never rounded) and fit in an `Int`; `true` and `false` are 1 and 0.
package struct FieldReader {
    package let path: String
    package let members: [(String, JSONValue)]

    package init(_ value: JSONValue, path: String) throws(DecodeFailure) {
        guard case let .object(members) = value else {
            throw DecodeFailure("\(path.isEmpty ? "top level" : path): expected an object, found \(describe(value))")
        }
        self.path = path
        self.members = members
    }

    /// The member's value (its last, when the key is there twice); nil when it is missing.
    package subscript(_ key: String) -> JSONValue? {
        members.last { $0.0 == key }?.1
    }

    /// Present and not null.
    package func has(_ key: String) -> Bool {
        guard let value = self[key] else { return false }
        if case .null = value { return false }
        return true
    }

    package func string(_ key: String) throws(DecodeFailure) -> String {
        guard let value = optionalString(key) else { throw missing(key, "a string") }
        return value
    }

    /// Nil when missing or not a string.
    package func optionalString(_ key: String) -> String? {
        guard case let .string(text)? = self[key] else { return nil }
        return text
    }

    /// A whole number that fits in an `Int`.
    package func int(_ key: String) throws(DecodeFailure) -> Int {
        guard let value = self[key] else { throw missing(key, "a number") }
        switch Self.integer(value) {
        case let .some(.success(integer)): return integer
        case let .some(.failure(found)):
            throw DecodeFailure("\(join(key)): expected a whole number that fits in 64 bits, found \(found)")
        case .none: throw wrongType(key, "a number", value)
        }
    }

    /// A finite number: property lists can hold `nan` and `inf`, which no time or duration means.
    package func double(_ key: String) throws(DecodeFailure) -> Double {
        guard let value = self[key] else { throw missing(key, "a number") }
        let number: Double
        switch value {
        case let .int(integer): number = Double(integer)
        case let .double(double): number = double
        case let .bool(flag): number = flag ? 1 : 0
        case let .number(text):
            guard let double = Self.finite(text) else {
                throw DecodeFailure("\(join(key)): expected a finite number, found \(Self.outOfRange)")
            }
            number = double
        default: throw wrongType(key, "a number", value)
        }
        guard number.isFinite else { throw DecodeFailure("\(join(key)): expected a finite number, found \(number)") }
        return number
    }

    /// Whether the member is a number (or a boolean, which counts as one).
    package func isNumber(_ key: String) -> Bool {
        switch self[key] {
        case .int?, .double?, .number?, .bool?: true
        default: false
        }
    }

    package func child(_ key: String) throws(DecodeFailure) -> FieldReader {
        guard let value = self[key] else { throw missing(key, "an object") }
        return try FieldReader(value, path: join(key))
    }

    package func array(_ key: String) throws(DecodeFailure) -> [JSONValue] {
        guard let value = self[key] else { throw missing(key, "an array") }
        guard case let .array(values) = value else { throw wrongType(key, "an array", value) }
        return values
    }

    /// A string-to-string map, empty when missing or null; numbers and booleans are taken as their text.
    package func stringMap(_ key: String) throws(DecodeFailure) -> [String: String] {
        guard has(key) else { return [:] }
        let map = try child(key)
        var result: [String: String] = [:]
        for (name, item) in map.members {
            guard let text = Self.text(item) else {
                throw DecodeFailure("\(map.join(name)): expected a string, found \(describe(item))")
            }
            result[name] = text
        }
        return result
    }

    /// Base64 text decoded, with the field named when it is not base64.
    package func base64(_ key: String) throws(DecodeFailure) -> Data {
        let value = try string(key)
        guard let data = Data(base64Encoded: value, options: .ignoreUnknownCharacters) else {
            throw DecodeFailure("\(join(key)): not valid base64")
        }
        return data
    }

    package func join(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    package func missing(_ key: String, _ expected: String) -> DecodeFailure {
        if let value = self[key] { return wrongType(key, expected, value) }
        return DecodeFailure("\(join(key)): missing (expected \(expected))")
    }

    package func wrongType(_ key: String, _ expected: String, _ value: JSONValue) -> DecodeFailure {
        DecodeFailure("\(join(key)): expected \(expected), found \(describe(value))")
    }

    // MARK: Values

    /// A string, or a number or boolean as its text (`3`, `1.5`, booleans as 1 and 0); nil for anything else.
    package static func text(_ value: JSONValue) -> String? {
        switch value {
        case let .string(text): text
        case let .int(integer): String(integer)
        case let .double(double): "\(double)"
        case let .bool(flag): flag ? "1" : "0"
        case let .number(text):
            if let integer = Int(text) { String(integer) } else if let large = UInt64(text) { String(large) } else {
                Double(text).map { "\($0)" } ?? text
            }
        default: nil
        }
    }

    /// A whole number's value, or the number as found when it is not one that fits; nil when it is no number.
    package static func integer(_ value: JSONValue) -> Result<Int, NumberFound>? {
        switch value {
        case let .int(integer): return .success(integer)
        case let .bool(flag): return .success(flag ? 1 : 0)
        case let .double(double):
            return Int(exactly: double).map(Result.success) ?? .failure(NumberFound("\(double)"))
        case let .number(text):
            if !text.utf8.contains(where: { $0 == UInt8(ascii: ".") || $0 | 0x20 == UInt8(ascii: "e") }) {
                // Written as a whole number: its own digits say what it is.
                return Int(text).map(Result.success) ?? .failure(NumberFound(text))
            }
            guard let double = finite(text) else { return .failure(NumberFound(outOfRange)) }
            return Int(exactly: double).map(Result.success) ?? .failure(NumberFound("\(double)"))
        default:
            return nil
        }
    }

    /// How a number that is not a fitting whole number is named: `1e+19`, `1.5`, `9223372036854775808`.
    package struct NumberFound: Error, CustomStringConvertible {
        package let description: String
        init(_ description: String) { self.description = description }
    }

    /// A number too large or too small for a `Double` (`1e400`, `1e-400`): never rounded to infinity or to zero.
    static let outOfRange = "a number out of range"

    /// The JSON number's value, or nil when a `Double` cannot hold it: infinite, or zero where the digits are not.
    static func finite(_ text: String) -> Double? {
        guard let double = Double(text), double.isFinite else { return nil }
        if double == 0 {
            let mantissa = text.utf8.prefix { $0 | 0x20 != UInt8(ascii: "e") }
            guard mantissa.allSatisfy({ !(UInt8(ascii: "1")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        }
        return double
    }
}

/// Why a file could not be read as a tape; `CassetteFile` adds the file's path.
package struct DecodeFailure: Error {
    package var reason: String
    package init(_ reason: String) { self.reason = reason }
}

/// What a value is, in the words of the messages: "null", "a string", "a number", "an array", "an object", "data",
/// "a date".
package func describe(_ value: JSONValue) -> String {
    switch value {
    case .null: "null"
    case .string: "a string"
    case .array: "an array"
    case .object: "an object"
    case .data: "data"
    case .date: "a date"
    case .int, .double, .number, .bool: "a number"
    }
}
