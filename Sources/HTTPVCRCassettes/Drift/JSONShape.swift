import Foundation

/// The shape of a JSON value: the types seen at each location, an object's keys (in the order first seen) and an
/// array's elements merged into one shape, so that `[*]` stands for all of them. Two bodies differ in shape when a
/// key comes or goes, or the types at a location differ; values do not count.
struct JSONShape: Equatable {
    /// The types seen here, by name: `object`, `array`, `string`, `number`, `boolean`, `null`.
    var types: Set<String> = []
    /// An object's keys and their shapes, merged over every object seen here.
    var members: [(key: String, shape: JSONShape)] = []
    /// Every element of every array seen here, merged; nil when only empty arrays were.
    package var element: JSONShape? {
        get { elements.first }
        set { elements = newValue.map { [$0] } ?? [] }
    }
    /// ``element``'s storage: a struct cannot hold an optional of itself.
    private var elements: [JSONShape] = []

    static func == (lhs: JSONShape, rhs: JSONShape) -> Bool {
        lhs.types == rhs.types && lhs.elements == rhs.elements && lhs.members.count == rhs.members.count
            && zip(lhs.members, rhs.members).allSatisfy { $0.key == $1.key && $0.shape == $1.shape }
    }

    init(_ value: JSONValue) {
        types = [Self.typeName(value)]
        switch value {
        case let .object(pairs):
            for (key, member) in pairs { merge(member: key, JSONShape(member)) }
        case let .array(values):
            for value in values { mergeElement(JSONShape(value)) }
        default:
            break
        }
    }

    private init() {}

    static func typeName(_ value: JSONValue) -> String {
        switch value {
        case .object: "object"
        case .array: "array"
        case .string: "string"
        case .number, .int, .double: "number"
        case .bool: "boolean"
        case .null: "null"
        case .data: "data"
        case .date: "date"
        }
    }

    /// The types as one word or several: `number`, `number or null`.
    var typeDescription: String {
        let order = ["object", "array", "string", "number", "boolean", "null"]
        return order.filter(types.contains).joined(separator: " or ")
    }

    package mutating func merge(_ other: JSONShape) {
        types.formUnion(other.types)
        for (key, shape) in other.members { merge(member: key, shape) }
        if let element = other.element { mergeElement(element) }
    }

    private mutating func merge(member key: String, _ shape: JSONShape) {
        if let index = members.firstIndex(where: { $0.key == key }) {
            members[index].shape.merge(shape)
        } else {
            members.append((key, shape))
        }
    }

    private mutating func mergeElement(_ shape: JSONShape) {
        if element == nil { element = shape } else { element?.merge(shape) }
    }

    /// How `live` differs from `recorded` (self), at `location` and below.
    package func differences(to live: JSONShape, at location: String) -> [CassetteDrift.Difference] {
        var found: [CassetteDrift.Difference] = []
        if types != live.types {
            found.append(.init(.typeChanged, at: location, recorded: typeDescription, live: live.typeDescription))
        }
        if types.contains("object"), live.types.contains("object") {
            for (key, shape) in members {
                let path = JSONPathLocation.appending(key: key, to: location)
                guard let liveShape = live.members.first(where: { $0.key == key })?.shape else {
                    found.append(.init(.keyRemoved, at: path, recorded: shape.typeDescription, live: nil))
                    continue
                }
                found += shape.differences(to: liveShape, at: path)
            }
            for (key, shape) in live.members where !members.contains(where: { $0.key == key }) {
                let path = JSONPathLocation.appending(key: key, to: location)
                found.append(.init(.keyAdded, at: path, recorded: nil, live: shape.typeDescription))
            }
        }
        // An empty array on either side says nothing about its elements.
        if let element, let liveElement = live.element {
            found += element.differences(to: liveElement, at: location + "[*]")
        }
        return found
    }
}

/// JSONPath-like locations: `$`, `.key` for a key that is a plain name, `["a key"]` for any other, `[*]` for
/// every element of an array, `[2]` for one.
package enum JSONPathLocation {
    package static func appending(key: String, to location: String) -> String {
        let digits: ClosedRange<Unicode.Scalar> = "0"..."9"
        let isName = key.unicodeScalars.first.map { !digits.contains($0) } ?? false
            && key.unicodeScalars.allSatisfy { scalar in
                scalar.isASCII && (scalar == "_" || scalar.properties.isAlphabetic || digits.contains(scalar))
            }
        if isName { return location + "." + key }
        var literal: [UInt8] = []
        JSONValue.writeString(key, to: &literal)
        return location + "[" + String(decoding: literal, as: UTF8.self) + "]"
    }

    /// The values at `path` in `value`, in document order. `path` is written as the locations are (`$.a[*].b`,
    /// `$["a key"]`, `$.list[0]`); nil when it is not such a path (``JSONPath``).
    package static func values(at path: String, in value: JSONValue) -> [JSONValue]? {
        JSONPath(path).map { path in path.values(in: value).map(\.value) }
    }

    /// Whether `path` is a location ``values(at:in:)`` can follow (`$.a[*].b`); `vcr diff --value` checks it.
    package static func isValid(_ path: String) -> Bool {
        JSONPath(path) != nil
    }
}
