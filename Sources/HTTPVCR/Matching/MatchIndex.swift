import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCRCassettes

/// Finds the first unplayed recorded request that matches a live one, without scanning the tape.
///
/// Chapters are bucketed by the keys of the key-based matchers (all built-ins are). Within a bucket they stay
/// in tape order, so identical requests replay in recorded order. Predicate matchers (registered ones) are
/// checked only against the chapters of the live request's bucket.
///
/// A small tape (most test cassettes) is not indexed: a request looks through its unplayed chapters in tape order,
/// which gives the same chapter, and loading then makes no keys or tables (a fifth of loading a 3-interaction
/// cassette).
struct MatchIndex {
    /// Tapes of up to this many chapters are scanned rather than indexed.
    static let scanLimit = 8

    private let keyed: [@Sendable (RequestParts) -> String]
    /// The matchers that compare two requests in a closure of the app's: the playback runs them outside its lock
    /// (``candidates(for:recordedRequest:isPlayed:)``).
    let predicates: [Matcher]
    /// Every key-based matcher reads only the method and the URL: two requests spelled alike have the same keys.
    private let keysReadOnlyMethodAndURL: Bool
    /// Set for a small tape, which is scanned.
    private var scan: Scan?
    /// For each chapter, which group of chapters whose requests no matcher tells apart it is in: any live request
    /// that matches one matches them all, so which of them it gets is the order the requests came in, nothing
    /// more. nil for a scanned tape, or where predicate matchers may tell such requests apart.
    private(set) var interchangeable: [Int]?
    private var buckets: [Bucket] = []
    /// Keyed by the parts the key-based matchers compare, one string per matcher.
    private var bucketOfKey: [Key: Int] = [:]
    /// Buckets whose chapters are all spelled alike (the same method and URL text), by that spelling; empty
    /// unless every key-based matcher reads only the method and the URL. A live request spelled exactly as it
    /// was recorded, the common case, then finds its bucket without its URL being taken apart.
    private var bucketOfSpelling: [Spelling: Int] = [:]
    /// The recorded requests, by chapter position (the caller's array, shared).
    private let requests: [RecordedRequest]
    /// The chapter after the last one matched: requests mostly come in tape order, and one spelled as this chapter
    /// was is in its bucket, found without hashing its URL. Tried only where no predicate matcher is, and every
    /// recorded method has nothing to uppercase (the common case: it then compares as it is). Off in tests, to
    /// compare.
    private var nextInTapeOrder = 0
    private var guessesNextInTapeOrder = false

    /// The strings the key-based matchers make of a request, hashed once: a dictionary would hash every string
    /// again for each lookup and insertion (SipHash over every string, every time).
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

    /// What a scan compares, by chapter position: each chapter's spelling (when spellings decide), and its keys,
    /// made the first time a spelling does not decide.
    private struct Scan {
        var spellings: [Spelling]
        var keys: [Key?]
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

        /// The URL's text as the filters read it, when they did.
        init?(_ filtered: FilteredRequest) {
            guard let live = Self.live(filtered) else { return nil }
            self = live.spelling
        }

        private init(method: String, url: String) {
            self.method = method
            self.url = url
        }

        /// A live request's spelling, and whether its method had nothing to uppercase: then a recorded method of
        /// the same bytes has nothing to uppercase either, and is spelled the same.
        static func live(_ filtered: FilteredRequest) -> (spelling: Spelling, isPlain: Bool)? {
            guard let url = filtered.absoluteURL else { return Spelling(filtered.request).map { ($0, false) } }
            let method = filtered.request.httpMethod ?? "GET"
            // `uppercasedIfNeeded`, with what it found kept.
            let isPlain = Self.isPlain(method: method)
            return (Spelling(method: isPlain ? method : method.uppercased(), url: url), isPlain)
        }

