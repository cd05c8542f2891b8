import Foundation

/// A second reader of HTTPVCR's JSON, for the layout our own writer produces (``HTTPVCRFormat/document(_:)``
/// serialized): keys in the writer's order, no nulls, no unknown keys. It reads the bytes in place, about ten times
/// cheaper than `JSONDecoder`, which counts when every test of a parallel suite loads its own small cassette.
///
/// It answers "this tape" or "not the writer's layout" (nil), never an error: whatever it does not expect, even
/// valid JSON the decoder would read the same way, goes to the decoder, which reads it or names what is wrong. So
/// what a file means and every error message stay the decoder's. `WrittenLayoutReaderTests` checks that both
/// readers agree on the repository's cassettes and on thousands of mutants of them.
extension HTTPVCRFormat {
    static func tape(readingWrittenLayout data: Data) -> Tape? {
        data.withUnsafeBytes { raw in
            raw.withMemoryRebound(to: UInt8.self) { bytes in
                var reader = WrittenLayoutReader(bytes: bytes)
                return try? reader.document()
            }
        }
    }
}

private struct WrittenLayoutReader {
    struct NotTheLayout: Error {}

    let bytes: UnsafeBufferPointer<UInt8>
    var position = 0

    // MARK: Records, in the writer's order

    mutating func document() throws(NotTheLayout) -> Tape {
        try expect(Byte.openBrace)
        try key("format")
        guard try string() == HTTPVCRFormat.formatName else { throw NotTheLayout() }
        try nextKey("version")
        guard try integer() == HTTPVCRFormat.version else { throw NotTheLayout() }
        try nextKey("scenes")
        try expect(Byte.openBracket)
        var scenes: [Scene] = []
        // A scene takes a hundred bytes or more: room for a small tape's at once, rather than five regrowths.
        scenes.reserveCapacity(min(bytes.count / 100, 64))
        if try !isClosed(by: Byte.closeBracket) {
            var requestURL: String?
            repeat { scenes.append(try scene(requestURL: &requestURL)) } while try hasMore(before: Byte.closeBracket)
        }
        try expect(Byte.closeBrace)
        skipWhitespace()
        guard position == bytes.count else { throw NotTheLayout() }
        // Growing by doubling can leave most of half the array unused, and an inserted cassette keeps it: a long
        // tape is moved to an array of its own size (the decoder knew the count beforehand).
        if scenes.capacity - scenes.count > 1_024 {
            var exact: [Scene] = []
            exact.reserveCapacity(scenes.count)
            exact.append(contentsOf: scenes)
            scenes = exact
        }
        return Tape(scenes: scenes)
    }

    /// - Parameter requestURL: the URL of the request read last, which a response most often repeats.
    private mutating func scene(requestURL: inout String?) throws(NotTheLayout) -> Scene {
        try expect(Byte.openBrace)
        try key("chapter")
        let chapter = try integer()
        guard Tape.chapterNumbers.contains(chapter) else { throw NotTheLayout() }
        try nextKey("time")
        let time = try finiteNumber()
        try expect(Byte.comma)
        let name = try anyKey()
        let event: Scene.Event
        if matches(name, "request") {
            let request = try request()
            requestURL = request.url
            event = .request(request)
        } else if matches(name, "redirect") {
            try expect(Byte.openBrace)
            try key("response")
            let response = try response(urlSameAs: requestURL)
            try nextKey("to")
            let request = try request()
            requestURL = request.url
            try expect(Byte.closeBrace)
            event = .redirect(response, to: request)
        } else if matches(name, "response") {
            event = .response(try response(urlSameAs: requestURL))
        } else if matches(name, "data") {
            event = .data(try text())
        } else if matches(name, "dataBase64") {
            event = .data(try base64())
        } else if matches(name, "error") {
            event = .error(try error())
        } else if matches(name, "complete") {
            try literal("true")
            event = .completion
        } else {
            throw NotTheLayout()
        }
        try expect(Byte.closeBrace)
        return Scene(chapter: chapter, time: time, event: event)
    }

