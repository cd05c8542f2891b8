import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Finds the first unplayed recorded request that matches a live one, without scanning the tape.
///
/// Chapters are bucketed by the keys of the key-based matchers (all built-ins are). Within a bucket they stay
/// in tape order, so identical requests replay in recorded order. Predicate matchers (registered ones) are
/// checked only against the chapters of the live request's bucket.
struct MatchIndex {
    private let keyed: [@Sendable (RequestParts) -> String]
    private let predicates: [Matcher]
    private var buckets: [Bucket] = []
    /// Keyed by the parts the key-based matchers compare, one string per matcher.
    private var bucketOfKey: [Key: Int] = [:]
    /// Buckets whose chapters are all spelled alike (the same method and URL text), by that spelling; empty
    /// unless every key-based matcher reads only the method and the URL. A live request spelled exactly as it
    /// was recorded, the common case, then finds its bucket without its URL being taken apart.
    private var bucketOfSpelling: [Spelling: Int] = [:]

    /// The strings the key-based matchers make of a request, hashed once: a dictionary would hash every string
    /// again for each lookup and insertion (SipHash, a thousand instructions for six short strings).
    private struct Key: Hashable {
        let parts: [String]
        private let hash: UInt64

        init(_ parts: [String]) {
            self.parts = parts
            // FNV-1a over each part and a separator no UTF-8 text holds. Cassettes are the user's own files, so
            // a keyed hash buys nothing here.
            var hash: UInt64 = 0xCBF2_9CE4_8422_2325
            for var part in parts {
                part.withUTF8 { bytes in
                    for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
                }
                hash = (hash ^ 0xFF) &* 0x0000_0100_0000_01B3
            }
            self.hash = hash
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(hash)
        }

        static func == (lhs: Key, rhs: Key) -> Bool {
            lhs.hash == rhs.hash && lhs.parts == rhs.parts
        }
    }

    private struct Bucket {
        var chapters: [Int]
        /// Chapters before `head` are all played: the common case, consuming in order, stays O(1).
        var head = 0
    }

    /// A request's method and URL as text: two requests spelled alike have the same key for every matcher that
    /// reads only those.
    struct Spelling: Hashable {
        let method: String
        let url: String

        init(_ recorded: RecordedRequest) {
            method = recorded.method.uppercasedIfNeeded
            url = recorded.url
        }

        /// Nil for a URL relative to a base: its text alone does not say what its parts are.
        init?(_ request: URLRequest) {
            guard let url = request.url, url.baseURL == nil else { return nil }
            method = (request.httpMethod ?? "GET").uppercasedIfNeeded
            self.url = url.absoluteString
        }

        /// The URL alone: requests to one URL with different methods are rare, and equality still tells them
        /// apart. Hashing the method too cost every replayed request a second string hash.
        func hash(into hasher: inout Hasher) {
            hasher.combine(url)
        }
    }

    /// - Parameter requests: the recorded request of each chapter, by chapter position.
    init(matchers: [Matcher], requests: [RecordedRequest]) {
        var keyed: [@Sendable (RequestParts) -> String] = []
        var predicates: [Matcher] = []
        keyed.reserveCapacity(matchers.count)
        var keysReadOnlyMethodAndURL = true
        for matcher in matchers {
            if case let .key(key) = matcher.comparison {
                keyed.append(key)
                keysReadOnlyMethodAndURL = keysReadOnlyMethodAndURL && matcher.readsOnlyMethodAndURL
            } else {
                predicates.append(matcher)
            }
        }
        self.keyed = keyed
        self.predicates = predicates
        bucketOfKey.reserveCapacity(requests.count)
        buckets.reserveCapacity(requests.count)
        for (position, request) in requests.enumerated() {
            let key = key(of: RequestParts(request))
            if let slot = bucketOfKey[key] {
                buckets[slot].chapters.append(position)
            } else {
                bucketOfKey[key] = buckets.count
                buckets.append(Bucket(chapters: [position]))
            }
        }
        guard keysReadOnlyMethodAndURL else { return }
        bucketOfSpelling.reserveCapacity(buckets.count)
        for (slot, bucket) in buckets.enumerated() {
            let spelling = Spelling(requests[bucket.chapters[0]])
            // A bucket holding several spellings (`?a=1&b=2` and `?b=2&a=1`) is found through its key, so that
            // its chapters still replay in tape order whichever spelling comes first.
            if bucket.chapters.dropFirst().allSatisfy({ Spelling(requests[$0]) == spelling }) {
                bucketOfSpelling[spelling] = slot
            }
        }
    }

    private func key(of request: RequestParts) -> Key {
        Key(keyed.map { $0(request) })
    }

    /// The position of the last chapter that matches `request`, played or not: what a repeat replays.
    func lastMatch(for request: URLRequest, recordedRequest: (Int) -> RequestParts) -> Int? {
        let parts = RequestParts(request)
        let bySpelling = bucketOfSpelling.isEmpty ? nil : Spelling(request).flatMap { bucketOfSpelling[$0] }
        guard let slot = bySpelling ?? bucketOfKey[key(of: parts)] else { return nil }
        return buckets[slot].chapters.last { position in
            predicates.allSatisfy { $0.matches(parts, recordedRequest(position)) }
        }
    }

    /// The position of the first unplayed chapter that matches `request`; `isPlayed` says which are taken.
    mutating func firstMatch(
        for request: URLRequest,
        recordedRequest: (Int) -> RequestParts,
        isPlayed: (Int) -> Bool
    ) -> Int? {
        var parts: RequestParts?
        func liveParts() -> RequestParts {
            if let parts { return parts }
            let made = RequestParts(request)
            parts = made
            return made
        }
        let bySpelling = bucketOfSpelling.isEmpty ? nil : Spelling(request).flatMap { bucketOfSpelling[$0] }
        guard let slot = bySpelling ?? bucketOfKey[key(of: liveParts())] else { return nil }
        var head = buckets[slot].head
        let chapters = buckets[slot].chapters
        while head < chapters.count, isPlayed(chapters[head]) { head += 1 }
        buckets[slot].head = head
        for position in chapters[head...] where !isPlayed(position) {
            if predicates.isEmpty { return position }
            let recorded = recordedRequest(position)
            if predicates.allSatisfy({ $0.matches(liveParts(), recorded) }) { return position }
        }
        return nil
    }
}
