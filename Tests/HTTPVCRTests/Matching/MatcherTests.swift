import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import HTTPVCR
import TestSupport

/// Each built-in matcher, on requests built by hand.
@Suite struct MatcherTests {
    func request(_ url: String, method: String = "GET", headers: [String: String] = [:], body: String? = nil) -> URLRequest {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        request.httpBody = body.map { Data($0.utf8) }
        return request
    }

    @Test func eachBuiltInComparesItsPart() {
        let base = request("https://example.com/a?x=1&y=2")
        #expect(Matcher.method.matches(base, request("https://other.org/", method: "get")))
        #expect(!Matcher.method.matches(base, request("https://example.com/a?x=1&y=2", method: "POST")))
        #expect(Matcher.uri.matches(base, request("https://example.com/a?x=1&y=2")))
        #expect(!Matcher.uri.matches(base, request("https://example.com/a?y=2&x=1")))
        #expect(Matcher.scheme.matches(base, request("HTTPS://x.org")))
        #expect(!Matcher.scheme.matches(base, request("http://example.com/a")))
        #expect(Matcher.host.matches(base, request("https://EXAMPLE.com/b")))
        #expect(!Matcher.host.matches(base, request("https://example.org/a")))
        #expect(Matcher.port.matches(base, request("https://example.com:443/")))
        #expect(!Matcher.port.matches(base, request("https://example.com:8443/a")))
        #expect(Matcher.path.matches(base, request("http://other/a?z=9")))
        #expect(!Matcher.path.matches(base, request("https://example.com/b")))
        #expect(Matcher.path.matches(request("http://h"), request("http://h/")))
        #expect(Matcher.query.matches(base, request("https://example.com/a?y=2&x=1")), "order does not matter")
        #expect(!Matcher.query.matches(base, request("https://example.com/a?x=1&y=3")))
    }

    @Test func headersCompareNamesCaseInsensitivelyAndValuesExactly() {
        let base = request("http://h/", headers: ["Accept": "text/plain", "X-A": "1"])
        #expect(Matcher.headers.matches(base, request("http://h/", headers: ["x-a": "1", "accept": "text/plain"])))
        #expect(!Matcher.headers.matches(base, request("http://h/", headers: ["Accept": "text/plain", "X-A": "2"])))
        #expect(!Matcher.headers.matches(base, request("http://h/", headers: ["Accept": "text/plain"])))
    }

    @Test func bodiesCompareStructurallyWhenTheyCan() throws {
        let json = ["Content-Type": "application/json"]
        #expect(Matcher.body.matches(
            request("http://h/", method: "POST", headers: json, body: #"{"a": 1, "b": [1, 2]}"#),
            request("http://h/", method: "POST", headers: json, body: #"{"b":[1,2],"a":1}"#)
        ))
        #expect(!Matcher.body.matches(
            request("http://h/", method: "POST", headers: json, body: #"{"a": 1}"#),
            request("http://h/", method: "POST", headers: json, body: #"{"a": 2}"#)
        ))
        let form = ["Content-Type": "application/x-www-form-urlencoded"]
        #expect(Matcher.body.matches(
            request("http://h/", method: "POST", headers: form, body: "a=1&b=hello+world"),
            request("http://h/", method: "POST", headers: form, body: "b=hello%20world&a=1")
        ))
        #expect(!Matcher.body.matches(request("http://h/", body: "abc"), request("http://h/", body: "abd")))
        #expect(Matcher.body.matches(request("http://h/", body: "abc"), request("http://h/", body: "abc")))
        var gzipped = request("http://h/", method: "POST", headers: json.merging(["Content-Encoding": "gzip"]) { $1 })
        gzipped.httpBody = Deflate.gzip(Data(#"{"b":2,"a":1}"#.utf8))
        #expect(Matcher.body.matches(gzipped, request("http://h/", method: "POST", headers: json, body: #"{"a":1,"b":2}"#)))
    }

    @Test func registeredMatchersAreUsedByName() throws {
        VCR.registerMatcher("sameFirstPathSegment") { request, recorded in
            request.url?.pathComponents.dropFirst().first == recorded.url?.pathComponents.dropFirst().first
        }
        defer { VCR.unregisterMatcher("sameFirstPathSegment") }
        let matcher = Matcher.named("sameFirstPathSegment")
        #expect(matcher.matches(request("http://h/users/1"), request("http://h/users/2")))
        #expect(!matcher.matches(request("http://h/users/1"), request("http://h/teams/1")))
        #expect(VCR.matchers["host"] != nil && VCR.matchers["sameFirstPathSegment"] != nil)
        VCR.unregisterMatcher("host")
        #expect(VCR.matchers["host"] != nil, "built-ins cannot be unregistered")
    }
}
