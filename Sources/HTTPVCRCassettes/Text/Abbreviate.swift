import Foundation

/// Shortening text for reports.
package enum Abbreviate {
    /// A secret as it may appear in a report: its first few characters (at most 4, at most half of it), then
    /// an ellipsis. An authorization scheme (`Basic`, `Bearer`) in front stays whole.
    package static func secret(_ value: String) -> String {
        var value = value.trimmingCharacters(in: .whitespaces)
        var scheme = ""
        if let space = value.firstIndex(of: " ") {
            let word = value[..<space]
            if ["basic", "bearer", "token", "digest", "negotiate", "aws4-hmac-sha256", "ntlm", "hoba", "mutual"]
                .contains(word.lowercased()) {
                scheme = String(word) + " "
                value = String(value[value.index(after: space)...]).trimmingCharacters(in: .whitespaces)
            }
        }
        let visible = min(4, max(1, value.count / 2))
        let shown = value.count <= 1 ? "" : String(value.prefix(visible))
        return "\"\(scheme)\(shown)…\""
    }

    /// `text` cut to `width` characters with an ellipsis at the end.
    package static func end(_ text: String, to width: Int) -> String {
        guard text.count > width, width > 1 else { return text }
        return String(text.prefix(width - 1)) + "…"
    }
}
