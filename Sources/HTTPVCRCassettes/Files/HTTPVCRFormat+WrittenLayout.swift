import Foundation

/// A second reader of HTTPVCR's JSON, for the layout our own writer produces (``HTTPVCRFormat/document(_:)``
/// serialized): keys in the writer's order, no nulls, no unknown keys. It reads the bytes in place, without the
/// value tree the one reader builds (``LosslessJSONReader`` and ``FieldReader``), which counts when every test of a
/// parallel suite loads its own small cassette; Docs/Performance.md ("Readers of cassette files") has the numbers.
///
/// It answers "this tape" or "not the writer's layout" (nil), never an error: whatever it does not expect, even
/// valid JSON the one reader would read the same way, goes to that reader, which reads it or names what is wrong.
/// So what a file means and every error message stay the one reader's. `WrittenLayoutReaderTests` checks that both
/// agree on the repository's cassettes and on thousands of mutants of them.
extension HTTPVCRFormat {
    package static func tape(readingWrittenLayout data: Data) -> Tape? {
        data.withUnsafeBytes { raw in
            raw.withMemoryRebound(to: UInt8.self) { bytes in
                var reader = WrittenLayoutReader(bytes: bytes)
                return try? reader.document()
            }
        }
    }
}

/// Reads the writer's layout from bytes in place: the records here, in the writer's order; tokens, strings and
/// numbers in `WrittenLayoutReader+Tokens`, `+Strings` and `+Numbers`. Every method throws ``NotTheLayout`` at
/// the first byte it does not expect.
struct WrittenLayoutReader {
    struct NotTheLayout: Error {}

    package let bytes: UnsafeBufferPointer<UInt8>
    package var position = 0
    /// The layout of the last structured body read, which the next is first written in.
    var lastLayout = JSONLayout.compact
    /// Room for a structured body's bytes, kept from one body to the next.
    package var scratch: [UInt8] = []
    /// The last layout name read and its layout: the next body most often names the same.
    var lastNamedLayout: (name: [UInt8], layout: JSONLayout)?

    package mutating func document() throws(NotTheLayout) -> Tape {
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
        // tape is moved to an array of its own size (the one reader knows the count beforehand).
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
            let request = try request(depth: 5)
            requestURL = request.url
            try expect(Byte.closeBrace)
            event = .redirect(response, to: request)
        } else if matches(name, "response") {
            event = .response(try response(urlSameAs: requestURL))
        } else if matches(name, "data") {
            event = .data(try textOrStructure(layoutKey: "dataLayout", depth: 3))
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

    private mutating func request(depth: Int = 4) throws(NotTheLayout) -> RecordedRequest {
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
                body = try textOrStructure(layoutKey: "bodyLayout", depth: depth)
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

    /// A body as text, or as a JSON structure (an object or an array) followed by its layout's member (the
    /// compact layout when there is none), which give back its bytes (``JSONLayout``). `depth`: how deeply the
    /// structure is nested in the file, which counts toward the nesting limit.
    private mutating func textOrStructure(layoutKey: StaticString, depth: Int) throws(NotTheLayout) -> Data {
        skipWhitespace()
        guard position < bytes.count, bytes[position] == Byte.openBrace || bytes[position] == Byte.openBracket else {
            return try text()
        }
        // The layout comes after the structure: it is written in the last body's layout, most often the same,
        // straight from the file's text (``JSONRelayout``); written again when the layout differs, and read
        // as a value and written back (the reference) when the fast writer is unsure.
        let start = position
        scratch.removeAll(keepingCapacity: true)
        if scratch.capacity == 0 { scratch.reserveCapacity(1_024) }
        var relayout = JSONRelayout(bytes: bytes, position: start, depth: depth, layout: lastLayout)
        var value: JSONValue?
        if relayout.write(into: &scratch) {
            position = relayout.position
        } else {
            var json = LosslessJSONReader(bytes: bytes, position: start, depth: depth)
            guard let read = try? json.value() else { throw NotTheLayout() }
            value = read
            position = json.position
        }
        var layout = JSONLayout.compact
        let afterValue = position
        if (try? nextKey(layoutKey)) != nil {
            if let known = lastNamedLayout, try skipString(equalTo: known.name) {
                layout = known.layout
            } else {
                let name = try string()
                guard let named = JSONLayout(name: name) else { throw NotTheLayout() }
                layout = named
                lastNamedLayout = (Array(name.utf8), named)
            }
        } else {
            position = afterValue
        }
        lastLayout = layout
        if value == nil, !relayout.wroteSame(as: layout) {
            scratch.removeAll(keepingCapacity: true)
            relayout = JSONRelayout(bytes: bytes, position: start, depth: depth, layout: layout)
            if !relayout.write(into: &scratch) {
                var json = LosslessJSONReader(bytes: bytes, position: start, depth: depth)
                guard let read = try? json.value() else { throw NotTheLayout() }
                value = read
            }
        }
        if let value { return Data(layout.bytes(of: value)) }
        if layout.endsWithNewline { scratch.append(Byte.lineFeed) }
        return scratch.withUnsafeBufferPointer { Data(buffer: $0) }
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

    /// Sorted as `HTTPVCRFormat.headerFields` sorts what the one reader reads; a name twice (as Swift compares
    /// strings) is left to that reader. A name's array (its repeated fields) gives one field per value, in order;
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
}

extension CassetteFile {
    /// For the fuzzer and the tests: how the written-layout reader and the one reader (``value(of:isPropertyList:)``,
    /// then ``HTTPVCRFormat/tape(from:)``) differ on `data`, or nil when they agree (the first declines, or both read
    /// the same tape).
    package static func writtenLayoutDisagreement(_ data: Data) -> String? {
        guard let fast = HTTPVCRFormat.tape(readingWrittenLayout: data) else { return nil }
        do throws(DecodeFailure) {
            let document = try value(of: data, isPropertyList: false)
            guard HTTPVCRFormat.isReadable(document) else {
                return "the written-layout reader read a file the one reader does not take for HTTPVCR's"
            }
            let read = try HTTPVCRFormat.tape(from: document)
            return read == fast ? nil : "the written-layout reader read another tape than the one reader"
        } catch {
            return "the written-layout reader read a file the one reader refuses (\(error.reason))"
        }
    }
}
