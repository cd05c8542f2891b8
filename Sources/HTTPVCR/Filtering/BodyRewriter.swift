import Foundation

/// Hides secrets inside JSON and form bodies by editing the recorded bytes in place: everything except the
/// replaced or removed values keeps its exact bytes, formatting and key order, so cassettes stay faithful and
/// diff well. Nothing here parses into Foundation objects, because re-serializing would reorder keys.
package enum BodyRewriter {
    /// Replacement values by key: a String replaces the value (written as a JSON string), nil removes the member.
    /// Returns nil when `data` is not a complete, valid JSON document (top level object or array); returns the
    /// data unchanged (same bytes) when no key matched.
    package static func rewriteJSON(_ data: Data, replacing replacements: [String: String?]) -> Data? {
        var targets: [[UInt8]: MemberAction] = [:]
        for (key, replacement) in replacements {
            targets[Array(key.utf8)] = replacement.map { .replace(jsonStringLiteral($0)) } ?? .remove
        }
        return withBytes(of: data) { bytes -> Data? in
            var scanner = JSONSpanScanner(bytes: bytes, targets: targets)
            guard scanner.scanDocument() else { return nil }
            guard !scanner.edits.isEmpty else { return data }
            return splice(bytes, edits: scanner.edits)
        }
    }

    /// Same for `a=1&b=2` form bodies (also usable on a URL query string): keys and values are percent-decoded
    /// (and '+' as space) for comparison; a replaced value is written percent-encoded (form encoding: space as
    /// '+', reserve & = + % and non-ASCII); other pairs keep their exact original bytes; repeated keys are all
    /// replaced/removed; order kept. Returns nil when the data is not valid UTF-8 or does not look like a form
    /// body (e.g. contains characters a form body cannot have such as raw spaces, newlines, braces at start).
    package static func rewriteForm(_ data: Data, replacing replacements: [String: String?]) -> Data? {
        var targets: [[UInt8]: MemberAction] = [:]
        for (key, replacement) in replacements {
            targets[Array(key.utf8)] = replacement.map { .replace(formEncoded($0)) } ?? .remove
        }
        return withBytes(of: data) { bytes -> Data? in
            guard let pairs = FormScanner.pairs(in: bytes) else { return nil }
            var output: [UInt8] = []
            output.reserveCapacity(bytes.count)
            var changed = false
            var isFirstPiece = true
            for pair in pairs {
                let action = pair.range.isEmpty ? nil : targets[FormScanner.decoded(bytes, pair.keyRange)]
                if case .remove = action {
                    changed = true
                    continue
                }
                if !isFirstPiece { output.append(Byte.ampersand) }
                isFirstPiece = false
                if case let .replace(encoded) = action {
                    changed = true
                    output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[pair.keyRange]))
                    output.append(Byte.equals)
                    output.append(contentsOf: encoded)
                } else {
                    output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[pair.range]))
                }
            }
            return changed ? Data(output) : data
        }
    }

    /// Decides by Content-Type (application/json, anything +json, text/json → JSON; application/x-www-form-urlencoded
    /// → form) and, when the Content-Type is missing or generic (text/plain, application/octet-stream), by content
    /// (first non-whitespace byte `{` or `[` and it parses → JSON). Returns the body unchanged when neither applies
    /// or it does not parse.
    package static func rewrite(
        _ data: Data, contentType: String?, replacing replacements: [String: String?]
    ) -> Data {
        // Nothing to replace means nothing to change: skip the scan entirely.
        guard !replacements.isEmpty, !data.isEmpty else { return data }
        switch bodyKind(of: data, contentType: contentType) {
        case .json: return rewriteJSON(data, replacing: replacements) ?? data
        case .form: return rewriteForm(data, replacing: replacements) ?? data
        case nil: return data
        }
    }

    /// Every value found for these keys at any depth (JSON) or in pairs (form), for tests and linting.
    /// JSON strings come back unescaped; other JSON values (numbers, objects, ...) as their raw text.
    package static func values(forKeys keys: Set<String>, in data: Data, contentType: String?) -> [String] {
        guard !keys.isEmpty, !data.isEmpty, let kind = bodyKind(of: data, contentType: contentType) else { return [] }
        var targets: [[UInt8]: MemberAction] = [:]
        for key in keys { targets[Array(key.utf8)] = .collect }
        return withBytes(of: data) { bytes -> [String] in
            switch kind {
            case .json:
                var scanner = JSONSpanScanner(bytes: bytes, targets: targets)
                guard scanner.scanDocument() else { return [] }
                // Members finish inside out; report them in document order instead.
                return scanner.collected.sorted { $0.lowerBound < $1.lowerBound }.map { range in
                    if bytes[range.lowerBound] == Byte.quote {
                        let content = (range.lowerBound + 1)..<(range.upperBound - 1)
                        return String(decoding: JSONSpanScanner.unescaped(bytes, content), as: UTF8.self)
                    }
                    return String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
                }
            case .form:
                guard let pairs = FormScanner.pairs(in: bytes) else { return [] }
                return pairs.compactMap { pair in
                    guard !pair.range.isEmpty, targets[FormScanner.decoded(bytes, pair.keyRange)] != nil else {
                        return nil
                    }
                    guard let valueRange = pair.valueRange else { return "" }
                    return String(decoding: FormScanner.decoded(bytes, valueRange), as: UTF8.self)
                }
            }
        }
    }
}

