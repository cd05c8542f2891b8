import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCRCassettes

extension Tape {
    /// The tape with a configuration's recording filters applied to it, so that a secret recorded without the
    /// right filter can be hidden without recording again (`vcr redact` is built on this).
    ///
    /// It runs the code recording runs, on every place recording runs it:
    /// - ``VCRConfiguration/pathFilter`` and ``VCRConfiguration/queryParametersFilter`` on request URLs, response
    ///   URLs, redirect hops and their `Location`, and the failing URL of errors;
    /// - ``VCRConfiguration/headersFilter`` and ``VCRConfiguration/secureHeaders`` on request headers (redirect
    ///   hops' requests too);
    /// - ``VCRConfiguration/postBodyFilter`` on request bodies, `Content-Length` kept in step;
    /// - ``VCRConfiguration/responseBodyFilter`` on response bodies (decoded first when still gzip- or
    ///   deflate-encoded), cut back at the original chunk boundaries, `Content-Length` kept in step;
    /// - with ``VCRConfiguration/filtersSecrets``, ``VCRConfiguration/secretNames`` or
    ///   ``VCRConfiguration/sensitiveData``: secret-named request and response headers (cookie names kept), query
    ///   parameters, body keys and URL passwords, and echoes of their values in the same interaction (`vcr redact
    ///   --secrets`). `vcr redact` turns these off otherwise.
    ///
    /// `beforeRecordRequest` and `beforeRecordResponse` are not run: they decide what gets recorded, and the tape
    /// is already recorded. Recording never filters response headers; `responseHeaders` does, for secrets such as
    /// `Set-Cookie`: each named field (compared case-insensitively, every occurrence) gets the given value, or is
    /// removed when the value is nil, in final and redirect responses.
    ///
    /// Whatever no filter changes keeps its exact value: header order and case, URLs, bytes of bodies (a compressed
    /// body in which nothing was replaced stays compressed), scene order and times.
    public func redacted(with configuration: VCRConfiguration, responseHeaders: [String: String?] = [:]) -> Tape {
        var configuration = configuration
        configuration.beforeRecordRequest = nil
        configuration.beforeRecordResponse = nil
        let redaction = TapeRedaction(configuration: configuration, responseHeaders: responseHeaders)

        // Bodies first, per request: a body filter needs the whole body, and its chunks may be interleaved with
        // other requests' scenes.
        var responses: [Int: (response: RecordedResponse, chunks: [Data])] = [:]
        for interaction in interactions {
            guard let response = interaction.response else { continue }
            let request = (interaction.redirects.last?.request ?? interaction.request).urlRequest
            responses[interaction.chapter] = redaction.response(response, chunks: interaction.chunks, request: request)
        }

        var requests: [Int: URLRequest] = [:]
        var result: [Scene] = []
        result.reserveCapacity(scenes.count)
        for var scene in scenes {
            let chapter = scene.chapter
            switch scene.event {
            case let .request(request):
                requests[chapter] = request.urlRequest
                scene.event = .request(redaction.request(request))
            case let .redirect(response, to: next):
                let request = requests[chapter] ?? next.urlRequest
                scene.event = .redirect(redaction.redirect(response, request: request), to: redaction.request(next))
                requests[chapter] = next.urlRequest
            case .response:
                if let filtered = responses[chapter] { scene.event = .response(filtered.response) }
            case .data:
                if let filtered = responses[chapter] {
                    // The filtered chunks take the places of the recorded ones, in order; a shorter body may need
                    // fewer chunks, and the data scenes left over go.
                    guard let chunk = filtered.chunks.first else { continue }
                    responses[chapter]?.chunks.removeFirst()
                    scene.event = .data(chunk)
                }
            case let .error(error):
                let request = requests[chapter] ?? URLRequest(url: URL(string: "about:blank")!)
                scene.event = .error(redaction.error(error, request: request))
            case .completion:
                break
            }
            result.append(scene)
        }
        return Tape(scenes: result)
    }
}

/// The pieces of ``Tape/redacted(with:responseHeaders:)``: each hands a recorded value to the filter code the
/// recorder uses and takes back only what the filters changed.
struct TapeRedaction {
    let configuration: VCRConfiguration
    let responseHeaders: [String: String?]

    /// A request (the first of a chapter, or a redirect hop's) through ``RequestFilter``.
    func request(_ recorded: RecordedRequest) -> RecordedRequest {
        let original = recorded.urlRequest
        guard let filtered = RequestFilter.filter(original, with: configuration) else { return recorded }
        var result = recorded
        result.url = RequestFilter.filter(urlString: recorded.url, of: original, with: configuration)

        var headers: [RecordedHeader] = []
        for header in recorded.headers {
            let before = original.value(forHTTPHeaderField: header.name)
            guard let after = filtered.value(forHTTPHeaderField: header.name) else { continue }
            headers.append(after == before ? header : RecordedHeader(header.name, after))
        }
        // A custom headers filter may add fields.
        let added = (filtered.allHTTPHeaderFields ?? [:]).filter { name, _ in
            !recorded.headers.contains { $0.name.equalsIgnoringASCIICase(name) }
        }
        headers.append(contentsOf: [RecordedHeader](added))
        result.headers = headers

        if let body = recorded.body, let filteredBody = filtered.httpBody, filteredBody != body {
            result.body = filteredBody
        }
        return result
    }

