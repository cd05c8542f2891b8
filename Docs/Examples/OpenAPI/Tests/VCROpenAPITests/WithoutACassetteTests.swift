import Foundation
import HTTPTypes
import OpenAPIRuntime
import Testing
import VCROpenAPI

/// No cassette: the middleware must give back what the transport gave, repeated fields and all.
@Suite struct WithoutACassetteTests {
    @Test func theAnswerIsTheTransportsOwn() async throws {
        let transport = RepeatedFieldsTransport()
        let request = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/repeated-fields")
        let serverURL = URL(string: "http://127.0.0.1:1")!
        let (direct, directBody) = try await transport.send(request, body: nil, baseURL: serverURL, operationID: "fields")
        let (wrapped, wrappedBody) = try await VCRMiddleware().intercept(
            request, body: nil, baseURL: serverURL, operationID: "fields",
            next: { try await transport.send($0, body: $1, baseURL: $2, operationID: "fields") }
        )
        #expect(transport.calls == 2, "the middleware called the transport")
        #expect(wrapped.headerFields[values: .init("X-Multi")!] == ["one", "two"])
        #expect(wrapped.headerFields[values: .setCookie] == ["session=transport-one; Path=/", "theme=transport-two"])
        #expect(Array(wrapped.headerFields) == Array(direct.headerFields), "every field, in order, as the transport had it")
        #expect(wrapped.status == direct.status)
        let collect = { (body: HTTPBody?) in try await Data(collecting: body ?? HTTPBody(), upTo: 1024) }
        #expect(try await collect(wrappedBody) == collect(directBody))
    }
}
