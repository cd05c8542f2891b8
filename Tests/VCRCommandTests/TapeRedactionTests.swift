import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCR
import Testing

/// `Tape.redacted(with:responseHeaders:)`, the library function `vcr redact` is built on.
@Suite struct TapeRedactionTests {
    @Test func noFiltersChangeNothing() {
        var configuration = VCRConfiguration()
        configuration.secureHeaders = []
        configuration.filtersSecrets = false
        #expect(Tapes.recorded.redacted(with: configuration) == Tapes.recorded)
        #expect(RedactTests.leaky.redacted(with: configuration) == RedactTests.leaky)
    }

    @Test func secureHeadersApplyAsWhenRecording() {
        let tape = Tapes.tape(Tapes.exchange(requestHeaders: [
            RecordedHeader("authorization", "Basic c2VjcmV0"),
            RecordedHeader("Cookie", "a=b"),
            RecordedHeader("X-Trace", "1"),
        ]))
        let redacted = tape.redacted(with: VCRConfiguration())
        let headers = redacted.interactions[0].request.headers
        #expect(headers == [
            RecordedHeader("authorization", VCRConfiguration.filteredPlaceholder),
            RecordedHeader("Cookie", "a=\(VCRConfiguration.filteredPlaceholder)"),  // cookie names stay
            RecordedHeader("X-Trace", "1"),
        ])
    }

    @Test func customFiltersRunToo() {
        var configuration = VCRConfiguration()
        configuration.secureHeaders = []
        configuration.filtersSecrets = false
        configuration.headersFilter = .custom { _, headers in
            headers["X-Added"] = "yes"
            headers["Accept"] = nil
        }
        configuration.pathFilter = { request in request.url!.path.replacingOccurrences(of: "/v1", with: "/vX") }
        configuration.responseBodyFilter = .custom { _, _, body in
            Data(String(decoding: body, as: UTF8.self).replacingOccurrences(of: "true", with: "false").utf8)
        }
        let redacted = Tapes.tape(Tapes.exchange()).redacted(with: configuration).interactions[0]
        #expect(redacted.request.headers == [RecordedHeader("X-Added", "yes")])
        #expect(redacted.request.url == "https://api.example.com/vX/items")
        #expect(redacted.response?.url == "https://api.example.com/vX/items")
        #expect(redacted.body == Data(#"{"ok":false}"#.utf8))
    }

    @Test func timesAndSceneOrderStay() {
        var configuration = VCRConfiguration()
        configuration.responseBodyFilter = .replacing(["name": "[FILTERED]"])
        let original = Tapes.recorded
        let redacted = original.redacted(with: configuration)
        #expect(redacted.scenes.map(\.chapter) == original.scenes.map(\.chapter))
        #expect(redacted.scenes.map(\.time) == original.scenes.map(\.time))
        #expect(redacted.interactions[0].body == Data(
            #"{"items":[{"id":1,"name":"[FILTERED]"},{"id":2,"name":"[FILTERED]"}]}"#.utf8
        ))
        #expect(redacted.interactions[0].response?.headers[field: "Content-Length"] == "69")
    }

    @Test func responseHeadersAreReplacedOrRemoved() {
        let tape = Tapes.tape(Tapes.exchange(responseHeaders: [
            RecordedHeader("Set-Cookie", "a=1"),
            RecordedHeader("X-Token", "t"),
            RecordedHeader("Content-Type", "application/json"),
        ]))
        var configuration = VCRConfiguration()
        configuration.secureHeaders = []
        configuration.filtersSecrets = false
        let redacted = tape.redacted(with: configuration, responseHeaders: ["set-cookie": "[FILTERED]", "X-TOKEN": nil])
        #expect(redacted.interactions[0].response?.headers == [
            RecordedHeader("Set-Cookie", "[FILTERED]"),
            RecordedHeader("Content-Type", "application/json"),
        ])
    }

    @Test func lossNotes() {
        #expect(CassetteFile.lossNotes(Tapes.recorded, writingAs: .json).isEmpty)
        #expect(CassetteFile.lossNotes(Tapes.recorded, writingAs: .plist).isEmpty)
        #expect(!CassetteFile.lossNotes(Tapes.recorded, writingAs: .har).isEmpty)
        #expect(CassetteFile.lossNotes(Tapes.tape(Tapes.exchange()), writingAs: .har).isEmpty)
    }
}
