import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Finds the first unplayed recorded request that matches a live one, without scanning the tape.
///
/// Chapters are bucketed by the joined keys of the key-based matchers (all built-ins are). Within a bucket they
/// stay in tape order, so identical requests replay in recorded order. Predicate matchers (registered ones)
/// are checked only against the chapters of the live request's bucket.
struct MatchIndex {
    private let keyed: [@Sendable (RequestParts) -> String]
    private let predicates: [Matcher]
    /// Keyed by the parts the key-based matchers compare, one string per matcher: hashing the parts costs less
    /// than joining them into one string first.
    private var buckets: [[String]: Bucket] = [:]

    private struct Bucket {
        var chapters: [Int] = []
        /// Chapters before `head` are all played: the common case, consuming in order, stays O(1).
        var head = 0
    }

    /// - Parameter requests: the recorded request of each chapter, by chapter position.
    init(matchers: [Matcher], requests: [RecordedRequest]) {
        var keyed: [@Sendable (RequestParts) -> String] = []
        var predicates: [Matcher] = []
        for matcher in matchers {
            if case let .key(key) = matcher.comparison { keyed.append(key) } else { predicates.append(matcher) }
        }
        self.keyed = keyed
        self.predicates = predicates
        for (position, request) in requests.enumerated() {
            buckets[key(of: RequestParts(request)), default: Bucket()].chapters.append(position)
        }
    }

    private func key(of request: RequestParts) -> [String] {
        keyed.map { $0(request) }
    }

    /// The position of the first unplayed chapter that matches `request`; `isPlayed` says which are taken.
    mutating func firstMatch(
        for request: RequestParts,
        recordedRequest: (Int) -> RequestParts,
        isPlayed: (Int) -> Bool
    ) -> Int? {
        // One hash of the key; the bucket is advanced in place.
        guard let slot = buckets.index(forKey: key(of: request)) else { return nil }
        var head = buckets.values[slot].head
        let chapters = buckets.values[slot].chapters
        while head < chapters.count, isPlayed(chapters[head]) { head += 1 }
        buckets.values[slot].head = head
        for position in chapters[head...] where !isPlayed(position) {
            if predicates.isEmpty { return position }
            let recorded = recordedRequest(position)
            if predicates.allSatisfy({ $0.matches(request, recorded) }) { return position }
        }
        return nil
    }
}
