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

        let (data, response) = try await VCR.data(for: urlRequest) { [sent] _ in
            let response = try await self.execute(sent, timeout: timeout)
            let bytes = try await response.body.collect(upTo: maxBodySize)
            var fields: [String: String] = [:]
            for (name, value) in response.headers { fields[name] = fields[name].map { "\($0), \(value)" } ?? value }
            let http = HTTPURLResponse(
                url: response.url ?? url, statusCode: Int(response.status.code), httpVersion: "HTTP/1.1",
                headerFields: fields
            )!
            return (Data(bytes.readableBytesView), http)
        }
        var headers = HTTPHeaders()
        for (name, value) in response.allHeaderFields {
            headers.add(name: "\(name)", value: "\(value)")
        }
        return HTTPClientResponse(
            status: HTTPResponseStatus(statusCode: response.statusCode),
            headers: headers,
            body: .bytes(ByteBuffer(bytes: data))
        )
    }
}
