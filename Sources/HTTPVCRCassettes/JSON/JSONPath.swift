import Foundation

/// The JSONPath subset volatile values and compared value paths are written in: `$`, then `.name`, `["name"]` (or
/// `['name']`), `[2]` and `[*]` (every element of an array, every member of an object).
package struct JSONPath: Sendable, Hashable {
    package enum Step: Sendable, Hashable {
        case member(String)
        case index(Int)
        case every
    }

    package let steps: [Step]

    /// Nil when `text` is not in the subset (the configuration check says so). Written as locations are written
    /// (``JSONPathLocation``): `$.a[*].b`, `$["a key"]` or `$['a key']`, `$.list[0]`.
    package init?(_ text: String) {
        var rest = Substring(text.trimmingCharacters(in: .whitespaces))
        guard rest.first == "$" else { return nil }
        rest = rest.dropFirst()
        var steps: [Step] = []
        while let first = rest.first {
            if first == "." {
                rest = rest.dropFirst()
                let name = rest.prefix { $0 != "." && $0 != "[" }
                guard !name.isEmpty else { return nil }
                steps.append(name == "*" ? .every : .member(String(name)))
                rest = rest.dropFirst(name.count)
            } else if first == "[" {
                guard let close = Self.closingBracket(in: rest) else { return nil }
                let inside = rest[rest.index(after: rest.startIndex)..<close]
                rest = rest[rest.index(after: close)...]
                if inside == "*" {
                    steps.append(.every)
                } else if let index = Int(inside), index >= 0 {
                    steps.append(.index(index))
                } else if inside.first == "\"" || inside.first == "'",
                          case let .string(key)? = LosslessJSONReader.value(of: Data(Self.quoted(inside).utf8)) {
                    steps.append(.member(key))
                } else {
                    return nil
                }
            } else {
                return nil
            }
        }
        self.steps = steps
    }

    /// `'key'` as `"key"`, for the JSON reader.
    private static func quoted(_ literal: Substring) -> String {
        guard literal.first == "'", literal.last == "'", literal.count >= 2 else { return String(literal) }
        return "\"" + literal.dropFirst().dropLast() + "\""
    }

    /// The `]` that closes the bracket `text` starts with, quotes inside it skipped.
    private static func closingBracket(in text: Substring) -> Substring.Index? {
        var quote: Character?
        var escaped = false
        for index in text.indices.dropFirst() {
            let character = text[index]
            if let open = quote {
                if escaped {
                    escaped = false
                } else if character == "\\" {
                    escaped = true
                } else if character == open {
                    quote = nil
                }
            } else if character == "\"" || character == "'" {
                quote = character
            } else if character == "]" {
                return index
            }
        }
        return nil
    }

    /// The values the path selects in `document`, each with where it is (`$.items[0].id`), in document order.
    package func values(in document: JSONValue) -> [(location: String, value: JSONValue)] {
        var found: [(String, JSONValue)] = []
        _ = visit(document, steps[...], location: "$") { location, value in
            found.append((location, value))
            return nil
        }
        return found
    }

    /// `document` with each selected value replaced by what `replace` makes of it.
    package func replacing(in document: JSONValue, _ replace: (JSONValue) -> JSONValue) -> JSONValue {
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
                let child = visit(members[index].1, rest, location: JSONPathLocation.appending(key: name, to: location), found)
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
                if let child = visit(members[index].1, rest, location: JSONPathLocation.appending(key: members[index].0, to: location), found) {
                    members[index].1 = child
                    changed = true
                }
            }
            return changed ? .object(members) : nil
        default:
            return nil
        }
    }
}
