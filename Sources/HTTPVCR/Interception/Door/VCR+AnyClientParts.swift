import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCRCassettes

extension VCR {
    /// An answer in the terms every HTTP client has: its status, every header field in the order it came, its HTTP
    /// version and its body. What the real request of ``exchange(_:_:headers:body:sending:)`` returns in the
    /// client's own types (NIO's `HTTPHeaders`, a `ByteBuffer`'s `readableBytesView`), and what the door gives back
    /// as `ClientAnswer<[(name: String, value: String)], Data>`.
    public typealias ClientAnswer<Headers, Body> = (
        status: Int, headers: Headers, httpVersion: (major: Int, minor: Int), body: Body
    )

    /// The door in the terms every HTTP client has: the request goes out as its method, URL, header fields and body,
    /// and the answer comes in as its status, header fields, HTTP version and body. An adapter turns its client's
    /// types into these and back, and nothing else: no `URLRequest`, no response URL, no version text.
    ///
    /// ```swift
    /// let answer = try await VCR.exchange(
    ///     request.method, request.url, headers: request.headers, body: request.bodyChunks
    /// ) { body in
    ///     let response = try await myClient.send(request.replacingBody(with: body))   // the real request
    ///     return (response.status, response.headers, (1, 1), response.body)
    /// }
    /// return MyResponse(status: answer.status, headers: answer.headers, body: answer.body)
    /// ```
    ///
    /// It decides as ``dataKeepingFields(for:sending:)`` does, keeping every field: a name the server sent twice is
    /// two fields, recorded and replayed apart. With no cassette, or one whose host filter or `beforeRecordRequest`
    /// leaves the request out, it returns what `sending` returned.
    ///
    /// The body is collected first, whole: a cassette stores it and matchers compare it. `sending` gets it to send
    /// (nil when there is none), as a client's own stream of it can be read only once.
    ///
    /// > Note: The tape holds the request's URL as the response's: an adapter says nothing of redirects its client
    /// > followed.
    ///
    /// - Parameters:
    ///   - method: The request method: `GET`, `POST`.
    ///   - url: The request's absolute URL; one that is not a URL throws `URLError(.badURL)` before anything else.
    ///   - headers: The request's header fields, in order, as the client sends them (NIO's `HTTPHeaders` is one).
    ///   - body: The request body as the client holds it, a sequence of byte chunks (NIO `ByteBuffer`s'
    ///     `readableBytesView`, `Data`, `[UInt8]`); nil when there is none.
    ///   - sending: Does the real request with the collected body, and returns the final answer (redirects followed):
    ///     its status, its header fields in the order they came, its HTTP version and its body.
    /// - Returns: What `sending` returned, or what the cassette recorded.
    public static func exchange<Chunks: AsyncSequence, Headers: Sequence & Sendable, Body: Sequence & Sendable>(
        _ method: String,
        _ url: String,
        headers: some Sequence<(name: String, value: String)>,
        body: Chunks?,
        sending: @Sendable (_ body: Data?) async throws -> ClientAnswer<Headers, Body>
    ) async throws -> ClientAnswer<[(name: String, value: String)], Data>
    where Chunks.Element: Sequence<UInt8>, Headers.Element == (name: String, value: String), Body.Element == UInt8 {
        var collected = Data()
        if let body {
            for try await chunk in body { collected.append(contentsOf: chunk) }
        }
        return try await exchange(
            method, url, headers: headers, body: collected.isEmpty ? nil : collected, sending: sending
        )
    }

    /// ``exchange(_:_:headers:body:sending:)`` for a request body the client holds whole.
    ///
    /// ```swift
    /// let answer = try await VCR.exchange("POST", url, headers: [(name: "Content-Type", value: "text/plain")],
    ///                                     body: Data("hello".utf8)) { body in
    ///     let response = try await myClient.post(url, body: body)
    ///     return (response.status, response.fields, (1, 1), response.body)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - method: The request method: `GET`, `POST`.
    ///   - url: The request's absolute URL; one that is not a URL throws `URLError(.badURL)` before anything else.
    ///   - headers: The request's header fields, in order, as the client sends them.
    ///   - body: The request body; nil when there is none.
    ///   - sending: Does the real request with `body`, and returns the final answer (redirects followed): its
    ///     status, its header fields in the order they came, its HTTP version and its body.
    /// - Returns: What `sending` returned, or what the cassette recorded.
    public static func exchange<Headers: Sequence & Sendable, Body: Sequence & Sendable>(
        _ method: String, _ url: String, headers: some Sequence<(name: String, value: String)>, body: Data?,
        sending: @Sendable (_ body: Data?) async throws -> ClientAnswer<Headers, Body>
    ) async throws -> ClientAnswer<[(name: String, value: String)], Data>
    where Headers.Element == (name: String, value: String), Body.Element == UInt8 {
        guard let requestURL = URL(string: url) else { throw URLError(.badURL) }
        var request = URLRequest(url: requestURL)
        request.httpMethod = method
        for (name, value) in headers { request.addValue(value, forHTTPHeaderField: name) }
        request.httpBody = body
        let (data, response) = try await dataKeepingFields(for: request) { _ in
            let answer = try await sending(body)
            let fields = answer.headers.map { RecordedHeader($0.name, $0.value) }
            let (major, minor) = answer.httpVersion
            let version = major >= 2 && minor == 0 ? "HTTP/\(major)" : "HTTP/\(major).\(minor)"
            let response = RecordedResponse(url: url, statusCode: answer.status, httpVersion: version, headers: fields)
            return (Data(answer.body), response)
        }
        return (response.statusCode, response.headers.map { ($0.name, $0.value) }, response.versionNumbers, data)
    }
}

extension RecordedResponse {
    /// ``httpVersion``'s numbers: `HTTP/1.1` is (1, 1), `HTTP/2` is (2, 0); (1, 1) when it says nothing readable.
    var versionNumbers: (major: Int, minor: Int) {
        guard httpVersion.hasPrefix("HTTP/") else { return (1, 1) }
        let numbers = httpVersion.dropFirst("HTTP/".count).split(separator: ".").map { Int($0) }
        guard let first = numbers.first, let major = first else { return (1, 1) }
        return (major, numbers.count > 1 ? numbers[1] ?? 0 : 0)
    }
}