    private mutating func request() throws(NotTheLayout) -> RecordedRequest {
        try expect(Byte.openBrace)
        try key("method")
        let method = try string()
        try nextKey("url")
        let url = try string()
        try nextKey("headers")
        let headers = try headerFields()
        var body: Data?
        var recordedAt: Date?
        while try hasMore(before: Byte.closeBrace) {
            let name = try anyKey()
            if body == nil, recordedAt == nil, matches(name, "body") {
                body = try text()
            } else if body == nil, recordedAt == nil, matches(name, "bodyBase64") {
                body = try base64()
            } else if recordedAt == nil, matches(name, "recordedAt") {
                guard let date = RecordingTime.date(from: try string()) else { throw NotTheLayout() }
                recordedAt = date
            } else {
                throw NotTheLayout()
            }
        }
        return RecordedRequest(method: method, url: url, headers: headers, body: body, recordedAt: recordedAt)
    }

    private mutating func response(urlSameAs requestURL: String?) throws(NotTheLayout) -> RecordedResponse {
        try expect(Byte.openBrace)
        try key("url")
        let url = try string(sameAs: requestURL)
        try nextKey("status")
        let status = try integer()
        try nextKey("httpVersion")
        let httpVersion = try string()
        try nextKey("headers")
        let headers = try headerFields()
        try expect(Byte.closeBrace)
        return RecordedResponse(url: url, statusCode: status, httpVersion: httpVersion, headers: headers)
    }

    private mutating func error() throws(NotTheLayout) -> RecordedError {
        try expect(Byte.openBrace)
        try key("domain")
        let domain = try string()
        try nextKey("code")
        let code = try integer()
        try nextKey("userInfo")
        var userInfo: [String: String] = [:]
        for (name, value) in try stringPairs() {
            guard userInfo.updateValue(value, forKey: name) == nil else { throw NotTheLayout() }
        }
        try expect(Byte.closeBrace)
        return RecordedError(domain: domain, code: code, userInfo: userInfo)
    }

    /// Sorted as `DecodedFields.headerFields(_:)` sorts what the decoder reads; a name twice (as Swift compares
    /// strings) is left to the decoder. A name's array (its repeated fields) gives one field per value, in order;
    /// the writer writes one only for two values or more.
    private mutating func headerFields() throws(NotTheLayout) -> [RecordedHeader] {
        try expect(Byte.openBrace)
        if try isClosed(by: Byte.closeBrace) { return [] }
        var headers: [RecordedHeader] = []
        /// Where each member's fields start, when a member is an array; nil while every member is one field.
        var memberStarts: [Int]?
        repeat {
            let name = try string()
            try expect(Byte.colon)
            skipWhitespace()
            guard position < bytes.count, bytes[position] == Byte.openBracket else {
                memberStarts?.append(headers.count)
                headers.append(RecordedHeader(name, try string()))
                continue
            }
            position += 1
            if memberStarts == nil { memberStarts = Array(headers.indices) }
            memberStarts?.append(headers.count)
            let first = headers.count
            repeat { headers.append(RecordedHeader(name, try string())) } while try hasMore(before: Byte.closeBracket)
            guard headers.count - first > 1 else { throw NotTheLayout() }
        } while try hasMore(before: Byte.closeBrace)
        let isSorted = if let memberStarts {
            try Self.isSorted(memberStarts.lazy.map { headers[$0].name })
        } else {
            try Self.isSorted(headers.lazy.map(\.name))
        }
        return isSorted ? headers : headers.sortedByName()
    }

    /// Whether the members' names are in the writer's order: checking costs less than sorting, and proves no name
    /// is there twice. Throws when one is.
    private static func isSorted<Names: RandomAccessCollection<String>>(_ names: Names) throws(NotTheLayout) -> Bool {
        if zip(names, names.dropFirst()).allSatisfy({ Self.sortsBefore($0, $1) }) { return true }
        for index in names.indices.dropFirst() {
            for earlier in names[..<index] where earlier == names[index] { throw NotTheLayout() }
        }
        return false
    }

