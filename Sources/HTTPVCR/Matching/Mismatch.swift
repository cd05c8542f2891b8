import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCRCassettes

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
            let failed = failures(of: request, against: recorded, matchers: matchers)
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

    /// The whole message of an unmatched request on a cassette that may not record, ending in `advice`, and what kind
    /// of mismatch it told of: which remedy fits (``MismatchKind``).
    static func explain(
        request: RequestParts,
        cassettePath: String,
        recordMode: RecordMode,
        matchers: [Matcher],
        requests: [RequestParts],
        isPlayed: (Int) -> Bool,
        advice: MismatchAdvice = .library
    ) -> (message: String, kind: MismatchKind) {
        var lines = [
            "No recorded request matches \(describe(request))",
            "  cassette: \(cassettePath)",
            "  record mode: \(recordMode) (write-protected: the request was not sent)",
            "  matchers: \(matchers.map(\.description).joined(separator: ", "))",
        ]
        // A recording this request would match on another port comes first: recording again cannot help there.
        let portOnly = requests.indices.filter { differsOnlyInPort(request, requests[$0], matchers: matchers) }
        let closest = (portOnly.first { !isPlayed($0) } ?? portOnly.first).map { position in
            Closest(position: position, failed: failures(of: request, against: requests[position], matchers: matchers),
                    isPlayed: isPlayed(position))
        } ?? closest(to: request, among: requests, matchers: matchers, isPlayed: isPlayed)
        guard let closest else {
            lines.append("  the cassette holds no recorded requests")
            lines.append("  To record it: \(advice.toRecord).")
            return (lines.joined(separator: "\n"), .newRequest)
        }
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
        let kind = kind(of: request, closest: closest, recorded: recorded, portOnly: !portOnly.isEmpty)
        switch kind {
        case let .portOnly(recordedPort, livePort):
            lines.append("  It differs only in its port (\(recordedPort) recorded, \(livePort) now): the server "
                + "listens on a port chosen anew each run, so recording it again would not help.")
            lines.append("  To replay it: start the server on a fixed port, or leave the port out of matching: "
                + portlessMatchers(matchers) + ".")
        case .changedRequest:
            let volatile = VolatileCandidates.between(
                request.recordedRequest, recorded.recordedRequest,
                in: VolatileCandidates.Parts(matchers: closest.failed.map(\.matcher))
            ).map(\.value)
            if !volatile.isEmpty {
                lines.append("  Looks volatile (changed, but of one shape, as a timestamp, a UUID or a signature is): "
                    + volatile.map(\.description).joined(separator: ", "))
                lines.append("  To match it by shape: configuration.volatileValues += ["
                    + volatile.map(\.description).joined(separator: ", ") + "]")
            }
            lines.append("  To record it: \(advice.toRecordAnew).")
        case .newRequest, .alreadyPlayed:
            lines.append("  To record it: \(advice.toRecord).")
        }
        return (lines.joined(separator: "\n"), kind)
    }

    private static func failures(
        of request: RequestParts, against recorded: RequestParts, matchers: [Matcher]
    ) -> [(matcher: String, live: String?, recorded: String?)] {
        matchers.filter { !$0.matches(request, recorded) }.map {
            (matcher: $0.name, live: $0.component(of: request), recorded: $0.component(of: recorded))
        }
    }

    /// What the closest recording says the request is: one already played, the same endpoint asked differently
    /// (the same method and path: the test changed it), or something the cassette never held.
    static func kind(of request: RequestParts, closest: Closest, recorded: RequestParts, portOnly: Bool)
        -> MismatchKind
    {
        if portOnly { return .portOnly(recorded: recorded.port, live: request.port) }
        if closest.failed.isEmpty { return .alreadyPlayed }
        if recorded.method == request.method, recorded.path == request.path { return .changedRequest }
        return .newRequest
    }

    /// Whether `request` would match `recorded` on `recorded`'s port: all that differs is the port a server
    /// listens on.
    static func differsOnlyInPort(_ request: RequestParts, _ recorded: RequestParts, matchers: [Matcher]) -> Bool {
        guard request.port != recorded.port, let port = Int(recorded.port), let url = request.urlRequest.url,
              var parts = URLComponents(url: url, resolvingAgainstBaseURL: false)
        else { return false }
        parts.port = port
        guard let moved = parts.url else { return false }
        var live = request.urlRequest
        live.url = moved
        let onRecordedPort = RequestParts(live)
        return matchers.allSatisfy { $0.matches(onRecordedPort, recorded) }
    }

    /// The matchers without the port: `.uri` split into the parts it compares but the port.
    static func portlessMatchers(_ matchers: [Matcher]) -> String {
        let portless = matchers.flatMap { matcher -> [Matcher] in
            switch matcher.name {
            case Matcher.port.name: []
            case Matcher.uri.name: [.scheme, .host, .path, .query]
            default: [matcher]
            }
        }
        guard portless.count != matchers.count || portless.map(\.name) != matchers.map(\.name) else {
            return "a matcher of yours that leaves the port out"
        }
        return "matchers = [\(portless.map(\.description).joined(separator: ", "))]"
    }

    private static func quoted(_ text: String) -> String {
        let shortened = text.count > 200 ? String(text.prefix(200)) + "…" : text
        return "\"\(shortened.replacingOccurrences(of: "\n", with: "\\n"))\""
    }
}
