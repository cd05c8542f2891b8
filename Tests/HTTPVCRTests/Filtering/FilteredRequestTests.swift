import CassetteMutations
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import HTTPVCR
import Testing

/// What the filters hand matching besides the request: the text of its URL, which must be the filtered request's
/// own, and the shortcuts that skip work on the way there, which must change nothing.
@Suite struct FilteredRequestTests {
    static let seeds = [
        "http://bench.local/item/1", "https://user:pa55word@h/p", "http://h/p?token=abc123456&x=1", "http://h/p?",
        "http://h/p#f", "http://h/eyJa.eyJb.c", "http://h/p?key=AIza" + String(repeating: "x", count: 35),
        "http://h:8080/a/b?c=d", "http://%40h/p", "http://h/p%3Fq", "http://h/p@q", "http://u@h", "http://h/caf%C3%A9",
    ]
    static let filler = Array("@?#&=:/%aZ09._-".utf8)

    static func mutant(_ random: inout SplitMix64) -> String {
        var bytes = Array(random.pick(seeds).utf8)
        for _ in 0..<random.within(0...3) {
            let position = random.within(7...max(7, bytes.count))
            switch random.below(3) {
            case 0: bytes.insert(random.pick(filler), at: min(position, bytes.count))
            case 1: if position < bytes.count { bytes.remove(at: position) }
            default: if position < bytes.count { bytes[position] = random.pick(filler) }
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Each configuration that changes what the URL filters do.
    static let configurations: [VCRConfiguration] = {
        var plain = VCRConfiguration()
        plain.filtersSecrets = false
        var named = VCRConfiguration()
        named.secretNames = ["x"]
        var query = VCRConfiguration()
        query.queryParametersFilter = .replacing(["c": nil])
        return [VCRConfiguration(), plain, named, query]
    }()

    @Test func theURLTextHandedToMatchingIsTheFilteredRequestsOwn() {
        var random = SplitMix64(seed: 2_026_1127)
        var known = 0
        for number in 0..<3_000 {
            let text = number < Self.seeds.count ? Self.seeds[number] : Self.mutant(&random)
            guard let url = URL(string: text) else { continue }
            var request = URLRequest(url: url)
            request.setValue("application/json", forHTTPHeaderField: "Accept")
            for configuration in Self.configurations {
                let filtered = RequestFilter.filterForMatching(request, with: configuration)
                #expect(filtered?.request == RequestFilter.filter(request, with: configuration))
                guard let absoluteURL = filtered?.absoluteURL else { continue }
                known += 1
                #expect(absoluteURL == filtered?.request.url?.absoluteString, "\(text.debugDescription)")
                #expect(filtered?.request.url?.baseURL == nil)
            }
        }
        #expect(known > 5_000, "most URLs are handed over: \(known)")
    }
}
