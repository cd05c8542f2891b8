import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import HTTPVCR

/// The match index on its own: which recorded chapter a live request gets, looked up by its spelling or by
/// its parts.
@Suite struct MatchIndexTests {
    /// Plays each request against the index in turn, as the cassette does, and returns the chapters they got.
    func play(
        _ live: [URLRequest],
        against recorded: [RecordedRequest],
        matchers: [Matcher] = VCRConfiguration().matchers
    ) -> [Int?] {
        var index = MatchIndex(matchers: matchers, requests: recorded)
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

    @Test func identicalRequestsReplayInTapeOrder() {
        let recorded = [
            RecordedRequest(method: "GET", url: "http://h/a"),
            RecordedRequest(method: "GET", url: "http://h/b"),
            RecordedRequest(method: "GET", url: "http://h/a"),
        ]
        #expect(play([request("http://h/a"), request("http://h/a"), request("http://h/a")], against: recorded) == [0, 2, nil])
    }

    @Test func equivalentSpellingsKeepTapeOrder() {
        // One bucket, two spellings: whichever spelling is asked first gets the first chapter on the tape.
        let recorded = [
            RecordedRequest(method: "GET", url: "http://h/s?a=1&b=2"),
            RecordedRequest(method: "GET", url: "http://h/s?b=2&a=1"),
        ]
        #expect(play([request("http://h/s?b=2&a=1"), request("http://h/s?a=1&b=2")], against: recorded) == [0, 1])
    }

    @Test func requestsSpelledDifferentlyStillMatchByTheirParts() {
        let recorded = [RecordedRequest(method: "GET", url: "http://h:80/p")]
        #expect(play([request("HTTP://H/p", method: "get")], against: recorded) == [0])
        let base = URL(string: "http://h/dir/")!
        let relative = URLRequest(url: URL(string: "../p", relativeTo: base)!)
        #expect(play([relative], against: [RecordedRequest(method: "GET", url: "http://h/p")]) == [0])
    }

    @Test func headerAndBodyMatchersAreNotSkippedForAMatchingSpelling() {
        let recorded = [RecordedRequest(method: "GET", url: "http://h/a", headers: [RecordedHeader("Accept", "text/plain")])]
        let matchers: [Matcher] = [.method, .uri, .headers]
        #expect(play([request("http://h/a", headers: ["Accept": "application/json"])], against: recorded, matchers: matchers) == [nil])
        #expect(play([request("http://h/a", headers: ["Accept": "text/plain"])], against: recorded, matchers: matchers) == [0])
    }

    @Test func predicateMatchersAreAskedForSpelledMatchesToo() {
        let recorded = [
            RecordedRequest(method: "GET", url: "http://h/a", headers: [RecordedHeader("X-Variant", "a")]),
            RecordedRequest(method: "GET", url: "http://h/a", headers: [RecordedHeader("X-Variant", "b")]),
        ]
        let variantB = Matcher(name: "variantB") { _, recorded in recorded.value(forHTTPHeaderField: "X-Variant") == "b" }
        #expect(play([request("http://h/a"), request("http://h/a")], against: recorded, matchers: [.method, .uri, variantB]) == [1, nil])
    }
}
