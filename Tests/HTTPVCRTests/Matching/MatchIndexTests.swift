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
