import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import HTTPVCR

/// What the launched process writes to its bridge for a request.
@Suite struct BridgeClientTests {
    @Test func aRequestIsWrittenWithTheBridgesFramingAndNoInjectedLines() throws {
        var request = URLRequest(url: try #require(URL(string: "https://api.example.com/v1/items?q=a%20b#frag")))
        request.httpMethod = "POST"
        request.setValue("evil.example", forHTTPHeaderField: "Host")
        request.setValue("close", forHTTPHeaderField: "Connection")
        request.setValue("forged", forHTTPHeaderField: BridgeWire.tokenField)
        request.setValue("one\r\nX-Injected: two", forHTTPHeaderField: "X-Note")
        request.setValue("text/plain", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data("héllo".utf8)

        let bytes = BridgeClient.serialize(request, origin: "https://api.example.com", token: "T0K", port: 4321)
        let text = String(decoding: bytes, as: UTF8.self)
        let parts = text.components(separatedBy: "\r\n\r\n")
        #expect(parts.count == 2)
        #expect(parts.last == "héllo")
        let lines = try #require(parts.first).components(separatedBy: "\r\n")
        #expect(lines.first == "POST /v1/items?q=a%20b HTTP/1.1")
        #expect(lines[1] == "Host: 127.0.0.1:4321")
        #expect(!lines.contains { $0.hasPrefix("X-Injected") }, "a line break in a value starts no field")
        // corelibs' URLRequest may refuse such a value itself; one it keeps crosses on one line.
        let note = request.value(forHTTPHeaderField: "X-Note").map {
            "X-Note: " + $0.replacingOccurrences(of: "\r", with: " ").replacingOccurrences(of: "\n", with: " ")
        }
        let fields = Set(lines.dropFirst(2))
        #expect(fields == Set([note].compactMap { $0 } + [
            "Content-Type: text/plain",
            "\(BridgeWire.tokenField): T0K",
            "\(BridgeWire.originField): https://api.example.com",
            "Content-Length: \("héllo".utf8.count)",
        ]))
    }
}
