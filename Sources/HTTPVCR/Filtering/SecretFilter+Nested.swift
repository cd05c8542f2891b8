import Foundation

/// Secrets in a URL or query nested in a parameter's value: `?url=/status/200%3Ftoken%3DX` holds `X`, and
/// `redirect_uri=https%3A%2F%2Fapp%2Fcb%3Fcode%3DC` holds `C`. They are filtered in the request that carries them,
/// so a redirect chain's first request is filtered before any hop reveals the secret, and the live request still
/// matches its recording.
extension SecretFilter {
    /// Names that hold a secret only in a URL nested in a parameter: OAuth's authorization `code` in a
    /// `redirect_uri`. In a URL of its own `code` is too common a name (a country, a status) to filter.
    private static let nestedSecretNames: Set<String> = ["code"]

    /// How deep parameters are read for nested URLs: a URL in a URL in a URL (`url=/redirect-to?url=/get?token=X`).
    private static let nestingDepth = 4

    /// Whether a parameter's value, as it stands in a query or form, may hold a query of its own: an `=`, most
    /// often percent-encoded. Most values hold none, and are not decoded.
    static func mayNest(_ raw: Substring) -> Bool {
        raw.contains("=") || raw.contains("%3D") || raw.contains("%3d")
    }

    /// `value` (a parameter's, decoded) with the secret-named parameters of the URL or query nested in it written
    /// as the placeholder, at any depth; nil when it holds none. The values go to `removed`, to be chased as echoes.
    /// Parameters no filter touches keep their exact bytes.
    func filteringNestedSecrets(in value: String, removed: inout SecretValues, depth: Int = 0) -> String? {
        guard isActive, depth < Self.nestingDepth, value.contains("=") else { return nil }
        let queryStart = value.firstIndex(of: "?").map { value.index(after: $0) } ?? value.startIndex
        let fragmentStart = value[queryStart...].firstIndex(of: "#")
        var changed = false
        var result = String(value[..<queryStart])
        result += filteringPairs(value[queryStart..<(fragmentStart ?? value.endIndex)], &changed, &removed, depth)
        if let fragmentStart {
            // `#access_token=…`, as an implicit grant's redirect carries it.
            result += "#" + filteringPairs(value[value.index(after: fragmentStart)...], &changed, &removed, depth)
        }
        return changed ? result : nil
    }

    private func filteringPairs(
        _ text: Substring, _ changed: inout Bool, _ removed: inout SecretValues, _ depth: Int
    ) -> String {
        text.split(separator: "&", omittingEmptySubsequences: false).map { raw -> String in
            let pair = QueryFilter.Pair(raw: String(raw))
            let isSecret = isSecret(queryName: pair.name)
                || (filtersSecrets && Self.nestedSecretNames.contains(pair.name.lowercased()))
            if isSecret, raw.contains("="), pair.value != VCRConfiguration.filteredPlaceholder,
               !isNamedPlaceholder(pair.value) {
                removed.insert(pair.value)
                changed = true
                return QueryFilter.Pair(name: pair.name, value: VCRConfiguration.filteredPlaceholder).raw
            }
            guard Self.mayNest(raw),
                  let inner = filteringNestedSecrets(in: pair.value, removed: &removed, depth: depth + 1)
            else { return String(raw) }
            changed = true
            return QueryFilter.Pair(name: pair.name, value: inner).raw
        }.joined(separator: "&")
    }

    /// A form whose fields nest URLs with secrets (`redirect_uri=https%3A%2F%2Fapp%2Fcb%3Fcode%3DC`), those
    /// fields rewritten by ``filteringNestedSecrets(in:removed:depth:)``.
    func filteringNestedSecrets(inForm body: Data, contentType: String, removed: inout SecretValues) -> Data {
        // A field's `=` is percent-encoded in a form: without one, no field nests a query.
        let text = String(decoding: body.prefix(1_000_000), as: UTF8.self)
        guard text.contains("%3D") || text.contains("%3d") else { return body }
        var replacements: [String: String?] = [:]
        for key in Set(BodyRewriter.keys(in: body, contentType: contentType)) {
            let values = Set(BodyRewriter.values(forKeys: [key], in: body, contentType: contentType))
            var nested = SecretValues()
            let filtered = values.map { filteringNestedSecrets(in: $0, removed: &nested) }
            guard !nested.isEmpty else { continue }
            removed.formUnion(nested)
            // One value: rewritten in place. Several: their secrets are chased as echoes.
            if values.count == 1, let only = filtered.first, let only { replacements[key] = only }
        }
        guard !replacements.isEmpty else { return body }
        return BodyRewriter.rewrite(body, contentType: contentType, replacing: replacements)
    }
}
