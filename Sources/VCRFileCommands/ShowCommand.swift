import Foundation
import HTTPVCRCassettes

/// `vcr show CASSETTE`: one row per recorded request.
enum ShowCommand {
    static let tableWidth = 120

    static var command: Command {
        Command(
            name: "show",
            abstract: "List the requests a cassette holds, one row each.",
            usage: ["<cassette> [--json] [--wide]"],
            arguments: [("<cassette>", "A cassette in any format vcr reads (HTTPVCR JSON or plist, HAR, YAHTTPVCR, VCR.py).")],
            options: [
                .flag("json", "Print JSON for machines instead of the table (full URLs, errors in detail)."),
                .flag("wide", short: "w", "Do not shorten URLs to fit the table in \(tableWidth) columns."),
            ],
            discussion: """
                Columns: the request's number (what lint and redact call "request N"), method, URL, the status \
                (redirect hops first, "302 → 200") or the error ("error NSURLErrorDomain -1001"), the response \
                body's size in bytes, the number of chunks it arrived in, and the time to first byte.
                """,
            examples: [
                "vcr show Cassettes.bundle/Examples/httpbin-basics.json",
                "vcr show recording.har --json | jq '.requests[] | select(.status >= 400)'",
            ],
            run: { arguments in Result { () throws(CommandError) in try run(arguments) } }
        )
    }

    static func run(_ arguments: ParsedArguments) throws(CommandError) -> ExitStatus {
        let path = try arguments.onlyPositional(named: "<cassette>", of: command)
        let (tape, format) = try CassetteInput.read(path)
        let rows = tape.interactions.enumerated().map { Row(index: $0.offset + 1, interaction: $0.element) }
        if arguments.flag("json") {
            Console.out(json(path: path, format: format, rows: rows))
        } else {
            let count = rows.count == 1 ? "1 request" : "\(rows.count) requests"
            let age = oldestRecording(rows).map { ", \(ageText(of: $0))" } ?? ""
            Console.out("\(path): \(CassetteInput.describe(format)), \(count)\(age)")
            if !rows.isEmpty {
                Console.out("")
                Console.out(table(rows, wide: arguments.flag("wide")))
            }
        }
        return .success
    }

    /// When the oldest interaction that says so was recorded (cassettes HTTPVCR wrote before it kept the time, and
    /// foreign ones, say nothing).
    static func oldestRecording(_ rows: [Row]) -> Date? {
        rows.compactMap(\.interaction.request.recordedAt).min()
    }

    /// "recorded 3 days ago (oldest interaction 2026-11-20T10:00:00Z)".
    static func ageText(of oldest: Date, now: Date = Date()) -> String {
        let seconds = max(0, now.timeIntervalSince(oldest))
        let age: String
        switch seconds {
        case ..<120: age = "just now"
        case ..<7200: age = "\(Int(seconds / 60)) minutes ago"
        case ..<172_800: age = "\(Int(seconds / 3600)) hours ago"
        default: age = "\(Int(seconds / 86_400)) days ago"
        }
        return "recorded \(age) (oldest interaction \(RecordingTime.text(of: oldest)))"
    }

    /// What the table and the JSON say about one request.
    struct Row {
        var index: Int
        var interaction: Interaction

        var statusText: String {
            var parts: [String] = []
            var codes = interaction.redirects.map { String($0.response.statusCode) }
            if let response = interaction.response { codes.append(String(response.statusCode)) }
            if !codes.isEmpty { parts.append(codes.joined(separator: " → ")) }
            if let error = interaction.error { parts.append("error \(error.domain) \(error.code)") }
            return parts.isEmpty ? "no response" : parts.joined(separator: ", ")
        }

        var timeToFirstByteText: String {
            guard let seconds = interaction.timeToFirstByte else { return "-" }
            let milliseconds = seconds * 1000
            return milliseconds < 10 && milliseconds != 0
                ? String(format: "%.1f ms", milliseconds)
                : String(format: "%.0f ms", milliseconds)
        }
    }

