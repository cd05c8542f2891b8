import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCRCassettes

/// Applies a configuration's request filters. The same function runs on the live request before matching and
/// on what is recorded, so a filtered request still matches its filtered recording.
enum RequestFilter {
    /// The request to match and record, or nil when `beforeRecordRequest` refuses it.
    static func filter(_ request: URLRequest, with configuration: VCRConfiguration) -> URLRequest? {
        filterForMatching(request, with: configuration)?.request
    }

    /// ``filter(_:with:)``, with the text of the URL the filters read, which matching reads too. `secureHeaders`:
    /// the configuration's, made once by the caller.
    static func filterForMatching(
        _ request: URLRequest,
        with configuration: VCRConfiguration,
        secureHeaders: SecureHeaderNames? = nil
    ) -> FilteredRequest? {
        var request = request
        if let beforeRecordRequest = configuration.beforeRecordRequest {
            checkNoLockHeld(running: "beforeRecordRequest")
            guard let replaced = beforeRecordRequest(request) else { return nil }
            request = replaced
        }
        return filterForMatchingIgnoringBeforeRecordRequest(request, with: configuration, secureHeaders: secureHeaders)
    }

    /// Every filter but `beforeRecordRequest`: for what must be written whatever that hook says, such as a
    /// redirect hop of a request that is being recorded.
    static func filterIgnoringBeforeRecordRequest(
        _ request: URLRequest,
        with configuration: VCRConfiguration
    ) -> URLRequest {
        filterForMatchingIgnoringBeforeRecordRequest(request, with: configuration).request
    }

    /// ``filterIgnoringBeforeRecordRequest(_:with:)``, with the text of the URL the filters read.
    static func filterForMatchingIgnoringBeforeRecordRequest(
        _ request: URLRequest,
        with configuration: VCRConfiguration,
        secureHeaders: SecureHeaderNames? = nil
    ) -> FilteredRequest {
        var removed = SecretValues()
        return filterIgnoringBeforeRecordRequest(
            request, with: configuration, secureHeaders: secureHeaders, removed: &removed
        )
    }

    /// The secrets the filters take out of `request` (``VCRConfiguration/filtersSecrets``): what a recorded
    /// response must not echo either.
    static func secrets(of request: URLRequest, with configuration: VCRConfiguration) -> SecretValues {
        var removed = SecretValues()
        _ = filterIgnoringBeforeRecordRequest(request, with: configuration, secureHeaders: nil, removed: &removed)
        return removed
    }

    private static func filterIgnoringBeforeRecordRequest(
        _ request: URLRequest,
        with configuration: VCRConfiguration,
        secureHeaders: SecureHeaderNames?,
        removed: inout SecretValues
    ) -> FilteredRequest {
        var request = request
        // Named placeholders first: a value the configuration names is written as its own placeholder.
        // Only when there is some: making it copies the whole configuration.
        if !configuration.sensitiveData.isEmpty { SensitiveData(configuration).hiding(in: &request) }
        let secrets = SecretFilter(configuration: configuration)
        // Read once: reading a URLRequest's URL copies it. Only the URL filters below change it.
        var url = request.url
        if configuration.pathFilter != nil || configuration.queryParametersFilter != nil || secrets.isActive,
           let current = url {
            // Setting a URLRequest's URL costs as much as matching it: only when it changed.
            let filtered = filter(current, of: request, with: configuration, removed: &removed)
            if filtered != current {
                request.url = filtered
                url = filtered
            }
        }
        filterHeaders(
            &request, with: configuration, secrets: secrets,
            secureHeaders: secureHeaders ?? SecureHeaderNames(configuration.secureHeaders), removed: &removed
        )
        if let body = request.httpBody, !body.isEmpty {
            var filtered = body
            let contentType = request.value(forHTTPHeaderField: "Content-Type")
            switch configuration.postBodyFilter {
            case let .replacing(replacements)?:
                let removedKeys = Set(replacements.filter { $0.value == nil }.keys)
                if !removedKeys.isEmpty {
                    removed.insert(contentsOf: BodyRewriter.values(forKeys: removedKeys, in: filtered, contentType: contentType))
                }
                filtered = BodyRewriter.rewrite(filtered, contentType: contentType, replacing: replacements)
            case let .custom(transform)?:
                checkNoLockHeld(running: "a custom body filter")
                filtered = transform(request, filtered)
            case nil:
                break
            }
            var exempt: [String: String?]?
            if case let .replacing(replacements)? = configuration.postBodyFilter { exempt = replacements }
            filtered = secrets.filterBody(
                filtered, contentType: contentType, exempt: SecretFilter.exempt(exempt), removed: &removed
            )
            setBody(filtered, of: &request)
            secrets.takeShapedSecrets(in: filtered, into: &removed)
        }
        let absoluteURL = url?.absoluteString
        if let absoluteURL { secrets.takeShapedSecrets(in: absoluteURL, into: &removed) }
        // Replacing echoes may change the URL: matching then reads it again.
        guard removed.isEmpty else { return FilteredRequest(replacingEchoes(of: removed, in: request)) }
        return FilteredRequest(request, absoluteURL: url?.baseURL == nil ? absoluteURL : nil)
    }

