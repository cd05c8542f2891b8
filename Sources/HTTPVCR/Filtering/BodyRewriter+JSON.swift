import Foundation
import HTTPVCRCassettes

extension BodyRewriter {
    /// Replacement values by key: a String replaces the value (written as a JSON string), nil removes the member.
    /// Returns nil when `data` is not a complete, valid JSON document (top level object or array); returns the
    /// data unchanged (same bytes) when no key matched.
    package static func rewriteJSON(_ data: Data, replacing replacements: [String: String?]) -> Data? {
        var targets: [[UInt8]: MemberAction] = [:]
        for (key, replacement) in replacements {
            targets[Array(key.utf8)] = replacement.map { .replace(JSONValue.stringLiteral($0)) } ?? .remove
        }
        return withBytes(of: data) { bytes -> Data? in
            var scanner = JSONSpanScanner(bytes: bytes, targets: targets)
            guard scanner.scanDocument() else { return nil }
            guard !scanner.edits.isEmpty else { return data }
            return splice(bytes, edits: scanner.edits)
        }
    }

    /// One forward pass over a JSON document that validates it and records edits for the members whose keys are
    /// targets. Nesting is tracked on an explicit stack rather than by recursion, so deep documents cannot overflow
    /// the call stack; a depth cap bounds the memory a hostile body can make it use.
    struct JSONSpanScanner {
        static let maximumDepth = 100_000

        private struct Target {
            let key: [UInt8]
            let action: MemberAction
        }

        /// Where an open container started and, for objects, how its members are doing so far.
        private struct Frame {
            let isObject: Bool
            let start: Int
            /// The member whose value is being scanned.
            var keyStart = 0
            var valueStart = 0
            /// Index into `targets` when the member's key is one of them.
            var targetIndex: Int?
            /// Whether the member's value is replaced or removed as a whole.
            var isEditingValue = false
            /// Inside a value that is replaced or removed as a whole, keys are not matched: the outer edit covers
            /// them, and edits then come out in document order without overlapping.
            var isInsideEditedValue = false
            /// End of the last member that stays, the place to cut from when the object ends with removed members.
            var lastKeptValueEnd: Int?
            /// The run of consecutive removed members not yet turned into an edit.
            var removalStart: Int?
            var removalEnd = 0
        }

        private let bytes: UnsafeBufferPointer<UInt8>
        private let targets: [Target]
        /// Whether some target key has this many bytes: one array lookup turns away most keys.
        private let isTargetKeyLength: [Bool]
        private var index = 0
        /// The innermost open container, kept out of the stack so the hot path reads plain fields. At depth 0 it is
        /// a placeholder that is never read.
        private var current = Frame(isObject: false, start: 0)
        private var enclosing: [Frame] = []
        private var depth = 0
        private(set) var edits: [ByteEdit] = []
        private(set) var collected: [Range<Int>] = []

        init(bytes: UnsafeBufferPointer<UInt8>, targets: [[UInt8]: MemberAction]) {
            self.bytes = bytes
            self.targets = targets.map { Target(key: $0.key, action: $0.value) }
            var isTargetKeyLength = Array(repeating: false, count: (targets.keys.map(\.count).max() ?? -1) + 1)
            for key in targets.keys { isTargetKeyLength[key.count] = true }
            self.isTargetKeyLength = isTargetKeyLength
        }

        /// A UTF-8 byte order mark is tolerated (RFC 8259 allows parsers to ignore it) and kept as is.
        static func byteOrderMarkLength(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
            bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF ? 3 : 0
        }

