import Foundation
import Testing
@testable import HTTPVCR

/// HAR and VCR.py keep each redirect hop as an entry of its own; read, a hop chain is one chapter with a redirect
/// scene per hop, as the recorder writes it. A 3xx whose `Location` is not the next entry stays a chapter.
@Suite struct RedirectFoldingTests {
    /// One request and its response, as a HAR entry or a VCR.py interaction.
    struct Exchange {
        var method = "GET"
        var url: String
        var body: String?
        var status = 200
        var location: String?
        var responseBody = ""
        /// HAR only: when the response came and when the exchange ended, in milliseconds.
        var wait = 0.0
        var time = 0.0
    }

    static func vcrpy(_ exchanges: [Exchange]) throws -> Tape {
        let interactions: [[String: Any]] = exchanges.map { exchange in
            [
                "request": [
                    "method": exchange.method,
                    "uri": exchange.url,
                    "body": exchange.body.map { $0 as Any } ?? NSNull(),
                    "headers": exchange.body == nil ? [:] : ["Content-Type": ["text/plain"]],
                ] as [String: Any],
                "response": [
                    "status": ["code": exchange.status, "message": ""],
                    "headers": exchange.location.map { ["Location": [$0]] } ?? [:],
                    "body": ["string": exchange.responseBody],
                ] as [String: Any],
            ]
        }
        let data = try JSONSerialization.data(withJSONObject: ["version": 1, "interactions": interactions])
        let (tape, format) = try CassetteFile.decode(data, path: "cassette.json")
        #expect(format == .vcrpy)
        return tape
    }

    static func har(_ exchanges: [Exchange]) throws -> Tape {
        let entries: [[String: Any]] = exchanges.map { exchange in
            var request: [String: Any] = ["method": exchange.method, "url": exchange.url, "headers": []]
            if let body = exchange.body { request["postData"] = ["mimeType": "text/plain", "text": body] }
            return [
                "time": exchange.time,
                "timings": ["wait": exchange.wait],
                "request": request,
                "response": [
                    "status": exchange.status,
                    "headers": exchange.location.map { [["name": "Location", "value": $0]] } ?? [],
                    "content": ["size": exchange.responseBody.utf8.count, "text": exchange.responseBody],
                ] as [String: Any],
            ]
        }
        let data = try JSONSerialization.data(withJSONObject: ["log": ["version": "1.2", "entries": entries]])
        let (tape, format) = try CassetteFile.decode(data, path: "cassette.har")
        #expect(format == .har)
        return tape
    }

    static func ended(_ interaction: Interaction) -> Bool {
        if case .completion = interaction.scenes.last?.event { true } else { false }
    }

    // MARK: Folded

