import Foundation

/// One mutated cassette: which seed it came from, what was done to it, and its bytes. Made from the run's seed and
/// its index alone (``make(index:runSeed:)``), so any mutant can be made again to reproduce a failure.
public struct Mutant: Sendable {
    public let index: Int
    public let runSeed: UInt64
    public let seed: SeedCassette
    /// What was done, in order: "scenes[3].chapter = 9223372036854775807", "truncated to 812 of 4790 bytes".
    public let mutations: [String]
    public let bytes: Data

    /// The file name the mutant is written under: the seed's extension, as detection may look at it.
    public var fileName: String { "mutant-\(index).\(seed.fileExtension)" }

    public var summary: String {
        "mutant \(index) of seed \(runSeed) (\(seed.format.rawValue) \(seed.name)): "
            + mutations.joined(separator: "; ")
    }

    /// The format of mutant `index`: formats take turns, so every format gets the same share.
    public static func format(ofIndex index: Int) -> SeedFormat {
        SeedFormat.allCases[index % SeedFormat.allCases.count]
    }

    /// Mutant `index` of the run seeded `runSeed`.
    public static func make(index: Int, runSeed: UInt64) -> Mutant {
        var random = SplitMix64(seed: SplitMix64.seed(ofMutant: index, inRun: runSeed))
        let format = format(ofIndex: index)
        let seed = random.pick(SeedCassette.seeds(of: format))
        var mutator = Mutator(random: random, syntax: seed.syntax)
        let (bytes, mutations) = mutator.mutate(seed.document)
        return Mutant(index: index, runSeed: runSeed, seed: seed, mutations: mutations, bytes: bytes)
    }
}

/// Applies one to three mutations: tree edits first (type swaps, extreme numbers, removed or repeated keys, bad
/// base64, weird strings, reordered scenes, deep nesting), then the document is written, then byte edits
/// (truncation, invalid UTF-8, flipped, inserted, deleted or repeated bytes).
struct Mutator {
    var random: SplitMix64
    let syntax: Node.Syntax

    private enum Kind: CaseIterable {
        case truncate, invalidUTF8, flipByte, insertControl, deleteBytes, repeatBytes
        case removeMember, repeatMember, renameKey, swapType, extremeNumber, badBase64, weirdString
        case swapElements, moveElementFirst, removeElement, repeatElement, deepNesting, emptyContainer

        var isByteEdit: Bool {
            switch self {
            case .truncate, .invalidUTF8, .flipByte, .insertControl, .deleteBytes, .repeatBytes: true
            default: false
            }
        }

        /// How often each is drawn, out of the sum: truncation and numbers most, as they find the most.
        var weight: Int {
            switch self {
            case .truncate: 14
            case .extremeNumber: 14
            case .swapType: 9
            case .removeMember, .weirdString, .invalidUTF8: 6
            case .badBase64, .repeatMember, .flipByte: 5
            case .swapElements, .moveElementFirst, .deepNesting, .deleteBytes: 4
            case .renameKey, .removeElement, .insertControl, .repeatBytes: 3
            case .repeatElement, .emptyContainer: 2
            }
        }
    }

    mutating func mutate(_ document: Node) -> (Data, [String]) {
        let count = random.pick([1, 1, 1, 1, 1, 1, 2, 2, 2, 3])
        let kinds = (0..<count).map { _ in drawKind() }
        var tree = document
        var mutations: [String] = []
        for kind in kinds where !kind.isByteEdit {
            if let description = edit(&tree, kind) { mutations.append(description) }
        }
        var bytes = Array(render(tree, mutations: &mutations))
        for kind in kinds where kind.isByteEdit {
            mutations.append(edit(&bytes, kind))
        }
        if mutations.isEmpty { mutations.append("unchanged") }
        return (Data(bytes), mutations)
    }

