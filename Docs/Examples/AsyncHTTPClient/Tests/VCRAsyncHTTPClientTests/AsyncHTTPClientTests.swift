import AsyncHTTPClient
import Foundation
import HTTPVCRTesting
import Testing
import VCRAsyncHTTPClient

/// Each test gets its own cassette, `Cassettes.bundle/AsyncHTTPClientTests/<test>.json` in this package. They were
/// recorded against a local httpbin (`scripts/with-httpbin swift test --package-path Docs/Examples/AsyncHTTPClient`
/// from HTTPVCR's root); without one, the port is 1, where nothing listens, and the cassettes replay: they match on
/// method, path and query.
@Suite(.cassette(matchers: [.method, .path, .query]))
struct AsyncHTTPClientTests {
    static let base = ProcessInfo.processInfo.environment["HTTPBIN_URL"] ?? "http://127.0.0.1:1"

    func json(_ response: HTTPClientResponse) async throws -> [String: Any] {
        let body = try await response.body.collect(upTo: 1024 * 1024)
        return try #require(try JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any])
    }

    @Test func getWithAQuery() async throws {
        let request = HTTPClientRequest(url: "\(Self.base)/get?client=async-http-client")
        let response = try await HTTPClient.shared.executeThroughVCR(request, timeout: .seconds(10))
        #expect(response.status == .ok)
        #expect(try await json(response)["args"] as? [String: String] == ["client": "async-http-client"])
    }

    @Test func postJSON() async throws {
        var request = HTTPClientRequest(url: "\(Self.base)/post")
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(Array(#"{"name": "Ada"}"#.utf8))
        let response = try await HTTPClient.shared.executeThroughVCR(request, timeout: .seconds(10))
        #expect(response.status == .ok)
        #expect(try await json(response)["json"] as? [String: String] == ["name": "Ada"])
    }

    /// httpbin sends `X-Multi` twice and `Set-Cookie` twice: each comes back as two fields, recorded apart and
    /// replayed apart (the cookies' values filtered on the tape).
    @Test func repeatedFieldsComeBackApart() async throws {
        let request = HTTPClientRequest(
            url: "\(Self.base)/response-headers?X-Multi=one&X-Multi=two"
                + "&Set-Cookie=session%3Dahc-one%3B%20Path%3D%2F&Set-Cookie=theme%3Dahc-two"
        )
        let response = try await HTTPClient.shared.executeThroughVCR(request, timeout: .seconds(10))
        #expect(response.status == .ok)
        #expect(response.headers["X-Multi"] == ["one", "two"])
        let cookies = response.headers["Set-Cookie"]
        #expect(cookies.count == 2, "\(cookies)")
        #expect(cookies.map { $0.prefix { $0 != "=" } } == ["session", "theme"])
        #expect(cookies.first?.hasSuffix("; Path=/") == true)
    }

    @Test func statusAndHeadersComeBack() async throws {
        let request = HTTPClientRequest(url: "\(Self.base)/response-headers?X-Example=ahc")
        let response = try await HTTPClient.shared.executeThroughVCR(request, timeout: .seconds(10))
        #expect(response.status == .ok)
        #expect(response.headers.first(name: "X-Example") == "ahc")
    }
}