    /// What was filtered out, wherever else the request carries it: its URL (a password in a path), the headers
    /// left in clear, the body. Deterministic, so the live request and its recording still match.
    static func replacingEchoes(of removed: SecretValues, in request: URLRequest) -> URLRequest {
        guard !removed.isEmpty else { return request }
        var request = request
        replaceEchoes(of: removed, in: &request)
        return request
    }

    private static func replaceEchoes(of removed: SecretValues, in request: inout URLRequest) {
        if let url = request.url, let echoed = URL(string: removed.replacingEchoes(inURL: url.absoluteString)) {
            request.url = echoed
        }
        for (name, value) in request.allHTTPHeaderFields ?? [:] where value != VCRConfiguration.filteredPlaceholder {
            let echoed = removed.replacingEchoes(in: value)
            if echoed != value { request.setValue(echoed, forHTTPHeaderField: name) }
        }
        if let body = request.httpBody { setBody(removed.replacingEchoes(in: body), of: &request) }
    }

    private static func setBody(_ body: Data, of request: inout URLRequest) {
        guard body != request.httpBody else { return }
        request.httpBody = body
        if request.value(forHTTPHeaderField: "Content-Length") != nil {
            request.setValue(String(body.count), forHTTPHeaderField: "Content-Length")
        }
    }

    /// A URL with the path and query filters applied: for the request, and for every other place a URL is
    /// written (response URLs, redirect hops and their `Location`, the failing URL of an error).
    static func filter(_ url: URL, of request: URLRequest, with configuration: VCRConfiguration) -> URL {
        var removed = SecretValues()
        return filter(url, of: request, with: configuration, removed: &removed)
    }

    static func filter(
        _ url: URL,
        of request: URLRequest,
        with configuration: VCRConfiguration,
        removed: inout SecretValues
    ) -> URL {
        let secrets = SecretFilter(configuration: configuration)
        // Parsing a URL into components costs more than the rest of the filters: only when a name is there to take.
        let filtersByName = secrets.isActive
            && (url.user != nil || url.password != nil || url.query.map(secrets.hasSecretName(inQuery:)) == true)
        guard configuration.pathFilter != nil || configuration.queryParametersFilter != nil || filtersByName,
              var components = URLComponents(url: url, resolvingAgainstBaseURL: true)
        else { return url }
        var request = request
        request.url = url
        if let pathFilter = configuration.pathFilter {
            checkNoLockHeld(running: "pathFilter")
            components.path = pathFilter(request)
        }
        if let queryFilter = configuration.queryParametersFilter, let query = components.percentEncodedQuery {
            let filtered = QueryFilter.apply(queryFilter, to: query, of: request, removed: &removed)
            components.percentEncodedQuery = filtered.isEmpty ? nil : filtered
        }
        if filtersByName {
            let placeholder = SecretValues.urlPlaceholder
            // The userinfo of a URL is a credential, whatever it holds.
            if let password = components.password, !secrets.isNamedPlaceholder(password) {
                removed.insert(password)
                components.percentEncodedPassword = placeholder
            }
            if components.user != nil { components.percentEncodedUser = placeholder }
            if let query = components.percentEncodedQuery {
                let pairs = query.split(separator: "&", omittingEmptySubsequences: false).map { QueryFilter.Pair(raw: String($0)) }
                var exempt: Set<String> = []
                if case let .replacing(replacements)? = configuration.queryParametersFilter {
                    exempt = SecretFilter.exempt(replacements)
                }
                let secret = pairs.filter { pair in
                    secrets.isSecret(queryName: pair.name) && !exempt.contains(pair.name)
                        && pair.value != VCRConfiguration.filteredPlaceholder && !secrets.isNamedPlaceholder(pair.value)
                }
                if !secret.isEmpty {
                    removed.insert(contentsOf: secret.map(\.value))
                    let replacing = Dictionary(secret.map { ($0.name, Optional(VCRConfiguration.filteredPlaceholder)) },
                                               uniquingKeysWith: { first, _ in first })
                    var replaced = SecretValues()
                    components.percentEncodedQuery = QueryFilter.apply(
                        .replacing(replacing), to: query, of: request, removed: &replaced
                    )
                }
                filterNestedSecrets(in: &components, secrets: secrets, removed: &removed)
            }
        }
        return components.url ?? url
    }