    /// Whether `first` comes strictly before `second` in ``Swift/Array/sortedByName()``'s order, for ASCII names
    /// (false for others: they are sorted).
    private static func sortsBefore(_ first: String, _ second: String) -> Bool {
        var first = first, second = second
        return first.withUTF8 { a in
            second.withUTF8 { b in
                guard a.allSatisfy({ $0 < 0x80 }), b.allSatisfy({ $0 < 0x80 }) else { return false }
                // One pass: the first byte that differs case-folded decides; names equal but for case go by the
                // first byte that differs as written.
                var firstCaseDifference: Bool?
                for index in 0..<min(a.count, b.count) where a[index] != b[index] {
                    let (x, y) = (folded(a[index]), folded(b[index]))
                    if x != y { return x < y }
                    if firstCaseDifference == nil { firstCaseDifference = a[index] < b[index] }
                }
                if a.count != b.count { return a.count < b.count }
                return firstCaseDifference ?? false
            }
        }
    }

    private static func folded(_ byte: UInt8) -> UInt8 {
        (0x41...0x5A).contains(byte) ? byte | 0x20 : byte
    }

    private mutating func stringPairs() throws(NotTheLayout) -> [(name: String, value: String)] {
        try expect(Byte.openBrace)
        var pairs: [(name: String, value: String)] = []
        if try isClosed(by: Byte.closeBrace) { return pairs }
        repeat {
            let name = try string()
            try expect(Byte.colon)
            pairs.append((name, try string()))
        } while try hasMore(before: Byte.closeBrace)
        return pairs
    }

    // MARK: Tokens