        /// Whether the whole buffer is one valid JSON object or array, with only whitespace around it.
        mutating func scanDocument() -> Bool {
            index = Self.byteOrderMarkLength(bytes)
            skipWhitespace()
            guard index < bytes.count, bytes[index] == Byte.openBrace || bytes[index] == Byte.openBracket else {
                return false
            }
            while true {
                // Here a value starts at `index`.
                guard index < bytes.count else { return false }
                switch bytes[index] {
                case Byte.openBrace:
                    guard openContainer(isObject: true) else { return false }
                    if index < bytes.count, bytes[index] == Byte.closeBrace {
                        index += 1
                        closeContainer()
                    } else {
                        guard beginMember() else { return false }
                        continue
                    }
                case Byte.openBracket:
                    guard openContainer(isObject: false) else { return false }
                    if index < bytes.count, bytes[index] == Byte.closeBracket {
                        index += 1
                        closeContainer()
                    } else {
                        continue
                    }
                case Byte.quote:
                    guard scanString() != nil else { return false }
                case Byte.minus, Byte.zero...Byte.nine:
                    guard scanNumber() else { return false }
                case UInt8(ascii: "t"):
                    guard scanLiteral("true") else { return false }
                case UInt8(ascii: "f"):
                    guard scanLiteral("false") else { return false }
                case UInt8(ascii: "n"):
                    guard scanLiteral("null") else { return false }
                default:
                    return false
                }
                // A value just ended at `index`; close every container that ends with it.
                guard let nextValueFollows = finishValues() else { return false }
                if !nextValueFollows { return true }
            }
        }

        /// Steps into the container whose bracket is at `index`, then past the whitespace after it.
        private mutating func openContainer(isObject: Bool) -> Bool {
            guard depth < Self.maximumDepth else { return false }
            var frame = Frame(isObject: isObject, start: index)
            if depth > 0 {
                frame.isInsideEditedValue = current.isInsideEditedValue || current.isEditingValue
                enclosing.append(current)
            }
            current = frame
            depth += 1
            index += 1
            // Whitespace is checked before calling: calls are what costs most in debug builds.
            if index < bytes.count, bytes[index] <= Byte.space { skipWhitespace() }
            return true
        }

        private mutating func closeContainer() {
            depth -= 1
            if depth > 0 { current = enclosing.removeLast() }
        }

        /// After a value: hands it to its object member, then reads separators and closing brackets. Returns true
        /// when another value follows, false when the document ended cleanly, nil when it is invalid.
        private mutating func finishValues() -> Bool? {
            while depth > 0 {
                if current.isObject { finishMember(valueEnd: index) }
                if index < bytes.count, bytes[index] <= Byte.space { skipWhitespace() }
                guard index < bytes.count else { return nil }
                if bytes[index] == Byte.comma {
                    index += 1
                    if index < bytes.count, bytes[index] <= Byte.space { skipWhitespace() }
                    return current.isObject ? (beginMember() ? true : nil) : true
                }
                if current.isObject {
                    guard bytes[index] == Byte.closeBrace else { return nil }
                    closeObject()
                } else {
                    guard bytes[index] == Byte.closeBracket else { return nil }
                }
                index += 1
                closeContainer()
            }
            skipWhitespace()
            return index == bytes.count ? false : nil
        }

        /// Reads `"key" :` and leaves `index` at the value. A kept key ends any run of removed members before it:
        /// cutting from the first removed key up to this key removes them with their commas and indentation.
        private mutating func beginMember() -> Bool {
            guard index < bytes.count, bytes[index] == Byte.quote else { return false }
            let keyStart = index
            guard let hasEscapes = scanString() else { return false }
            let targetIndex = current.isInsideEditedValue
                ? nil : self.targetIndex(forKeyFrom: keyStart + 1, to: index - 1, hasEscapes: hasEscapes)
            var isRemoval = false
            var isEditingValue = false
            if let targetIndex {
                switch targets[targetIndex].action {
                case .remove: (isRemoval, isEditingValue) = (true, true)
                case .replace: isEditingValue = true
                case .collect: break
                }
            }
            if let removalStart = current.removalStart, !isRemoval {
                edits.append(ByteEdit(range: removalStart..<keyStart, replacement: []))
                current.removalStart = nil
            }
            current.keyStart = keyStart
            current.targetIndex = targetIndex
            current.isEditingValue = isEditingValue
            if index < bytes.count, bytes[index] <= Byte.space { skipWhitespace() }
            guard index < bytes.count, bytes[index] == Byte.colon else { return false }
            index += 1
            if index < bytes.count, bytes[index] <= Byte.space { skipWhitespace() }
            current.valueStart = index
            return true
        }

