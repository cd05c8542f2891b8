import Foundation

/// Reads fields out of a parsed JSON or property-list object, and says exactly where and what is wrong when a
/// field is missing or has the wrong type: "scenes[3].response.status: expected a number, found a string".
package struct FieldReader {
    package let path: String
    package let object: [String: Any]

    package init(_ object: Any, path: String) throws(DecodeFailure) {
        guard let dictionary = object as? [String: Any] else {
            throw DecodeFailure("\(path.isEmpty ? "top level" : path): expected an object, found \(describe(object))")
        }
        self.path = path
        self.object = dictionary
    }

    package func has(_ key: String) -> Bool { object[key] != nil && !(object[key] is NSNull) }

    package func string(_ key: String) throws(DecodeFailure) -> String {
        guard let value = optionalString(key) else { throw missing(key, "a string") }
        return value
    }

    package func optionalString(_ key: String) -> String? {
        object[key] as? String
    }

    /// A whole number that fits in an `Int`. `NSNumber.intValue` would silently truncate 1.5 and wrap 1e19 or
    /// 9223372036854775808 around to a negative number, so anything else is an error.
    package func int(_ key: String) throws(DecodeFailure) -> Int {
        guard let value = object[key] else { throw missing(key, "a number") }
        guard let number = value as? NSNumber else { throw wrongType(key, "a number", value) }
        guard let integer = exactInteger(number) else {
            throw DecodeFailure("\(join(key)): expected a whole number that fits in 64 bits, found \(number)")
        }
        return integer
    }

    /// A finite number: property lists can hold `nan` and `inf`, which no time or duration means.
    package func double(_ key: String) throws(DecodeFailure) -> Double {
        guard let value = object[key] else { throw missing(key, "a number") }
        guard let number = value as? NSNumber else { throw wrongType(key, "a number", value) }
        let double = number.doubleValue
        guard double.isFinite else { throw DecodeFailure("\(join(key)): expected a finite number, found \(number)") }
        return double
    }

    package func child(_ key: String) throws(DecodeFailure) -> FieldReader {
        guard let value = object[key] else { throw missing(key, "an object") }
        return try FieldReader(value, path: join(key))
    }

    package func array(_ key: String) throws(DecodeFailure) -> [Any] {
        guard let value = object[key] else { throw missing(key, "an array") }
        guard let array = value as? [Any] else { throw wrongType(key, "an array", value) }
        return array
    }

    /// A string-to-string map; numbers and booleans are taken as their text.
    package func stringMap(_ key: String) throws(DecodeFailure) -> [String: String] {
        guard let value = object[key], !(value is NSNull) else { return [:] }
        guard let dictionary = value as? [String: Any] else { throw wrongType(key, "an object", value) }
        var result: [String: String] = [:]
        for (name, item) in dictionary {
            if let text = item as? String {
                result[name] = text
            } else if let number = item as? NSNumber {
                result[name] = number.stringValue
            } else {
                throw DecodeFailure("\(join(key)).\(name): expected a string, found \(describe(item))")
            }
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
        if let value = object[key] { return wrongType(key, expected, value) }
        return DecodeFailure("\(join(key)): missing (expected \(expected))")
    }

    package func wrongType(_ key: String, _ expected: String, _ value: Any) -> DecodeFailure {
        DecodeFailure("\(join(key)): expected \(expected), found \(describe(value))")
    }
}

/// The number's value as an `Int`, or nil when it has a fraction, is not finite, or does not fit.
package func exactInteger(_ number: NSNumber) -> Int? {
    switch UInt8(bitPattern: number.objCType.pointee) {
    case UInt8(ascii: "Q"), UInt8(ascii: "L"):
        let value = number.uint64Value
        return value <= UInt64(Int.max) ? Int(value) : nil
    case UInt8(ascii: "f"), UInt8(ascii: "d"):
        // NSDecimalNumber holds integers beyond 64 bits; as a Double they round to ±2^63, which would fit.
        let value = number.doubleValue
        if number is NSDecimalNumber, !(value.magnitude < 0x1p63) { return nil }
        return Int(exactly: value)
    default:
        return Int(exactly: number.int64Value)
    }
}

/// Why a file could not be read as a tape; `CassetteFile` adds the file's path.
package struct DecodeFailure: Error {
    package var reason: String
    package init(_ reason: String) { self.reason = reason }
}

package func describe(_ value: Any) -> String {
    switch value {
    case is NSNull: "null"
    case is String: "a string"
    case is [Any]: "an array"
    case is [String: Any]: "an object"
    case is Data: "data"
    case is Date: "a date"
    case is NSNumber: "a number"
    default: "\(type(of: value))"
    }
}
