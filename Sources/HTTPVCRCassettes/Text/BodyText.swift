import Foundation

/// How a body is written in a text cassette: readable text when it is UTF-8 text, base64 otherwise.
package enum BodyText {
    /// The body as text, when it is valid UTF-8 without control characters other than tab, CR and LF, so that
    /// it reads well in a diff and comes back byte for byte.
    package static func text(_ data: Data) -> String? {
        guard !data.isEmpty else { return "" }
        let isText = data.allSatisfy { $0 >= 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        guard isText else { return nil }
        // Decoding repairs invalid UTF-8; only a body that survives unchanged is text.
        let string = String(decoding: data, as: UTF8.self)
        return string.utf8.elementsEqual(data) ? string : nil
    }
}
