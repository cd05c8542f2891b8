import Foundation

/// One object of a document, read through a `Decoder` field by field; every failure is a `DecodeFailure` naming the
/// field, in the words of ``FieldReader`` (which reads the other formats from Foundation objects).
struct DecodedFields {
    let container: KeyedDecodingContainer<FieldKey>

    init(_ decoder: any Decoder) throws {
        do {
            container = try decoder.container(keyedBy: FieldKey.self)
        } catch {
            // Something the decoder cannot tell apart is a corrupt file: the parser's business.
            guard let found = Self.kind(decoder) else { throw error }
            let path = Self.path(decoder.codingPath)
            throw DecodeFailure("\(path.isEmpty ? "top level" : path): expected an object, found \(found)")
        }
    }

    private init(container: KeyedDecodingContainer<FieldKey>) {
        self.container = container
    }

    /// Where the object is: "scenes[3].response". Only errors need it, so it is not kept.
    package var path: String { Self.path(container.codingPath) }

    package static func path(_ codingPath: [any CodingKey]) -> String {
        var path = ""
        for key in codingPath {
            if let index = key.intValue {
                path += "[\(index)]"
            } else {
                path += path.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return path
    }

    package func path(_ name: String) -> String { path.isEmpty ? name : "\(path).\(name)" }

    /// Present and not null.
    func has(_ name: String) -> Bool {
        let key = FieldKey(name)
        return container.contains(key) && (try? container.decodeNil(forKey: key)) == false
    }

    package func string(_ name: String) throws -> String {
        guard let value = try optionalString(name) else { throw wrong(name, expected: "a string") }
        return value
    }

    /// Nil when missing or not a string. `JSONDecoder` checks a string's bytes (UTF-8, escapes) only when it is
    /// read: that error is the parser's, rethrown so that `JSONSerialization` says where the bytes are wrong.
    func optionalString(_ name: String) throws -> String? {
        try Self.text(in: container, FieldKey(name))
    }

    private static func text(in container: KeyedDecodingContainer<FieldKey>, _ key: FieldKey) throws -> String? {
        do {
            return try container.decode(String.self, forKey: key)
        } catch let error as DecodingError {
            if case .dataCorrupted = error { throw error }
            return nil  // missing, null, or not a string
        }
    }

    /// An ISO 8601 time (`2026-11-23T22:00:00Z`), or nil when there is none.
    package func date(_ name: String) throws -> Date? {
        guard has(name) else { return nil }
        guard let text = try optionalString(name) else { throw wrong(name, expected: "an ISO 8601 time") }
        guard let date = RecordingTime.date(from: text) else {
            throw DecodeFailure("\(path(name)): expected an ISO 8601 time like 2026-11-23T22:00:00Z, found \"\(text)\"")
        }
        return date
    }

    /// A whole number that fits in an `Int`; `true` and `false` are 1 and 0, as Foundation's objects have them.
    package func integer(_ name: String) throws -> Int {
        let key = FieldKey(name)
        if let value = try? container.decode(Int.self, forKey: key) { return value }
        if let flag = try? container.decode(Bool.self, forKey: key) { return flag ? 1 : 0 }
        // The decoders reject these without naming the field.
        guard let number = numberText(key) else {
            guard isOutOfRange(key) else { throw wrong(name, expected: "a number") }
            throw DecodeFailure("\(path(name)): expected a whole number that fits in 64 bits, found \(Self.outOfRange)")
        }
        let steps = (container.codingPath + [key]).map { key in
            key.intValue.map(UnfitNumber.Step.index) ?? .name(key.stringValue)
        }
        throw UnfitNumber(steps: steps, path: path(name), value: number)
    }

    /// A finite number: property lists can hold `nan` and `inf`, which no time means.
    func finite(_ name: String) throws -> Double {
        let key = FieldKey(name)
        let value: Double
        if let number = try? container.decode(Double.self, forKey: key) {
            value = number
        } else if let flag = try? container.decode(Bool.self, forKey: key) {
            value = flag ? 1 : 0
        } else if isOutOfRange(key) {
            throw DecodeFailure("\(path(name)): expected a finite number, found \(Self.outOfRange)")
        } else {
            throw wrong(name, expected: "a number")
        }
        guard value.isFinite else { throw DecodeFailure("\(path(name)): expected a finite number, found \(value)") }
        return value
    }

    /// A nested record; its own fields name themselves.
    package func record<Record: Decodable>(_ type: Record.Type, _ name: String) throws -> Record {
        guard let record = try recordIfPresent(type, name) else { throw wrong(name, expected: "an object") }
        return record
    }

    /// Nil when missing or null (the decoders would fail on a null record before it can name itself).
    func recordIfPresent<Record: Decodable>(_ type: Record.Type, _ name: String) throws -> Record? {
        let key = FieldKey(name)
        guard container.contains(key), (try? container.decodeNil(forKey: key)) == false else { return nil }
        return try container.decode(type, forKey: key)
    }

    func list(_ name: String) throws -> any UnkeyedDecodingContainer {
        do {
            return try container.nestedUnkeyedContainer(forKey: FieldKey(name))
        } catch {
            throw wrong(name, expected: "an array")
        }
    }

    /// A string-to-string map, empty when missing or null; numbers and booleans are taken as their text.
    func stringMap(_ name: String) throws -> [String: String] {
        do {
            return try container.decodeIfPresent([String: String].self, forKey: FieldKey(name)) ?? [:]
        } catch {
            // Not all strings: read field by field below.
        }
        guard let nested = try? container.nestedContainer(keyedBy: FieldKey.self, forKey: FieldKey(name)) else {
            throw wrong(name, expected: "an object")
        }
        let map = DecodedFields(container: nested)
        var result: [String: String] = [:]
        for key in nested.allKeys {
            if let text = try Self.text(in: nested, key) {
                result[key.stringValue] = text
            } else if let number = map.numberText(key) {
                result[key.stringValue] = number
            } else {
                throw map.wrong(key.stringValue, expected: "a string")
            }
        }
        return result
    }

    /// Header fields: each name maps to its value, or to the array of the values of a name that came more than
    /// once, in the order they came; numbers and booleans are taken as their text. Empty when missing or null;
    /// sorted by name, as the writer writes them.
    func headerFields(_ name: String) throws -> [RecordedHeader] {
        do {
            return [RecordedHeader](try container.decodeIfPresent([String: String].self, forKey: FieldKey(name)) ?? [:])
        } catch {
            // Not all strings: read field by field below.
        }
        guard let nested = try? container.nestedContainer(keyedBy: FieldKey.self, forKey: FieldKey(name)) else {
            throw wrong(name, expected: "an object")
        }
        let map = DecodedFields(container: nested)
        var headers: [RecordedHeader] = []
        for key in nested.allKeys {
            if let text = try Self.text(in: nested, key) {
                headers.append(RecordedHeader(key.stringValue, text))
            } else if let number = map.numberText(key) {
                headers.append(RecordedHeader(key.stringValue, number))
            } else if var values = try? nested.nestedUnkeyedContainer(forKey: key) {
                while !values.isAtEnd {
                    guard let value = try Self.text(in: &values) else {
                        throw DecodeFailure(
                            "\(map.path(key.stringValue))[\(values.currentIndex)]: expected a string, found "
                                + "\(Self.kind(of: values) ?? "a value it cannot read")"
                        )
                    }
                    headers.append(RecordedHeader(key.stringValue, value))
                }
            } else {
                throw map.wrong(key.stringValue, expected: "a string or an array of strings")
            }
        }
        return headers.sortedByName()
    }

    /// The next value of an array as text (a number or boolean as its text), or nil when it is something else.
    private static func text(in values: inout any UnkeyedDecodingContainer) throws -> String? {
        do {
            return try values.decode(String.self)
        } catch let error as DecodingError {
            if case .dataCorrupted = error { throw error }
        }
        if let value = try? values.decode(Int.self) { return String(value) }
        if let value = try? values.decode(UInt64.self) { return String(value) }
        if let value = try? values.decode(Double.self) { return "\(value)" }
        if let flag = try? values.decode(Bool.self) { return flag ? "1" : "0" }
        return nil
    }

    /// What the next value of an array is, in ``kind(_:)``'s words (without moving on).
    private static func kind(of values: any UnkeyedDecodingContainer) -> String? {
        var values = values
        if (try? values.decodeNil()) == true { return "null" }
        if (try? values.nestedUnkeyedContainer()) != nil { return "an array" }
        if (try? values.nestedContainer(keyedBy: FieldKey.self)) != nil { return "an object" }
        return nil
    }

    /// A body as text or as base64 (the base64 key wins when both are there); in a property list also as data.
    package func body(text: String, base64: String) throws -> Data? {
        if has(base64) {
            let encoded = try string(base64)
            guard let data = Data(base64Encoded: encoded, options: .ignoreUnknownCharacters) else {
                throw DecodeFailure("\(path(base64)): not valid base64")
            }
            return data
        }
        guard has(text) else { return nil }
        if let text = try optionalString(text) { return Data(text.utf8) }
        if let data = try? container.decode(Data.self, forKey: FieldKey(text)) { return data }
        throw wrong(text, expected: "a string")
    }

    // MARK: Saying what is wrong

    private func wrong(_ name: String, expected: String) -> DecodeFailure {
        let key = FieldKey(name)
        guard container.contains(key) else { return DecodeFailure("\(path(name)): missing (expected \(expected))") }
        return DecodeFailure("\(path(name)): expected \(expected), found \(kind(key) ?? "a value it cannot read")")
    }

    /// A number too large or too small for any Swift number (`1e400`, `1e-400`): `JSONDecoder` refuses it as
    /// corrupt, where `JSONSerialization` turns it into infinity or 0.
    private static let outOfRange = "a number out of range"

    private func isOutOfRange(_ key: FieldKey) -> Bool {
        do {
            _ = try container.decode(Double.self, forKey: key)
            return false
        } catch DecodingError.typeMismatch, DecodingError.valueNotFound, DecodingError.keyNotFound {
            return false
        } catch {
            return true
        }
    }

    /// A number as `NSNumber.stringValue` writes it: whole numbers without a fraction, booleans as 1 and 0.
    private func numberText(_ key: FieldKey) -> String? {
        if let value = try? container.decode(Int.self, forKey: key) { return String(value) }
        if let value = try? container.decode(UInt64.self, forKey: key) { return String(value) }
        if let value = try? container.decode(Double.self, forKey: key) { return "\(value)" }
        if let flag = try? container.decode(Bool.self, forKey: key) { return flag ? "1" : "0" }
        return nil
    }

    /// What a value is, in ``describe(_:)``'s words; nil when the decoder cannot tell (a corrupt file).
    private func kind(_ key: FieldKey) -> String? {
        if (try? container.decodeNil(forKey: key)) == true { return "null" }
        if (try? container.decode(String.self, forKey: key)) != nil { return "a string" }
        if numberText(key) != nil { return "a number" }
        if (try? container.decode(Data.self, forKey: key)) != nil { return "data" }
        if (try? container.decode(Date.self, forKey: key)) != nil { return "a date" }
        if (try? container.nestedUnkeyedContainer(forKey: key)) != nil { return "an array" }
        if (try? container.nestedContainer(keyedBy: FieldKey.self, forKey: key)) != nil { return "an object" }
        return isOutOfRange(key) ? Self.outOfRange : nil
    }

    private static func kind(_ decoder: any Decoder) -> String? {
        if let value = try? decoder.singleValueContainer() {
            if value.decodeNil() { return "null" }
            if (try? value.decode(String.self)) != nil { return "a string" }
            if (try? value.decode(Double.self)) != nil || (try? value.decode(Bool.self)) != nil { return "a number" }
            if (try? value.decode(Data.self)) != nil { return "data" }
            if (try? value.decode(Date.self)) != nil { return "a date" }
        }
        if (try? decoder.unkeyedContainer()) != nil { return "an array" }
        return nil
    }
}

/// Any key: our records read their fields by name.
struct FieldKey: CodingKey {
    package let stringValue: String
    package var intValue: Int? { nil }

    init(_ name: String) { stringValue = name }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// A number that is not a whole number or does not fit in an `Int`. The decoders keep no trace of how the file
/// wrote it (`1e19` and `10000000000000000000` are the same `UInt64`), so the message takes it from the file,
/// parsed again by Foundation on this one error path.
struct UnfitNumber: Error {
    package enum Step { case name(String), index(Int) }

    package let steps: [Step]
    package let path: String
    /// The number as the decoder read it, when the file cannot say.
    package let value: String

    package func written(in data: Data) -> String? {
        let parsed = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        var object = parsed ?? (try? PropertyListSerialization.propertyList(from: data, format: nil))
        for step in steps {
            switch step {
            case let .name(name): object = (object as? [String: Any])?[name]
            case let .index(index):
                object = (object as? [Any]).flatMap { $0.indices.contains(index) ? $0[index] : nil }
            }
        }
        return (object as? NSNumber).map { "\($0)" }
    }
}
