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
            guard let pairs = FormCoding.bodySegments(of: bytes) else { return nil }
            var output: [UInt8] = []
            output.reserveCapacity(bytes.count)
            var changed = false
            var isFirstPiece = true
            for pair in pairs {
                let action = pair.range.isEmpty ? nil : targets[FormCoding.decode(bytes, pair.nameRange)]
                if case .remove = action {
                    changed = true
                    continue
                }
                if !isFirstPiece { output.append(Byte.ampersand) }
                isFirstPiece = false
                if case let .replace(encoded) = action {
                    changed = true
                    output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[pair.nameRange]))
                    output.append(Byte.equals)
                    output.append(contentsOf: encoded)
                } else {
                    output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[pair.range]))
                }
            }
            return changed ? Data(output) : data
        }
    }
}
