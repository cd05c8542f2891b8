import Foundation
import HTTPTypes
import HTTPVCRTesting
import OpenAPIRuntime
import OpenAPIURLSession
import Testing
import VCROpenAPI

/// A client as swift-openapi-generator makes them, cut down to what the tests call: each operation goes through the
/// middlewares, then the transport.
struct HTTPBinClient {
    let serverURL: URL
    let transport: any ClientTransport
    let middlewares: [any ClientMiddleware]

    func send(_ request: HTTPRequest, body: HTTPBody? = nil, operationID: String) async throws -> (HTTPResponse, Data) {
        var next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?) = {
            try await transport.send($0, body: $1, baseURL: $2, operationID: operationID)
        }
        for middleware in middlewares.reversed() {
            let inner = next
            next = { try await middleware.intercept($0, body: $1, baseURL: $2, operationID: operationID, next: inner) }
        }
        let (response, responseBody) = try await next(request, body, serverURL)
        guard let responseBody else { return (response, Data()) }
        return (response, try await Data(collecting: responseBody, upTo: 1024 * 1024))
    }
}

/// Each test gets its own cassette, `Cassettes.bundle/OpenAPIMiddlewareTests/<test>.json` in this package. They were
/// recorded against a local httpbin (`scripts/with-httpbin swift test --package-path Docs/Examples/OpenAPI` from
/// HTTPVCR's root); without one, the port is 1, where nothing listens, and the cassettes replay: they match on
/// method, path and query.
@Suite(.cassette(matchers: [.method, .path, .query]))
struct OpenAPIMiddlewareTests {
    static let client = HTTPBinClient(
        serverURL: URL(string: ProcessInfo.processInfo.environment["HTTPBIN_URL"] ?? "http://127.0.0.1:1")!,
        transport: URLSessionTransport(),
        middlewares: [VCRMiddleware()]
    )

    @Test func getOperation() async throws {
        let (response, body) = try await Self.client.send(
            HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/get?client=openapi"), operationID: "get"
        )
        #expect(response.status == .ok)
        let json = try JSONSerialization.jsonObject(with: body) as? [String: Any]
        #expect(json?["args"] as? [String: String] == ["client": "openapi"])
    }

    @Test func postOperationWithABody() async throws {
        var request = HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/anything/items")
        request.headerFields[.contentType] = "application/json"
        let (response, body) = try await Self.client.send(
            request, body: HTTPBody(#"{"item": "cassette"}"#), operationID: "createItem"
        )
        #expect(response.status == .ok)
        let json = try JSONSerialization.jsonObject(with: body) as? [String: Any]
        #expect(json?["json"] as? [String: String] == ["item": "cassette"])
        #expect(json?["method"] as? String == "POST")
    }

    /// Recorded from ``RepeatedFieldsTransport`` (URLSession, the transport above, joins repeated fields before
    /// anyone sees them): each name comes back as two fields, replayed apart, the cookies' values filtered.
    @Test func repeatedFieldsComeBackApart() async throws {
        let transport = RepeatedFieldsTransport()
        let client = HTTPBinClient(serverURL: Self.client.serverURL, transport: transport, middlewares: [VCRMiddleware()])
        let (response, body) = try await client.send(
            HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/repeated-fields"), operationID: "fields"
        )
        #expect(response.status == .ok)
        #expect(response.headerFields[values: .init("X-Multi")!] == ["one", "two"])
        let cookies = response.headerFields[values: .setCookie]
        #expect(cookies.count == 2, "\(cookies)")
        #expect(cookies.map { $0.prefix { $0 != "=" } } == ["session", "theme"])
        #expect(String(decoding: body, as: UTF8.self) == RepeatedFieldsTransport.body)
        if RecordMode.fromEnvironment == .never {
            #expect(transport.calls == 0, "replayed from the committed cassette, as in CI")
        } else {
            #expect(transport.calls <= 1)
        }
    }

    @Test func anErrorStatusComesBack() async throws {
        let (response, _) = try await Self.client.send(
            HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/status/418"), operationID: "teapot"
        )
        #expect(response.status.code == 418)
    }
}
