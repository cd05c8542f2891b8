import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import HTTPVCR
import HTTPBinTestSupport
import Testing
import TestSupport

/// What the bridge and `vcr serve` send upstream and hand back: httpbin's `/headers` echoes what arrived.
@Suite struct UpstreamForwarderTests {
    let forwarder = UpstreamForwarder()

    /// Through the network guard's proxy, as in a process that uses HTTPVCR: the requests pass it by their mark, and
    /// it adds nothing of its own.
    init() {
        VCRURLProtocol.register()
    }

    /// The request fields httpbin saw, from its JSON echo.
    static func echoedFields(_ body: Data) throws -> [String: String] {
        let object = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
        return try #require(object["headers"] as? [String: String], "\(String(decoding: body, as: UTF8.self))")
    }

    #if canImport(FoundationNetworking)
    @Test func aRequestWithoutFieldsArrivesWithOnlyHost() async throws {
        let (body, response) = try await forwarder.send(URLRequest(url: try HTTPBin.url("/headers")))
        #expect(response.statusCode == 200)
        // No User-Agent, Accept, Accept-Encoding, Accept-Language or Connection of the loader's.
        #expect(try Set(Self.echoedFields(body).keys) == ["Host"])
    }

    @Test func aBodyWithoutContentTypeArrivesWithOnlyItsLength() async throws {
        var request = URLRequest(url: try HTTPBin.url("/post"))
        request.httpMethod = "POST"
        request.httpBody = Data("a=1".utf8)
        let (body, _) = try await forwarder.send(request)
        let fields = try Self.echoedFields(body)
        #expect(Set(fields.keys) == ["Host", "Content-Length"], "\(fields)")
        #expect(fields["Content-Length"] == "3")
    }
    #endif

    @Test func theClientsOwnFieldsArriveAsTheyAre() async throws {
        var request = URLRequest(url: try HTTPBin.url("/headers"))
        request.setValue("app/1", forHTTPHeaderField: "User-Agent")
        request.setValue("text/plain", forHTTPHeaderField: "Accept")
        request.setValue("", forHTTPHeaderField: "X-Empty")
        let (body, _) = try await forwarder.send(request)
        let fields = try Self.echoedFields(body)
        #expect(fields["User-Agent"] == "app/1", "\(fields)")
        #expect(fields["Accept"] == "text/plain", "\(fields)")
        #expect(fields["X-Empty"] == "", "\(fields)")
        #if canImport(FoundationNetworking)
        #expect(Set(fields.keys) == ["Host", "User-Agent", "Accept", "X-Empty"], "\(fields)")
        #endif
    }

    @Test func twoSetCookieComeBackAsTwoFields() async throws {
        let expiring = "a%3D1%3B%20Expires%3DWed%2C%2021%20Oct%202015%2007%3A28%3A00%20GMT"
        let url = try HTTPBin.url("/response-headers?Set-Cookie=\(expiring)&Set-Cookie=b%3D2")
        let (_, response) = try await forwarder.send(URLRequest(url: url))
        let cookies = response.headers.filter { $0.name.lowercased() == "set-cookie" }.map(\.value)
        #expect(cookies == ["a=1; Expires=Wed, 21 Oct 2015 07:28:00 GMT", "b=2"], "\(response.headers)")
    }

    @Test func aGzipBodyComesBackDecodedWithoutItsEncoding() async throws {
        let (body, response) = try await forwarder.send(URLRequest(url: try HTTPBin.url("/gzip")))
        let object = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
        #expect(object["gzipped"] as? Bool == true)
        #expect(response.headers[field: "Content-Encoding"] == nil, "\(response.headers)")
        #expect(response.headers[field: "Content-Length"] == String(body.count), "\(response.headers)")
    }

    @Test func aRedirectIsTheAnswerNotFollowed() async throws {
        let (_, response) = try await forwarder.send(URLRequest(url: try HTTPBin.url("/redirect-to?url=/get")))
        #expect(response.statusCode == 302)
        #expect(response.headers[field: "Location"] == "/get", "\(response.headers)")
    }

