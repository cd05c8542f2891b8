import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPTypes
import HTTPVCR
import OpenAPIRuntime

/// Sends every operation of an OpenAPI client through the cassette in force: replayed when it is on the cassette,
/// sent (through the rest of the chain and the transport) and recorded when the cassette may record, refused when it
/// may not; just sent when no cassette is inserted.
///
/// ```swift
/// let client = Client(serverURL: url, transport: URLSessionTransport(), middlewares: [VCRMiddleware()])
/// ```
///
/// Bodies are collected whole (up to ``maxBodySize``): a cassette stores them. Every response header field comes back
/// as the transport gave it, in order: two `Set-Cookie` stay two. A URLSession transport behind it is not intercepted
/// a second time (URLSession itself joins repeated fields; a transport such as AsyncHTTPClient's keeps them).
public struct VCRMiddleware: ClientMiddleware {
    public var maxBodySize: Int

    public init(maxBodySize: Int = 10 * 1024 * 1024) {
        self.maxBodySize = maxBodySize
    }

    public func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        baseURL: URL,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let maxBodySize = self.maxBodySize
        var collected: Data?
        if let body { collected = try await Data(collecting: body, upTo: maxBodySize) }
        let requestBody = collected
        let base = baseURL.absoluteString.hasSuffix("/") ? String(baseURL.absoluteString.dropLast()) : baseURL.absoluteString
        guard let url = URL(string: base + (request.path ?? "")) else { throw URLError(.badURL) }
        // What HTTPVCR matches and records.
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = request.method.rawValue
        for field in request.headerFields { urlRequest.addValue(field.value, forHTTPHeaderField: field.name.rawName) }
        urlRequest.httpBody = requestBody

        // The fields-keeping door: an HTTPURLResponse would join repeated fields into one.
        let (data, response) = try await VCR.dataKeepingFields(for: urlRequest) { _ in
            let (response, responseBody) = try await next(request, requestBody.map { HTTPBody($0) }, baseURL)
            var data = Data()
            if let responseBody { data = try await Data(collecting: responseBody, upTo: maxBodySize) }
            let fields = response.headerFields.map { RecordedHeader($0.name.rawName, $0.value) }
            return (data, RecordedResponse(url: url.absoluteString, statusCode: response.status.code, headers: fields))
        }
        var headerFields = HTTPFields()
        for field in response.headers {
            guard let name = HTTPField.Name(field.name) else { continue }
            headerFields.append(HTTPField(name: name, value: field.value))
        }
        return (HTTPResponse(status: .init(code: response.statusCode), headerFields: headerFields), HTTPBody(data))
    }
}