    static func table(_ rows: [Row], wide: Bool) -> String {
        let headers = ["#", "METHOD", "URL", "STATUS", "BYTES", "CHUNKS", "TTFB"]
        var cells = rows.map { row in
            [
                String(row.index),
                row.interaction.request.method,
                row.interaction.request.url,
                row.statusText,
                String(row.interaction.body.count),
                String(row.interaction.chunks.count),
                row.timeToFirstByteText,
            ]
        }
        var widths = headers.indices.map { column in
            ([headers[column]] + cells.map { $0[column] }).map(\.count).max() ?? 0
        }
        if !wide {
            let others = widths.enumerated().filter { $0.offset != 2 }.map(\.element).reduce(0, +)
            let available = max(24, tableWidth - others - 2 * (headers.count - 1))
            if widths[2] > available {
                widths[2] = available
                for index in cells.indices { cells[index][2] = Abbreviate.end(cells[index][2], to: available) }
            }
        }
        // Numbers right-aligned, text left-aligned; the last column is not padded on the right.
        let rightAligned: Set<Int> = [0, 4, 5, 6]
        func line(_ values: [String]) -> String {
            values.enumerated().map { column, value in
                let pad = String(repeating: " ", count: max(0, widths[column] - value.count))
                if rightAligned.contains(column) { return pad + value }
                return column == values.count - 1 ? value : value + pad
            }.joined(separator: "  ")
        }
        return ([line(headers)] + cells.map(line)).joined(separator: "\n")
    }

    static func json(path: String, format: CassetteFormat, rows: [Row]) -> String {
        let requests: [JSONValue] = rows.map { row in
            let interaction = row.interaction
            let error: JSONValue = interaction.error.map { error in
                .object([
                    ("domain", .string(error.domain)),
                    ("code", .int(error.code)),
                    ("description", .optional(error.userInfo[NSLocalizedDescriptionKey])),
                ])
            } ?? .null
            let redirects: [JSONValue] = interaction.redirects.map { redirect in
                .object([
                    ("status", .int(redirect.response.statusCode)),
                    ("location", .optional(redirect.response.headers[field: "Location"])),
                    ("url", .string(redirect.request.url)),
                ])
            }
            return .object([
                ("index", .int(row.index)),
                ("chapter", .int(interaction.chapter)),
                ("method", .string(interaction.request.method)),
                ("url", .string(interaction.request.url)),
                ("requestBodySize", .int(interaction.request.body?.count ?? 0)),
                ("redirects", .array(redirects)),
                ("status", .optional(interaction.response?.statusCode)),
                ("responseURL", .optional(interaction.response?.url)),
                ("contentType", .optional(interaction.response?.headers[field: "Content-Type"])),
                ("error", error),
                ("bodySize", .int(interaction.body.count)),
                ("chunks", .int(interaction.chunks.count)),
                ("timeToFirstByteMs", .optional(interaction.timeToFirstByte.map { ($0 * 1_000_000).rounded() / 1000 })),
                ("recordedAt", .optional(interaction.request.recordedAt.map(RecordingTime.text(of:)))),
            ])
        }
        let document = JSONValue.object([
            ("path", .string(path)),
            ("format", .string(format.rawValue)),
            ("formatName", .string(CassetteInput.describe(format))),
            ("oldestRecording", .optional(oldestRecording(rows).map(RecordingTime.text(of:)))),
            ("requests", .array(requests)),
        ])
        // The writer ends the document with a newline; printing adds its own.
        return String(decoding: document.serialized().dropLast(), as: UTF8.self)
    }
}

extension JSONValue {
    fileprivate static func optional(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
    fileprivate static func optional(_ value: Int?) -> JSONValue { value.map(JSONValue.int) ?? .null }
    fileprivate static func optional(_ value: Double?) -> JSONValue { value.map(JSONValue.double) ?? .null }
}
