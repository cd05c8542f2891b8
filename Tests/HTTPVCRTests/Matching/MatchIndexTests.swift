import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import CassetteMutations
import Testing
@testable import HTTPVCR

/// The match index on its own: which recorded chapter a live request gets, looked up by its spelling or by
/// its parts. Every test runs twice: with the tape scanned, as small tapes are, and indexed, as large ones are.
@Suite struct MatchIndexTests {
    /// Plays each request against the index in turn, as the cassette does, and returns the chapters they got.
    func play(
        _ live: [URLRequest],
        against recorded: [RecordedRequest],
        matchers: [Matcher] = VCRConfiguration().matchers,
        scanLimit: Int
    ) -> [Int?] {
        var index = MatchIndex(matchers: matchers, requests: recorded, scanLimit: scanLimit)
        var played = Array(repeating: false, count: recorded.count)
        return live.map { request in
            let match = index.firstMatch(
                for: request,
                recordedRequest: { RequestParts(recorded[$0]) },
                isPlayed: { played[$0] }
            )
            if let match { played[match] = true }
            return match
        }
    }

    /// The same, the live requests filtered as a cassette filters them (their URL's text known), and the index
    /// told whether to try the chapter after the last match first.
    func playFiltered(
        _ live: [URLRequest],
        against recorded: [RecordedRequest],
        matchers: [Matcher],
        scanLimit: Int,
        guessesNextInTapeOrder: Bool
    ) -> [Int?] {
        var index = MatchIndex(
            matchers: matchers, requests: recorded, scanLimit: scanLimit, guessesNextInTapeOrder: guessesNextInTapeOrder
        )
        var played = Array(repeating: false, count: recorded.count)
        return live.map { request in
            let filtered = RequestFilter.filterForMatching(request, with: VCRConfiguration())!
            let match = index.firstMatch(
                for: filtered, recordedRequest: { RequestParts(recorded[$0]) }, isPlayed: { played[$0] }
            )
            if let match { played[match] = true }
            return match
        }
    }

    func request(_ url: String, method: String = "GET", headers: [String: String] = [:]) -> URLRequest {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        return request
    }

    @Test(arguments: [0, MatchIndex.scanLimit]) func identicalRequestsReplayInTapeOrder(scanLimit: Int) {
        let recorded = [
            RecordedRequest(method: "GET", url: "http://h/a"),
            RecordedRequest(method: "GET", url: "http://h/b"),
            RecordedRequest(method: "GET", url: "http://h/a"),
        ]
        #expect(play([request("http://h/a"), request("http://h/a"), request("http://h/a")], against: recorded, scanLimit: scanLimit) == [0, 2, nil])
    }

    @Test(arguments: [0, MatchIndex.scanLimit]) func equivalentSpellingsKeepTapeOrder(scanLimit: Int) {
        // One bucket, two spellings: whichever spelling is asked first gets the first chapter on the tape.
        let recorded = [
            RecordedRequest(method: "GET", url: "http://h/s?a=1&b=2"),
            RecordedRequest(method: "GET", url: "http://h/s?b=2&a=1"),
        ]
        #expect(play([request("http://h/s?b=2&a=1"), request("http://h/s?a=1&b=2")], against: recorded, scanLimit: scanLimit) == [0, 1])
    }

    @Test(arguments: [0, MatchIndex.scanLimit]) func requestsSpelledDifferentlyStillMatchByTheirParts(scanLimit: Int) {
        let recorded = [RecordedRequest(method: "GET", url: "http://h:80/p")]
        #expect(play([request("HTTP://H/p", method: "get")], against: recorded, scanLimit: scanLimit) == [0])
        let base = URL(string: "http://h/dir/")!
        let relative = URLRequest(url: URL(string: "../p", relativeTo: base)!)
        #expect(play([relative], against: [RecordedRequest(method: "GET", url: "http://h/p")], scanLimit: scanLimit) == [0])
    }

    @Test(arguments: [0, MatchIndex.scanLimit]) func headerAndBodyMatchersAreNotSkippedForAMatchingSpelling(scanLimit: Int) {
        let recorded = [RecordedRequest(method: "GET", url: "http://h/a", headers: [RecordedHeader("Accept", "text/plain")])]
        let matchers: [Matcher] = [.method, .uri, .headers]
        #expect(play([request("http://h/a", headers: ["Accept": "application/json"])], against: recorded, matchers: matchers, scanLimit: scanLimit) == [nil])
        #expect(play([request("http://h/a", headers: ["Accept": "text/plain"])], against: recorded, matchers: matchers, scanLimit: scanLimit) == [0])
    }

    @Test(arguments: [0, MatchIndex.scanLimit]) func predicateMatchersAreAskedForSpelledMatchesToo(scanLimit: Int) {
        let recorded = [
            RecordedRequest(method: "GET", url: "http://h/a", headers: [RecordedHeader("X-Variant", "a")]),
            RecordedRequest(method: "GET", url: "http://h/a", headers: [RecordedHeader("X-Variant", "b")]),
        ]
        let variantB = Matcher(name: "variantB") { _, recorded in recorded.value(forHTTPHeaderField: "X-Variant") == "b" }
        #expect(play([request("http://h/a"), request("http://h/a")], against: recorded, matchers: [.method, .uri, variantB], scanLimit: scanLimit) == [1, nil])
    }

