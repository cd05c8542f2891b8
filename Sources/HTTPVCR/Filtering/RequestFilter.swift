import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Applies a configuration's request filters. The same function runs on the live request before matching and
/// on what is recorded, so a filtered request still matches its filtered recording.
enum RequestFilter {
    /// The request to match and record, or nil when `beforeRecordRequest` refuses it.
    static func filter(_ request: URLRequest, with configuration: VCRConfiguration) -> URLRequest? {
        var request = request
        if let beforeRecordRequest = configuration.beforeRecordRequest {
            guard let replaced = beforeRecordRequest(request) else { return nil }
            request = replaced
        }
        return filterIgnoringBeforeRecordRequest(request, with: configuration)
    }

    /// Every filter but `beforeRecordRequest`: for what must be written whatever that hook says, such as a
    /// redirect hop of a request that is being recorded.
    static func filterIgnoringBeforeRecordRequest(
        _ request: URLRequest,
        with configuration: VCRConfiguration
    ) -> URLRequest {
        var request = request
        if configuration.pathFilter != nil || configuration.queryParametersFilter != nil, let url = request.url {
            request.url = filter(url, of: request, with: configuration)
        }
        filterHeaders(&request, with: configuration)
        if let body = request.httpBody, !body.isEmpty, let postBodyFilter = configuration.postBodyFilter {
            let filtered: Data
            switch postBodyFilter {
            case let .replacing(replacements):
                filtered = BodyRewriter.rewrite(
                    body,
                    contentType: request.value(forHTTPHeaderField: "Content-Type"),
                    replacing: replacements
                )
            case let .custom(transform):
                filtered = transform(request, body)
            }
            if filtered != body {
                request.httpBody = filtered
                if request.value(forHTTPHeaderField: "Content-Length") != nil {
                    request.setValue(String(filtered.count), forHTTPHeaderField: "Content-Length")
                }
            }
        }
        return request
    }

    /// A URL with the path and query filters applied: for the request, and for every other place a URL is
    /// written (response URLs, redirect hops and their `Location`, the failing URL of an error).
    static func filter(_ url: URL, of request: URLRequest, with configuration: VCRConfiguration) -> URL {
        guard configuration.pathFilter != nil || configuration.queryParametersFilter != nil,
              var components = URLComponents(url: url, resolvingAgainstBaseURL: true)
        else { return url }
        var request = request
        request.url = url
        if let pathFilter = configuration.pathFilter {
            components.path = pathFilter(request)
        }
        if let queryFilter = configuration.queryParametersFilter, let query = components.percentEncodedQuery {
            let filtered = QueryFilter.apply(queryFilter, to: query, of: request)
            components.percentEncodedQuery = filtered.isEmpty ? nil : filtered
        }
        return components.url ?? url
    }

    /// ``filter(_:of:with:)`` on a URL held as text; text that is not a URL is returned unchanged.
    static func filter(urlString: String, of request: URLRequest, with configuration: VCRConfiguration) -> String {
        guard let url = URL(string: urlString) else { return urlString }
        return filter(url, of: request, with: configuration).absoluteString
    }

    private static func filterHeaders(_ request: inout URLRequest, with configuration: VCRConfiguration) {
        switch configuration.headersFilter {
        case let .replacing(replacements)?:
            let names = request.allHTTPHeaderFields?.keys.map { $0 } ?? []
            for (name, value) in replacements {
                for existing in names where existing.equalsIgnoringASCIICase(name) {
                    request.setValue(value, forHTTPHeaderField: existing)
                }
            }
        case let .custom(edit)?:
            var headers = request.allHTTPHeaderFields ?? [:]
            edit(request, &headers)
            request.allHTTPHeaderFields = headers
        case nil:
            break
        }
        // One read of the fields, compared by hand: a `value(forHTTPHeaderField:)` per secure name cost more
        // than matching the request.
        guard !configuration.secureHeaders.isEmpty, let fields = request.allHTTPHeaderFields else { return }
        for field in fields.keys
        where configuration.secureHeaders.contains(where: { $0.equalsIgnoringASCIICase(field) }) {
            request.setValue(VCRConfiguration.filteredPlaceholder, forHTTPHeaderField: field)
        }
    }
}

/// Query parameters filtered without disturbing the ones no filter touches: their order, repetitions and
/// percent-encoding stay as they were.
enum QueryFilter {
    static func apply(_ filter: QueryParametersFilter, to query: String, of request: URLRequest) -> String {
        var pairs = query.split(separator: "&", omittingEmptySubsequences: false).map { Pair(raw: String($0)) }
        switch filter {
        case let .replacing(replacements):
            pairs = pairs.compactMap { pair in
                guard let replacement = replacements[pair.name] else { return pair }
                return replacement.map { Pair(name: pair.name, value: $0) }
            }
        case let .custom(edit):
            var parameters: [String: String] = [:]
            for pair in pairs where parameters[pair.name] == nil { parameters[pair.name] = pair.value }
            let before = parameters
            edit(request, &parameters)
            pairs = pairs.compactMap { pair in
                guard let value = parameters[pair.name] else { return nil }
                return value == before[pair.name] ? pair : Pair(name: pair.name, value: value)
            }
            let added = parameters.keys.filter { before[$0] == nil }.sorted()
            pairs += added.map { Pair(name: $0, value: parameters[$0] ?? "") }
        }
        return pairs.map(\.raw).joined(separator: "&")
    }

    struct Pair {
        let raw: String
        let name: String
        let value: String

        init(raw: String) {
            self.raw = raw
            (name, value) = FormCoding.decodePair(raw)
        }

        init(name: String, value: String) {
            self.name = name
            self.value = value
            let encoded = FormCoding.encode(name, as: .query) + [Byte.equals] + FormCoding.encode(value, as: .query)
            raw = String(decoding: encoded, as: UTF8.self)
        }
    }
}