    private mutating func drawKind() -> Kind {
        var draw = random.below(Kind.allCases.reduce(0) { $0 + $1.weight })
        for kind in Kind.allCases {
            if draw < kind.weight { return kind }
            draw -= kind.weight
        }
        return .truncate
    }

    /// A property list is written as XML, or now and then as a binary property list when it can be.
    private mutating func render(_ tree: Node, mutations: inout [String]) -> Data {
        if syntax == .propertyList, random.chance(20), let object = tree.foundationObject,
           let binary = try? PropertyListSerialization.data(fromPropertyList: object, format: .binary, options: 0) {
            mutations.append("written as a binary property list")
            return binary
        }
        return tree.serialized(as: syntax)
    }

    // MARK: Tree edits

    private mutating func edit(_ tree: inout Node, _ kind: Kind) -> String? {
        let all = Self.locations(in: tree)
        func pick(_ isCandidate: (Location) -> Bool) -> Location? {
            let candidates = all.filter(isCandidate)
            return candidates.isEmpty ? nil : random.pick(candidates)
        }
        switch kind {
        case .removeMember, .repeatMember, .renameKey:
            guard let target = pick({ $0.node.memberCount > 0 }), case let .object(members) = target.node else {
                return nil
            }
            let index = random.below(members.count)
            var edited = members
            let name = "\(target.path.isEmpty ? "top level" : target.path).\(members[index].key)"
            switch kind {
            case .removeMember:
                edited.remove(at: index)
                tree = tree.replacing(at: target.steps, with: .object(edited))
                return "removed \(name)"
            case .repeatMember:
                var copy = members[index]
                if random.chance(50) { copy.value = someValue() }
                edited.insert(copy, at: random.within(0...edited.count))
                tree = tree.replacing(at: target.steps, with: .object(edited))
                return "repeated key \(name)"
            default:
                let key = members[index].key
                let renamed = [key.uppercased(), key + " ", "", key + "\u{0}", String(key.dropLast())]
                edited[index].key = random.pick(renamed)
                tree = tree.replacing(at: target.steps, with: .object(edited))
                return "renamed \(name) to \"\(edited[index].key)\""
            }
        case .swapType:
            guard let target = pick({ _ in true }) else { return nil }
            let swapped = swappedType(target.node)
            tree = tree.replacing(at: target.steps, with: swapped)
            return "\(target.name) = \(swapped.brief) (was \(target.node.brief))"
        case .extremeNumber:
            let numbers = all.filter { $0.node.isNumber || Self.numericKeys.contains($0.key ?? "") }
            guard let target = random.chance(85) && !numbers.isEmpty ? random.pick(numbers) : pick({ $0.node.isLeaf })
            else { return nil }
            let value = extremeNumber()
            tree = tree.replacing(at: target.steps, with: value)
            return "\(target.name) = \(value.brief)"
        case .badBase64:
            let encoded = all.filter { location in
                (location.key?.lowercased().contains("base64") ?? false) || location.node.isData
            }
            guard let target = encoded.isEmpty ? pick({ $0.node.isString }) : random.pick(encoded) else { return nil }
            let value = Node.string(random.pick(Self.badBase64))
            tree = tree.replacing(at: target.steps, with: value)
            return "\(target.name) = \(value.brief)"
        case .weirdString:
            guard let target = pick({ $0.node.isString }) else { return nil }
            let value = Node.string(random.pick(Self.weirdStrings))
            tree = tree.replacing(at: target.steps, with: value)
            return "\(target.name) = \(value.brief)"
        case .swapElements, .moveElementFirst, .removeElement, .repeatElement:
            let minimum = kind == .swapElements || kind == .moveElementFirst ? 2 : 1
            guard let target = pick({ $0.node.elementCount >= minimum }), case let .array(elements) = target.node else {
                return nil
            }
            var edited = elements
            let first = random.below(elements.count)
            let second = random.below(elements.count)
            let description: String
            switch kind {
            case .swapElements:
                edited.swapAt(first, second)
                description = "swapped \(target.name)[\(first)] and [\(second)]"
            case .moveElementFirst:
                edited.insert(edited.remove(at: first), at: 0)
                description = "moved \(target.name)[\(first)] first"
            case .removeElement:
                edited.remove(at: first)
                description = "removed \(target.name)[\(first)]"
            default:
                edited.insert(elements[first], at: second)
                description = "repeated \(target.name)[\(first)] at [\(second)]"
            }
            tree = tree.replacing(at: target.steps, with: .array(edited))
            return description
        case .deepNesting:
            guard let target = pick({ _ in true }) else { return nil }
            let depth = random.pick([513, 600, 1_000, 2_500, 5_000, 20_000])
            let unclosed = random.chance(15)
            tree = tree.replacing(at: target.steps, with: .raw(deepNesting(depth, unclosed: unclosed)))
            return "\(target.name) nested \(depth) levels deep\(unclosed ? ", never closed" : "")"
        case .emptyContainer:
            guard let target = pick({ $0.node.isContainer }) else { return nil }
            let value: Node = random.chance(50) ? .object([]) : .array([])
            tree = tree.replacing(at: target.steps, with: value)
            return "\(target.name) = \(value.brief)"
        default:
            return nil
        }
    }

