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
        #expect(!BridgeWire.isOrigin("https://example.com?q=1"))
        #expect(!BridgeWire.isOrigin("https://example.com#top"))
        #expect(!BridgeWire.isOrigin("https://user@example.com"))
        #expect(!BridgeWire.isOrigin("https://"))
    }

    @Test func theBridgesOwnFieldsAreKnownInAnyCaseAndNoOthers() {
        for name in BridgeWire.ownFields {
            #expect(BridgeWire.isOwnField(name))
            #expect(BridgeWire.isOwnField(name.lowercased()))
            #expect(BridgeWire.isOwnField(name.uppercased()))
        }
        for name in ["X-VCR-Error", "X-VCR-Bridge-Tokens", "X-Request-Id", "Accept", "", "x", "Y-VCR-Bridge-Token"] {
            #expect(!BridgeWire.isOwnField(name), "\(name)")
        }
    }

    @Test func tokensMatchOnlyWhenEveryByteDoes() {
        let token = String(repeating: "0123456789abcdef", count: 4)
        #expect(BridgeWire.tokensMatch(token, token))
        #expect(!BridgeWire.tokensMatch(nil, token))
        #expect(!BridgeWire.tokensMatch("", token))
        #expect(!BridgeWire.tokensMatch(String(token.dropLast()), token))
        #expect(!BridgeWire.tokensMatch(token + "0", token))
        #expect(!BridgeWire.tokensMatch(String(token.dropLast()) + "e", token))
        #expect(!BridgeWire.tokensMatch("1" + token.dropFirst(), token))
    }

    @Test func theHopByHopFieldsAreKnownInAnyCaseAndNoOthers() {
        for name in WireResponse.hopByHopFields {
            #expect(WireResponse.isHopByHop(name))
            #expect(WireResponse.isHopByHop(name.uppercased()))
        }
        for name in ["Content-Type", "Accept", "Host", "Te-", "Trailers", "Upgrade-Insecure-Requests", "Keep-Alivex",
                     "Proxy-Authorization", "Transfer-Encodinx", ""] {
            #expect(!WireResponse.isHopByHop(name), "\(name)")
        }
    }
}
