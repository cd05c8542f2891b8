import Foundation
@testable import HTTPVCR
import Testing

@Suite struct ShapeComparisonTests {
    static func interaction(
        _ url: String = "https://api.example.com/items",
        status: Int = 200,
        contentType: String? = "application/json",
        body: String,
        chapter: Int = 1
    ) -> Interaction {
        let headers = contentType.map { [RecordedHeader("Content-Type", $0)] } ?? []
        return Interaction(
            chapter: chapter,
            request: RecordedRequest(method: "GET", url: url, headers: [], body: nil),
            response: RecordedResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headers: headers),
            chunks: [Data(body.utf8)]
        )
    }

    func differences(_ recorded: String, _ live: String, paths: [String] = []) -> [String] {
        ShapeComparison.differences(
            recorded: Self.interaction(body: recorded), live: Self.interaction(body: live), comparedValuePaths: paths
        ).map(\.description)
    }

    @Test func sameShapeDifferentValuesIsNoDrift() {
        #expect(differences(#"{"id": 1, "name": "a", "tags": ["x"]}"#, #"{"id": 2, "name": "b", "tags": []}"#) == [])
    }

    @Test func keysAddedAndRemovedWithTheirLocation() {
        #expect(differences(#"{"user": {"id": 1, "email": "a@b"}}"#, #"{"user": {"id": 1, "phone": null}}"#) == [
            "$.user.email: removed (string)",
            "$.user.phone: added (null)",
        ])
    }

    @Test func typeChangesInsideArraysUseTheWildcard() {
        let recorded = #"{"items": [{"price": 1.5}, {"price": 2}]}"#
        let live = #"{"items": [{"price": "1.50"}]}"#
        #expect(differences(recorded, live) == ["$.items[*].price: number → string"])
    }

    @Test func arrayObjectAndNullChanges() {
        #expect(differences(#"{"a": [1], "b": {"c": 1}, "d": null, "e": 1}"#, #"{"a": {"x": 1}, "b": [1], "d": "now", "e": null}"#) == [
            "$.a: array → object",
            "$.b: object → array",
            "$.d: null → string",
            "$.e: number → null",
        ])
    }

    @Test func keysThatAreNotNamesAreQuoted() {
        #expect(differences(#"{"a key": 1, "x-y": true}"#, #"{}"#) == [
            #"$["a key"]: removed (number)"#,
            #"$["x-y"]: removed (boolean)"#,
        ])
    }

    @Test func emptyArraysSayNothingAboutTheirElements() {
        #expect(differences(#"{"list": []}"#, #"{"list": [{"a": 1}]}"#) == [])
    }

    @Test func valuesAreComparedOnlyWhereNamed() {
        let recorded = #"{"status": "active", "items": [{"id": 1}, {"id": 2}], "token": "x"}"#
        let live = #"{"status": "closed", "items": [{"id": 1}, {"id": 3}], "token": "y"}"#
        #expect(differences(recorded, live) == [])
        #expect(differences(recorded, live, paths: ["$.status", "$.items[*].id", "$['token']"]) == [
            #"$.status: "active" → "closed""#,
            "$.items[*].id: [1, 2] → [1, 3]",
            #"$['token']: "x" → "y""#,
        ])
    }

    @Test func statusContentTypeAndBodyKind() {
        let recorded = Self.interaction(status: 200, body: #"{"a": 1}"#)
        let live = Self.interaction(status: 503, contentType: "text/html", body: "<html>down</html>")
        #expect(ShapeComparison.differences(recorded: recorded, live: live, comparedValuePaths: []).map(\.description) == [
            "status: 200 → 503",
            "Content-Type: application/json → text/html",
            "$: object → not JSON",
        ])
        // Case and spaces in Content-Type do not count.
        let spaced = Self.interaction(contentType: "Application/JSON;  charset=utf-8", body: "{}")
        let plain = Self.interaction(contentType: "application/json; charset=utf-8", body: "{}")
        #expect(ShapeComparison.differences(recorded: spaced, live: plain, comparedValuePaths: []) == [])
    }

    @Test func anErrorAgainstAResponseIsAnOutcome() {
        let error = Interaction(
            chapter: 1,
            request: RecordedRequest(method: "GET", url: "https://api.example.com/items", headers: [], body: nil),
            response: nil,
            error: RecordedError(domain: NSURLErrorDomain, code: -1001, userInfo: [:])
        )
        let differences = ShapeComparison.differences(
            recorded: error, live: Self.interaction(body: "{}"), comparedValuePaths: []
        )
        #expect(differences.map(\.description) == ["outcome: error \(NSURLErrorDomain) -1001 → response"])
    }

    @Test func betweenPairsRequestsByMethodAndURLInOrder() {
        let older = Tape(interactions: [
            Self.interaction("https://a.example/one", body: #"{"a": 1}"#, chapter: 1),
            Self.interaction("https://a.example/two", body: #"{"b": 1}"#, chapter: 2),
            Self.interaction("https://a.example/one", body: #"{"a": 2}"#, chapter: 3),
        ])
        let newer = Tape(interactions: [
            Self.interaction("https://a.example/one", body: #"{"a": "1"}"#, chapter: 1),
            Self.interaction("https://a.example/one", body: #"{"a": 3}"#, chapter: 2),
            Self.interaction("https://a.example/three", body: "{}", chapter: 3),
        ])
        let drifts = CassetteDrift.between(older, newer)
        #expect(drifts.map(\.description) == [
            "GET https://a.example/one: $.a: number → string",
            "new request (no recording): GET https://a.example/three",
            "unused recording (not requested): GET https://a.example/two",
        ])
        #expect(drifts.map(\.kind) == [.changed, .new, .unused])
        #expect(CassetteDrift.between(older, older).isEmpty)
    }
}
