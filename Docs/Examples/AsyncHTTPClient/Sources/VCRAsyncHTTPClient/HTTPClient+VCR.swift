import AsyncHTTPClient
import HTTPVCR
import NIOCore

extension HTTPClient {
    /// `execute(_:timeout:)` through the cassette in force: replayed when it is on the cassette, sent and recorded
    /// when the cassette may record, refused when it may not; just sent when no cassette is inserted.
    ///
    /// ```swift
    /// let response = try await HTTPClient.shared.executeThroughVCR(request, timeout: .seconds(30))
    /// ```
    ///
    /// The request body and the response body are collected whole (up to `maxBodySize`): a cassette stores them.
    /// Every response header field comes back as the server sent it, in order: two `Set-Cookie` stay two.
    public func executeThroughVCR(
        _ request: HTTPClientRequest, timeout: TimeAmount, maxBodySize: Int = 10 * 1024 * 1024
    ) async throws -> HTTPClientResponse {
        // HTTPVCR's door takes the request's parts and gives back the answer's: status, fields, version, body.
        let (status, headers, version, body) = try await VCR.exchange(
            request.method.rawValue, request.url, headers: request.headers, body: request.body?.map(\.readableBytesView)
        ) { collected in
            var sent = request  // the same request, its body collected once
            sent.body = collected.map { .bytes($0) }
            let answer = try await execute(sent, timeout: timeout)
            let bytes = try await answer.body.collect(upTo: maxBodySize).readableBytesView
            return (Int(answer.status.code), answer.headers, (answer.version.major, answer.version.minor), bytes)
        }
        return HTTPClientResponse(version: .init(major: version.major, minor: version.minor),
            status: .init(statusCode: status), headers: .init(headers), body: .bytes(.init(bytes: body)))
    }
}
