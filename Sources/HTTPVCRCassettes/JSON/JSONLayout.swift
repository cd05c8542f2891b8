import Foundation

/// How a JSON text was laid out, so that its exact bytes can be written again from its structure: the spacing,
/// whether non-ASCII characters were escaped, and whether it ended with a line break. A cassette stores a JSON body
/// as its structure plus the name of its layout (`indent2 newline`) only when these give back the body byte for
/// byte; ``structure(of:)`` checks exactly that.
///
/// The layouts are those servers' JSON writers use: compact (`{"a":1}`: JavaScript, Go, Swift), spaced
/// (`{"a": 1}`: Python's default) and indented by N spaces or a tab (Python's and JavaScript's `indent`, and
/// Flask's, httpbin's), each with `\b \f \n \r \t` and `\u00xx` for other control characters.
package struct JSONLayout: Equatable, Sendable {
    package enum Spacing: Equatable, Sendable {
        case compact
        case spaced
        /// One `unit` (spaces or a tab) per level; `"key": value`, and `{}` / `[]` when empty.
        case indented(unit: String)
    }

    var spacing: Spacing
    /// Characters above ASCII (and DEL) escaped as `\uxxxx`, as Python's `ensure_ascii` does.
    var escapesNonASCII = false
    /// The text ends with one line break.
    package var endsWithNewline = false

    /// The compact layout, which a structured body without a layout name is read in.
    package static let compact = JSONLayout(spacing: .compact)

    /// The layout's name in a cassette: the spacing (`compact`, `spaced`, `indent2`, `tab`), then `ascii` and
    /// `newline` when they apply.
    package var name: String {
        var words: [String]
        switch spacing {
        case .compact: words = ["compact"]
        case .spaced: words = ["spaced"]
        case let .indented(unit): words = [unit == "\t" ? "tab" : "indent\(unit.count)"]
        }
        if escapesNonASCII { words.append("ascii") }
        if endsWithNewline { words.append("newline") }
        return words.joined(separator: " ")
    }

    package init(spacing: Spacing, escapesNonASCII: Bool = false, endsWithNewline: Bool = false) {
        self.spacing = spacing
        self.escapesNonASCII = escapesNonASCII
        self.endsWithNewline = endsWithNewline
    }

    /// The layout a cassette names; nil for a name that is not one (words other than the spacing and the two
    /// modifiers, either given twice, or no spacing).
    package init?(name: String) {
        var name = name
        // ASCII names (all that are valid but for look-alikes) are read from their bytes: splitting into
        // `Character`s cost a third of reading a structured body.
        if let layout = name.withUTF8({ Self.layout(asciiName: $0) }) {
            guard let read = layout else { return nil }
            self = read
            return
        }
        self.init(characterNames: name)
    }

    /// The layout an ASCII name names (nil inside when none); nil when the name is not ASCII. Without allocating:
    /// it is read once per structured body.
    private static func layout(asciiName name: UnsafeBufferPointer<UInt8>) -> JSONLayout?? {
        guard name.allSatisfy({ $0 < 0x80 }) else { return nil }
        func isWord(_ word: Slice<UnsafeBufferPointer<UInt8>>, _ text: StaticString) -> Bool {
            word.count == text.utf8CodeUnitCount
                && word.elementsEqual(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
        }
        var layout: JSONLayout?
        var start = 0
        // The words between single spaces, as `split(omittingEmptySubsequences: false)` gives them.
        while start <= name.count {
            var end = start
            while end < name.count, name[end] != Byte.space { end += 1 }
            let word = name[start..<end]
            start = end + 1
            guard var read = layout else {
                guard let spacing = spacing(named: word, isWord) else { return .some(nil) }
                layout = JSONLayout(spacing: spacing)
                continue
            }
            if isWord(word, "ascii"), !read.escapesNonASCII, !read.endsWithNewline {
                read.escapesNonASCII = true
            } else if isWord(word, "newline"), !read.endsWithNewline {
                read.endsWithNewline = true
            } else {
                return .some(nil)
            }
            layout = read
        }
        return .some(layout)
    }

    private static func spacing(
        named word: Slice<UnsafeBufferPointer<UInt8>>,
        _ isWord: (Slice<UnsafeBufferPointer<UInt8>>, StaticString) -> Bool
    ) -> Spacing? {
        if isWord(word, "compact") { return .compact }
        if isWord(word, "spaced") { return .spaced }
        if isWord(word, "tab") { return .indented(unit: "\t") }
        guard word.count > 6, isWord(word.prefix(6), "indent") else { return nil }
        // As `Int` reads the count: an optional sign, then decimal digits (a minus sign leaves none in range).
        var digits = word.dropFirst(6)
        if digits.first == Byte.plus { digits = digits.dropFirst() }
        guard !digits.isEmpty else { return nil }
        var count = 0
        for digit in digits {
            guard (Byte.zero...Byte.nine).contains(digit) else { return nil }
            count = min(count * 10 + Int(digit - Byte.zero), 100)
        }
        guard (1...16).contains(count) else { return nil }
        return .indented(unit: String(repeating: " ", count: count))
    }

    /// The reading of a name by its `Character`s (the reference for ASCII ones, which `JSONLayoutTests` checks).
    package init?(characterNames name: String) {
        let words = name.split(separator: " ", omittingEmptySubsequences: false)
        guard let first = words.first else { return nil }
        switch first {
        case "compact": spacing = .compact
        case "spaced": spacing = .spaced
        case "tab": spacing = .indented(unit: "\t")
        default:
            guard first.hasPrefix("indent"), let count = Int(first.dropFirst(6)), (1...16).contains(count),
                  first.dropFirst(6).allSatisfy(\.isASCII) else { return nil }
            spacing = .indented(unit: String(repeating: " ", count: count))
        }
        for word in words.dropFirst() {
            switch word {
            case "ascii" where !escapesNonASCII && !endsWithNewline: escapesNonASCII = true
            case "newline" where !endsWithNewline: endsWithNewline = true
            default: return nil
            }
        }
    }

    /// `data` as a structure and the layout that writes it again byte for byte; nil when `data` is not a JSON
    /// object or array, or when no layout gives back its exact bytes (then it is stored as text or base64).
    package static func structure(of data: Data) -> (value: JSONValue, layout: JSONLayout)? {
        guard let first = data.first, first == Byte.openBrace || first == Byte.openBracket,
              let value = LosslessJSONReader.value(of: data)
        else { return nil }
        let bytes = [UInt8](data)
        let endsWithNewline = bytes.last == Byte.lineFeed
        let text = endsWithNewline ? bytes.dropLast() : bytes[...]
        var spacings: [Spacing] = [.compact, .spaced]
        if let lineBreak = text.firstIndex(of: Byte.lineFeed) {
            let unit = text[(lineBreak + 1)...].prefix { $0 == Byte.space || $0 == Byte.tab }
            guard !unit.isEmpty, unit.count <= 16, Set(unit).count == 1, unit.first == Byte.space || unit.count == 1
            else { return nil }
            spacings = [.indented(unit: String(decoding: unit, as: UTF8.self))]
        }
        let isASCII = !bytes.contains { $0 >= 0x80 }
        let escapes = isASCII ? [false, true] : [false]
        for spacing in spacings {
            for escapesNonASCII in escapes {
                let layout = JSONLayout(
                    spacing: spacing, escapesNonASCII: escapesNonASCII, endsWithNewline: endsWithNewline
                )
                if layout.bytes(of: value) == bytes { return (value, layout) }
            }
        }
        return nil
    }

    /// `value` written in this layout.
    package func bytes(of value: JSONValue) -> [UInt8] {
        var output: [UInt8] = []
        write(value, to: &output, depth: 0)
        if endsWithNewline { output.append(Byte.lineFeed) }
        return output
    }

    private func write(_ value: JSONValue, to output: inout [UInt8], depth: Int) {
        switch value {
        case let .object(members):
            writeList(members, open: Byte.openBrace, close: Byte.closeBrace, to: &output, depth: depth) { member, out in
                writeString(member.0, to: &out)
                out.append(Byte.colon)
                if spacing != .compact { out.append(Byte.space) }
                write(member.1, to: &out, depth: depth + 1)
            }
        case let .array(values):
            writeList(values, open: Byte.openBracket, close: Byte.closeBracket, to: &output, depth: depth) {
                write($0, to: &$1, depth: depth + 1)
            }
        case let .string(text): writeString(text, to: &output)
        case let .number(text): output.append(contentsOf: text.utf8)
        case let .int(number): output.append(contentsOf: String(number).utf8)
        case let .double(number): output.append(contentsOf: String(number).utf8)
        case let .bool(flag): output.append(contentsOf: (flag ? "true" : "false").utf8)
        case .null: output.append(contentsOf: "null".utf8)
        case let .data(value): writeString(value.base64EncodedString(), to: &output)
        case let .date(value): writeString(RecordingTime.text(of: value), to: &output)
        }
    }

    private func writeList<Element>(
        _ elements: [Element], open: UInt8, close: UInt8, to output: inout [UInt8], depth: Int,
        _ writeElement: (Element, inout [UInt8]) -> Void
    ) {
        output.append(open)
        defer { output.append(close) }
        guard !elements.isEmpty else { return }
        for (index, element) in elements.enumerated() {
            if index > 0 {
                output.append(Byte.comma)
                if spacing == .spaced { output.append(Byte.space) }
            }
            if case let .indented(unit) = spacing { newline(&output, unit: unit, depth: depth + 1) }
            writeElement(element, &output)
        }
        if case let .indented(unit) = spacing { newline(&output, unit: unit, depth: depth) }
    }

    private func newline(_ output: inout [UInt8], unit: String, depth: Int) {
        output.append(Byte.lineFeed)
        for _ in 0..<depth { output.append(contentsOf: unit.utf8) }
    }

    /// Byte by byte: a string's UTF-8 goes out as it is but for what JSON escapes (and, with
    /// ``escapesNonASCII``, what is over 127, escaped per UTF-16 unit).
    private func writeString(_ text: String, to output: inout [UInt8]) {
        output.append(Byte.quote)
        if escapesNonASCII, text.utf8.contains(where: { $0 >= 0x80 }) {
            for scalar in text.unicodeScalars {
                guard scalar.isASCII else {
                    for unit in String(scalar).utf16 { escapeUnit(unit, to: &output) }
                    continue
                }
                writeByte(UInt8(scalar.value), to: &output)
            }
        } else {
            var text = text
            text.withUTF8 { utf8 in
                // Runs that need no escaping go out at once.
                var run = 0
                for index in utf8.indices where utf8[index] < 0x20 || utf8[index] == 0x22 || utf8[index] == 0x5C {
                    output.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[run..<index]))
                    writeByte(utf8[index], to: &output)
                    run = index + 1
                }
                output.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[run...]))
            }
        }
        output.append(Byte.quote)
    }

    private func writeByte(_ byte: UInt8, to output: inout [UInt8]) {
        switch byte {
        case 0x22, 0x5C: output.append(Byte.backslash); output.append(byte)
        case 0x08: output.append(Byte.backslash); output.append(UInt8(ascii: "b"))
        case 0x0C: output.append(Byte.backslash); output.append(UInt8(ascii: "f"))
        case 0x0A: output.append(Byte.backslash); output.append(UInt8(ascii: "n"))
        case 0x0D: output.append(Byte.backslash); output.append(UInt8(ascii: "r"))
        case 0x09: output.append(Byte.backslash); output.append(UInt8(ascii: "t"))
        case 0..<0x20: escapeUnit(UInt16(byte), to: &output)
        default: output.append(byte)
        }
    }

    private func escapeUnit(_ unit: UInt16, to output: inout [UInt8]) {
        output += [Byte.backslash, UInt8(ascii: "u")]
        for shift in stride(from: 12, through: 0, by: -4) {
            output.append(Byte.hexDigit(UInt8((unit >> UInt16(shift)) & 0xF), lowercase: true))
        }
    }
}