        /// Which target the key with this content (between the quotes) is, compared byte for byte after unescaping.
        private func targetIndex(forKeyFrom start: Int, to end: Int, hasEscapes: Bool) -> Int? {
            let key = hasEscapes ? Self.unescaped(bytes, start..<end) : nil
            let length = key?.count ?? end - start
            guard length < isTargetKeyLength.count, isTargetKeyLength[length] else { return nil }
            var candidate = 0
            while candidate < targets.count {
                let targetKey = targets[candidate].key
                if targetKey.count == length {
                    if let key {
                        if key == targetKey { return candidate }
                    } else {
                        var offset = 0
                        while offset < length, bytes[start + offset] == targetKey[offset] { offset += 1 }
                        if offset == length { return candidate }
                    }
                }
                candidate += 1
            }
            return nil
        }

        private mutating func finishMember(valueEnd: Int) {
            let valueRange = current.valueStart..<valueEnd
            guard let targetIndex = current.targetIndex else {
                current.lastKeptValueEnd = valueEnd
                return
            }
            current.targetIndex = nil
            current.isEditingValue = false
            switch targets[targetIndex].action {
            case let .replace(replacement):
                edits.append(ByteEdit(range: valueRange, replacement: replacement))
                current.lastKeptValueEnd = valueEnd
            case .remove:
                if current.removalStart == nil { current.removalStart = current.keyStart }
                current.removalEnd = valueEnd
            case .collect:
                collected.append(valueRange)
                current.lastKeptValueEnd = valueEnd
            }
        }

        /// At the closing brace (at `index`): removed members at the end are cut from the end of the last kept
        /// value, which takes the comma before them; when every member went, the object becomes `{}`.
        private mutating func closeObject() {
            guard let removalStart = current.removalStart else { return }
            if let lastKeptValueEnd = current.lastKeptValueEnd, lastKeptValueEnd < removalStart {
                edits.append(ByteEdit(range: lastKeptValueEnd..<current.removalEnd, replacement: []))
            } else {
                edits.append(ByteEdit(range: (current.start + 1)..<index, replacement: []))
            }
        }

        private mutating func skipWhitespace() {
            var position = index
            let end = bytes.count
            // Space, line feed, carriage return, tab; written out because this loop is hot in debug builds.
            while position < end {
                let byte = bytes[position]
                guard byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 else { break }
                position += 1
            }
            index = position
        }

        /// Validates the string whose opening quote is at `index` and moves past its closing quote. Returns whether
        /// it contains escapes (its raw bytes then differ from its value), or nil when it is invalid.
        private mutating func scanString() -> Bool? {
            index += 1
            var hasEscapes = false
            let end = bytes.count
            while index < end {
                // Plain printable ASCII other than the quote (0x22) and backslash (0x5C) is by far the most common;
                // skip it in a tight local loop.
                var position = index
                while position < end {
                    let byte = bytes[position]
                    guard byte >= 0x20, byte < 0x80, byte != 0x22, byte != 0x5C else { break }
                    position += 1
                }
                index = position
                guard position < end else { return nil }
                let byte = bytes[position]
                if byte == Byte.quote {
                    index += 1
                    return hasEscapes
                } else if byte == Byte.backslash {
                    hasEscapes = true
                    guard scanEscape() else { return nil }
                } else if byte < 0x20 {
                    return nil
                } else {
                    guard let length = Byte.utf8SequenceLength(bytes, at: index) else { return nil }
                    index += length
                }
            }
            return nil
        }

