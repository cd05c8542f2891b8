import AsyncHTTPClient
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCR
import NIOCore
import NIOHTTP1

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
        _ request: HTTPClientRequest,
        timeout: TimeAmount,
        maxBodySize: Int = 10 * 1024 * 1024
    ) async throws -> HTTPClientResponse {
        guard let url = URL(string: request.url) else { throw HTTPClientError.invalidURL }
        var body = Data()
        if let requestBody = request.body {
            for try await buffer in requestBody { body.append(contentsOf: buffer.readableBytesView) }
        }
        // What HTTPVCR matches and records.
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = request.method.rawValue
        for (name, value) in request.headers { urlRequest.addValue(value, forHTTPHeaderField: name) }
        urlRequest.httpBody = body.isEmpty ? nil : body
        // What is sent, when it is: the same request, its body collected once.
        var sent = request
        sent.body = body.isEmpty ? nil : .bytes(ByteBuffer(bytes: body))

        // The fields-keeping door: an HTTPURLResponse would join repeated fields into one.
        let (data, response) = try await VCR.dataKeepingFields(for: urlRequest) { [sent] _ in
            let response = try await self.execute(sent, timeout: timeout)
            let bytes = try await response.body.collect(upTo: maxBodySize)
            let recorded = RecordedResponse(
                url: (response.url ?? url).absoluteString,
                statusCode: Int(response.status.code),
                httpVersion: "HTTP/\(response.version.major).\(response.version.minor)",
                headers: response.headers.map { RecordedHeader($0.name, $0.value) }
            )
            return (Data(bytes.readableBytesView), recorded)
        }
        return HTTPClientResponse(
            version: Self.version(response.httpVersion),
            status: HTTPResponseStatus(statusCode: response.statusCode),
            headers: HTTPHeaders(response.headers.map { ($0.name, $0.value) }),
            body: .bytes(ByteBuffer(bytes: data))
        )
    }

    /// `HTTP/1.1`, `HTTP/2`: what a cassette says (`HTTP/1.1` when it says nothing else readable).
    private static func version(_ text: String) -> HTTPVersion {
        let numbers = text.dropFirst("HTTP/".count).split(separator: ".").compactMap { Int($0) }
        guard text.hasPrefix("HTTP/"), let major = numbers.first else { return .http1_1 }
        return HTTPVersion(major: major, minor: numbers.count > 1 ? numbers[1] : 0)
    }
}