    private mutating func skipWhitespace() {
        guard let base = bytes.baseAddress else { return }
        let end = bytes.count
        var index = position
        // Most tokens follow the one before directly (`"key":`, `1,`).
        if index < end, base[index] > Byte.space { return }
        // The writer's whitespace: none, one space after a colon, or a line break and a run of spaces. The run is
        // passed eight bytes at a time, to the first byte that is not a space.
        if index < end, base[index] == Byte.lineFeed { index += 1 }
        while index + 8 <= end {
            let notSpaces = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self).littleEndian
                ^ 0x2020_2020_2020_2020
            index += notSpaces.trailingZeroBitCount / 8
            if notSpaces != 0 { break }
        }
        // Anything else (tabs, carriage returns, the last bytes of the file) a byte at a time.
        while index < end, Byte.isJSONWhitespace(base[index]) { index += 1 }
        position = index
    }

    private mutating func expect(_ byte: UInt8) throws(NotTheLayout) {
        skipWhitespace()
        guard position < bytes.count, bytes[position] == byte else { throw NotTheLayout() }
        position += 1
    }

    /// Consumes `closing` if it comes next (an empty object or array).
    private mutating func isClosed(by closing: UInt8) throws(NotTheLayout) -> Bool {
        skipWhitespace()
        guard position < bytes.count else { throw NotTheLayout() }
        guard bytes[position] == closing else { return false }
        position += 1
        return true
    }

    /// After a member: true on a comma, false on `closing`.
    private mutating func hasMore(before closing: UInt8) throws(NotTheLayout) -> Bool {
        skipWhitespace()
        guard position < bytes.count else { throw NotTheLayout() }
        let byte = bytes[position]
        position += 1
        if byte == Byte.comma { return true }
        if byte == closing { return false }
        throw NotTheLayout()
    }

    private mutating func literal(_ word: StaticString) throws(NotTheLayout) {
        skipWhitespace()
        let count = word.utf8CodeUnitCount
        guard position + count <= bytes.count,
              memcmp(bytes.baseAddress! + position, word.utf8Start, count) == 0
        else { throw NotTheLayout() }
        position += count
    }

    /// `"name":`, exactly.
    /// `"name":`, compared in place rather than scanned for its closing quote first.
    private mutating func key(_ name: StaticString) throws(NotTheLayout) {
        try expect(Byte.quote)
        let count = name.utf8CodeUnitCount
        guard position + count < bytes.count,
              memcmp(bytes.baseAddress! + position, name.utf8Start, count) == 0,
              bytes[position + count] == Byte.quote
        else { throw NotTheLayout() }
        position += count + 1
        try expect(Byte.colon)
    }

    /// `, "name":`: the next member, exactly.
    private mutating func nextKey(_ name: StaticString) throws(NotTheLayout) {
        try expect(Byte.comma)
        try key(name)
    }

    /// A key without escapes and its colon; the range of its bytes.
    private mutating func anyKey() throws(NotTheLayout) -> Range<Int> {
        try expect(Byte.quote)
        let start = position
        while position < bytes.count, bytes[position] != Byte.quote {
            guard bytes[position] != Byte.backslash else { throw NotTheLayout() }
            position += 1
        }
        guard position < bytes.count else { throw NotTheLayout() }
        let range = start..<position
        position += 1
        try expect(Byte.colon)
        return range
    }

    private func matches(_ range: Range<Int>, _ name: StaticString) -> Bool {
        range.count == name.utf8CodeUnitCount
            && memcmp(bytes.baseAddress! + range.lowerBound, name.utf8Start, range.count) == 0
    }

    private mutating func string() throws(NotTheLayout) -> String {
        try string(from: stringToken())
    }

    /// The next string, as `earlier` when it is the same text, sharing its storage rather than taking another
    /// allocation.
    private mutating func string(sameAs earlier: String?) throws(NotTheLayout) -> String {
        let token = try stringToken()
        if var earlier, !token.hasEscapes {
            let isSame = earlier.withUTF8 { known in
                known.count == token.bytes.count
                    && (known.isEmpty || memcmp(known.baseAddress!, token.bytes.baseAddress!, known.count) == 0)
            }
            if isSame { return earlier }
        }
        return try string(from: token)
    }

    private func string(from token: StringToken) throws(NotTheLayout) -> String {
        guard token.hasEscapes else { return String(decoding: token.bytes, as: UTF8.self) }
        var failed = false
        let string = String(unsafeUninitializedCapacity: token.bytes.count) { output in
            guard let count = try? Self.unescape(token.bytes, into: output) else {
                failed = true
                return 0
            }
            return count
        }
        guard !failed else { throw NotTheLayout() }
        return string
    }

    /// A text body: the string's bytes, as `Data(text.utf8)` has them.
    private mutating func text() throws(NotTheLayout) -> Data {
        let token = try stringToken()
        guard token.hasEscapes else { return Data(token.bytes) }
        // Unescaped into scratch memory (on the stack when small), then copied into a `Data` of exactly its size.
        let data = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: token.bytes.count) { buffer in
            (try? Self.unescape(token.bytes, into: buffer)).map { Data(UnsafeBufferPointer(rebasing: buffer[..<$0])) }
        }
        guard let data else { throw NotTheLayout() }
        return data
    }

    private mutating func base64() throws(NotTheLayout) -> Data {
        guard let data = Data(base64Encoded: try string(), options: .ignoreUnknownCharacters) else {
            throw NotTheLayout()
        }
        return data
    }

    /// A string's bytes between its quotes, escapes not yet undone. They are well-formed UTF-8: escapes are ASCII
    /// and stand for whole characters, so unescaping cannot make bytes valid or invalid.
    private struct StringToken {
        let bytes: UnsafeBufferPointer<UInt8>
        let hasEscapes: Bool
    }

    private mutating func stringToken() throws(NotTheLayout) -> StringToken {
        try expect(Byte.quote)
        let start = position
        var index = start
        var hasEscapes = false
        var isASCII = true
        while true {
            index += Self.plainASCIIPrefix(of: bytes, from: index)
            guard index < bytes.count else { throw NotTheLayout() }
            let byte = bytes[index]
            if byte == Byte.quote { break }
            if byte < Byte.space { throw NotTheLayout() }
            if byte == Byte.backslash {
                hasEscapes = true
                index += 2  // the escaped byte is checked when unescaping
            } else {
                isASCII = false
                index += 1
            }
        }
        position = index + 1
        let raw = UnsafeBufferPointer(rebasing: bytes[start..<index])
        if !isASCII && !Self.isWellFormedUTF8(raw) { throw NotTheLayout() }
        return StringToken(bytes: raw, hasEscapes: hasEscapes)
    }

    /// How many bytes from `start` are printable ASCII other than `"` and `\`, the bulk of any string: eight at a
    /// time, as this reads every byte of every body.
    private static func plainASCIIPrefix(of bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        guard start < bytes.count, let base = bytes.baseAddress else { return 0 }
        let lows: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        /// A high bit in each byte of `word` that is zero (exact as to whether there is one).
        func zeroBytes(_ word: UInt64) -> UInt64 { (word &- lows) & ~word & highs }
        var index = start
        while index + 8 <= bytes.count {
            let word = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)
            let special = (word & highs)  // non-ASCII
                | ((word &- lows &* 0x20) & ~word & highs)  // below 0x20
                | zeroBytes(word ^ (lows &* UInt64(Byte.quote)))
                | zeroBytes(word ^ (lows &* UInt64(Byte.backslash)))
            // The lowest flagged byte is exact for each test (a borrow only flags bytes above a true one), so it
            // is the first byte that ends the run.
            if special != 0 { return index + special.trailingZeroBitCount / 8 - start }
            index += 8
        }
        while index < bytes.count {
            let byte = bytes[index]
            guard byte >= Byte.space, byte < 0x80, byte != Byte.quote, byte != Byte.backslash else { break }
            index += 1
        }
        return index - start
    }

    /// Writes what an escaped string stands for into `output` (at least as long as `raw`); returns the count.
    private static func unescape(
        _ raw: UnsafeBufferPointer<UInt8>,
        into output: UnsafeMutableBufferPointer<UInt8>
    ) throws(NotTheLayout) -> Int {
        guard let source = raw.baseAddress, let target = output.baseAddress else { return 0 }
        var index = 0
        var written = 0
        func put(_ byte: UInt8) {
            target[written] = byte
            written += 1
        }
        while index < raw.count {
            // The run up to the next escape, in one copy.
            var next = raw.count
            if let found = memchr(source + index, Int32(Byte.backslash), raw.count - index) {
                next = UnsafePointer(found.assumingMemoryBound(to: UInt8.self)) - source
            }
            (target + written).update(from: source + index, count: next - index)
            written += next - index
            index = next + 1
            guard next < raw.count else { break }
            guard index < raw.count else { throw NotTheLayout() }  // a backslash last
            let escaped = raw[index]
            index += 1
            switch escaped {
            case Byte.quote, Byte.backslash, Byte.slash: put(escaped)
            case UInt8(ascii: "b"): put(0x08)
            case UInt8(ascii: "f"): put(0x0C)
            case UInt8(ascii: "n"): put(Byte.lineFeed)
            case UInt8(ascii: "r"): put(Byte.carriageReturn)
            case UInt8(ascii: "t"): put(Byte.tab)
            case UInt8(ascii: "u"):
                var scalar = try hexQuad(raw, &index)
                if (0xD800..<0xDC00).contains(scalar) {
                    // A high surrogate must be followed by an escaped low one; anything else is the decoder's call.
                    guard index + 1 < raw.count, raw[index] == Byte.backslash, raw[index + 1] == UInt8(ascii: "u")
                    else { throw NotTheLayout() }
                    index += 2
                    let low = try hexQuad(raw, &index)
                    guard (0xDC00..<0xE000).contains(low) else { throw NotTheLayout() }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                }
                // At most 4 bytes for the 6 or 12 of the escape: `output` is long enough.
                guard let unicode = Unicode.Scalar(scalar), let encoded = UTF8.encode(unicode) else {
                    throw NotTheLayout()
                }
                for byte in encoded { put(byte) }
            default:
                throw NotTheLayout()
            }
        }
        return written
    }

    private static func hexQuad(_ raw: UnsafeBufferPointer<UInt8>, _ index: inout Int) throws(NotTheLayout) -> UInt32 {
        guard index + 4 <= raw.count else { throw NotTheLayout() }
        var value: UInt32 = 0
        for offset in 0..<4 {
            guard let digit = Byte.hexValue(raw[index + offset]) else { throw NotTheLayout() }
            value = value << 4 | UInt32(digit)
        }
        index += 4
        return value
    }

    private static func isWellFormedUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        while index < bytes.count {
            if bytes[index] < 0x80 {
                index += 1
            } else if let length = Byte.utf8SequenceLength(bytes, at: index) {
                index += length
            } else {
                return false
            }
        }
        return true
    }

    /// A whole number written without fraction or exponent that fits in an `Int`.
    private mutating func integer() throws(NotTheLayout) -> Int {
        skipWhitespace()
        let isNegative = position < bytes.count && bytes[position] == Byte.minus
        if isNegative { position += 1 }
        let start = position
        var value = 0
        while position < bytes.count, (Byte.zero...Byte.nine).contains(bytes[position]) {
            let digit = Int(bytes[position] - Byte.zero)
            let (shifted, overflowShift) = value.multipliedReportingOverflow(by: 10)
            let (next, overflowAdd) = isNegative
                ? shifted.subtractingReportingOverflow(digit)
                : shifted.addingReportingOverflow(digit)
            guard !overflowShift, !overflowAdd else { throw NotTheLayout() }
            value = next
            position += 1
        }
        let digits = position - start
        guard digits > 0, digits == 1 || bytes[start] != Byte.zero else { throw NotTheLayout() }
        if position < bytes.count, [Byte.dot, UInt8(ascii: "e"), UInt8(ascii: "E")].contains(bytes[position]) {
            throw NotTheLayout()
        }
        return value
    }

    /// A JSON number that is a normal `Double` or zero: the decoder refuses some the parser rounds (`1e-400`), so
    /// those are left to it.
    private mutating func finiteNumber() throws(NotTheLayout) -> Double {
        skipWhitespace()
        let start = position
        var mantissa: UInt64 = 0
        var significantDigits = 0
        var fractionDigits = 0
        func digits(_ reader: inout WrittenLayoutReader, inFraction: Bool) -> Int {
            let first = reader.position
            while reader.position < reader.bytes.count, (Byte.zero...Byte.nine).contains(reader.bytes[reader.position]) {
                let digit = UInt64(reader.bytes[reader.position] - Byte.zero)
                if significantDigits > 0 || digit != 0 { significantDigits += 1 }
                if significantDigits <= 19 { mantissa = mantissa &* 10 &+ digit }
                if inFraction { fractionDigits += 1 }
                reader.position += 1
            }
            return reader.position - first
        }
        let isNegative = position < bytes.count && bytes[position] == Byte.minus
        if isNegative { position += 1 }
        let integerStart = position
        let integerDigits = digits(&self, inFraction: false)
        guard integerDigits > 0, integerDigits == 1 || bytes[integerStart] != Byte.zero else { throw NotTheLayout() }
        if position < bytes.count, bytes[position] == Byte.dot {
            position += 1
            guard digits(&self, inFraction: true) > 0 else { throw NotTheLayout() }
        }
        let hasExponent = position < bytes.count && bytes[position] | 0x20 == UInt8(ascii: "e")
        // Written times (`0.0`, `0.012345`): a whole number below 2^53 over an exact power of ten is rounded once,
        // by the division, so it is what any correct parser makes of the text.
        if !hasExponent, significantDigits <= 15, fractionDigits < Self.exactPowersOfTen.count {
            let magnitude = Double(mantissa) / Self.exactPowersOfTen[fractionDigits]
            return isNegative ? -magnitude : magnitude
        }
        let mantissaHasNonzeroDigit = significantDigits > 0
        if hasExponent {
            position += 1
            if position < bytes.count, bytes[position] == Byte.plus || bytes[position] == Byte.minus { position += 1 }
            guard digits(&self, inFraction: false) > 0 else { throw NotTheLayout() }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        guard let value = Double(text), value.isNormal || (value == 0 && !mantissaHasNonzeroDigit) else {
            throw NotTheLayout()
        }
        return value
    }

    /// 1e0 through 1e22, every one exact in a `Double`.
    private static let exactPowersOfTen: [Double] = (0...22).map { exponent in
        (0..<exponent).reduce(1.0) { value, _ in value * 10 }
    }
}

extension CassetteFile {
    /// For the fuzzer and the tests: how the written-layout reader and `JSONDecoder` differ on `data`, or nil when
    /// they agree (the first declines, or both read the same tape).
    package static func writtenLayoutDisagreement(_ data: Data) -> String? {
        guard let fast = HTTPVCRFormat.tape(readingWrittenLayout: data) else { return nil }
        do throws(DecodeFailure) {
            switch try HTTPVCRFormat.tape(decoding: data, asPropertyList: false) {
            case let .tape(decoded):
                return decoded == fast ? nil : "the written-layout reader read another tape than JSONDecoder"
            case let .unparsable(reason):
                return "the written-layout reader read a file JSONDecoder cannot parse (\(reason))"
            }
        } catch {
            return "the written-layout reader read a file JSONDecoder refuses (\(error.reason))"
        }
    }
}