// MARK: - Shared pieces

extension BodyRewriter {
    /// What to do with the value of a key that was asked for.
    fileprivate enum MemberAction {
        /// Write these bytes instead of the value.
        case replace([UInt8])
        /// Drop the whole member (JSON) or pair (form).
        case remove
        /// Only note where the value is, for `values(forKeys:)`.
        case collect
    }

    /// The bytes in `range` of the original are to become `replacement` (empty to delete).
    fileprivate struct ByteEdit {
        var range: Range<Int>
        var replacement: [UInt8]
    }

    fileprivate enum BodyKind {
        case json
        case form
    }

    fileprivate enum Byte {
        static let tab: UInt8 = 0x09
        static let lineFeed: UInt8 = 0x0A
        static let carriageReturn: UInt8 = 0x0D
        static let space: UInt8 = 0x20
        static let quote: UInt8 = 0x22
        static let percent: UInt8 = 0x25
        static let ampersand: UInt8 = 0x26
        static let plus: UInt8 = 0x2B
        static let comma: UInt8 = 0x2C
        static let minus: UInt8 = 0x2D
        static let dot: UInt8 = 0x2E
        static let slash: UInt8 = 0x2F
        static let zero: UInt8 = 0x30
        static let nine: UInt8 = 0x39
        static let colon: UInt8 = 0x3A
        static let equals: UInt8 = 0x3D
        static let openBracket: UInt8 = 0x5B
        static let backslash: UInt8 = 0x5C
        static let closeBracket: UInt8 = 0x5D
        static let openBrace: UInt8 = 0x7B
        static let closeBrace: UInt8 = 0x7D
        static let delete: UInt8 = 0x7F

        static func isJSONWhitespace(_ byte: UInt8) -> Bool {
            byte == space || byte == lineFeed || byte == carriageReturn || byte == tab
        }

        static func hexValue(_ byte: UInt8) -> UInt8? {
            switch byte {
            case 0x30...0x39: byte - 0x30
            case 0x41...0x46: byte - 0x41 + 10
            case 0x61...0x66: byte - 0x61 + 10
            default: nil
            }
        }

        static func hexDigit(_ value: UInt8) -> UInt8 {
            value < 10 ? 0x30 + value : 0x41 + value - 10
        }
    }

    /// Data may be a slice or bridged storage; a plain byte buffer keeps the scanners simple and fast in debug.
    fileprivate static func withBytes<Result>(of data: Data, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        data.withUnsafeBytes { raw in body(raw.bindMemory(to: UInt8.self)) }
    }