    /// Trying the chapter after the last match first is only quicker: random tapes, and requests mostly in tape
    /// order (some skipped, repeated, respelled or out of order), get the chapters they get without it, and those
    /// a scan gives.
    @Test func guessingTheNextChapterChangesNoMatch() {
        let spellings = [
            ("GET", "http://h/a"), ("get", "http://h/a"), ("GET", "HTTP://H/a"), ("GET", "http://h:80/a"),
            ("GET", "http://h/a?x=1&y=2"), ("GET", "http://h/a?y=2&x=1"), ("POST", "http://h/a"), ("GET", "http://h/b"),
            ("Get", "http://h/b"), ("GET", "http://g/a"), ("GET", "https://h/a"), ("GET", "http://h/a?"),
            ("GET", "http://h/a#f"), ("GET", "http://h/caf%C3%A9"), ("GET", "http://h/b/"),
        ]
        let variantB = Matcher(name: "variantB") { _, recorded in recorded.value(forHTTPHeaderField: "X-Variant") == "b" }
        let matcherSets: [[Matcher]] = [
            VCRConfiguration().matchers, [.method, .path], [.uri], [.method, .uri, .headers], [.method, .uri, variantB],
        ]
        var generator = SplitMix64(seed: 2_026_1127)
        var matched = 0
        for round in 0..<2_000 {
            let recorded = (0..<generator.within(1...24)).map { _ in
                let (method, url) = spellings[generator.below(spellings.count)]
                return RecordedRequest(method: method, url: url, headers: [RecordedHeader("X-Variant", "b")])
            }
            var live: [URLRequest] = []
            var next = 0
            while live.count < recorded.count + 4 {
                switch generator.below(8) {
                case 0: next += 1
                case 1: next = generator.below(recorded.count)
                case 2:
                    let (method, url) = spellings[generator.below(spellings.count)]
                    live.append(request(url, method: method, headers: ["X-Variant": "b"]))
                default:
                    let chapter = recorded[min(next, recorded.count - 1)]
                    live.append(request(chapter.url, method: chapter.method, headers: ["X-Variant": "b"]))
                    next += generator.below(4) == 0 ? 0 : 1
                }
            }
            let matchers = matcherSets[generator.below(matcherSets.count)]
            let guessed = playFiltered(live, against: recorded, matchers: matchers, scanLimit: 0, guessesNextInTapeOrder: true)
            let hashed = playFiltered(live, against: recorded, matchers: matchers, scanLimit: 0, guessesNextInTapeOrder: false)
            let scanned = playFiltered(
                live, against: recorded, matchers: matchers, scanLimit: recorded.count, guessesNextInTapeOrder: true
            )
            #expect(guessed == hashed, "round \(round): \(matchers.map(\.name)), \(recorded.map(\.url)), \(live.map(\.url))")
            #expect(guessed == scanned, "round \(round)")
            if guessed != hashed || guessed != scanned { return }
            matched += guessed.compactMap { $0 }.count
        }
        #expect(matched > 20_000, "most requests match: \(matched)")
    }

    /// Random small tapes and request sequences: scanned and indexed, every request gets the same chapter, for
    /// first matches and for repeats alike.
    @Test func aScannedTapeGivesTheChaptersAnIndexedOneGives() {
        let spellings = [
            ("GET", "http://h/a"), ("get", "http://h/a"), ("GET", "HTTP://H/a"), ("GET", "http://h:80/a"),
            ("GET", "http://h/a?x=1&y=2"), ("GET", "http://h/a?y=2&x=1"), ("POST", "http://h/a"), ("GET", "http://h/b"),
            ("GET", "http://g/a"), ("GET", "https://h/a"), ("GET", "http://h/a?"), ("GET", "http://h/a#f"),
        ]
        let variantB = Matcher(name: "variantB") { _, recorded in recorded.value(forHTTPHeaderField: "X-Variant") == "b" }
        let matcherSets: [[Matcher]] = [
            VCRConfiguration().matchers, [.method, .path], [.uri], [.method, .uri, .headers], [.method, .uri, variantB], [],
        ]
        var generator = SplitMix64(seed: 2_026_1125)
        for round in 0..<3_000 {
            let recorded = (0..<generator.within(1...MatchIndex.scanLimit)).map { _ in
                let (method, url) = spellings[generator.below(spellings.count)]
                let variant = generator.below(2) == 0 ? "a" : "b"
                return RecordedRequest(method: method, url: url, headers: [RecordedHeader("X-Variant", variant)])
            }
            let live = (0..<generator.within(1...12)).map { _ in
                let (method, url) = spellings[generator.below(spellings.count)]
                return request(url, method: method, headers: ["X-Variant": generator.below(2) == 0 ? "a" : "b"])
            }
            let matchers = matcherSets[generator.below(matcherSets.count)]
            let scanned = play(live, against: recorded, matchers: matchers, scanLimit: MatchIndex.scanLimit)
            let indexed = play(live, against: recorded, matchers: matchers, scanLimit: 0)
            #expect(scanned == indexed, "round \(round): \(matchers.map(\.name)), \(recorded.map(\.url)), \(live.map(\.url))")
            let scanIndex = MatchIndex(matchers: matchers, requests: recorded)
            let fullIndex = MatchIndex(matchers: matchers, requests: recorded, scanLimit: 0)
            for request in live {
                let parts = { RequestParts(recorded[$0]) }
                #expect(scanIndex.lastMatch(for: request, recordedRequest: parts)
                    == fullIndex.lastMatch(for: request, recordedRequest: parts), "round \(round)")
            }
        }
    }
}