    /// Whether secrets are filtered by name or value (``VCRConfiguration/filtersSecrets``, `secretNames`,
    /// `sensitiveData`): only then are headers and bodies read for them, so that other redactions change nothing
    /// else.
    private var filtersSecrets: Bool {
        SecretFilter(configuration: configuration).isActive || !configuration.sensitiveData.isEmpty
    }

    /// Secret headers of a response (or hop) and echoes of the request's secrets in its headers and URL, as
    /// recording writes them; the recorded header order and case stay.
    private func filterSecrets(of response: inout RecordedResponse, request: URLRequest) {
        guard filtersSecrets else { return }
        var removed = RequestFilter.secrets(of: request, with: configuration)
        _ = ResponseFilter.filterSecrets(of: &response, body: Data(), removed: &removed, configuration: configuration)
    }

    /// A final response and its body through ``ResponseFilter``.
    func response(_ recorded: RecordedResponse, chunks: [Data], request: URLRequest) -> (RecordedResponse, [Data]) {
        var result = recorded
        hideSensitiveData(in: &result)
        ResponseFilter.filterURLs(of: &result, request: request, configuration: configuration)
        replaceHeaders(&result.headers)
        filterSecrets(of: &result, request: request)

        guard configuration.responseBodyFilter != nil || filtersSecrets,
              let httpResponse = recorded.httpURLResponse(fallbackURL: request.url),
              let outcome = ResponseFilter.filter(
                  response: httpResponse,
                  chunks: chunks,
                  request: request,
                  configuration: configuration,
                  requestSecrets: filtersSecrets ? RequestFilter.secrets(of: request, with: configuration) : SecretValues()
              )
        else { return (result, chunks) }

        let body = chunks.reduce(into: Data()) { $0.append($1) }
        var readable = body
        if let encoding = recorded.headers[field: "Content-Encoding"],
           let decoded = Inflate.decode(body, contentEncoding: encoding) {
            readable = decoded
        }
        let filteredBody = outcome.chunks.reduce(into: Data()) { $0.append($1) }
        // Nothing replaced: keep the recorded bytes (a compressed body stays compressed).
        guard filteredBody != readable else { return (result, chunks) }
        if result.headers[field: "Content-Encoding"] != nil, outcome.response.headers[field: "Content-Encoding"] == nil {
            result.headers[field: "Content-Encoding"] = nil
        }
        if result.headers[field: "Content-Length"] != nil {
            result.headers[field: "Content-Length"] = String(filteredBody.count)
        }
        return (result, outcome.chunks)
    }

    /// A redirect hop's response: its URL and `Location` as ``ResponseFilter/filterRedirect(_:to:request:configuration:)``
    /// writes them.
    func redirect(_ recorded: RecordedResponse, request: URLRequest) -> RecordedResponse {
        var result = recorded
        hideSensitiveData(in: &result)
        ResponseFilter.filterURLs(of: &result, request: request, configuration: configuration)
        replaceHeaders(&result.headers)
        filterSecrets(of: &result, request: request)
        return result
    }

    /// ``VCRConfiguration/sensitiveData`` before the URL filters, as recording does.
    private func hideSensitiveData(in response: inout RecordedResponse) {
        guard !configuration.sensitiveData.isEmpty else { return }
        SensitiveData(configuration).hiding(in: &response)
    }

    /// An error with its failing URL filtered, as ``ResponseFilter/filterError(_:request:configuration:)`` does.
    func error(_ recorded: RecordedError, request: URLRequest) -> RecordedError {
        var result = recorded
        if !configuration.sensitiveData.isEmpty { SensitiveData(configuration).hiding(in: &result) }
        ResponseFilter.filterFailingURL(of: &result, request: request, configuration: configuration)
        guard filtersSecrets else { return result }
        let removed = RequestFilter.secrets(of: request, with: configuration)
        for (key, value) in result.userInfo { result.userInfo[key] = removed.replacingEchoes(in: value) }
        return result
    }

    private func replaceHeaders(_ headers: inout [RecordedHeader]) {
        for (name, replacement) in responseHeaders {
            let matches = { (header: RecordedHeader) in header.name.equalsIgnoringASCIICase(name) }
            if let replacement {
                for index in headers.indices where matches(headers[index]) { headers[index].value = replacement }
            } else {
                headers.removeAll(where: matches)
            }
        }
    }
}