        /// Validates the escape whose backslash is at `index`; a `\u` high surrogate must be followed by a low one.
        private mutating func scanEscape() -> Bool {
            guard index + 1 < bytes.count else { return false }
            switch bytes[index + 1] {
            case Byte.quote, Byte.backslash, Byte.slash, UInt8(ascii: "b"), UInt8(ascii: "f"), UInt8(ascii: "n"),
                UInt8(ascii: "r"), UInt8(ascii: "t"):
                index += 2
                return true
            case UInt8(ascii: "u"):
                guard let unit = Self.codeUnit(bytes, at: index + 2) else { return false }
                index += 6
                if (0xDC00...0xDFFF).contains(unit) { return false }
                guard (0xD800...0xDBFF).contains(unit) else { return true }
                guard index + 1 < bytes.count, bytes[index] == Byte.backslash, bytes[index + 1] == UInt8(ascii: "u"),
                    let low = Self.codeUnit(bytes, at: index + 2), (0xDC00...0xDFFF).contains(low)
                else { return false }
                index += 6
                return true
            default:
                return false
            }
        }

        /// The four hex digits of a `\u` escape starting at `start`.
        private static func codeUnit(_ bytes: UnsafeBufferPointer<UInt8>, at start: Int) -> UInt32? {
            guard start + 4 <= bytes.count else { return nil }
            var unit: UInt32 = 0
            for offset in 0..<4 {
                guard let digit = Byte.hexValue(bytes[start + offset]) else { return nil }
                unit = unit << 4 | UInt32(digit)
            }
            return unit
        }

        /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
        private mutating func scanNumber() -> Bool {
            if bytes[index] == Byte.minus { index += 1 }
            guard index < bytes.count else { return false }
            if bytes[index] == Byte.zero {
                index += 1
            } else {
                guard scanDigits() else { return false }
            }
            if index < bytes.count, bytes[index] == Byte.dot {
                index += 1
                guard scanDigits() else { return false }
            }
            if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
                index += 1
                if index < bytes.count, bytes[index] == Byte.plus || bytes[index] == Byte.minus { index += 1 }
                guard scanDigits() else { return false }
            }
            return true
        }

        /// One or more digits.
        private mutating func scanDigits() -> Bool {
            let start = index
            while index < bytes.count, (Byte.zero...Byte.nine).contains(bytes[index]) { index += 1 }
            return index > start
        }

        private mutating func scanLiteral(_ literal: StaticString) -> Bool {
            let length = literal.utf8CodeUnitCount
            guard index + length <= bytes.count else { return false }
            for offset in 0..<length where bytes[index + offset] != literal.utf8Start[offset] { return false }
            index += length
            return true
        }

        /// The UTF-8 value of an already validated string's content (between the quotes).
        static func unescaped(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> [UInt8] {
            var output: [UInt8] = []
            output.reserveCapacity(range.count)
            var index = range.lowerBound
            while index < range.upperBound {
                let byte = bytes[index]
                guard byte == Byte.backslash, index + 1 < range.upperBound else {
                    output.append(byte)
                    index += 1
                    continue
                }
                let escaped = bytes[index + 1]
                index += 2
                switch escaped {
                case UInt8(ascii: "b"): output.append(0x08)
                case UInt8(ascii: "f"): output.append(0x0C)
                case UInt8(ascii: "n"): output.append(Byte.lineFeed)
                case UInt8(ascii: "r"): output.append(Byte.carriageReturn)
                case UInt8(ascii: "t"): output.append(Byte.tab)
                case UInt8(ascii: "u"):
                    var scalar = codeUnit(bytes, at: index) ?? 0xFFFD
                    index += 4
                    if (0xD800...0xDBFF).contains(scalar), let low = codeUnit(bytes, at: index + 2) {
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        index += 6
                    }
                    output += Array(String(Unicode.Scalar(scalar) ?? "\u{FFFD}").utf8)
                default: output.append(escaped)
                }
            }
            return output
        }
    }
}
