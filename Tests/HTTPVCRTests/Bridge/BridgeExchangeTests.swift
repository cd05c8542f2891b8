import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import HTTPVCR

/// The request the bridge rebuilds from what the launched process sent: the app's own, on the origin it named.
@Suite struct BridgeExchangeTests {
    private func wire(_ fields: [(String, String)], method: String = "GET", target: String = "/a?b=1",
                      body: Data = Data()) -> WireRequest {
        WireRequest(method: method, target: target, version: "HTTP/1.1",
                    fields: fields.map { WireField($0.0, $0.1) }, body: body)
    }

    @Test func theAppsFieldsArriveWithoutTheBridgesTheHopsOrHost() throws {
        let request = try #require(BridgeExchange.urlRequest(for: wire([
            ("Host", "127.0.0.1:9"), (BridgeWire.tokenField, "t"), (BridgeWire.originField, "https://api.example.com"),
            ("Connection", "keep-alive"), ("Content-Length", "0"), ("Accept", "application/json"), ("X-Trace", "1"),
        ])))
        #expect(request.url?.absoluteString == "https://api.example.com/a?b=1")
        #expect(request.httpMethod == "GET")
        #expect(request.allHTTPHeaderFields == ["Accept": "application/json", "X-Trace": "1"])
    }

    @Test func aRepeatedNameIsJoinedInOrderWhateverItsCase() throws {
        let request = try #require(BridgeExchange.urlRequest(for: wire([
            (BridgeWire.originField, "http://example.com"), ("Accept", "a"), ("X-One", "1"), ("accept", "b"),
            ("ACCEPT", "c"),
        ], method: "POST", body: Data("hi".utf8))))
        #expect(request.allHTTPHeaderFields == ["Accept": "a,b,c", "X-One": "1"])
        #expect(request.httpMethod == "POST")
        #expect(request.httpBody == Data("hi".utf8))
    }

    @Test func noOriginOrOneWithAPathIsNoRequest() {
        #expect(BridgeExchange.urlRequest(for: wire([("Accept", "a")])) == nil)
        #expect(BridgeExchange.urlRequest(for: wire([(BridgeWire.originField, "http://example.com/x")])) == nil)
        #expect(BridgeExchange.urlRequest(for: wire([(BridgeWire.originField, "http://example.com")], target: "*"))
            == nil)
    }
}