    @Test func cancellingEndsTheCompletionWithAnError() async throws {
        let request = URLRequest(url: try HTTPBin.url("/delay/5"))
        let outcome = try await Self.offThePool { [forwarder] in
            let done = DispatchSemaphore(value: 0)
            let result = Locked<Result<(Data, RecordedResponse), any Error>?>(nil)
            let task = forwarder.send(request) { outcome in
                result.withLock { $0 = outcome }
                done.signal()
            }
            Thread.sleep(forTimeInterval: 0.2)
            task.cancel()
            return (done.wait(timeout: .now() + 3) == .success, result.withLock { $0 })
        }
        #expect(outcome.0, "the completion came within 3 s of the cancel")
        guard case let .failure(error) = outcome.1 else {
            Issue.record("not a failure: \(String(describing: outcome.1))")
            return
        }
        #expect((error as? URLError)?.code == .cancelled, "\(error)")
    }

    /// The completion form with every thread of the cooperative pool held: the others by blockers, this test's own
    /// by its wait for the answer. Held once, never in a loop of tries that would hold up the other tests.
    @Test func completesWithTheCooperativePoolBlocked() async throws {
        try await PoolHolding.inTurn {
            let request = URLRequest(url: try HTTPBin.url("/get?pool=blocked"))
            let width = ProcessInfo.processInfo.activeProcessorCount
            let started = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
            defer { for _ in 1..<max(width, 2) { release.signal() } }
            for _ in 1..<max(width, 2) { Task.detached { Self.hold(started: started, until: release) } }
            // Other tests may hold threads a while (minutes under ThreadSanitizer): the blockers start as they are
            // freed.
            let deadline = DispatchTime.now() + 600
            let held = (1..<max(width, 2)).filter { _ in started.wait(timeout: deadline) == .success }.count
            #expect(held == max(width, 2) - 1, "pool threads held besides this test's")
            let done = DispatchSemaphore(value: 0)
            let status = Locked<Int?>(nil)
            forwarder.send(request) { outcome in
                status.withLock { $0 = (try? outcome.get())?.1.statusCode }
                done.signal()
            }
            #expect(done.wait(timeout: .now() + 20) == .success, "answered with the pool held")
            #expect(status.withLock { $0 } == 200)
        }
    }

    /// Holds the pool thread it runs on until `release`.
    static func hold(started: DispatchSemaphore, until release: DispatchSemaphore) {
        started.signal()
        release.wait()
    }

    /// Runs blocking work on a thread of its own, not on the cooperative pool.
    static func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body() }) }.start()
        }
    }

    // MARK: Set-Cookie, apart again (no network)

    @Test func splitSetCookieKeepsTheCommaOfAnExpiresDate() {
        #expect(UpstreamForwarder.splitSetCookie("id=1; Expires=Wed, 21 Oct 2015 07:28:00 GMT; Path=/")
            == ["id=1; Expires=Wed, 21 Oct 2015 07:28:00 GMT; Path=/"])
    }

    @Test func splitSetCookieSeparatesSeveralCookies() {
        let joined = "a=1; Expires=Wed, 21 Oct 2015 07:28:00 GMT; HttpOnly, b=2, c=x=y; Path=/, d="
        #expect(UpstreamForwarder.splitSetCookie(joined)
            == ["a=1; Expires=Wed, 21 Oct 2015 07:28:00 GMT; HttpOnly", "b=2", "c=x=y; Path=/", "d="])
    }

    @Test func splitSetCookieLeavesASingleCookieAndAnEmptyValueAlone() {
        #expect(UpstreamForwarder.splitSetCookie("session=abc; Secure") == ["session=abc; Secure"])
        #expect(UpstreamForwarder.splitSetCookie("") == [""])
        // A comma before a space-separated word, or before `=` with no name, starts no cookie.
        #expect(UpstreamForwarder.splitSetCookie("a=1, 2, =3") == ["a=1, 2, =3"])
    }

    @Test func responseFieldsDropTheEncodingAndFixTheLength() {
        let fields = UpstreamForwarder.responseFields(
            [("Content-Length", "196"), ("Set-Cookie", "b=2, a=1"), ("Content-Encoding", "gzip"), ("Date", "x")],
            decodedBodyLength: 240
        )
        #expect(fields == [
            RecordedHeader("Content-Length", "240"), RecordedHeader("Date", "x"),
            RecordedHeader("Set-Cookie", "b=2"), RecordedHeader("Set-Cookie", "a=1"),
        ])
        // Not encoded, or no body (HEAD): the length is the server's.
        #expect(UpstreamForwarder.responseFields([("Content-Length", "9")], decodedBodyLength: 0)
            == [RecordedHeader("Content-Length", "9")])
        #expect(UpstreamForwarder.responseFields([("Content-Length", "9"), ("Content-Encoding", "br")], decodedBodyLength: nil)
            == [RecordedHeader("Content-Length", "9")])
    }
}
