import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Turns what a recording saw into what goes on the tape: URLs through the path and query filters, the body
/// through the response body filter and `beforeRecordResponse`, headers kept consistent with the body.
enum ResponseFilter {
    struct Outcome {
        var response: RecordedResponse
        var chunks: [Data]
    }

    /// - Returns: nil when `beforeRecordResponse` says not to record this response.
    static func filter(
        response: HTTPURLResponse,
        chunks: [Data],
        request: URLRequest,
        configuration: VCRConfiguration
    ) -> Outcome? {
        var recorded = RecordedResponse(response)
        var body = chunks.reduce(into: Data()) { $0.append($1) }
        let originalBody = body
        var httpResponse = response

        // URLSession hands over bodies already decoded; the tape must not claim otherwise. A body that still is
        // encoded is decoded only when a filter has to read it.
        if let encoding = recorded.headers[field: "Content-Encoding"], isCompression(encoding) {
            if let decoded = Inflate.decode(body, contentEncoding: encoding) {
                if configuration.responseBodyFilter != nil || configuration.beforeRecordResponse != nil {
                    body = decoded
                    recorded.headers[field: "Content-Encoding"] = nil
                }
            } else {
                recorded.headers[field: "Content-Encoding"] = nil
            }
        }

        if let filter = configuration.responseBodyFilter {
            switch filter {
            case let .replacing(replacements):
                let contentType = recorded.headers[field: "Content-Type"]
                body = BodyRewriter.rewrite(body, contentType: contentType, replacing: replacements)
            case let .custom(transform):
                body = transform(request, httpResponse, body)
            }
        }
        if let beforeRecordResponse = configuration.beforeRecordResponse {
            if let rebuilt = recorded.httpURLResponse(fallbackURL: response.url) { httpResponse = rebuilt }
            guard let (replacedResponse, replacedBody) = beforeRecordResponse(request, httpResponse, body) else {
                return nil
            }
            let headers = recorded.headers
            recorded = RecordedResponse(replacedResponse, httpVersion: recorded.httpVersion)
            if replacedResponse === httpResponse { recorded.headers = headers }
            body = replacedBody ?? Data()
        }

        filterURLs(of: &recorded, request: request, configuration: configuration)
        if body != originalBody || recorded.headers[field: "Content-Encoding"] == nil {
            if recorded.headers[field: "Content-Length"] != nil {
                recorded.headers[field: "Content-Length"] = String(body.count)
            }
        }
        let outChunks = body == originalBody ? chunks : spread(body, over: chunks.map(\.count))
        return Outcome(response: recorded, chunks: outChunks)
    }

    /// A redirect hop as it goes on the tape: both URLs and the `Location` filtered like the request's.
    static func filterRedirect(
        _ response: HTTPURLResponse,
        to next: URLRequest,
        request: URLRequest,
        configuration: VCRConfiguration
    ) -> (RecordedResponse, RecordedRequest) {
        var recorded = RecordedResponse(response)
        filterURLs(of: &recorded, request: request, configuration: configuration)
        let filteredHop = RequestFilter.filter(next, with: configuration)
            ?? RequestFilter.filterIgnoringBeforeRecordRequest(next, with: configuration)
        return (recorded, RecordedRequest(filteredHop))
    }

    /// An error as it goes on the tape, its failing URL filtered like the request's.
    static func filterError(_ error: any Error, request: URLRequest, configuration: VCRConfiguration) -> RecordedError {
        var recorded = RecordedError(error)
        filterFailingURL(of: &recorded, request: request, configuration: configuration)
        return recorded
    }

    /// The response URL and every `Location` through the path and query filters: for final responses and
    /// redirect hops, as they are recorded and as `Tape.redacted(with:responseHeaders:)` rewrites them.
    static func filterURLs(of response: inout RecordedResponse, request: URLRequest, configuration: VCRConfiguration) {
        response.url = RequestFilter.filter(urlString: response.url, of: request, with: configuration)
        for index in response.headers.indices
        where response.headers[index].name.equalsIgnoringASCIICase("Location") {
            response.headers[index].value = RequestFilter.filter(
                urlString: response.headers[index].value,
                of: request,
                with: configuration
            )
        }
    }

    /// An error's failing URL through the path and query filters, as recorded and as redacted.
    static func filterFailingURL(of error: inout RecordedError, request: URLRequest, configuration: VCRConfiguration) {
        // NSURLErrorFailingURLStringErrorKey, spelled out: the constant is deprecated, but Apple's loader and
        // YAHTTPVCR still write the key.
        for key in [NSURLErrorFailingURLErrorKey, "NSErrorFailingURLStringKey"] {
            if let url = error.userInfo[key] {
                error.userInfo[key] = RequestFilter.filter(urlString: url, of: request, with: configuration)
            }
        }
    }

    private static func isCompression(_ encoding: String) -> Bool {
        ["gzip", "x-gzip", "deflate", "br"].contains(encoding.lowercased().trimmingCharacters(in: .whitespaces))
    }

    /// The filtered body cut at the original chunk sizes, the last chunk taking what is left, so that the tape
    /// keeps its chunk boundaries.
    static func spread(_ body: Data, over sizes: [Int]) -> [Data] {
        guard sizes.count > 1 else { return body.isEmpty && sizes.isEmpty ? [] : [body] }
        var chunks: [Data] = []
        var offset = body.startIndex
        for (position, size) in sizes.enumerated() {
            let end = position == sizes.count - 1 ? body.endIndex : min(body.endIndex, offset + size)
            let chunk = body[offset..<end]
            if !chunk.isEmpty { chunks.append(Data(chunk)) }
            offset = end
        }
        return chunks
    }
}
