import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCRCassettes

/// Turns what a recording saw into what goes on the tape: URLs through the path and query filters, the body
/// through the response body filter and `beforeRecordResponse`, headers kept consistent with the body.
enum ResponseFilter {
    struct Outcome {
        var response: RecordedResponse
        var chunks: [Data]
        /// Every secret filtered out of the response, and the request's.
        var removed: SecretValues
    }

    /// What a recording received as its response.
    enum Received {
        /// URLSession's, whose fields Foundation joined into one per name.
        case foundation(HTTPURLResponse)
        /// The door's (``VCR/dataKeepingFields(for:sending:)``): every field as the server sent it, in order.
        case fields(RecordedResponse)
    }

    /// - Returns: nil when `beforeRecordResponse` says not to record this response.
    /// `requestSecrets` are what the filters took out of the request (``RequestFilter/secrets(of:with:)``): the
    /// response must not echo them either.
    static func filter(
        response: HTTPURLResponse,
        chunks: [Data],
        request: URLRequest,
        configuration: VCRConfiguration,
        requestSecrets: SecretValues = SecretValues()
    ) -> Outcome? {
        filter(
            response: .foundation(response), chunks: chunks, request: request, configuration: configuration,
            requestSecrets: requestSecrets
        )
    }

    /// The same for either kind of response. The filters that take an `HTTPURLResponse` (a custom body filter,
    /// `beforeRecordResponse`) get the door's fields as Foundation has them, a repeated name's values joined; when
    /// `beforeRecordResponse` hands the same response back, every field goes on the tape as it came.
    static func filter(
        response received: Received,
        chunks: [Data],
        request: URLRequest,
        configuration: VCRConfiguration,
        requestSecrets: SecretValues = SecretValues()
    ) -> Outcome? {
        var recorded: RecordedResponse
        let fallbackURL: URL?
        /// The response as Foundation has it, for the filters that take one: made only when one does.
        let foundationResponse: () -> HTTPURLResponse?
        switch received {
        case let .foundation(response):
            recorded = RecordedResponse(response)
            fallbackURL = response.url
            foundationResponse = { response }
        case let .fields(response):
            recorded = response
            fallbackURL = request.url
            foundationResponse = { response.httpURLResponse(fallbackURL: request.url) }
        }
        var body = chunks.reduce(into: Data()) { $0.append($1) }
        let originalBody = body

        // URLSession hands over bodies already decoded; the tape must not claim otherwise. A body that still is
        // encoded is decoded only when a filter has to read it.
        // A response with no body (HEAD, 204, 304) keeps the length and encoding the server announced.
        let hasBody = !originalBody.isEmpty
        let announcedEncoding = recorded.headers[field: "Content-Encoding"]
        if hasBody, let encoding = announcedEncoding, isCompression(encoding) {
            if let decoded = Inflate.decode(body, contentEncoding: encoding) {
                let secrets = SecretFilter(configuration: configuration)
                if configuration.responseBodyFilter != nil || configuration.beforeRecordResponse != nil
                    || secrets.isActive || !requestSecrets.isEmpty {
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
                checkNoLockHeld(running: "a custom response body filter")
                if let response = foundationResponse() { body = transform(request, response, body) }
            }
        }
        if let beforeRecordResponse = configuration.beforeRecordResponse,
           let httpResponse = recorded.httpURLResponse(fallbackURL: fallbackURL) ?? foundationResponse() {
            checkNoLockHeld(running: "beforeRecordResponse")
            guard let (replacedResponse, replacedBody) = beforeRecordResponse(request, httpResponse, body) else {
                return nil
            }
            let headers = recorded.headers
            recorded = RecordedResponse(replacedResponse, httpVersion: recorded.httpVersion)
            if replacedResponse === httpResponse { recorded.headers = headers }
            body = replacedBody ?? Data()
        }

        // Named placeholders first, as on the request: a value the configuration names is written as its own
        // placeholder, which the URL and secret filters then leave as it is.
        if !configuration.sensitiveData.isEmpty {
            let sensitive = SensitiveData(configuration)
            sensitive.hiding(in: &recorded)
            body = sensitive.hiding(body)
        }
        filterURLs(of: &recorded, request: request, configuration: configuration)
        var removed = requestSecrets
        body = filterSecrets(of: &recorded, body: body, removed: &removed, configuration: configuration)
        let encodingRemoved = announcedEncoding != nil && recorded.headers[field: "Content-Encoding"] == nil
        if (hasBody || !body.isEmpty) && (body != originalBody || encodingRemoved || announcedEncoding == nil) {
            if recorded.headers[field: "Content-Length"] != nil {
                recorded.headers[field: "Content-Length"] = String(body.count)
            }
        }
        let outChunks = body == originalBody ? chunks : spread(body, over: chunks.map(\.count))
        return Outcome(response: recorded, chunks: outChunks, removed: removed)
    }

    /// A response's secret-named headers (`Set-Cookie` keeps its cookie names) and body keys written as the
    /// placeholder, then every secret of the request or the response replaced wherever it comes back: body,
    /// headers, URL. `removed` holds the request's secrets and gets the response's. Returns the body.
    static func filterSecrets(
        of recorded: inout RecordedResponse,
        body: Data,
        removed: inout SecretValues,
        configuration: VCRConfiguration
    ) -> Data {
        let secrets = SecretFilter(configuration: configuration)
        var body = body
        if secrets.isActive {
            for index in recorded.headers.indices where secrets.isSecret(headerName: recorded.headers[index].name) {
                let header = recorded.headers[index]
                guard header.value != VCRConfiguration.filteredPlaceholder else { continue }
                recorded.headers[index].value = header.name.equalsIgnoringASCIICase("Set-Cookie")
                    ? SecretValues.filteringCookies(header.value, removed: &removed, keeping: secrets.isNamedPlaceholder)
                    : secrets.filterHeader(name: header.name, value: header.value, removed: &removed)
            }
            var exempt: [String: String?]?
            if case let .replacing(replacements)? = configuration.responseBodyFilter { exempt = replacements }
            body = secrets.filterBody(
                body, contentType: recorded.headers[field: "Content-Type"], exempt: SecretFilter.exempt(exempt),
                removed: &removed
            )
            // Credentials known by their shape, under any name or none.
            secrets.takeShapedSecrets(in: recorded.url, into: &removed)
            for header in recorded.headers where header.value != VCRConfiguration.filteredPlaceholder {
                secrets.takeShapedSecrets(in: header.value, into: &removed)
            }
            secrets.takeShapedSecrets(in: body, into: &removed)
        }
        guard !removed.isEmpty else { return body }
        replaceEchoes(of: removed, in: &recorded)
        return removed.replacingEchoes(in: body)
    }

    /// The secrets in a response's URL and header values (but for the placeholders already there).
    static func replaceEchoes(of removed: SecretValues, in recorded: inout RecordedResponse) {
        recorded.url = removed.replacingEchoes(inURL: recorded.url)
        for index in recorded.headers.indices where recorded.headers[index].value != VCRConfiguration.filteredPlaceholder {
            recorded.headers[index].value = removed.replacingEchoes(in: recorded.headers[index].value)
        }
    }

    /// A redirect hop as it goes on the tape: both URLs and the `Location` filtered like the request's.
    static func filterRedirect(
        _ response: HTTPURLResponse,
        to next: URLRequest,
        request: URLRequest,
        configuration: VCRConfiguration,
        requestSecrets: SecretValues = SecretValues(),
        removed: inout SecretValues
    ) -> (RecordedResponse, RecordedRequest) {
        var recorded = RecordedResponse(response)
        if !configuration.sensitiveData.isEmpty { SensitiveData(configuration).hiding(in: &recorded) }
        filterURLs(of: &recorded, request: request, configuration: configuration)
        var hopSecrets = requestSecrets
        _ = filterSecrets(of: &recorded, body: Data(), removed: &hopSecrets, configuration: configuration)
        removed.formUnion(hopSecrets)
        let filteredHop = RequestFilter.filter(next, with: configuration)
            ?? RequestFilter.filterIgnoringBeforeRecordRequest(next, with: configuration)
        // A cookie the hop set, sent on to the next request: hidden there too.
        return (recorded, RecordedRequest(RequestFilter.replacingEchoes(of: hopSecrets, in: filteredHop)))
    }

    /// An error as it goes on the tape, its failing URL filtered like the request's.
    static func filterError(
        _ error: any Error,
        request: URLRequest,
        configuration: VCRConfiguration,
        requestSecrets: SecretValues = SecretValues()
    ) -> RecordedError {
        var recorded = RecordedError(error)
        if !configuration.sensitiveData.isEmpty { SensitiveData(configuration).hiding(in: &recorded) }
        filterFailingURL(of: &recorded, request: request, configuration: configuration)
        var removed = requestSecrets
        let secrets = SecretFilter(configuration: configuration)
        for value in recorded.userInfo.values { secrets.takeShapedSecrets(in: value, into: &removed) }
        for (key, value) in recorded.userInfo { recorded.userInfo[key] = removed.replacingEchoes(in: value) }
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
