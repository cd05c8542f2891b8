import Foundation

/// One row of the table: the samples of one measurement, one per run.
struct Row: Sendable {
    enum Unit: String, Sendable {
        case requestsPerSecond = "req/s"
        case milliseconds = "ms"
        case microseconds = "µs"
        case megabytes = "MB"
        case ratio = "x"
    }

    let name: String
    /// Requests per sample, interactions in the cassette, or bytes: what `n` means depends on the row.
    let n: String
    var samples: [Double]
    /// Request rows: process CPU time per request of each sample, in microseconds (every thread, this process
    /// only: steadier than wall time when other processes compete for the machine).
    var cpuSamples: [Double] = []
    let unit: Unit
    var note = ""

    init(_ name: String, n: String, unit: Unit, samples: [Double] = [], note: String = "") {
        self.name = name
        self.n = n
        self.unit = unit
        self.samples = samples
        self.note = note
    }

    var median: Double { Stats.median(samples) }
    var min: Double { samples.min() ?? .nan }
    var max: Double { samples.max() ?? .nan }

    /// Microseconds per request, for request rows.
    var microsecondsPerRequest: Double? {
        unit == .requestsPerSecond && !samples.isEmpty ? 1_000_000 / median : nil
    }

    /// The median over runs of `self / other`, sample by sample: rows compared in a ratio are measured in the
    /// same run, one shortly after the other, so that a slow stretch of a shared machine hits both.
    func pairedRatio(to other: Row) -> Double {
        let count = Swift.min(samples.count, other.samples.count)
        guard count > 0 else { return .nan }
        return Stats.median((0..<count).map { samples[$0] / other.samples[$0] })
    }
}

enum Stats {
    static func median(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return .nan }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}

/// Prints rows as an aligned table.
struct Table {
    private(set) var rows: [Row] = []
    private var sectionBreaks: [Int: String] = [:]

    mutating func section(_ title: String) {
        sectionBreaks[rows.count] = title
    }

    mutating func add(_ row: Row) {
        rows.append(row)
    }

    func render() -> String {
        let header = ["row", "n", "median", "min", "max", "unit", "µs/req", "cpu µs/req", "note"]
        var cells: [[String]] = []
        var titles: [Int: String] = [:]
        for (index, row) in rows.enumerated() {
            if let title = sectionBreaks[index] { titles[cells.count] = title }
            cells.append([
                row.name, row.n,
                format(row.median, row.unit), format(row.min, row.unit), format(row.max, row.unit),
                row.unit.rawValue,
                row.microsecondsPerRequest.map { String(format: "%.1f", $0) } ?? "",
                row.cpuSamples.isEmpty ? "" : String(format: "%.1f", Stats.median(row.cpuSamples)),
                row.note,
            ])
        }
        let widths = header.indices.map { column in
            (cells.map { $0[column].count } + [header[column].count]).max() ?? 0
        }
        let rightAligned: Set<Int> = [1, 2, 3, 4, 6, 7]
        func line(_ values: [String]) -> String {
            values.enumerated().map { column, value in
                let padding = String(repeating: " ", count: widths[column] - value.count)
                return rightAligned.contains(column) ? padding + value : value + padding
            }
            .joined(separator: " | ")
            .trimmingCharacters(in: .whitespaces)
        }
        var output = [line(header), widths.map { String(repeating: "-", count: $0) }.joined(separator: "-|-")]
        for (index, row) in cells.enumerated() {
            if let title = titles[index] { output.append("[\(title)]") }
            output.append(line(row))
        }
        return output.joined(separator: "\n")
    }

    private func format(_ value: Double, _ unit: Row.Unit) -> String {
        guard value.isFinite else { return "-" }
        switch unit {
        case .requestsPerSecond: return String(format: "%.0f", value)
        case .milliseconds: return String(format: "%.1f", value)
        case .microseconds: return String(format: "%.0f", value)
        case .megabytes: return String(format: "%.2f", value)
        case .ratio: return String(format: "%.2f", value)
        }
    }
}

/// A target from the issue, and where this run stands.
struct Target {
    let key: String
    let value: Double?
    let comparison: Comparison
    let bound: Double
    let meaning: String

    enum Comparison: String { case atLeast = "≥", atMost = "≤" }

    var status: String {
        guard let value else { return "skipped" }
        switch comparison {
        case .atLeast: return value >= bound ? "met" : "MISSED"
        case .atMost: return value <= bound ? "met" : "MISSED"
        }
    }

    var line: String {
        let shown = value.map { String(format: "%.3f", $0) } ?? "null"
        return "\(key.padding(toLength: 26, withPad: " ", startingAt: 0)) \(shown.padding(toLength: 6, withPad: " ", startingAt: 0)) "
            + "target \(comparison.rawValue) \(bound)  \(status.padding(toLength: 7, withPad: " ", startingAt: 0)) \(meaning)"
    }
}

/// The final line: one JSON object of ratios, keys in a fixed order, `null` for what was not measured.
func ratiosJSON(_ values: [(String, Double?)]) -> String {
    let members = values.map { key, value -> String in
        guard let value, value.isFinite else { return "\"\(key)\":null" }
        return "\"\(key)\":\((value * 1000).rounded() / 1000)"
    }
    return "{" + members.joined(separator: ",") + "}"
}