        /// ASCII with no lowercase letter: `uppercasedIfNeeded` leaves it as it is, and two such methods are
        /// equal only as the same bytes.
        static func isPlain(method: String) -> Bool {
            !method.containsByte { $0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z") || $0 >= 0x80 }
        }

        /// Whether a recorded request with this method and URL is surely spelled so, for a live spelling and a
        /// recorded method both plain: true only when the URLs are the very same bytes (then
        /// `Spelling(recorded) == self`). False means not sure.
        func isSurelySpelled(plainMethod recordedMethod: String, url recordedURL: String) -> Bool {
            recordedURL.hasSameUTF8(as: url) && recordedMethod == method
        }

        /// The URL alone: requests to one URL with different methods are rare, and equality still tells them
        /// apart. Hashing the method too cost every replayed request a second string hash.
        func hash(into hasher: inout Hasher) {
            hasher.combine(url)
        }
    }

    /// - Parameters:
    ///   - requests: the recorded request of each chapter, by chapter position.
    ///   - scanLimit: tapes of up to this many chapters are scanned (tests index every tape with 0).
    ///   - guessesNextInTapeOrder: tries the chapter after the last match first (tests compare without).
    init(
        matchers: [Matcher],
        requests: [RecordedRequest],
        scanLimit: Int = MatchIndex.scanLimit,
        guessesNextInTapeOrder: Bool = true
    ) {
        self.requests = requests
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
        self.keysReadOnlyMethodAndURL = keysReadOnlyMethodAndURL
        if requests.count <= scanLimit {
            scan = Scan(
                spellings: keysReadOnlyMethodAndURL ? requests.map(Spelling.init) : [],
                keys: Array(repeating: nil, count: requests.count)
            )
            return
        }
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
        if predicates.isEmpty {
            var groups = Array(repeating: 0, count: requests.count)
            for (slot, bucket) in buckets.enumerated() {
                for position in bucket.chapters { groups[position] = slot }
            }
            interchangeable = groups
        }
        guard keysReadOnlyMethodAndURL else { return }
        self.guessesNextInTapeOrder = guessesNextInTapeOrder && interchangeable != nil
            && requests.allSatisfy { Spelling.isPlain(method: $0.method) }
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
        lastMatch(for: FilteredRequest(request), recordedRequest: recordedRequest)
    }

    func lastMatch(for request: FilteredRequest, recordedRequest: (Int) -> RequestParts) -> Int? {
        let parts = RequestParts(request.request)
        return lastCandidates(for: request).last { passes(parts, recordedRequest($0)) }
    }

    /// Every chapter, played or not, whose keys match `request`, in tape order: what ``predicates`` choose the last
    /// match among.
    func lastCandidates(for request: FilteredRequest) -> [Int] {
        if var scan {
            var found: [Int] = []
            _ = scanForKeys(request, in: &scan, positions: scan.keys.indices, skipping: { _ in false }) { position in
                found.append(position)
                return false
            }
            return found
        }
        let bySpelling = bucketOfSpelling.isEmpty ? nil : Spelling(request).flatMap { bucketOfSpelling[$0] }
        guard let slot = bySpelling ?? bucketOfKey[key(of: RequestParts(request.request))] else { return [] }
        return buckets[slot].chapters
    }

    /// Whether `live` matches `recorded` for every predicate: the app's closures, run outside any lock.
    func passes(_ live: RequestParts, _ recorded: RequestParts) -> Bool {
        predicates.allSatisfy { $0.matches(live, recorded) }
    }

    /// The position of the first unplayed chapter that matches `request`; `isPlayed` says which are taken.
    mutating func firstMatch(
        for request: URLRequest,
        recordedRequest: (Int) -> RequestParts,
        isPlayed: (Int) -> Bool
    ) -> Int? {
        firstMatch(for: FilteredRequest(request), recordedRequest: recordedRequest, isPlayed: isPlayed)
    }

