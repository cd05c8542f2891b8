import CassetteMutations
import Foundation
@testable import HTTPVCR
import Testing

/// `JSONRelayout` (one pass from a JSON text to its bytes in a layout) against the reference it stands in for:
/// `LosslessJSONReader` then `JSONLayout.bytes(of:)`. Both must accept the same texts and give the same bytes.
@Suite struct JSONRelayoutTests {
    static let layoutNames = [
        "compact", "compact newline", "spaced", "spaced ascii", "indent1", "indent2", "indent2 newline",
        "indent2 ascii newline", "indent4", "indent16 ascii", "tab", "tab newline", "compact ascii",
    ]
    static let layouts = layoutNames.compactMap(JSONLayout.init(name:))

    typealias Written = (bytes: [UInt8], end: Int)

    static func reference(_ text: [UInt8], at start: Int, depth: Int, _ layout: JSONLayout) -> Written? {
        text.withUnsafeBufferPointer { buffer in
            var reader = LosslessJSONReader(bytes: buffer, position: start, depth: depth)
            guard let value = try? reader.value() else { return nil }
            var bytes = layout.bytes(of: value)
            if layout.endsWithNewline { bytes.removeLast() }
            return (bytes, reader.position)
        }
    }

    static func relayout(
        _ text: [UInt8], at start: Int, depth: Int, _ layout: JSONLayout
    ) -> (written: Written, relayout: JSONRelayout)? {
        text.withUnsafeBufferPointer { buffer in
            var relayout = JSONRelayout(bytes: buffer, position: start, depth: depth, layout: layout)
            var bytes: [UInt8] = []
            guard relayout.write(into: &bytes) else { return nil }
            return ((bytes, relayout.position), relayout)
        }
    }

    /// Compares both ways in every layout; returns whether the text was accepted.
    @discardableResult
    static func check(_ text: [UInt8], at start: Int = 0, depth: Int = 0) -> Bool {
        var accepted = false
        var firstWritten: (layout: JSONLayout, relayout: JSONRelayout, bytes: [UInt8])?
        for layout in layouts {
            let expected = reference(text, at: start, depth: depth, layout)
            let fast = relayout(text, at: start, depth: depth, layout)
            let shown = String(decoding: text, as: UTF8.self).debugDescription
            #expect(expected?.bytes == fast?.written.bytes, "\(layout.name): \(shown)")
            #expect(expected?.end == fast?.written.end, "\(layout.name): \(shown)")
            guard let fast else { continue }
            accepted = true
            // What the reader relies on to keep bytes written in another body's layout.
            if let first = firstWritten, first.relayout.wroteSame(as: layout) {
                #expect(first.bytes == fast.written.bytes, "\(first.layout.name) for \(layout.name): \(shown)")
            }
            if firstWritten == nil { firstWritten = (layout, fast.relayout, fast.written.bytes) }
        }
        return accepted
    }

    // MARK: Focused cases

    @Test(arguments: [
        #"{"a":1}"#, "[]", "{}", "[[], {}, [[]], {\"a\": {}}]", #"{"dup": 1, "dup": [2, {"dup": 3}]}"#,
        "[1.0, 1e5, 1E+5, -0, 0.5e-3, 123456789012345678901234567890, -1.25]",
        #"["\u00e9\u00E9", "\ud83d\ude00", "\uD83D\uDE00", "\u0000\u001f\u007f", "\b\f\n\r\t\/\\\""]"#,
        "[\"caf\u{e9}\", \"\u{1F600}\", \"e\u{301}\", \"\u{2028}\", \"\u{FFFF}\", \"\u{10FFFF}\"]",
        "[\"\\u0008\\u000c\\u000A\\u0022\\u005c\\u002f\"]",
        " \t\r\n{ \"a\" :\n\t[ 1 ,2\r\n] } ", "[true,false,null]",
        // Refused by both:
        "", "{", "[1,]", #"{"a" 1}"#, "{\"a\":1,}", "[01]", "[1.]", "[-]", "[1e]", "[.5]", "[+1]", "[tru]",
        "[nul]", #"["\ud800"]"#, #"["\udc00"]"#, #"["\ud800\u0041"]"#, #"["\x"]"#, #"["\u12"]"#, "[\"a\u{01}\"]",
        "[\"a", "[\"a\\", "{\"a\"}", "[1 2]", "{1:2}", "[}", "{]",
    ])
    func agreesWithTheReference(text: String) {
        Self.check(Array(text.utf8))
    }