    /// Keys whose numbers the readers check, hit more often than chance would.
    private static let numericKeys: Set<String> = [
        "chapter", "time", "status", "code", "version", "type", "_errorCode", "wait", "blocked", "receive",
    ]

    private mutating func extremeNumber() -> Node {
        switch syntax {
        case .json:
            random.pick([
                .integer(Int.max), .integer(Int.min), .integer(Int(Int32.max)), .integer(Int(Int32.max) + 1),
                .integer(-1), .integer(0), .raw("-0"), .real(-0.0), .real(1e308), .real(-1e308), .real(1.5),
                .real(.leastNonzeroMagnitude), .raw("1e400"), .raw("-1e400"), .raw("1e-400"),
                .raw("9223372036854775808"),
                .raw("-9223372036854775809"), .raw("18446744073709551616"), .raw("1e19"), .raw("NaN"),
                .raw("Infinity"), .raw("-Infinity"), .raw("0x10"), .raw("1."), .raw("01"), .raw("+1"),
                .raw("1.0"), .raw("2147483647.0"), .raw("123456789012345678901234567890"),
            ])
        case .propertyList:
            random.pick([
                .integer(Int.max), .integer(Int.min), .integer(Int(Int32.max)), .integer(Int(Int32.max) + 1),
                .integer(-1), .integer(0), .real(-0.0), .real(1e308), .real(-1e308), .real(1.5), .real(.nan),
                .real(.infinity), .real(-.infinity), .raw("<integer>-0</integer>"), .raw("<real>1e400</real>"),
                .raw("<integer>9223372036854775808</integer>"), .raw("<integer>18446744073709551615</integer>"),
                .raw("<integer>-9223372036854775809</integer>"), .raw("<integer>1.5</integer>"),
                .raw("<integer></integer>"), .raw("<integer>0x10</integer>"), .raw("<real>1e19</real>"),
                .raw("<real></real>"), .raw("<real>nan(0x1)</real>"), .raw("<real>+infinity</real>"),
            ])
        }
    }

    private static let badBase64 = [
        "%%%", "A", "AB", "ABC", "AB=", "A===", "====", "====AAAA", "AAAA====AAAA", "\u{0}", "ÿÿÿÿ", "Zm9v\u{0}",
        "Zm9v!", "Zm 9v", "Zm9v\n", "-_-_", String(repeating: "=", count: 100), "😀😀😀😀",
    ]

