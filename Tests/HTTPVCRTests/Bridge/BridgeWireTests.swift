import Foundation
import Testing
@testable import HTTPVCR

/// How the launched process names a request's server and target to the bridge: read off the URL's text.
@Suite struct BridgeWireTests {
    @Test(arguments: [
        ("https://api.example.com/v1/items?q=a%20b#frag", "https://api.example.com", "/v1/items?q=a%20b"),
        ("HTTP://Example.COM:8080", "http://Example.COM:8080", "/"),
        ("hTTps://example.com?x=1", "https://example.com", "/?x=1"),
        ("http://example.com#top", "http://example.com", "/"),
        ("http://[::1]:9/a/b/", "http://[::1]:9", "/a/b/"),
        // User info is left to URLComponents, which drops it from the origin.
        ("http://user:pass@example.com/private", "http://example.com", "/private"),
    ])
    func originAndTargetAreReadOffTheText(url: String, origin: String, target: String) throws {
        let url = try #require(URL(string: url))
        #expect(BridgeWire.origin(of: url) == origin)
        #expect(BridgeWire.target(of: url) == target)
    }

    @Test func otherSchemesGoTheURLComponentsWayAndAURLWithoutAHostHasNoOrigin() throws {
        #expect(BridgeWire.origin(of: try #require(URL(string: "FTP://example.com/file"))) == "ftp://example.com")
        #expect(BridgeWire.origin(of: try #require(URL(string: "httpx://example.com:81/"))) == "httpx://example.com:81")
        #expect(BridgeWire.origin(of: try #require(URL(string: "mailto:someone@example.com"))) == nil)
    }

    @Test func anOriginIsOnlyASchemeAndAnAuthority() {
        #expect(BridgeWire.isOrigin("https://example.com"))
        #expect(BridgeWire.isOrigin("http://127.0.0.1:8080"))
        #expect(!BridgeWire.isOrigin("https://example.com/"))
        #expect(!BridgeWire.isOrigin("https://example.com/path"))
        #expect(!BridgeWire.isOrigin("ftp://example.com"))
    }
}
