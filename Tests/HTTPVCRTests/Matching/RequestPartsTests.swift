import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import HTTPVCR

/// Recorded URLs in the plain shape are taken apart without `URL`; every part must be what `URL` makes of them,
/// for plain URLs and for the odd ones around them (which go to `URL`).
@Suite struct RequestPartsTests {
    static let schemes = ["http", "https", "ws", "svn+ssh", "HTTP", "h2.c", "1x"]
    static let hosts = ["example.com", "127.0.0.1", "api-v2.example.com.", "Example.COM", "xn--bcher-kva.example",
                        "caf%C3%A9.example", "user@example.com", "[::1]", "a_b.example", ""]
    static let ports = ["", ":80", ":443", ":0", ":8080", ":080", ":65535", ":65536", ":", ":12a", ":123456"]
    static let paths = ["", "/", "/a/b", "/a%20b", "/a b", "/%zz", "/%4", "/ü", "/a;b=c,d", "//x", "/a/./../b",
                        "/~user/_x-y.z", "/a:b@c!$&'()*+", "/a|b", "/a[1]", "/a%2Fb"]
    static let queries = ["", "?", "?a=1", "?b=2&a=1", "?a=%20", "?a=[1]", "?a=b?c/d", "?a=1#frag", "?é=ü", "?a=%"]

    @Test func plainURLsHaveTheSamePartsAsURLGivesThem() {
        var plain = 0
        var checked = 0
        for scheme in Self.schemes {
            for host in Self.hosts {
                for port in Self.ports {
                    for path in Self.paths {
                        for query in Self.queries {
                            let text = "\(scheme)://\(host)\(port)\(path)\(query)"
                            let recorded = RecordedRequest(method: "get", url: text)
                            checked += 1
                            if PlainURL(text) != nil { plain += 1 }
                            let fast = RequestParts(recorded)
                            let parsed = RequestParts(parsing: recorded)
                            let same = fast.method == parsed.method && fast.url == parsed.url
                                && fast.scheme == parsed.scheme && fast.host == parsed.host && fast.port == parsed.port
                                && fast.path == parsed.path && fast.query == parsed.query
                            #expect(same, "\(text): \(Self.describe(fast)) vs URL's \(Self.describe(parsed))")
                        }
                    }
                }
            }
        }
        // Enough of both kinds for the comparison to mean something.
        #expect(plain > 2_000 && checked - plain > 2_000, "\(plain) of \(checked) were plain")
    }

    @Test func theCommonShapesArePlain() {
        #expect(PlainURL("https://api.example.com/v1/items?q=a/b&page=2") != nil)
        #expect(PlainURL("http://127.0.0.1:8080/get") != nil)
        #expect(PlainURL("http://localhost") != nil)
        #expect(PlainURL("https://Example.com/") == nil)
        #expect(PlainURL("https://example.com/#top") == nil)
    }

    static func describe(_ parts: RequestParts) -> String {
        "[\(parts.method) \(parts.url) | \(parts.scheme) | \(parts.host) | \(parts.port) | \(parts.path) | \(parts.query)]"
    }
}