    private static let weirdStrings = [
        "", " ", "\u{0}", "\u{1}\u{7F}", "é", "😀", "\u{FEFF}", "\u{FFFD}", "\u{202E}", "http://", "http://[::1",
        "https://h:99999999999999999999/", "https://api.example.test:-1/", "https://api.example.test:65536/x",
        "https://ünï.example.test/ä?ö=ü#", "%", "%zz", "//", "?#", "/relative",
        String(repeating: "a", count: 5_000),
        String(repeating: "%", count: 1_000), "HTTP/9.9", "\r\n", "GET\r\nX: y", "{\"a\": [1, 2]}",
        "net::ERR_CONNECTION_REFUSED", "net::ERR_CERT_", "=", "NSURLErrorDomain", "gzip", "gzip, br", "deflate",
        "0", "-1", "1e400", "NaN", "true", "null", "base64", "NSData", "\\u0000",
    ]

    /// A value of some other type than `node`.
    private mutating func swappedType(_ node: Node) -> Node {
        var choices: [Node] = [
            .string(node.text ?? "x"), .integer(node.integer ?? 1), .real(2.5), .bool(true), .null,
            .object([Node.Member("a", node)]), .array([node]),
        ]
        if syntax == .propertyList { choices.append(.data(Array((node.text ?? "x").utf8))) }
        choices.removeAll { $0.kindName == node.kindName }
        return random.pick(choices)
    }

    private mutating func someValue() -> Node {
        random.pick([.string("other"), .integer(2), .null, .bool(false), .array([]), .object([]), .real(0.5)])
    }

    private func deepNesting(_ depth: Int, unclosed: Bool) -> String {
        switch syntax {
        case .json:
            let objects = depth % 2 == 0
            let open = String(repeating: objects ? #"{"a": "# : "[", count: depth)
            return unclosed ? open + "1" : open + "1" + String(repeating: objects ? "}" : "]", count: depth)
        case .propertyList:
            let objects = depth % 2 == 0
            let open = String(repeating: objects ? "<dict><key>a</key>" : "<array>", count: depth)
            let close = unclosed ? "" : String(repeating: objects ? "</dict>" : "</array>", count: depth)
            return open + "<true/>" + close
        }
    }

    // MARK: Byte edits

    private mutating func edit(_ bytes: inout [UInt8], _ kind: Kind) -> String {
        let total = bytes.count
        let offset = random.below(max(total, 1))
        switch kind {
        case .truncate:
            // Near the start and near the end as often as anywhere in between.
            let length: Int
            switch random.below(4) {
            case 0: length = random.below(min(total, 64) + 1)
            case 1: length = max(0, total - 1 - random.below(min(total, 64)))
            default: length = random.below(total + 1)
            }
            bytes.removeSubrange(min(length, total)...)
            return "truncated to \(length) of \(total) bytes"
        case .invalidUTF8:
            let sequence = random.pick(Self.invalidUTF8)
            // Mostly inside a string, where a parser has to decode it.
            let quotes = bytes.indices.filter { bytes[$0] == UInt8(ascii: syntax == .json ? "\"" : ">") }
            let at = random.chance(75) && !quotes.isEmpty ? random.pick(quotes) + 1 : offset
            bytes.insert(contentsOf: sequence, at: min(at, bytes.count))
            return "inserted invalid UTF-8 \(sequence.map { String($0, radix: 16) }) at byte \(at)"
        case .flipByte:
            guard total > 0 else { return "flipped nothing (empty)" }
            let value = UInt8(truncatingIfNeeded: random.next())
            bytes[offset] = value
            return "byte \(offset) = 0x\(String(value, radix: 16))"
        case .insertControl:
            let value = random.pick([0x00, 0x01, 0x08, 0x0B, 0x1B, 0x7F] as [UInt8])
            bytes.insert(value, at: offset)
            return "inserted 0x\(String(value, radix: 16)) at byte \(offset)"
        case .deleteBytes:
            let count = min(random.within(1...32), total - offset)
            bytes.removeSubrange(offset..<(offset + count))
            return "deleted \(count) bytes at \(offset)"
        default:
            let count = min(random.within(1...64), total - offset)
            bytes.insert(contentsOf: bytes[offset..<(offset + count)], at: offset)
            return "repeated \(count) bytes at \(offset)"
        }
    }

    private static let invalidUTF8: [[UInt8]] = [
        [0xFF], [0xFE, 0xFF], [0xC3, 0x28], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF8, 0x88, 0x80, 0x80, 0x80],
        [0x80], [0xE2, 0x82], [0xF4, 0x90, 0x80, 0x80], [0xEF, 0xBB, 0xBF],
    ]

