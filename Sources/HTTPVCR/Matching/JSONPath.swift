import Foundation
import HTTPVCRCassettes

/// The JSONPath subset a ``VolatileValue/jsonPath(_:)`` is written in: `$`, then `.name`, `['name']`, `[2]` and
/// `[*]` (every element of an array, every member of an object).
struct JSONPath: Sendable, Hashable {
    enum Step: Sendable, Hashable {
        case member(String)
        case index(Int)
        case every
    }

    let steps: [Step]

    /// Nil when `text` is not in the subset (the configuration check says so).
    init?(_ text: String) {
        var rest = Substring(text)
        guard rest.first == "$" else { return nil }
        rest = rest.dropFirst()
        var steps: [Step] = []
        while let first = rest.first {
            if first == "." {
                rest = rest.dropFirst()
                if rest.first == "*" {
                    steps.append(.every)
                    rest = rest.dropFirst()
                    continue
                }
                let name = rest.prefix { $0 != "." && $0 != "[" }
                guard !name.isEmpty else { return nil }
                steps.append(.member(String(name)))
                rest = rest.dropFirst(name.count)
            } else if first == "[" {
                guard let close = rest.firstIndex(of: "]") else { return nil }
                let inside = rest[rest.index(after: rest.startIndex)..<close]
                if inside == "*" {
                    steps.append(.every)
                } else if let index = Int(inside), index >= 0 {
                    steps.append(.index(index))
                } else if inside.count >= 2, let quote = inside.first, quote == "'" || quote == "\"", inside.last == quote {
                    steps.append(.member(String(inside.dropFirst().dropLast())))
                } else {
                    return nil
                }
                rest = rest[rest.index(after: close)...]
            } else {
                return nil
            }
        }
        guard !steps.isEmpty else { return nil }
        self.steps = steps
    }

    /// The values the path selects in `document`, each with where it is (`$.items[0].id`), in document order.
    func values(in document: JSONValue) -> [(location: String, value: JSONValue)] {
        var found: [(String, JSONValue)] = []
        _ = visit(document, steps[...], location: "$") { location, value in
            found.append((location, value))
            return nil
        }
        return found
    }

    /// `document` with each selected value replaced by what `replace` makes of it.
    func replacing(in document: JSONValue, _ replace: (JSONValue) -> JSONValue) -> JSONValue {
        visit(document, steps[...], location: "$") { _, value in replace(value) } ?? document
    }

    /// Walks to the selected values; `found` returns a replacement or nil. Returns the changed value, or nil when
    /// nothing under `value` changed.
    private func visit(
        _ value: JSONValue,
        _ steps: ArraySlice<Step>,
        location: String,
        _ found: (String, JSONValue) -> JSONValue?
    ) -> JSONValue? {
        guard let step = steps.first else { return found(location, value) }
        let rest = steps.dropFirst()
        switch (step, value) {
        case let (.member(name), .object(members)):
            var members = members
            var changed = false
            for index in members.indices where members[index].0 == name {
                let child = visit(members[index].1, rest, location: location + Self.member(name), found)
                if let child {
                    members[index].1 = child
                    changed = true
                }
            }
            return changed ? .object(members) : nil
        case let (.index(position), .array(elements)) where position < elements.count:
            guard let child = visit(elements[position], rest, location: location + "[\(position)]", found) else { return nil }
            var elements = elements
            elements[position] = child
            return .array(elements)
        case let (.every, .array(elements)):
            var elements = elements
            var changed = false
            for index in elements.indices {
                if let child = visit(elements[index], rest, location: location + "[\(index)]", found) {
                    elements[index] = child
                    changed = true
                }
            }
            return changed ? .array(elements) : nil
        case let (.every, .object(members)):
            var members = members
            var changed = false
            for index in members.indices {
                if let child = visit(members[index].1, rest, location: location + Self.member(members[index].0), found) {
                    members[index].1 = child
                    changed = true
                }
            }
            return changed ? .object(members) : nil
        default:
            return nil
        }
    }

    /// `.name` where the name is a plain identifier, `['name']` otherwise.
    static func member(_ name: String) -> String {
        let isPlain = !name.isEmpty && name.utf8.allSatisfy {
            ($0 | 0x20) >= UInt8(ascii: "a") && ($0 | 0x20) <= UInt8(ascii: "z") || ($0 >= Byte.zero && $0 <= Byte.nine)
                || $0 == UInt8(ascii: "_")
        } && !(name.utf8.first! >= Byte.zero && name.utf8.first! <= Byte.nine)
        return isPlain ? "." + name : "['" + name + "']"
    }
}
