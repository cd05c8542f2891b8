import Foundation
import HTTPVCRCassettes

/// What differs between two versions of a tape, per request, for `redact`'s report. Old values are shortened
/// so that the report does not repeat the secrets it removes.
enum TapeDiff {
    struct RequestChange {
        var heading: String
        /// How many fields changed (a body is one field, however many of its lines changed).
        var fields: Int
        var lines: [String]
    }

    static func changes(from old: Tape, to new: Tape) -> [RequestChange] {
        let before = old.interactions
        let after = new.interactions
        var result: [RequestChange] = []
        for index in before.indices {
            let a = before[index]
            guard index < after.count else { break }
            let b = after[index]
            var lines: [String] = []
            compare(a.request, b.request, as: "request", into: &lines)
            for (hop, (x, y)) in zip(a.redirects, b.redirects).enumerated() {
                compare(x.response, y.response, as: "redirect \(hop + 1) response", into: &lines)
                compare(x.request, y.request, as: "redirect \(hop + 1) request", into: &lines)
            }
            if let x = a.response, let y = b.response {
                compare(x, y, as: "response", into: &lines)
            }
            body(a.body, b.body, as: "response body", into: &lines)
            let (oldChunks, newChunks) = (a.chunks.count, b.chunks.count)
            if oldChunks != newChunks {
                lines.append("response body chunks: \(oldChunks) → \(newChunks) (the shorter body needs fewer)")
            }
            if let x = a.error, let y = b.error {
                for key in Set(x.userInfo.keys).union(y.userInfo.keys).sorted() where x.userInfo[key] != y.userInfo[key] {
                    lines += field("error \(key)", x.userInfo[key], y.userInfo[key])
                }
            }
            let fields = lines.filter { !$0.hasPrefix("  ") }.count
            if !lines.isEmpty {
                result.append(RequestChange(
                    heading: "request \(index + 1) (\(b.request.method) \(Abbreviate.end(b.request.url, to: 100))):",
                    fields: fields,
                    lines: lines
                ))
            }
        }
        return result
    }

    private static func compare(_ x: RecordedRequest, _ y: RecordedRequest, as name: String, into lines: inout [String]) {
        if x.url != y.url { lines += field("\(name) URL", x.url, y.url) }
        headers(x.headers, y.headers, as: name, into: &lines)
        body(x.body ?? Data(), y.body ?? Data(), as: "\(name) body", into: &lines)
    }

    private static func compare(_ x: RecordedResponse, _ y: RecordedResponse, as name: String, into lines: inout [String]) {
        if x.url != y.url { lines += field("\(name) URL", x.url, y.url) }
        headers(x.headers, y.headers, as: name, into: &lines)
    }

    private static func headers(_ x: [RecordedHeader], _ y: [RecordedHeader], as name: String, into lines: inout [String]) {
        var names: [String] = []
        for header in x + y where !names.contains(where: { $0.equalsIgnoringASCIICase(header.name) }) {
            names.append(header.name)
        }
        for headerName in names where x[field: headerName] != y[field: headerName] {
            let clear = ["content-length", "content-encoding"].contains(headerName.lowercased())
            lines += field("\(name) header \(headerName)", x[field: headerName], y[field: headerName], clear: clear)
        }
    }

    /// `- old` / `+ new` lines for one field; the part of the old value that changed is shortened.
    private static func field(_ name: String, _ old: String?, _ new: String?, clear: Bool = false) -> [String] {
        switch (old, new) {
        case let (old?, new?):
            let (shownOld, shownNew) = inline(old, new, clear: clear)
            return ["\(name): \(shownOld) → \(shownNew)"]
        case let (old?, nil):
            return ["\(name): \(clear ? old : Abbreviate.secret(old)) → (removed)"]
        case let (nil, new?):
            return ["\(name): (none) → \(new)"]
        case (nil, nil):
            return []
        }
    }

    /// Changed lines of a text body, `-` old and `+` new, the changed part of old lines shortened; a count for
    /// binary bodies.
    private static func body(_ old: Data, _ new: Data, as name: String, into lines: inout [String]) {
        guard old != new else { return }
        guard let oldText = String(data: old, encoding: .utf8), let newText = String(data: new, encoding: .utf8) else {
            lines.append("\(name): \(old.count) bytes → \(new.count) bytes (binary)")
            return
        }
        lines.append("\(name):")
        let oldLines = oldText.components(separatedBy: "\n")
        let newLines = newText.components(separatedBy: "\n")
        if oldLines.count == newLines.count {
            for (number, (x, y)) in zip(oldLines, newLines).enumerated() where x != y {
                let (shownOld, shownNew) = inline(x, y, clear: false)
                lines.append("  line \(number + 1):")
                lines.append("  - \(shownOld)")
                lines.append("  + \(shownNew)")
            }
            return
        }
        // Lines were removed (--remove): show the block between the common head and tail.
        var head = 0
        while head < min(oldLines.count, newLines.count), oldLines[head] == newLines[head] { head += 1 }
        var tail = 0
        while tail < min(oldLines.count, newLines.count) - head,
              oldLines[oldLines.count - 1 - tail] == newLines[newLines.count - 1 - tail] {
            tail += 1
        }
        lines.append("  lines \(head + 1)–\(oldLines.count - tail):")
        for line in oldLines[head..<(oldLines.count - tail)] {
            lines.append("  - \(Abbreviate.end(line.isEmpty ? line : shorten(line), to: 160))")
        }
        for line in newLines[head..<(newLines.count - tail)] {
            lines.append("  + \(Abbreviate.end(line, to: 160))")
        }
    }

    /// The old and new text around the part that differs, with some context, the old part shortened.
    static func inline(_ old: String, _ new: String, clear: Bool) -> (String, String) {
        let a = Array(old)
        let b = Array(new)
        var prefix = 0
        while prefix < min(a.count, b.count), a[prefix] == b[prefix] { prefix += 1 }
        var suffix = 0
        while suffix < min(a.count, b.count) - prefix, a[a.count - 1 - suffix] == b[b.count - 1 - suffix] {
            suffix += 1
        }
        // Widen the changed part to whole tokens, so that "hunter2" is not shown as "h" + "unter2".
        while prefix > 0, isTokenCharacter(a[prefix - 1]), isTokenCharacter(b[prefix - 1]) { prefix -= 1 }
        while suffix > 0, isTokenCharacter(a[a.count - suffix]), isTokenCharacter(b[b.count - suffix]) { suffix -= 1 }
        let context = 60
        let lead = String(a[..<prefix])
        let shownLead = lead.count > context ? "…" + lead.suffix(context) : lead
        let trail = String(a[(a.count - suffix)...])
        let shownTrail = trail.count > context ? trail.prefix(context) + "…" : trail
        let oldMiddle = String(a[prefix..<(a.count - suffix)])
        let newMiddle = Abbreviate.end(String(b[prefix..<(b.count - suffix)]), to: 200)
        let shownOld = clear || oldMiddle.isEmpty ? oldMiddle : shorten(oldMiddle)
        return (shownLead + shownOld + shownTrail, shownLead + newMiddle + shownTrail)
    }

    private static func shorten(_ secret: String) -> String {
        let quoted = Abbreviate.secret(secret)
        return String(quoted.dropFirst().dropLast())
    }

    private static func isTokenCharacter(_ character: Character) -> Bool {
        character.isLetter || character.isNumber || character == "-" || character == "_" || character == "."
            || character == "+" || character == "/" || character == "%"
    }
}