    // MARK: Where to edit

    /// A node in the tree: how to reach it, and its path written as the readers write it (`scenes[3].chapter`).
    struct Location {
        let steps: [Node.Step]
        let path: String
        let key: String?
        let node: Node

        var name: String { path.isEmpty ? "top level" : path }
    }

    static func locations(in root: Node) -> [Location] {
        var result: [Location] = []
        func visit(_ node: Node, _ steps: [Node.Step], _ path: String, _ key: String?) {
            result.append(Location(steps: steps, path: path, key: key, node: node))
            switch node {
            case let .object(members):
                for (index, member) in members.enumerated() {
                    let child = path.isEmpty ? member.key : "\(path).\(member.key)"
                    visit(member.value, steps + [.member(index)], child, member.key)
                }
            case let .array(elements):
                for (index, element) in elements.enumerated() {
                    visit(element, steps + [.element(index)], "\(path)[\(index)]", key)
                }
            default:
                break
            }
        }
        visit(root, [], "", nil)
        return result
    }
}

extension Node {
    enum Step {
        case member(Int)
        case element(Int)
    }

    func replacing(at steps: [Step], with replacement: Node) -> Node {
        replacing(at: steps[...], with: replacement)
    }

    private func replacing(at steps: ArraySlice<Step>, with replacement: Node) -> Node {
        guard let step = steps.first else { return replacement }
        switch (self, step) {
        case (.object(var members), .member(let index)):
            members[index].value = members[index].value.replacing(at: steps.dropFirst(), with: replacement)
            return .object(members)
        case (.array(var elements), .element(let index)):
            elements[index] = elements[index].replacing(at: steps.dropFirst(), with: replacement)
            return .array(elements)
        default:
            return self
        }
    }

    var memberCount: Int { if case let .object(members) = self { members.count } else { 0 } }
    var elementCount: Int { if case let .array(elements) = self { elements.count } else { 0 } }
    var isContainer: Bool { if case .object = self { true } else if case .array = self { true } else { false } }
    var isLeaf: Bool { !isContainer }
    var isString: Bool { if case .string = self { true } else { false } }
    var isData: Bool { if case .data = self { true } else { false } }
    var isNumber: Bool {
        switch self {
        case .integer, .real: true
        default: false
        }
    }

    var text: String? {
        switch self {
        case let .string(text): text
        case let .integer(value): String(value)
        case let .real(value): "\(value)"
        default: nil
        }
    }

    var integer: Int? {
        switch self {
        case let .integer(value): value
        case let .string(text): Int(text)
        default: nil
        }
    }

    var kindName: String {
        switch self {
        case .object: "object"
        case .array: "array"
        case .string: "string"
        case .integer: "integer"
        case .real: "real"
        case .bool: "bool"
        case .null: "null"
        case .data: "data"
        case .raw: "raw"
        }
    }

    /// A short description for a mutation's summary.
    var brief: String {
        switch self {
        case let .object(members): members.isEmpty ? "{}" : "an object"
        case let .array(elements): elements.isEmpty ? "[]" : "an array"
        case let .string(text):
            text.count > 40
                ? "a string of \(text.count) characters" : "\"\(text.debugDescription.dropFirst().dropLast())\""
        case let .integer(value): String(value)
        case let .real(value): "\(value)"
        case let .bool(value): String(value)
        case .null: "null"
        case let .data(bytes): "\(bytes.count) bytes of data"
        case let .raw(text): text.count > 40 ? "raw text of \(text.count) characters" : text
        }
    }
}
