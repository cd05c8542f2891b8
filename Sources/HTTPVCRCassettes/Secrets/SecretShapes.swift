import Foundation

/// Credentials known by their shape, whatever they are called: private key blocks, JWTs, bearer tokens, AWS access
/// key IDs, GitHub, Slack and Stripe tokens, Google API keys, and the vendors' keys with a fixed prefix and a known
/// length that gitleaks finds without a keyword next to them (``vendorShapes``). The one list: `vcr lint` reports what it finds
/// (``SecretScanner``), and the recording filters take the same values out, wherever they stand
/// (``SecretFilter/shapedSecrets(in:into:)``), so that a recording is never refused for a shape it could have
/// filtered.
///
/// Each shape is distinctive enough to have no false positives worth the friction: UUIDs, commit hashes, ETags,
/// dates and ids match none of them.
package enum SecretShapes {
    /// One secret found in a text.
    package struct Match: Equatable {
        /// The shape's name, as reports say it: `JWT`, `GitHub token`.
        package let shape: String
        /// The secret as it stands in the text: what a filter removes.
        package let secret: String
        /// How a report shows it: a private key block by its first line, a bearer token with its scheme.
        package let shown: String
    }

    package struct Shape {
        package let name: String
        let regex: NSRegularExpression
        /// The capture group that holds the secret (0: the whole match).
        package let group: Int
        /// Texts one of which every match contains: the regular expression runs only where one is found.
        let anchors: [[UInt8]]
        let anchorsIgnoreCase: Bool

        init(_ name: String, _ pattern: String, group: Int = 0, anchors: [String], ignoringCase: Bool = false) {
            // The patterns are fixed and tested; a failure here is a programming error. Anchors of three bytes or
            // more: texts are scanned by pairs, then triples of bytes (`isSet(_:_:)` on ``anchorPairs`` and ``anchorTriples``).
            precondition(anchors.allSatisfy { $0.utf8.count >= 3 })
            self.name = name
            regex = try! NSRegularExpression(pattern: pattern)
            self.group = group
            self.anchors = anchors.map { Array($0.utf8) }
            anchorsIgnoreCase = ignoringCase
        }
    }

    /// The shapes every text is scanned for: the common credentials here, then the vendors' keys
    /// (``vendorShapes``).
    private static let shapes: [Shape] = [
        // The whole block, to its END line (or the end of the text, for one cut short); in a JSON string its line
        // breaks are `\n` escapes, which the block takes along.
        Shape(
            "private key block",
            #"-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY(?: BLOCK)?-----(?:(?!-----BEGIN )[\s\S])*?(?:-----END \1PRIVATE KEY(?: BLOCK)?-----|\z)"#,
            anchors: ["-----BEGIN "]
        ),
        Shape("JWT", #"eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+"#, anchors: ["eyJ"]),
        Shape(
            "bearer token", #"(?i)\bbearer\s+([A-Za-z0-9\-._~+/]{8,}=*)"#, group: 1, anchors: ["bearer"],
            ignoringCase: true
        ),
        Shape(
            "AWS access key ID", #"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b"#, anchors: ["AKIA", "ASIA", "ABIA", "ACCA"]
        ),
        Shape(
            "GitHub token", #"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})\b"#,
            anchors: ["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"]
        ),
        Shape(
            "Slack token", #"\bxox[abposre]-[A-Za-z0-9-]{10,}|\bxapp-[0-9]-[A-Za-z0-9]+-[0-9]+-[A-Za-z0-9]+"#,
            anchors: ["xox", "xapp-"]
        ),
        Shape(
            "Stripe secret key", #"\b[sr]k_(?:live|test|prod)_[A-Za-z0-9]{16,}\b"#,
            anchors: ["k_live_", "k_test_", "k_prod_"]
        ),
        Shape("Google API key", #"\bAIza[0-9A-Za-z_-]{35}\b"#, anchors: ["AIza"]),
    ] + vendorShapes

    /// The shapes' names, as Docs/Filters.md lists them.
    package static var names: [String] { shapes.map(\.name) }

    /// Every shaped secret in `text`, but for the values `isPlaceholder` says stand for one already removed.
    package static func matches(in text: String, isPlaceholder: (String) -> Bool) -> [Match] {
        guard !text.isEmpty else { return [] }
        return matches(in: text, trying: candidateShapes(in: text), isPlaceholder: isPlaceholder)
    }

    /// False when `text` holds no shaped secret: most texts, told in one pass over their bytes (the test
    /// ``matches(in:isPlaceholder:)`` starts with), without making the list of shapes to try.
    package static func mayHoldMatch(in text: String) -> Bool {
        !text.isEmpty && anchoredShapes(in: text) != 0
    }

    /// ``matches(in:isPlaceholder:)`` with every regular expression run, whatever the scan for anchors says: what
    /// the scan must never change, as tests check.
    package static func matchesTryingEveryShape(in text: String, isPlaceholder: (String) -> Bool) -> [Match] {
        matches(in: text, trying: shapes, isPlaceholder: isPlaceholder)
    }

    private static func matches(in text: String, trying candidates: [Shape], isPlaceholder: (String) -> Bool)
        -> [Match]
    {
        guard !candidates.isEmpty else { return [] }
        let whole = NSRange(text.startIndex..., in: text)
        var result: [Match] = []
        for shape in candidates {
            for match in shape.regex.matches(in: text, range: whole) {
                guard let range = Range(match.range(at: shape.group), in: text) else { continue }
                let secret = String(text[range])
                switch shape.name {
                case "bearer token":
                    // "Bearer authentication" in prose is not a token: real ones have digits or are long.
                    guard secret.contains(where: \.isNumber) || secret.count >= 20, !isPlaceholder(secret) else {
                        continue
                    }
                    result.append(Match(shape: shape.name, secret: secret, shown: "Bearer " + secret))
                case "private key block":
                    let firstLine = String(secret.prefix { $0 != "\n" && $0 != "\\" })
                    result.append(Match(shape: shape.name, secret: secret, shown: firstLine))
                default:
                    guard !isPlaceholder(secret) else { continue }
                    result.append(Match(shape: shape.name, secret: secret, shown: secret))
                }
            }
        }
        return result
    }

    /// The shapes whose anchors `text` holds: one pass over its bytes, so that the common case (none) costs no
    /// regular expression. It runs on every live request's URL and header values.
    private static func candidateShapes(in text: String) -> [Shape] {
        let found = anchoredShapes(in: text)
        guard found != 0 else { return [] }
        return shapes.indices.filter { found & 1 << $0 != 0 }.map { shapes[$0] }
    }

    private static func anchoredShapes(in text: String) -> UInt64 {
        // Straight from the string's storage, without the copy the mutating `withUTF8` needs.
        text.utf8.withContiguousStorageIfAvailable(anchoredShapes(in:))
            ?? ContiguousArray(text.utf8).withUnsafeBufferPointer(anchoredShapes(in:))
    }

    /// A bit per shape (by its position in ``shapes``) whose anchor `bytes` hold.
    private static func anchoredShapes(in bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        // The tables' storage taken once, out of the loop: each read of a static table checks that it is made.
        startsAnchor.withUnsafeBufferPointer { startsAnchor in
            anchorPairs.withUnsafeBufferPointer { pairs in
                anchorTriples.withUnsafeBufferPointer { triples in
                    var found: UInt64 = 0
                    // Letters that start an anchor are common (`bench`, `item`): the pair of bytes says more. No
                    // match's anchor starts in the last bytes, too few to hold a match (`shortestFromAnchor`): they
                    // are not read.
                    for index in 0..<max(bytes.count - shortestFromAnchor + 1, 0)
                    where startsAnchor[Int(bytes[index])]
                        && isSet(pairs, pairSlot(bytes[index], bytes[index + 1]))
                        && isSet(triples, tripleSlot(bytes[index], bytes[index + 1], bytes[index + 2])) {
                        found |= shapesAnchored(at: index, in: bytes)
                    }
                    return found
                }
            }
        }
    }

    /// Whether two bytes start some anchor (every anchor has two or more), by ``anchorPairs``; and, when they do,
    /// whether three do, by ``anchorTriples``, so that a common pair (`be` of `bench`) seldom costs the comparison
    /// with each anchor.
    @inline(__always)
    private static func isSet(_ bits: UnsafeBufferPointer<UInt64>, _ slot: Int) -> Bool {
        bits[slot >> 6] & (1 << UInt64(slot & 63)) != 0
    }

    /// Out of the scanning loop, which then keeps to registers: most texts have no anchor at all.
    @inline(never)
    private static func shapesAnchored(at index: Int, in bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var found: UInt64 = 0
        for anchor in anchorsByFirstByte[Int(bytes[index])]
        where startsWith(bytes, at: index, anchor.bytes, ignoringCase: anchor.ignoringCase) {
            found |= 1 << anchor.shape
        }
        return found
    }

    /// The fewest bytes a match holds from the first byte of its anchor on: a JWT's 11 (`eyJa.eyJb.c`); the other
    /// shapes need more (a bearer token 15, an AWS key ID 20, a Slack app token 12). Every match holds one of its
    /// shape's anchors, in ASCII, at its start or inside it (`[sr]k_live_` one byte in, a Terraform token's
    /// `.atlasv1.` 14 bytes in, followed by 60 more); a match's UTF-16 units are as many UTF-8 bytes or fewer.
    private static let shortestFromAnchor = 11

    /// Whether a byte starts some anchor: most bytes of a text start none, and are passed at once.
    private static let startsAnchor: [Bool] = anchorsByFirstByte.map { !$0.isEmpty }

    private static func pairSlot(_ first: UInt8, _ second: UInt8) -> Int {
        Int(first) << 8 | Int(second)
    }

    private static func tripleSlot(_ first: UInt8, _ second: UInt8, _ third: UInt8) -> Int {
        Int((first &* 7) ^ second) << 8 | Int(third)
    }

    private static let anchorPairs = anchorPrefixBits(2) { pairSlot($0[0], $0[1]) }
    private static let anchorTriples = anchorPrefixBits(3) { tripleSlot($0[0], $0[1], $0[2]) }

    /// A bit at `slot` of each spelling of every anchor's first `count` bytes (both cases of each byte where the
    /// shape's anchors ignore case).
    private static func anchorPrefixBits(_ count: Int, slot: ([UInt8]) -> Int) -> [UInt64] {
        var bits = [UInt64](repeating: 0, count: 256 * 256 / 64)
        for shape in shapes {
            for anchor in shape.anchors {
                var spellings: [[UInt8]] = [[]]
                for byte in anchor.prefix(count) {
                    let cases = shape.anchorsIgnoreCase ? [byte, otherCase(byte)].compactMap { $0 } : [byte]
                    spellings = spellings.flatMap { prefix in cases.map { prefix + [$0] } }
                }
                for spelling in spellings {
                    let index = slot(spelling)
                    bits[index >> 6] |= 1 << UInt64(index & 63)
                }
            }
        }
        return bits
    }

    private struct Anchor {
        let shape: Int
        let bytes: [UInt8]
        /// The shape's ``Shape/anchorsIgnoreCase``, kept here: reading it off the shape retained the whole shape.
        let ignoringCase: Bool
    }

    /// Every shape's anchors, by their first byte (both cases of it for an anchor that ignores case).
    private static let anchorsByFirstByte: [[Anchor]] = {
        // A shape is a bit of a `UInt64` while texts are scanned.
        precondition(shapes.count <= UInt64.bitWidth)
        var table = Array(repeating: [Anchor](), count: 256)
        for (index, shape) in shapes.enumerated() {
            for bytes in shape.anchors {
                guard let first = bytes.first else { continue }
                let anchor = Anchor(shape: index, bytes: bytes, ignoringCase: shape.anchorsIgnoreCase)
                table[Int(first)].append(anchor)
                if shape.anchorsIgnoreCase, let other = otherCase(first) { table[Int(other)].append(anchor) }
            }
        }
        return table
    }()

    private static func startsWith(
        _ bytes: UnsafeBufferPointer<UInt8>, at start: Int, _ anchor: [UInt8], ignoringCase: Bool
    ) -> Bool {
        guard bytes.count - start >= anchor.count else { return false }
        for offset in 1..<anchor.count {
            let candidate = bytes[start + offset]
            let expected = anchor[offset]
            guard candidate == expected || (ignoringCase && uppercase(candidate) == uppercase(expected)) else {
                return false
            }
        }
        return true
    }

    /// The same letter in the other case; nil for a byte that is no ASCII letter.
    private static func otherCase(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"): byte - 32
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): byte + 32
        default: nil
        }
    }

    private static func uppercase(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) ? byte - 32 : byte
    }
}
