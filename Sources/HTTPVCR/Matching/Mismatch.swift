import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Explains why a request matched nothing: the recorded request closest to it and what differs.
enum Mismatch {
    struct Closest {
        var position: Int
        var failed: [(matcher: String, live: String?, recorded: String?)]
        var isPlayed: Bool
    }

    /// The recorded request that fails the fewest matchers (unplayed ones first on a tie).
    static func closest(
        to request: RequestParts,
        among requests: [RequestParts],
        matchers: [Matcher],
        isPlayed: (Int) -> Bool
    ) -> Closest? {
        var best: Closest?
        for (position, recorded) in requests.enumerated() {
            let failed = matchers.filter { !$0.matches(request, recorded) }.map {
                (matcher: $0.name, live: $0.component(of: request), recorded: $0.component(of: recorded))
            }
            let candidate = Closest(position: position, failed: failed, isPlayed: isPlayed(position))
            guard let current = best else { best = candidate; continue }
            if failed.count < current.failed.count || (failed.count == current.failed.count && current.isPlayed && !candidate.isPlayed) {
                best = candidate
            }
        }
        return best
    }

    /// The request as messages name it: its method and URL, with what the secure defaults filter (secret-named
    /// parameters, a URL's password, credentials known by their shape) as `[FILTERED]`. Messages reach CI logs,
    /// and some name a request before any filter of its cassette ran.
    static func describe(_ request: URLRequest) -> String {
        "\((request.httpMethod ?? "GET").uppercased()) \(request.url.map(shown) ?? "(no URL)")"
    }

    private static func shown(_ url: URL) -> String {
        let defaults = VCRConfiguration()
        var removed = SecretValues()
        let filtered = RequestFilter.filter(url, of: URLRequest(url: url), with: defaults, removed: &removed)
        SecretFilter(configuration: defaults).takeShapedSecrets(in: filtered.absoluteString, into: &removed)
        return removed.replacingEchoes(inURL: filtered.absoluteString)
    }

    static func describe(_ request: RequestParts) -> String {
        "\(request.method) \(request.url.isEmpty ? "(no URL)" : request.url)"
    }

    /// The whole message of an unmatched request on a cassette that may not record, ending in `advice`.
    static func message(
        request: RequestParts,
        cassettePath: String,
        recordMode: RecordMode,
        matchers: [Matcher],
        requests: [RequestParts],
        isPlayed: (Int) -> Bool,
        advice: MismatchAdvice = .library
    ) -> String {
        var lines = [
            "No recorded request matches \(describe(request))",
            "  cassette: \(cassettePath)",
            "  record mode: \(recordMode) (write-protected: the request was not sent)",
            "  matchers: \(matchers.map(\.description).joined(separator: ", "))",
        ]
        if let closest = closest(to: request, among: requests, matchers: matchers, isPlayed: isPlayed) {
            let recorded = requests[closest.position]
            lines.append("  closest recorded request: #\(closest.position + 1) \(describe(recorded))"
                + (closest.isPlayed ? " (already played)" : ""))
            if closest.failed.isEmpty {
                lines.append("    it matches, but every matching recording was already played "
                    + "(\(advice.toRepeat) to replay the last of them again)")
            }
            for failure in closest.failed {
                if let live = failure.live, let recorded = failure.recorded {
                    lines.append("    \(failure.matcher): − \(quoted(recorded))  + \(quoted(live))")
                } else {
                    lines.append("    \(failure.matcher): differs")
                }
            }
            lines.append("    (− recorded, + this request)")
        } else {
            lines.append("  the cassette holds no recorded requests")
        }
        lines.append("  To record it: \(advice.toRecord).")
        return lines.joined(separator: "\n")
    }

    private static func quoted(_ text: String) -> String {
        let shortened = text.count > 200 ? String(text.prefix(200)) + "…" : text
        return "\"\(shortened.replacingOccurrences(of: "\n", with: "\\n"))\""
    }
}
