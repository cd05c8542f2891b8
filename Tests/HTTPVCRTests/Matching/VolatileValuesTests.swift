import Foundation
import Testing
@testable import HTTPVCR

/// Volatile values on their own: shapes, JSONPaths, the request matching compares, and echoes.
@Suite struct VolatileValuesTests {
    @Test(arguments: [
        ("", VolatileShape.empty),
        ("8D3F1C52-7A4B-4E0F-9C1D-2B6A5E4F3A21", .uuid),
        ("8d3f1c52-7a4b-4e0f-9c1d-2b6a5e4f3a21", .uuid),
        ("2026-11-29T10:15:00Z", .timestamp),
        ("2026-11-29T10:15:00.123+01:00", .timestamp),
        ("2026-11-29", .timestamp),
        ("20261129T101500Z", .timestamp),
        ("1732875300", .timestamp),
        ("1732875300123", .timestamp),
        ("3600", .number),
        ("-2.5", .number),
        ("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", .hex),
        ("kllo9940pd9333jh", .token),
        ("dGhpcyBpcyBhIG5vbmNl==", .token),
        ("two words", .text),
    ])
    func shapes(value: String, shape: VolatileShape) {
        #expect(VolatileShape(of: value) == shape)
    }

    @Test func jsonPathsSelectAndReplaceInDocumentOrder() throws {
        let document = try #require(LosslessJSONReader.value(of: Data(#"""
            {"meta": {"sentAt": "2026-11-29T10:15:00Z"}, "items": [{"clientId": "a"}, {"clientId": "b", "n": 1}],
             "odd key": 3}
            """#.utf8)))
        let every = try #require(JSONPath("$.items[*].clientId"))
        #expect(every.values(in: document).map(\.location) == ["$.items[0].clientId", "$.items[1].clientId"])
        #expect(try #require(JSONPath("$.meta.sentAt")).values(in: document).map(\.location) == ["$.meta.sentAt"])
        #expect(try #require(JSONPath("$['odd key']")).values(in: document).map(\.location) == [#"$["odd key"]"#])
        #expect(try #require(JSONPath(#"$["odd key"]"#)).values(in: document).count == 1)
        #expect(try #require(JSONPath("$.items[1]['n']")).values(in: document).count == 1)
        let replaced = every.replacing(in: document) { _ in .string("x") }
        #expect(every.values(in: replaced).map(\.value) == [.string("x"), .string("x")])
        for invalid in ["", "meta.sentAt", "$.", "$[x]", "$.a[", "$..a"] { #expect(JSONPath(invalid) == nil) }
    }

    @Test func requestsThatDifferOnlyInVolatileValuesOfOneShapeLookAlikeToMatching() {
        let values = VolatileValues(VolatileValue.defaults + [.jsonPath("$.items[*].clientId")])
        func request(date: String, signature: String, clientId: String, requestID: String) -> RecordedRequest {
            RecordedRequest(
                method: "POST",
                url: "https://bucket.example.com/k?X-Amz-Date=\(date)&X-Amz-Signature=\(signature)&keep=1#f",
                headers: [RecordedHeader("X-Request-ID", requestID), RecordedHeader("Content-Type", "application/json")],
                body: Data(#"{"items": [{"clientId": "\#(clientId)", "qty": 2}]}"#.utf8)
            )
        }
        let recorded = request(date: "20261128T101500Z", signature: "aa11", clientId: UUID().uuidString, requestID: "r-1")
        let live = request(date: "20261129T093000Z", signature: "bb22", clientId: UUID().uuidString, requestID: "r-2")
        #expect(values.matchingView(of: recorded) == values.matchingView(of: live))
        #expect(values.matchingView(of: recorded).url
            == "https://bucket.example.com/k?X-Amz-Date=volatile-timestamp&X-Amz-Signature=volatile-hex&keep=1#f")
        // A value of another shape, or one missing, still tells them apart.
        let otherShape = request(date: "yesterday", signature: "bb22", clientId: UUID().uuidString, requestID: "r-2")
        #expect(values.matchingView(of: otherShape) != values.matchingView(of: recorded))
        var missing = live
        missing.url = "https://bucket.example.com/k?X-Amz-Signature=bb22&keep=1#f"
        #expect(values.matchingView(of: missing) != values.matchingView(of: recorded))
        // What is not volatile is compared as before.
        var changed = live
        changed.url = changed.url.replacingOccurrences(of: "keep=1", with: "keep=2")
        #expect(values.matchingView(of: changed) != values.matchingView(of: recorded))
    }

    @Test func aRequestWithoutVolatileValuesIsLeftAsItIs() {
        let values = VolatileValues(VolatileValue.defaults)
        let plain = RecordedRequest(method: "GET", url: "https://example.com/a?page=2", headers: [RecordedHeader("Accept", "*/*")])
        #expect(!values.mayHoldAny(plain))
        #expect(values.matchingView(of: plain) == plain)
        #expect(VolatileValues([]).places(in: plain).isEmpty)
    }

    @Test func echoesOfTheRecordedValuesBecomeTheLiveOnesWithTheLengthFollowing() throws {
        let values = VolatileValues([.query("nonce"), .jsonPath("$.sentAt")])
        let recorded = RecordedRequest(
            method: "POST", url: "https://example.com/p?nonce=a%20b", headers: [],
            body: Data(#"{"sentAt": "2026-11-28T10:00:00Z"}"#.utf8)
        )
        let live = RecordedRequest(
            method: "POST", url: "https://example.com/p?nonce=longer%20one", headers: [],
            body: Data(#"{"sentAt": "2026-11-29T11:30:00Z"}"#.utf8)
        )
        let body = Data(#"{"args": {"nonce": "a b"}, "url": "https://example.com/p?nonce=a%20b", "json": {"sentAt": "2026-11-28T10:00:00Z"}}"#.utf8)
        let echoes = try #require(VolatileEchoes(
            recorded: values.places(in: recorded), live: values.places(in: live), body: [body]
        ))
        let response = RecordedResponse(
            url: "https://example.com/p?nonce=a%20b", statusCode: 200,
            headers: [RecordedHeader("Content-Length", "\(body.count)"), RecordedHeader("X-Echo", "a b")]
        )
        guard case let .response(replayed) = echoes.applied(to: .response(response)),
              case let .data(replayedBody) = echoes.applied(to: .data(body))
        else { Issue.record("not a response and data"); return }
        let expected = #"{"args": {"nonce": "longer one"}, "url": "https://example.com/p?nonce=longer%20one", "json": {"sentAt": "2026-11-29T11:30:00Z"}}"#
        #expect(String(decoding: replayedBody, as: UTF8.self) == expected)
        #expect(replayed.url == "https://example.com/p?nonce=longer%20one")
        #expect(replayed.headers[field: "Content-Length"] == "\(expected.utf8.count)")
        #expect(replayed.headers[field: "X-Echo"] == "longer one")
    }

    @Test func aFilteredVolatileValueIsEchoedWhereItIsNamed() throws {
        let values = VolatileValues([.query("oauth_nonce")])
        let recorded = RecordedRequest(method: "GET", url: "https://example.com/?oauth_nonce=%5BFILTERED%5D&token=%5BFILTERED%5D")
        let live = RecordedRequest(method: "GET", url: "https://example.com/?oauth_nonce=n0nce&token=%5BFILTERED%5D")
        let body = Data(#"{"args": {"oauth_nonce": "[FILTERED]", "token": "[FILTERED]"}}"#.utf8)
        let echoes = try #require(VolatileEchoes(
            recorded: values.places(in: recorded), live: values.places(in: live), body: [body]
        ))
        guard case let .data(replayed) = echoes.applied(to: .data(body)) else { Issue.record("not data"); return }
        #expect(String(decoding: replayed, as: UTF8.self) == #"{"args": {"oauth_nonce": "n0nce", "token": "[FILTERED]"}}"#)
    }

    @Test func declarationsOutsideTheSubsetAreNamed() {
        let invalid = VolatileValues.invalid(in: [.jsonPath("$.ok"), .jsonPath("sentAt"), .query("_")])
        #expect(invalid.map(\.0) == [.jsonPath("sentAt")])
        #expect(VolatileValue.jsonPath("$.a").description == #".jsonPath("$.a")"#)
        #expect(VolatileValue.query("_").description == #".query("_")"#)
    }
}
