import Foundation
import HTTPVCRCassettes

extension BodyRewriter {
    /// ``rewriteJSON(_:replacing:)`` for `a=1&b=2` form bodies (also usable on a URL query string): keys are
    /// compared decoded; a replaced value is written form-encoded (``FormCoding/Spelling/body``); other pairs keep
    /// their exact original bytes; repeated keys are all replaced/removed; order kept. Returns nil when the data is
    /// not valid UTF-8 or does not look like a form body (e.g. contains characters a form body cannot have such as
    /// raw spaces, newlines, braces at start).
    package static func rewriteForm(_ data: Data, replacing replacements: [String: String?]) -> Data? {
        var targets: [[UInt8]: MemberAction] = [:]
        for (key, replacement) in replacements {
            targets[Array(key.utf8)] = replacement.map { .replace(FormCoding.encode($0, as: .body)) } ?? .remove
        }
        return withBytes(of: data) { bytes -> Data? in
            guard let pairs = FormScanner.pairs(in: bytes) else { return nil }
            var output: [UInt8] = []
            output.reserveCapacity(bytes.count)
            var changed = false
            var isFirstPiece = true
            for pair in pairs {
                let action = pair.range.isEmpty ? nil : targets[FormCoding.decode(bytes, pair.keyRange)]
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

    /// One `key=value` segment between ampersands, by byte ranges into the body.
    struct FormPair {
        var range: Range<Int>
        var keyRange: Range<Int>
        /// Nil for a bare key without `=`.
        var valueRange: Range<Int>?
    }

    enum FormScanner {
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
                    guard let length = Byte.utf8SequenceLength(bytes, at: index) else { return nil }
                    index += length
                }
            }
            return pairs
        }
    }
}
