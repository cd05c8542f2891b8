import Foundation

/// How deeply a cassette's arrays and objects may nest: 512 levels, far beyond the 6 or so a cassette uses.
///
/// Parsers recurse once per level, so a file nested thousands of levels deep can overflow the stack and kill the
/// whole test process. ``LosslessJSONReader`` and Foundation's binary property-list parser stop at 512 levels with an
/// error; XML property lists are checked here before parsing, whatever the platform's parser does.
package enum NestingLimit {
    package static let maximumDepth = 512

    /// Whether an XML property list opens more than ``maximumDepth`` `<array>` / `<dict>` elements without
    /// closing them. Comments are skipped; anything else that is not well-formed is left to the parser.
    static func isExceeded(inXMLPropertyList data: Data) -> Bool {
        data.withUnsafeBytes { buffer in
            let bytes = buffer.bindMemory(to: UInt8.self)
            var depth = 0
            var index = 0
            func has(_ text: StaticString, at position: Int) -> Bool {
                let count = text.utf8CodeUnitCount
                guard position + count <= bytes.count else { return false }
                for offset in 0..<count where bytes[position + offset] != text.utf8Start[offset] { return false }
                return true
            }
            while index < bytes.count {
                guard bytes[index] == UInt8(ascii: "<") else {
                    index += 1
                    continue
                }
                if has("<!--", at: index) {
                    index += 4
                    while index < bytes.count, !has("-->", at: index) { index += 1 }
                    index += 3
                    continue
                }
                let isClosing = index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "/")
                let name = index + (isClosing ? 2 : 1)
                let length = has("array", at: name) ? 5 : has("dict", at: name) ? 4 : 0
                index = name + length
                guard length > 0, index < bytes.count else { continue }
                let next = bytes[index]
                if isClosing {
                    depth -= 1
                } else if next == UInt8(ascii: ">") || next == UInt8(ascii: " ") || next == UInt8(ascii: "\t")
                    || next == UInt8(ascii: "\n") || next == UInt8(ascii: "\r") {
                    depth += 1
                    if depth > maximumDepth { return true }
                }
            }
            return false
        }
    }
}