    mutating func firstMatch(
        for request: FilteredRequest,
        recordedRequest: (Int) -> RequestParts,
        isPlayed: (Int) -> Bool
    ) -> Int? {
        guard predicates.isEmpty else {
            let live = RequestParts(request.request)
            return candidates(for: request, recordedRequest: recordedRequest, isPlayed: isPlayed).first {
                passes(live, recordedRequest($0))
            }
        }
        if let positions = scan?.keys.indices {
            return scanForKeys(request, in: &scan!, positions: positions, skipping: isPlayed) { _ in true }
        }
        guard let slot = bucket(of: request) else { return nil }
        var head = buckets[slot].head
        let chapters = buckets[slot].chapters
        while head < chapters.count, isPlayed(chapters[head]) { head += 1 }
        buckets[slot].head = head
        guard head < chapters.count else { return nil }
        nextInTapeOrder = chapters[head] + 1
        return chapters[head]
    }

    /// A match's first step where there are ``predicates``: the unplayed chapters whose keys match `request`, in
    /// tape order. The first of them every predicate passes (``passes(_:_:)``) is the match.
    mutating func candidates(
        for request: FilteredRequest,
        recordedRequest: (Int) -> RequestParts,
        isPlayed: (Int) -> Bool
    ) -> [Int] {
        var found: [Int] = []
        if let positions = scan?.keys.indices {
            _ = scanForKeys(request, in: &scan!, positions: positions, skipping: isPlayed) { position in
                found.append(position)
                return false
            }
            return found
        }
        guard let slot = bucket(of: request) else { return [] }
        var head = buckets[slot].head
        let chapters = buckets[slot].chapters
        while head < chapters.count, isPlayed(chapters[head]) { head += 1 }
        buckets[slot].head = head
        for position in chapters[head...] where !isPlayed(position) { found.append(position) }
        return found
    }

    /// The bucket whose chapters have the live request's keys: found by its spelling when it can be, the chapter
    /// after the last match tried first.
    private func bucket(of request: FilteredRequest) -> Int? {
        if !bucketOfSpelling.isEmpty, let (spelling, isPlain) = Spelling.live(request) {
            if isPlain, let slot = nextChapterBucket(spelledAs: spelling) { return slot }
            if let slot = bucketOfSpelling[spelling] { return slot }
        }
        return bucketOfKey[key(of: RequestParts(request.request))]
    }

    /// The bucket of the chapter after the last match when that chapter is surely spelled as `spelling`: requests
    /// spelled alike have the same keys, so it is the bucket the spelling or the keys would find, without hashing.
    private func nextChapterBucket(spelledAs spelling: Spelling) -> Int? {
        guard guessesNextInTapeOrder, let groups = interchangeable, nextInTapeOrder < groups.count,
              spelling.isSurelySpelled(
                plainMethod: requests[nextInTapeOrder].method, url: requests[nextInTapeOrder].url
              )
        else { return nil }
        return groups[nextInTapeOrder]
    }

    /// The first of `positions` not played whose chapter has the keys of `request` (the same spelling, or else the
    /// same keys) and that `accepts` takes.
    private func scanForKeys(
        _ request: FilteredRequest,
        in scan: inout Scan,
        positions: some Sequence<Int>,
        skipping isPlayed: (Int) -> Bool,
        accepts: (Int) -> Bool
    ) -> Int? {
        let spelling = keysReadOnlyMethodAndURL ? Spelling(request) : nil
        var parts: RequestParts?
        var liveKey: Key?
        for position in positions where !isPlayed(position) {
            if spelling == nil || scan.spellings[position] != spelling {
                let live = parts ?? RequestParts(request.request)
                parts = live
                let key = liveKey ?? self.key(of: live)
                liveKey = key
                let recorded = scan.keys[position] ?? self.key(of: RequestParts(requests[position]))
                scan.keys[position] = recorded
                guard recorded == key else { continue }
            }
            if accepts(position) { return position }
        }
        return nil
    }
}