    /// The parameters whose values nest URLs with secrets, rewritten (``SecretFilter/filteringNestedSecrets(in:removed:depth:)``);
    /// the others keep their bytes.
    private static func filterNestedSecrets(
        in components: inout URLComponents, secrets: SecretFilter, removed: inout SecretValues
    ) {
        guard let query = components.percentEncodedQuery, SecretFilter.mayNest(Substring(query)) else { return }
        var changed = false
        let pairs = query.split(separator: "&", omittingEmptySubsequences: false).map { raw -> String in
            guard let equals = raw.firstIndex(of: "="), SecretFilter.mayNest(raw[raw.index(after: equals)...]) else {
                return String(raw)
            }
            let pair = QueryFilter.Pair(raw: String(raw))
            guard let inner = secrets.filteringNestedSecrets(in: pair.value, removed: &removed) else { return String(raw) }
            changed = true
            return QueryFilter.Pair(name: pair.name, value: inner).raw
        }
        if changed { components.percentEncodedQuery = pairs.joined(separator: "&") }
    }

    /// ``filter(_:of:with:)`` on a URL held as text; text that is not a URL is returned unchanged.
    static func filter(urlString: String, of request: URLRequest, with configuration: VCRConfiguration) -> String {
        guard let url = URL(string: urlString) else { return urlString }
        return filter(url, of: request, with: configuration).absoluteString
    }

    private static func filterHeaders(
        _ request: inout URLRequest,
        with configuration: VCRConfiguration,
        secrets: SecretFilter,
        secureHeaders: SecureHeaderNames,
        removed: inout SecretValues
    ) {
        switch configuration.headersFilter {
        case let .replacing(replacements)?:
            let fields = request.allHTTPHeaderFields ?? [:]
            for (name, value) in replacements {
                for (existing, old) in fields where existing.equalsIgnoringASCIICase(name) {
                    if value == nil { removed.insert(old) }
                    request.setValue(value, forHTTPHeaderField: existing)
                }
            }
        case let .custom(edit)?:
            let before = request.allHTTPHeaderFields ?? [:]
            var headers = before
            checkNoLockHeld(running: "a custom header filter")
            edit(request, &headers)
            for (name, old) in before where headers[name] == nil { removed.insert(old) }
            request.allHTTPHeaderFields = headers
        case nil:
            break
        }
        // One read of the fields, compared by hand: a `value(forHTTPHeaderField:)` per secure name cost more
        // than matching the request.
        guard !secureHeaders.names.isEmpty || secrets.isActive, let fields = request.allHTTPHeaderFields else {
            return
        }
        var exempt: [String] = []
        if case let .replacing(replacements)? = configuration.headersFilter { exempt = Array(replacements.keys) }
        for (field, value) in fields where !isFilteredPlaceholder(value) && !secrets.isNamedPlaceholder(value) {
            guard secureHeaders.contains(field)
                || (secrets.isSecret(headerName: field) && !exempt.contains(where: { $0.equalsIgnoringASCIICase(field) }))
            else {
                // A header whose name says nothing can still hold a credential by its shape.
                secrets.takeShapedSecrets(in: value, into: &removed)
                continue
            }
            // With the secure defaults on, a cookie list keeps its names, as `Set-Cookie` does.
            let written = secrets.filterHeader(name: field, value: value, removed: &removed)
            request.setValue(
                configuration.filtersSecrets ? written : VCRConfiguration.filteredPlaceholder, forHTTPHeaderField: field
            )
        }
    }
}

/// `value == VCRConfiguration.filteredPlaceholder`, most values told apart by their first byte: an ASCII byte
/// stays first however the text is normalized, and comparing a long string with a short one cost more than the
/// rest of the test.
func isFilteredPlaceholder(_ value: String) -> Bool {
    if let first = value.utf8.first, first < 0x80, first != UInt8(ascii: "[") { return false }
    return value == VCRConfiguration.filteredPlaceholder
}

/// Query parameters filtered without disturbing the ones no filter touches: their order, repetitions and
/// percent-encoding stay as they were.
enum QueryFilter {
    /// `removed` gets the values of the parameters the filter takes out: a removed value is a filtered one, and its
    /// echoes (inside another parameter, a redirect's `Location`) go too.
    static func apply(
        _ filter: QueryParametersFilter, to query: String, of request: URLRequest, removed: inout SecretValues
    ) -> String {
        var pairs = query.split(separator: "&", omittingEmptySubsequences: false).map { Pair(raw: String($0)) }
        switch filter {
        case let .replacing(replacements):
            pairs = pairs.compactMap { pair in
                guard let replacement = replacements[pair.name] else { return pair }
                guard let replacement else {
                    removed.insert(pair.value)
                    return nil
                }
                return Pair(name: pair.name, value: replacement)
            }
        case let .custom(edit):
            var parameters: [String: String] = [:]
            for pair in pairs where parameters[pair.name] == nil { parameters[pair.name] = pair.value }
            let before = parameters
            checkNoLockHeld(running: "a custom query filter")
            edit(request, &parameters)
            pairs = pairs.compactMap { pair in
                guard let value = parameters[pair.name] else {
                    removed.insert(pair.value)
                    return nil
                }
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
