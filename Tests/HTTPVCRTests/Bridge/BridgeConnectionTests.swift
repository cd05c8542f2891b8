import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import HTTPVCR

/// The response the launched process makes of the bridge's answer: as an in-process replay makes it.
@Suite struct BridgeConnectionTests {
    private let url = URL(string: "https://api.example.com/items?page=2")!

    /// Joined as corelibs joins a server's repeated fields (names compared as they are spelled).
    @Test func aRepeatedNameIsJoinedAndTheBridgesOwnFieldsAreLeftOut() throws {
        let answer = BridgeAnswer(status: 201, fields: [
            WireField("Content-Type", "application/json"), WireField("Vary", "Accept"),
            WireField(BridgeWire.urlField, url.absoluteString), WireField("Vary", "Origin"), WireField("Vary", "Cookie"),
        ], body: Data())
        let response = try #require(BridgeConnection.response(of: answer, url: url))
        #expect(response.statusCode == 201)
        #expect(response.url == url)
        #expect(response.value(forHTTPHeaderField: "Vary") == "Accept, Origin, Cookie")
        #expect(response.value(forHTTPHeaderField: "Content-Type") == "application/json")
        #expect(response.value(forHTTPHeaderField: BridgeWire.urlField) == nil)
        #expect(response.allHeaderFields.count == 2)
    }

    @Test func theAnswersURLIsTheResponsesWhenItDiffers() throws {
        let answer = BridgeAnswer(status: 200, fields: [WireField(BridgeWire.urlField, "https://cdn.example.com/x")],
                                  body: Data())
        #expect(try #require(BridgeConnection.response(of: answer, url: url)).url?.absoluteString
            == "https://cdn.example.com/x")
    }
}