    @Test func agreesOnInvalidUTF8() {
        for bytes: [UInt8] in [[0x80], [0xC3], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xFF],
                               [0xE2, 0x82], [0xC3, 0xA9], [0xF0, 0x9F, 0x98, 0x80]] {
            Self.check(Array("[\"".utf8) + bytes + Array("\"]".utf8))
            Self.check(Array("{\"".utf8) + bytes + Array("\":1}".utf8))
        }
    }

    @Test func nestingCountsTowardTheSameLimit() {
        for (levels, depth) in [(512, 0), (513, 0), (509, 3), (510, 3), (507, 5), (508, 5)] {
            let text = Array((String(repeating: "[", count: levels) + String(repeating: "]", count: levels)).utf8)
            #expect(Self.check(text, depth: depth) == (levels + depth <= NestingLimit.maximumDepth))
        }
    }

    @Test func startsAndEndsInTheMiddleOfAFile() {
        let text = Array(#"{"data": {"a": [1, "x"]}, "dataLayout": "compact"}"#.utf8)
        #expect(Self.check(text, at: 9, depth: 3))
        let written = Self.relayout(text, at: 9, depth: 3, .compact)
        #expect(written?.written.end == 24)
    }

    /// Layout names read from their bytes as from their `Character`s.
    @Test func layoutNamesReadAsByTheirCharacters() {
        var names = [
            "", " ", "compact", "compact ", " compact", "compact  ascii", "compact ascii ascii",
            "compact newline ascii", "compact ascii newline", "indent", "indent0", "indent1", "indent16", "indent17",
            "indent+2", "indent-2", "indent02", "indent 2", "indent2x", "Indent2", "tab", "tab ascii", "tabs",
            "spaced newline newline", "spaced\tascii", "indent+", "indent+16", "indent-0", "indent 16", "indent16 ",
            "indent00000000000000000000016", "indent99999999999999999999", "indent１", "indent٢", "caf\u{e9}",
            "compact\u{301}", "indent\u{0662}", "\u{212A}", "compact\r\nascii",
        ]
        var random = SplitMix64(seed: 3)
        let words = ["compact", "spaced", "tab", "indent", "indent2", "indent016", "ascii", "newline", "1", "+", "", "x"]
        for _ in 0..<600 {
            names.append((0..<random.within(1...4)).map { _ in words[random.below(words.count)] }.joined(separator: " "))
        }
        for name in names {
            #expect(JSONLayout(name: name) == JSONLayout(characterNames: name), "\(name.debugDescription)")
        }
    }

    // MARK: Generated bodies

    /// Random values written in every layout, as the cassette writer nests them, and with random whitespace and
    /// escapes; then thousands of byte-level mutants of those texts.
    @Test func generatedBodiesAndTheirMutants() {
        var random = SplitMix64(seed: 20_261_126)
        var texts: [[UInt8]] = []
        for _ in 0..<400 {
            let value = Self.randomValue(&random, depth: 0, container: true)
            let layout = Self.layouts[random.below(Self.layouts.count)]
            texts.append(layout.bytes(of: value))
            // The file's own text: nested in a document, two spaces a level, minimal escapes.
            let document = Array(JSONValue.object([("k", value)]).serialized())
            #expect(Self.check(document, at: 9, depth: 1))
            texts.append(Self.scrambled(value, &random))
        }
        for text in texts { #expect(Self.check(text), "\(String(decoding: text, as: UTF8.self))") }
        var accepted = 0
        let noise: [UInt8] = Array(#" "\,:[]{}0-.eE+u/bntDdcA9x"#.utf8)
            + [0x00, 0x09, 0x0A, 0x0D, 0x7F, 0x80, 0xC3, 0xED, 0xF0]
        for index in 0..<6_000 {
            var text = texts[index % texts.count]
            for _ in 0...random.below(3) {
                let at = random.below(text.count + 1)
                switch random.below(3) {
                case 0: text.insert(noise[random.below(noise.count)], at: at)
                case 1 where at < text.count: text.remove(at: at)
                default: if at < text.count { text[at] = noise[random.below(noise.count)] }
                }
            }
            if Self.check(text) { accepted += 1 }
        }
        // Both kinds of mutants were met.
        #expect(accepted > 300 && accepted < 5_700)
    }

    /// Cassettes read by the written-layout reader, whose bodies change layout from one to the next (it writes
    /// each in the last one's first) and come with any whitespace and escapes: the same tape as the one reader's.
    @Test func cassettesWithBodiesInChangingLayouts() throws {
        var random = SplitMix64(seed: 7)
        for round in 0..<40 {
            var scenes: [String] = []
            var bodies: [Data] = []
            for index in 0..<6 {
                let value = Self.randomValue(&random, depth: 0, container: true)
                let layout = Self.layouts[random.below(Self.layouts.count)]
                let text = random.below(2) == 0 ? layout.bytes(of: value) : Self.scrambled(value, &random)
                let body = String(decoding: text, as: UTF8.self)
                let expected = Self.reference(text, at: 0, depth: 0, layout).map { written in
                    Data(written.bytes + (layout.endsWithNewline ? [Byte.lineFeed] : []))
                }
                bodies.append(try #require(expected))
                let named = layout == .compact && random.below(2) == 0 ? "" : #", "dataLayout": "\#(layout.name)""#
                if index == 0 {
                    let url = #""url": "https://a.example/""#
                    scenes.append(#"{"chapter": 1, "time": 0, "request": {"method": "POST", \#(url), "headers": {}, "#
                        + #""body": \#(body), "bodyLayout": "\#(layout.name)"}}"#)
                    scenes.append(#"{"chapter": 1, "time": 0, "response": {\#(url), "status": 200, "#
                        + #""httpVersion": "HTTP/1.1", "headers": {}}}"#)
                } else {
                    scenes.append(#"{"chapter": 1, "time": 0, "data": \#(body)\#(named)}"#)
                }
            }
            scenes.append(#"{"chapter": 1, "time": 0, "complete": true}"#)
            let file = #"{"format": "HTTPVCR", "version": 1, "scenes": ["# + scenes.joined(separator: ",\n") + "]}\n"
            let data = Data(file.utf8)
            let tape = try #require(HTTPVCRFormat.tape(readingWrittenLayout: data), "round \(round)")
            #expect(CassetteFile.writtenLayoutDisagreement(data) == nil)
            let interaction = try #require(tape.interactions.first)
            #expect(interaction.request.body == bodies[0])
            #expect(interaction.chunks == Array(bodies.dropFirst()))
            // Mutants: both readers still agree, and a file that cannot be read is named in the error.
            for _ in 0..<50 {
                var bytes = Array(data)
                let at = random.below(bytes.count)
                let byte = Array(#"{}[]",:\u0x "#.utf8 + [0xC3, 0x0A])[random.below(14)]
                switch random.below(3) {
                case 0: bytes[at] = byte
                case 1: bytes.insert(byte, at: at)
                default: bytes.remove(at: at)
                }
                let mutant = Data(bytes)
                #expect(CassetteFile.writtenLayoutDisagreement(mutant) == nil)
                do {
                    _ = try CassetteFile.decode(mutant, path: "mutant.json")
                } catch {
                    #expect(error.message.contains("mutant.json") || error.cassettePath == "mutant.json")
                }
            }
        }
    }

    /// The reader keeps the last layout name it read: a name written with an escape, another name, or no name
    /// at all are still read as such, and a name that is not one after a good one still sends the file to the
    /// one reader, which names it.
    @Test func layoutNamesFromBodyToBody() throws {
        func file(_ layouts: [String?]) -> Data {
            let scenes = layouts.map { layout in
                let named = layout.map { #", "dataLayout": "\#($0)""# } ?? ""
                return #"{"chapter": 1, "time": 0, "data": {"a": ["é", 1.0]}\#(named)}"#
            }
            let request = #"{"chapter": 1, "time": 0, "request": {"method": "GET", "url": "https://a.example/", "#
                + #""headers": {}}}"#
            return Data((#"{"format": "HTTPVCR", "version": 1, "scenes": [\#(request), "#
                + scenes.joined(separator: ", ") + "]}").utf8)
        }
        let names: [String?] = ["spaced", #"sp\u0061ced"#, "spaced", nil, "spaced ascii", "spaced", "indent2 newline"]
        let data = file(names)
        let tape = try #require(HTTPVCRFormat.tape(readingWrittenLayout: data))
        #expect(CassetteFile.writtenLayoutDisagreement(data) == nil)
        let chunks = try #require(tape.interactions.first?.chunks).map { String(decoding: $0, as: UTF8.self) }
        #expect(chunks == [
            #"{"a": ["é", 1.0]}"#, #"{"a": ["é", 1.0]}"#, #"{"a": ["é", 1.0]}"#, #"{"a":["é",1.0]}"#,
            #"{"a": ["\u00e9", 1.0]}"#, #"{"a": ["é", 1.0]}"#, "{\n  \"a\": [\n    \"é\",\n    1.0\n  ]\n}\n",
        ])
        for bad in ["", "spaced ", "Spaced"] {
            let data = file(["spaced", "spaced", bad])
            #expect(HTTPVCRFormat.tape(readingWrittenLayout: data) == nil)
            #expect {
                try CassetteFile.decode(data, path: "names.json")
            } throws: { error in
                (error as? VCRError)?.message.hasPrefix("Malformed cassette names.json: scenes[3].dataLayout: expected")
                    == true
            }
        }
    }

    static let strings = [
        "", "a", "caf\u{e9}", "\u{1F600}", "line\nbreak", "tab\t\"quote\" \\", "\u{01}\u{7F}\u{00}", "/slash",
        "\u{08}\u{0C}\r", "e\u{301}", "\u{2028}\u{FEFF}", "\u{FFFF}\u{10FFFF}", "中文", "dup",
        String(repeating: "x", count: 40),
    ]
    static let numbers = ["0", "-0", "1.0", "1e5", "1E+5", "2E-7", "-12.50", "0.0", "123456789012345678901234567890"]

    static func randomValue(_ random: inout SplitMix64, depth: Int, container: Bool = false) -> JSONValue {
        let kind = container || depth < 4 && random.below(3) == 0 ? random.below(2) : 2 + random.below(5)
        switch kind {
        case 0:
            return .object((0..<random.below(4)).map { _ in
                (strings[random.below(strings.count)], randomValue(&random, depth: depth + 1))
            })
        case 1: return .array((0..<random.below(4)).map { _ in randomValue(&random, depth: depth + 1) })
        case 2: return .string(strings[random.below(strings.count)])
        case 3: return .number(numbers[random.below(numbers.count)])
        case 4: return .bool(random.below(2) == 0)
        default: return .null
        }
    }

    /// `value` as JSON with random whitespace between tokens and each character escaped at random.
    static func scrambled(_ value: JSONValue, _ random: inout SplitMix64) -> [UInt8] {
        var out: [UInt8] = []
        func space() {
            for _ in 0..<random.below(3) { out.append([0x20, 0x09, 0x0A, 0x0D][random.below(4)]) }
        }
        func hex(_ unit: UInt16) {
            out += Array("\\u".utf8)
            for shift in stride(from: 12, through: 0, by: -4) {
                out.append(Byte.hexDigit(UInt8((unit >> UInt16(shift)) & 0xF), lowercase: random.below(2) == 0))
            }
        }
        func string(_ text: String) {
            out.append(Byte.quote)
            for scalar in text.unicodeScalars {
                let short: [UInt32: String] = [0x22: "\\\"", 0x5C: "\\\\", 0x2F: "\\/", 0x08: "\\b", 0x0C: "\\f",
                                               0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t"]
                let mustEscape = scalar.value < 0x20 || scalar == "\"" || scalar == "\\"
                if mustEscape || random.below(4) == 0 {
                    if let escape = short[scalar.value], random.below(2) == 0 {
                        out += Array(escape.utf8)
                    } else {
                        for unit in String(scalar).utf16 { hex(unit) }
                    }
                } else {
                    out += Array(String(scalar).utf8)
                }
            }
            out.append(Byte.quote)
        }
        func write(_ value: JSONValue) {
            space()
            switch value {
            case let .object(members):
                out.append(Byte.openBrace)
                for (index, (key, member)) in members.enumerated() {
                    if index > 0 { out.append(Byte.comma) }
                    space(); string(key); space(); out.append(Byte.colon); write(member)
                }
                space(); out.append(Byte.closeBrace)
            case let .array(values):
                out.append(Byte.openBracket)
                for (index, element) in values.enumerated() {
                    if index > 0 { out.append(Byte.comma) }
                    write(element)
                }
                space(); out.append(Byte.closeBracket)
            case let .string(text): string(text)
            default: out += JSONLayout.compact.bytes(of: value)
            }
            space()
        }
        write(value)
        return out
    }
}
