import AsyncHTTPClient
import Foundation
import HTTPVCRTesting
import NIOHTTP1
import Testing
import VCRAsyncHTTPClient

/// No cassette: the wrapper must give back what AsyncHTTPClient itself gives, repeated fields and all. Live, against
/// a server the test starts (``RepeatedFieldsServer``), so it runs offline, in CI too.
@Suite struct WithoutACassetteTests {
    @Test func theAnswerIsTheClientsOwn() async throws {
        let server = try await RepeatedFieldsServer.start()
        do {
            let request = HTTPClientRequest(url: server.url)
            let direct = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
            let directBody = try await direct.body.collect(upTo: 1024)
            let wrapped = try await HTTPClient.shared.executeThroughVCR(request, timeout: .seconds(10))
            let wrappedBody = try await wrapped.body.collect(upTo: 1024)

            #expect(wrapped.headers["X-Multi"] == ["one", "two"])
            #expect(wrapped.headers["Set-Cookie"] == ["session=live-one; Path=/", "theme=live-two"])
            let fields = { (headers: HTTPHeaders) in headers.map { "\($0.name): \($0.value)" } }
            #expect(fields(wrapped.headers) == RepeatedFieldsServer.fields.map { "\($0.0): \($0.1)" })
            #expect(fields(wrapped.headers) == fields(direct.headers), "every field, in order, as the client had it")
            #expect(wrapped.status == direct.status && wrapped.version == direct.version)
            #expect(wrappedBody == directBody)
            #expect(String(buffer: wrappedBody) == RepeatedFieldsServer.body)
        } catch {
            try await server.stop()
            throw error
        }
        try await server.stop()
    }
}