    /// Applies edits, given in document order and not overlapping, to the original bytes.
    fileprivate static func splice(_ bytes: UnsafeBufferPointer<UInt8>, edits: [ByteEdit]) -> Data {
        var applied: [ByteEdit] = []
        var size = bytes.count
        var cursor = 0
        // The scanner never produces an edit overlapping an earlier one; skipping any would keep the copy in bounds.
        for edit in edits where edit.range.lowerBound >= cursor {
            applied.append(edit)
            size += edit.replacement.count - (edit.range.upperBound - edit.range.lowerBound)
            cursor = edit.range.upperBound
        }
        // Copying whole runs of memory keeps a multi-megabyte body fast even in debug builds.
        let output = [UInt8](unsafeUninitializedCapacity: size) { buffer, initializedCount in
            guard let source = bytes.baseAddress, let target = buffer.baseAddress else { return }
            var written = 0
            var cursor = 0
            for edit in applied {
                let keptCount = edit.range.lowerBound - cursor
                (target + written).initialize(from: source + cursor, count: keptCount)
                written += keptCount
                edit.replacement.withUnsafeBufferPointer { replacement in
                    guard let base = replacement.baseAddress else { return }
                    (target + written).initialize(from: base, count: replacement.count)
                }
                written += edit.replacement.count
                cursor = edit.range.upperBound
            }
            (target + written).initialize(from: source + cursor, count: bytes.count - cursor)
            initializedCount = written + bytes.count - cursor
        }
        return Data(output)
    }

    /// The media type decides when it is specific; generic or missing ones fall back to sniffing for JSON only,
    /// since almost any short text would pass for a form body.
    fileprivate static func bodyKind(of data: Data, contentType: String?) -> BodyKind? {
        let essence = contentType
            .flatMap { $0.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first }
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        switch essence {
        case "application/json", "text/json": return .json
        case "application/x-www-form-urlencoded": return .form
        case "", "text/plain", "application/octet-stream":
            return withBytes(of: data) { bytes in
                var index = JSONSpanScanner.byteOrderMarkLength(bytes)
                while index < bytes.count, Byte.isJSONWhitespace(bytes[index]) { index += 1 }
                guard index < bytes.count else { return nil }
                return bytes[index] == Byte.openBrace || bytes[index] == Byte.openBracket ? .json : nil
            }
        default:
            return essence.hasSuffix("+json") ? .json : nil
        }
    }

    /// A JSON string literal for `value`: quotes, backslashes and control characters escaped, the rest as UTF-8.
    fileprivate static func jsonStringLiteral(_ value: String) -> [UInt8] {
        var output: [UInt8] = [Byte.quote]
        for byte in value.utf8 {
            switch byte {
            case Byte.quote, Byte.backslash: output += [Byte.backslash, byte]
            case Byte.lineFeed: output += [Byte.backslash, UInt8(ascii: "n")]
            case Byte.carriageReturn: output += [Byte.backslash, UInt8(ascii: "r")]
            case Byte.tab: output += [Byte.backslash, UInt8(ascii: "t")]
            case 0x08: output += [Byte.backslash, UInt8(ascii: "b")]
            case 0x0C: output += [Byte.backslash, UInt8(ascii: "f")]
            case 0x00..<0x20:
                output += Array("\\u00".utf8) + [Byte.hexDigit(byte >> 4), Byte.hexDigit(byte & 0x0F)]
            default: output.append(byte)
            }
        }
        output.append(Byte.quote)
        return output
    }

    /// `application/x-www-form-urlencoded` as browsers write it: letters, digits and `*-._` stay, space becomes
    /// `+`, every other byte (including & = + % and all of non-ASCII UTF-8) is percent-encoded.
    fileprivate static func formEncoded(_ value: String) -> [UInt8] {
        var output: [UInt8] = []
        for byte in value.utf8 {
            switch byte {
            case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, UInt8(ascii: "*"), Byte.minus, Byte.dot, UInt8(ascii: "_"):
                output.append(byte)
            case Byte.space:
                output.append(Byte.plus)
            default:
                output += [Byte.percent, Byte.hexDigit(byte >> 4), Byte.hexDigit(byte & 0x0F)]
            }
        }
        return output
    }