    @Test func aChainOfThreeHopsIsOneChapter() throws {
        let tape = try Self.vcrpy([
            Exchange(url: "https://x.test/redirect/3", status: 302, location: "/relative-redirect/2"),
            Exchange(url: "https://x.test/relative-redirect/2", status: 302, location: "/relative-redirect/1"),
            Exchange(url: "https://x.test/relative-redirect/1", status: 302, location: "https://x.test/get"),
            Exchange(url: "https://x.test/get", responseBody: "landed"),
            Exchange(url: "https://x.test/after", responseBody: "next"),
        ])
        let interactions = tape.interactions
        try #require(interactions.count == 2)
        #expect(interactions.map(\.chapter) == [1, 2])
        let chain = interactions[0]
        #expect(chain.request.url == "https://x.test/redirect/3")
        #expect(chain.redirects.map(\.response.statusCode) == [302, 302, 302])
        #expect(chain.redirects.map(\.response.url) == [
            "https://x.test/redirect/3", "https://x.test/relative-redirect/2", "https://x.test/relative-redirect/1",
        ])
        #expect(chain.redirects.map(\.request.url) == [
            "https://x.test/relative-redirect/2", "https://x.test/relative-redirect/1", "https://x.test/get",
        ])
        #expect(chain.response?.statusCode == 200)
        #expect(chain.response?.url == "https://x.test/get")
        #expect(chain.body == Data("landed".utf8))
        #expect(Self.ended(chain))
        #expect(chain.scenes.map(\.chapter) == Array(repeating: 1, count: chain.scenes.count))
        #expect(interactions[1].request.url == "https://x.test/after")
        #expect(interactions[1].redirects.isEmpty)
    }

    @Test func aPostAnswered303GoesOnAsAGet() throws {
        let tape = try Self.har([
            Exchange(method: "POST", url: "https://x.test/form", body: "name=Ada", status: 303, location: "/done"),
            Exchange(url: "https://x.test/done", responseBody: "thanks"),
        ])
        let interactions = tape.interactions
        try #require(interactions.count == 1)
        let hop = try #require(interactions[0].redirects.first)
        #expect(interactions[0].request.method == "POST")
        #expect(interactions[0].request.body == Data("name=Ada".utf8))
        #expect(hop.response.statusCode == 303)
        #expect(hop.request.method == "GET")
        #expect(hop.request.url == "https://x.test/done")
        #expect(hop.request.body == nil)
        #expect(interactions[0].body == Data("thanks".utf8))
    }

    @Test func a307KeepsThePostAndItsBody() throws {
        let tape = try Self.vcrpy([
            Exchange(method: "POST", url: "https://x.test/v1/upload", body: "bytes", status: 307,
                     location: "/v2/upload"),
            Exchange(method: "POST", url: "https://x.test/v2/upload", body: "bytes", status: 201, responseBody: "ok"),
        ])
        let interactions = tape.interactions
        try #require(interactions.count == 1)
        let hop = try #require(interactions[0].redirects.first)
        #expect(hop.response.statusCode == 307)
        #expect(hop.request.method == "POST")
        #expect(hop.request.body == Data("bytes".utf8))
        #expect(interactions[0].response?.statusCode == 201)

        // A GET after a 307 is not where the 307 leads: no client changes its method.
        let notFollowed = try Self.vcrpy([
            Exchange(method: "POST", url: "https://x.test/v1/upload", body: "bytes", status: 307,
                     location: "/v2/upload"),
            Exchange(url: "https://x.test/v2/upload"),
        ])
        #expect(notFollowed.interactions.count == 2)
    }

    @Test func aRelativeLocationIsResolvedAgainstThe3xxsURL() throws {
        let tape = try Self.har([
            Exchange(url: "https://x.test/a/b/start?x=1", status: 302, location: "../next?page=2#top"),
            Exchange(url: "https://x.test/a/next?page=2", status: 301, location: "//cdn.x.test/final"),
            Exchange(url: "https://CDN.x.test:443/final", responseBody: "here"),
        ])
        let interactions = tape.interactions
        try #require(interactions.count == 1)
        #expect(interactions[0].redirects.map(\.request.url) == [
            "https://x.test/a/next?page=2", "https://CDN.x.test:443/final",
        ])
        #expect(interactions[0].body == Data("here".utf8))
    }

    /// Which method a client sends on with, and whether a file that holds it is folded.
    @Test(arguments: [
        (303, "POST", "GET", true), (303, "POST", "POST", false), (303, "PUT", "GET", true),
        (302, "POST", "GET", true), (301, "POST", "GET", true), (302, "GET", "GET", true),
        (302, "PUT", "GET", true), (302, "PUT", "PUT", true), (302, "POST", "POST", false),
        (307, "POST", "POST", true), (308, "PUT", "PUT", true), (307, "POST", "GET", false),
        (308, "DELETE", "GET", false), (304, "GET", "GET", false), (300, "GET", "GET", false),
    ])
    func theNextMethodFollowsHTTP(_ status: Int, _ method: String, _ nextMethod: String, _ folded: Bool) throws {
        let tape = try Self.vcrpy([
            Exchange(method: method, url: "https://x.test/a", body: "b", status: status, location: "/z"),
            Exchange(method: nextMethod, url: "https://x.test/z"),
        ])
        #expect(tape.interactions.count == (folded ? 1 : 2))
    }

    @Test func followingARedirectOnTheTape() throws {
        let post = RecordedRequest(
            method: "post",
            url: "https://x.test/form",
            headers: [RecordedHeader("Content-Type", "text/plain"), RecordedHeader("Accept", "*/*")],
            body: Data("a".utf8)
        )
        let seeOther = RecordedResponse(url: post.url, statusCode: 303, headers: [RecordedHeader("Location", "done")])
        let get = try #require(post.followingRedirect(seeOther))
        #expect(get.method == "GET" && get.url == "https://x.test/done" && get.body == nil)
        #expect(get.headers == [RecordedHeader("Accept", "*/*")], "no Content-Type without a body")

        var temporary = seeOther
        temporary.statusCode = 307
        let kept = try #require(post.followingRedirect(temporary))
        #expect(kept.method == "POST" && kept.body == post.body && kept.headers == post.headers)

        #expect(post.followingRedirect(RecordedResponse(url: post.url, statusCode: 302)) == nil, "no Location")
        var ok = seeOther
        ok.statusCode = 200
        #expect(post.followingRedirect(ok) == nil)
    }

    // MARK: Not folded

    @Test func a3xxThatLeadsElsewhereStaysAChapterEndingInThe3xx() throws {
        let tape = try Self.vcrpy([
            Exchange(url: "https://x.test/cookies/set?a=1", status: 302, location: "/cookies", responseBody: "go"),
            Exchange(url: "https://x.test/other", responseBody: "other"),
        ])
        let interactions = tape.interactions
        try #require(interactions.count == 2)
        #expect(interactions.map(\.chapter) == [1, 2])
        #expect(interactions[0].redirects.isEmpty)
        #expect(interactions[0].response?.statusCode == 302)
        #expect(interactions[0].response?.headers[field: "Location"] == "/cookies")
        #expect(interactions[0].body == Data("go".utf8))
        #expect(Self.ended(interactions[0]))
        #expect(interactions[1].request.url == "https://x.test/other")
    }

    @Test func a3xxWithoutLocationIsNotFolded() throws {
        let tape = try Self.har([
            Exchange(url: "https://x.test/a", status: 302),
            Exchange(url: "https://x.test/a"),
        ])
        #expect(tape.interactions.count == 2)
        #expect(tape.interactions[0].response?.statusCode == 302)
    }

    @Test func a3xxLastOnTheFileAndAFailedOneAreNotFolded() throws {
        let last = try Self.har([Exchange(url: "https://x.test/a", status: 301, location: "/b")])
        #expect(last.interactions.count == 1)
        #expect(last.interactions[0].response?.statusCode == 301)

        // An entry with an error is not a hop, whatever its status (HTTPVCR writes `_errorDomain` beside one).
        let hop = Interaction(
            chapter: 1,
            request: RecordedRequest(method: "GET", url: "https://x.test/a"),
            response: RecordedResponse(
                url: "https://x.test/a",
                statusCode: 302,
                headers: [RecordedHeader("Location", "/b")]
            ),
            error: RecordedError(domain: NSURLErrorDomain, code: NSURLErrorCancelled)
        )
        let next = Interaction(
            chapter: 2,
            request: RecordedRequest(method: "GET", url: "https://x.test/b"),
            response: RecordedResponse(url: "https://x.test/b", statusCode: 200)
        )
        #expect(RedirectFolding.fold([hop, next]).count == 2)
    }

    // MARK: Times and round trips

    @Test func harTimesAddUpAcrossTheHops() throws {
        let tape = try Self.har([
            Exchange(url: "https://x.test/a", status: 302, location: "/b", wait: 100, time: 100),
            Exchange(url: "https://x.test/b", status: 302, location: "/c", wait: 20.5, time: 25),
            Exchange(url: "https://x.test/c", responseBody: "c", wait: 50, time: 80),
        ])
        let scenes = try #require(tape.interactions.first).scenes
        #expect(scenes.map(\.time) == [0, 0.1, 0.125, 0.175, 0.175, 0.205])
    }

    /// A tape with hops, written as HAR (an entry per hop) and read back, is the same tape.
    @Test func harWrittenByHTTPVCRReadsBackAsTheSameTape() throws {
        let start = RecordedRequest(method: "POST", url: "https://x.test/old", headers: [RecordedHeader("A", "1")],
                                    body: Data("x".utf8))
        let middle = RecordedRequest(method: "POST", url: "https://x.test/moved", headers: [RecordedHeader("A", "1")],
                                     body: Data("x".utf8))
        let end = RecordedRequest(method: "GET", url: "https://x.test/new", headers: [RecordedHeader("A", "1")])
        let tape = Tape(scenes: [
            Scene(chapter: 1, time: 0, event: .request(start)),
            Scene(chapter: 1, time: 0.1, event: .redirect(
                RecordedResponse(url: start.url, statusCode: 308, headers: [RecordedHeader("Location", "/moved")]),
                to: middle
            )),
            Scene(chapter: 1, time: 0.25, event: .redirect(
                RecordedResponse(url: middle.url, statusCode: 303, headers: [RecordedHeader("Location", end.url)]),
                to: end
            )),
            Scene(chapter: 1, time: 0.3, event: .response(
                RecordedResponse(url: end.url, statusCode: 200, headers: [RecordedHeader("Content-Length", "4")])
            )),
            Scene(chapter: 1, time: 0.3, event: .data(Data("done".utf8))),
            Scene(chapter: 1, time: 0.5, event: .completion),
            Scene(chapter: 2, time: 0, event: .request(RecordedRequest(method: "GET", url: "https://x.test/2"))),
            Scene(chapter: 2, time: 0.01, event: .response(RecordedResponse(url: "https://x.test/2", statusCode: 204))),
            Scene(chapter: 2, time: 0.01, event: .completion),
        ])
        #expect(HARFormat.lossNotes(tape).isEmpty)
        let har = try CassetteFile.encode(tape, as: .har)
        let entries = (try JSONSerialization.jsonObject(with: har) as? [String: Any])
            .flatMap { $0["log"] as? [String: Any] }?["entries"] as? [Any]
        #expect(entries?.count == 4, "an entry per hop")
        let (read, format) = try CassetteFile.decode(har, path: "x.har")
        #expect(format == .har)
        #expect(read == tape)
        #expect(try CassetteFile.encode(read, as: .har) == har)
    }

    /// Two chapters that only look like a followed redirect are read back as one, and the writer says so.
    @Test func harSaysWhenTwoChaptersWillReadBackAsOne() throws {
        let first = Interaction(
            chapter: 1,
            request: RecordedRequest(method: "GET", url: "https://x.test/login"),
            response: RecordedResponse(url: "https://x.test/login", statusCode: 302,
                                       headers: [RecordedHeader("Location", "/home")])
        )
        let second = Interaction(
            chapter: 2,
            request: RecordedRequest(method: "GET", url: "https://x.test/home"),
            response: RecordedResponse(url: "https://x.test/home", statusCode: 200)
        )
        let tape = Tape(interactions: [first, second])
        let notes = HARFormat.lossNotes(tape)
        #expect(notes.count == 1)
        #expect(notes.first?.hasPrefix("chapter 1 (GET https://x.test/login): it ends in a 302") == true, "\(notes)")
        #expect(notes.first?.contains("as if the redirect had been followed") == true, "\(notes)")
        let (read, _) = try CassetteFile.decode(try CassetteFile.encode(tape, as: .har), path: "x.har")
        #expect(read.interactions.count == 1)
        #expect(read.interactions.first?.redirects.map(\.request) == [second.request])
    }

    /// A hop the reader would not fold (its `to` is not where its Location leads) is said to come back apart.
    @Test func harSaysWhenAHopWillReadBackAsAChapterOfItsOwn() throws {
        let start = RecordedRequest(method: "GET", url: "https://x.test/a")
        let elsewhere = RecordedRequest(method: "GET", url: "https://x.test/filtered")
        let tape = Tape(interactions: [Interaction(
            chapter: 1,
            request: start,
            redirects: [Interaction.Redirect(
                response: RecordedResponse(url: start.url, statusCode: 302, headers: [RecordedHeader("Location", "/b")]),
                request: elsewhere
            )],
            response: RecordedResponse(url: elsewhere.url, statusCode: 200)
        )])
        let notes = HARFormat.lossNotes(tape)
        #expect(notes.count == 1)
        #expect(notes.first?.contains("does not lead to https://x.test/filtered") == true, "\(notes)")
        let (read, _) = try CassetteFile.decode(try CassetteFile.encode(tape, as: .har), path: "x.har")
        #expect(read.interactions.count == 2)
    }

    /// HAR keeps no body for a hop, so a hop's `Content-Encoding` is repaired away when read back.
    @Test func harSaysWhenAHopLosesItsContentEncoding() throws {
        let start = RecordedRequest(method: "GET", url: "https://x.test/a")
        let next = RecordedRequest(method: "GET", url: "https://x.test/b")
        let hop = RecordedResponse(
            url: start.url,
            statusCode: 301,
            headers: [RecordedHeader("Content-Encoding", "gzip"), RecordedHeader("Location", "/b")]
        )
        let tape = Tape(interactions: [Interaction(
            chapter: 1,
            request: start,
            redirects: [Interaction.Redirect(response: hop, request: next)],
            response: RecordedResponse(url: next.url, statusCode: 200)
        )])
        let notes = HARFormat.lossNotes(tape)
        #expect(notes.count == 1)
        #expect(notes.first?.contains("its 301 has Content-Encoding") == true, "\(notes)")
        let (read, _) = try CassetteFile.decode(try CassetteFile.encode(tape, as: .har), path: "x.har")
        #expect(read.interactions.first?.redirects.first?.response.headers == [RecordedHeader("Location", "/b")])
    }

    @Test func vcrpyConvertedToOurJSONKeepsTheFoldedChapters() throws {
        let tape = try Self.vcrpy([
            Exchange(url: "https://x.test/redirect/1", status: 302, location: "/get"),
            Exchange(url: "https://x.test/get", responseBody: "{}"),
        ])
        let json = try CassetteFile.encode(tape, as: .json)
        let (read, format) = try CassetteFile.decode(json, path: "converted.json")
        #expect(format == .json)
        #expect(read == tape)
        #expect(String(decoding: json, as: UTF8.self).contains(#""redirect": {"#))
    }
}