    /// Length of the well-formed UTF-8 sequence starting with a non-ASCII byte at `index`, or nil when it is
    /// malformed (stray continuation byte, overlong form, surrogate, beyond U+10FFFF or cut short).
    fileprivate static func utf8SequenceLength(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> Int? {
        let lead = bytes[index]
        let length: Int
        var secondRange: ClosedRange<UInt8> = 0x80...0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; secondRange = 0xA0...0xBF
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; secondRange = 0x80...0x9F
        case 0xF0: length = 4; secondRange = 0x90...0xBF
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; secondRange = 0x80...0x8F
        default: return nil
        }
        guard index + length <= bytes.count, secondRange.contains(bytes[index + 1]) else { return nil }
        for offset in 2..<length where bytes[index + offset] & 0xC0 != 0x80 { return nil }
        return length
    }
}

// MARK: - JSON

extension BodyRewriter {
    /// One forward pass over a JSON document that validates it and records edits for the members whose keys are
    /// targets. Nesting is tracked on an explicit stack rather than by recursion, so deep documents cannot overflow
    /// the call stack; a depth cap bounds the memory a hostile body can make it use.
    fileprivate struct JSONSpanScanner {
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
                    guard let length = BodyRewriter.utf8SequenceLength(bytes, at: index) else { return nil }
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

// MARK: - Forms

extension BodyRewriter {
    /// One `key=value` segment between ampersands, by byte ranges into the body.
    fileprivate struct FormPair {
        var range: Range<Int>
        var keyRange: Range<Int>
        /// Nil for a bare key without `=`.
        var valueRange: Range<Int>?
    }

    fileprivate enum FormScanner {
        /// The segments of a form body in order (empty segments from `&&` included, so joining the kept ones with
        /// `&` gives back the original bytes), or nil when the body cannot be a form: invalid UTF-8, whitespace or
        /// control characters, or a JSON-looking start.
        static func pairs(in bytes: UnsafeBufferPointer<UInt8>) -> [FormPair]? {
            guard !bytes.isEmpty else { return [] }
            guard bytes[0] != Byte.openBrace, bytes[0] != Byte.openBracket else { return nil }
            var pairs: [FormPair] = []
            var segmentStart = 0
            var equalsIndex: Int?
            var index = 0
            while index <= bytes.count {
                let byte = index < bytes.count ? bytes[index] : Byte.ampersand
                if byte == Byte.ampersand {
                    let keyEnd = equalsIndex ?? index
                    pairs.append(FormPair(
                        range: segmentStart..<index,
                        keyRange: segmentStart..<keyEnd,
                        valueRange: equalsIndex.map { ($0 + 1)..<index }
                    ))
                    segmentStart = index + 1
                    equalsIndex = nil
                    index += 1
                } else if byte == Byte.equals {
                    if equalsIndex == nil { equalsIndex = index }
                    index += 1
                } else if byte <= Byte.space || byte == Byte.delete {
                    return nil
                } else if byte < 0x80 {
                    index += 1
                } else {
                    guard let length = BodyRewriter.utf8SequenceLength(bytes, at: index) else { return nil }
                    index += length
                }
            }
            return pairs
        }

        /// Percent-decoded bytes with `+` as space. A `%` not followed by two hex digits is kept literally, as
        /// lenient servers do, so that a sloppy body still has its secrets found.
        static func decoded(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> [UInt8] {
            var output: [UInt8] = []
            output.reserveCapacity(range.count)
            var index = range.lowerBound
            while index < range.upperBound {
                let byte = bytes[index]
                if byte == Byte.plus {
                    output.append(Byte.space)
                    index += 1
                } else if byte == Byte.percent, index + 2 < range.upperBound,
                    let high = Byte.hexValue(bytes[index + 1]), let low = Byte.hexValue(bytes[index + 2]) {
                    output.append(high << 4 | low)
                    index += 3
                } else {
                    output.append(byte)
                    index += 1
                }
            }
            return output
        }
    }
}
