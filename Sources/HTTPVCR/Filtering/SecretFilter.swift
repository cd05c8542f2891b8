import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCRCassettes

/// The secure defaults of a configuration: which header names and query or body keys hold secrets (the vocabulary
/// `vcr lint` uses, ``SecretNames``, plus ``VCRConfiguration/secretNames``), and, once they are filtered, the values
/// that were removed, so that the same values are replaced wherever they come back (an echo: httpbin's
/// `/anything`, an error body quoting the request).
struct SecretFilter {
    /// ``VCRConfiguration/filtersSecrets``.
    let filtersSecrets: Bool
    /// ``VCRConfiguration/secretNames``.
    let secretNames: Set<String>
    /// The ``VCRConfiguration/sensitiveData`` placeholders that stand for a value: a named placeholder wins over
    /// the secure defaults, so a value it stands for is kept as it (``isNamedPlaceholder(_:)``). A placeholder
    /// whose value is not set (in CI) stands for nothing: the defaults filter it as any value, so that a live
    /// request and a recording holding it still match.
    let namedPlaceholders: Set<String>

    /// Only these settings are kept: this is made for every live request, and a configuration is a large copy.
    init(configuration: VCRConfiguration) {
        filtersSecrets = configuration.filtersSecrets
        secretNames = configuration.secretNames
        // Resolving the placeholders calls the configuration's closures: only when there are some.
        namedPlaceholders = configuration.sensitiveData.isEmpty ? [] : SensitiveData(configuration).placeholders
    }

    /// Whether `value` is (or, after a scheme such as `Bearer`, holds only) a ``VCRConfiguration/sensitiveData``
    /// placeholder, percent-encoded or not: the value is hidden already, and stays as the placeholder.
    func isNamedPlaceholder(_ value: String) -> Bool {
        guard !namedPlaceholders.isEmpty else { return false }
        let text = value.trimmingCharacters(in: .whitespaces)
        if isNamed(text) { return true }
        guard let (_, credentials) = SecretValues.authorization(text) else { return false }
        return isNamed(credentials)
    }

    private func isNamed(_ text: String) -> Bool {
        namedPlaceholders.contains(text) || (text.contains("%") && namedPlaceholders.contains(FormCoding.decode(text)))
    }

    /// Names a `.replacing` filter of the configuration takes care of: its replacement wins over the placeholder.
    static func exempt<Value>(_ replacements: [String: Value]?) -> Set<String> {
        Set(replacements?.keys.map { $0 } ?? [])
    }

    /// Whether anything is filtered by name at all.
    var isActive: Bool { filtersSecrets || !secretNames.isEmpty }

    func isSecret(headerName name: String) -> Bool {
        if !secretNames.isEmpty, secretNames.contains(where: { $0.equalsIgnoringASCIICase(name) }) { return true }
        return filtersSecrets && SecretNames.isSecretRemembered(headerName: name)
    }

    func isSecret(key: String) -> Bool {
        if !secretNames.isEmpty, secretNames.contains(where: { $0.equalsIgnoringASCIICase(key) }) { return true }
        return filtersSecrets && SecretNames.isSecret(key: key)
    }

    /// A query parameter: a bare `key` counts too (`?key=AIza…` is an API key), as it does for `vcr lint`.
    func isSecret(queryName name: String) -> Bool {
        if !secretNames.isEmpty, secretNames.contains(where: { $0.equalsIgnoringASCIICase(name) }) { return true }
        return filtersSecrets && SecretNames.isSecret(key: name, inURL: true)
    }

    /// Whether a (percent-encoded) query has a parameter named like a secret, or a secret in a URL or query
    /// nested in a parameter's value (``filteringNestedSecrets(in:removed:depth:)``).
    func hasSecretName(inQuery query: String) -> Bool {
        query.split(separator: "&").contains { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            if isSecret(queryName: FormCoding.decode(String(parts[0]))) { return true }
            guard parts.count == 2, Self.mayNest(parts[1]) else { return false }
            var nested = SecretValues()
            return filteringNestedSecrets(in: FormCoding.decode(String(parts[1])), removed: &nested) != nil
        }
    }

    /// The secret-named keys of a JSON or form body.
    func secretKeys(in body: Data, contentType: String?) -> Set<String> {
        Set(BodyRewriter.keys(in: body, contentType: contentType).filter(isSecret(key:)))
    }

    /// The type a body is read as when looking for secrets: as the scanner reads it, so that what the save-time
    /// check would find is what recording filters. JSON is JSON whatever the server called it (`text/html` from
    /// a careless API), and an untyped body of `name=value` pairs is a form.
    static func typeForSecrets(of body: Data, contentType: String?) -> String? {
        if let contentType, isJSONOrForm(contentType) { return contentType }
        let first = body.first { !(UInt8(ascii: " ") == $0 || (9...13).contains($0)) }
        if first == UInt8(ascii: "{") || first == UInt8(ascii: "[") { return "application/json" }
        if contentType?.isEmpty ?? true,
           SecretScanner.looksLikeForm(String(decoding: body.prefix(1_000_000), as: UTF8.self)) {
            return "application/x-www-form-urlencoded"
        }
        return contentType
    }

    private static func isJSONOrForm(_ contentType: String) -> Bool {
        contentType.containsIgnoringASCIICase("json") || contentType.containsIgnoringASCIICase("x-www-form-urlencoded")
    }

    /// A JSON or form body with every secret-named key's value written as the placeholder, but for the keys the
    /// configuration replaces itself (`exempt`: its choice wins). Returns the secrets it removed in `removed`.
    func filterBody(_ body: Data, contentType: String?, exempt: Set<String> = [], removed: inout SecretValues) -> Data {
        guard isActive, !body.isEmpty else { return body }
        // Only JSON and forms have keys: an image, a stream of bytes or an HTML page is not read for them.
        guard let contentType = Self.typeForSecrets(of: body, contentType: contentType), Self.isJSONOrForm(contentType)
        else { return body }
        var body = body
        if contentType.containsIgnoringASCIICase("x-www-form-urlencoded") {
            body = filteringNestedSecrets(inForm: body, contentType: contentType, removed: &removed)
        }
        let keys = secretKeys(in: body, contentType: contentType).subtracting(exempt)
        guard !keys.isEmpty else { return body }
        let placeholder: String? = VCRConfiguration.filteredPlaceholder
        guard namedPlaceholders.isEmpty else {
            return filterBody(body, contentType: contentType, keepingNamedPlaceholders: keys, removed: &removed)
        }
        removed.insert(contentsOf: BodyRewriter.values(forKeys: keys, in: body, contentType: contentType))
        return BodyRewriter.rewrite(
            body, contentType: contentType, replacing: Dictionary(uniqueKeysWithValues: keys.map { ($0, placeholder) })
        )
    }

    /// ``filterBody(_:contentType:exempt:removed:)`` where named placeholders win: a key whose values are all
    /// placeholders keeps them, and a key with one value is written as a header of its name would be (a cookie
    /// list echoed in JSON keeps its placeholder cookies, `Bearer <TOKEN>` stays).
    private func filterBody(
        _ body: Data, contentType: String, keepingNamedPlaceholders keys: Set<String>, removed: inout SecretValues
    ) -> Data {
        var replacements: [String: String?] = [:]
        for key in keys {
            let values = Set(BodyRewriter.values(forKeys: [key], in: body, contentType: contentType))
            if values.allSatisfy(isNamedPlaceholder) { continue }
            if values.count == 1, let value = values.first {
                replacements[key] = filterHeader(name: key, value: value, removed: &removed)
            } else {
                removed.insert(contentsOf: values)
                replacements[key] = VCRConfiguration.filteredPlaceholder
            }
        }
        guard !replacements.isEmpty else { return body }
        return BodyRewriter.rewrite(body, contentType: contentType, replacing: replacements)
    }

    /// Adds the secrets `text` holds by their shape (``SecretShapes``) to `removed`, whatever they are called, so
    /// that they are replaced there and wherever else they come back. With the secure defaults on.
    func takeShapedSecrets(in text: String, into removed: inout SecretValues) {
        guard filtersSecrets, SecretShapes.mayHoldMatch(in: text) else { return }
        for match in SecretShapes.matches(in: text, isPlaceholder: { SecretNames.isPlaceholder($0) }) {
            removed.insert(match.secret)
        }
    }

    /// The same for a body read as UTF-8 text (one that is not text holds no shape to find).
    func takeShapedSecrets(in body: Data, into removed: inout SecretValues) {
        guard filtersSecrets, !body.isEmpty, let text = String(data: body, encoding: .utf8) else { return }
        takeShapedSecrets(in: text, into: &removed)
    }

    /// A header value as it is written: a cookie list keeps its names and attributes, every other secret header
    /// becomes the placeholder. Returns the secrets it removed in `removed`.
    /// A value that is a named placeholder (``isNamedPlaceholder(_:)``) stays, and so does each cookie's.
    func filterHeader(name: String, value: String, removed: inout SecretValues) -> String {
        guard !isNamedPlaceholder(value) else { return value }
        let lower = name.lowercased()
        if lower == "set-cookie" || lower == "cookie" {
            if namedPlaceholders.isEmpty { removed.insert(value) }
            return SecretValues.filteringCookies(value, removed: &removed, keeping: isNamedPlaceholder)
        }
        removed.insert(value)
        if let (scheme, credentials) = SecretValues.authorization(value) {
            removed.insert(credentials)
            if scheme.lowercased() == "basic", let decoded = Data(base64Encoded: credentials),
               let text = String(data: decoded, encoding: .utf8) {
                removed.insert(text)
                if let colon = text.firstIndex(of: ":") { removed.insert(String(text[text.index(after: colon)...])) }
            }
        }
        return VCRConfiguration.filteredPlaceholder
    }
}

/// Values that were filtered out of an interaction: replaced wherever they come back, in their plain,
/// percent-encoded and base64 forms. Short values (under ``minimumLength`` characters) are not chased: they would
/// match too much.
struct SecretValues {
    static let minimumLength = 5
    /// ``VCRConfiguration/filteredPlaceholder`` as it is written in a URL: `%5BFILTERED%5D`.
    static let urlPlaceholder = String(
        decoding: FormCoding.encode(VCRConfiguration.filteredPlaceholder, as: .query), as: UTF8.self
    )

    private(set) var values: Set<String> = []
    private static let lettersAndDigits = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    )

    var isEmpty: Bool { values.isEmpty }

    mutating func insert(_ value: String) {
        let value = value.trimmingCharacters(in: .whitespaces)
        guard value.count >= Self.minimumLength, !SecretNames.isPlaceholder(value),
              value != VCRConfiguration.filteredPlaceholder
        else { return }
        values.insert(value)
    }

    mutating func insert(contentsOf values: some Sequence<String>) {
        for value in values { insert(value) }
    }

    mutating func formUnion(_ other: SecretValues) {
        values.formUnion(other.values)
    }

    /// The forms a value takes where it comes back, longest first so that a longer form is replaced whole.
    private var forms: [String] {
        var forms: Set<String> = []
        for value in values {
            forms.insert(value)
            forms.insert(String(decoding: FormCoding.encode(value, as: .query), as: UTF8.self))
            forms.insert(String(decoding: FormCoding.encode(value, as: .body), as: UTF8.self))
            // As a server echoing a URL may write it: every byte but letters and digits encoded (`%2D` for `-`).
            if let encoded = value.addingPercentEncoding(withAllowedCharacters: Self.lettersAndDigits) {
                forms.insert(encoded)
            }
            forms.insert(Data(value.utf8).base64EncodedString())
        }
        return forms.sorted { $0.count > $1.count }
    }

    func replacingEchoes(in text: String) -> String {
        replacingEchoes(in: text, with: VCRConfiguration.filteredPlaceholder)
    }

    /// In a URL the placeholder is written percent-encoded, as the query filters write it, so it stays a URL.
    func replacingEchoes(inURL text: String) -> String {
        replacingEchoes(in: text, with: Self.urlPlaceholder)
    }

    private func replacingEchoes(in text: String, with placeholder: String) -> String {
        guard !values.isEmpty else { return text }
        var result = text
        for form in forms where result.contains(form) {
            result = result.replacingOccurrences(of: form, with: placeholder)
        }
        return result
    }

    func replacingEchoes(in data: Data) -> Data {
        guard !values.isEmpty, !data.isEmpty else { return data }
        let placeholder = Data(VCRConfiguration.filteredPlaceholder.utf8)
        return forms.reduce(data) { $0.replacingOccurrences(of: Data($1.utf8), with: placeholder) }
    }

    /// `Bearer abc…` → ("Bearer", "abc…").
    static func authorization(_ value: String) -> (scheme: String, credentials: String)? {
        let parts = value.split(separator: " ", maxSplits: 1)
        guard parts.count == 2 else { return nil }
        return (String(parts[0]), String(parts[1]).trimmingCharacters(in: .whitespaces))
    }

    /// `a=1; b=2` (a `Cookie`) or `session=abc; Path=/; HttpOnly` (a `Set-Cookie`) with each cookie's value written
    /// as the placeholder: names and attributes stay, so a replayed `Set-Cookie` still parses. Several `Set-Cookie`
    /// fields joined into one (`a=1; Path=/, b=2`, as corelibs hands them over) are taken apart first: every cookie's
    /// value goes, not only the first one's.
    static func filteringCookies(
        _ value: String, removed: inout SecretValues, keeping isKept: (String) -> Bool = { _ in false }
    ) -> String {
        let attributes = SecretNames.cookieAttributes
        let isSetCookie = value.contains { $0 == ";" } && value.split(separator: ";").dropFirst().contains { part in
            attributes.contains(part.split(separator: "=").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? "")
        }
        if !isSetCookie, value.contains(",") {
            // Cookies joined by commas: each is one `Set-Cookie`.
            let cookies = setCookies(in: value)
            if cookies.count > 1 {
                return cookies.map { filteringCookies(String($0), removed: &removed, keeping: isKept) }
                    .joined(separator: ",")
            }
        }
        var parts: [String] = []
        for (index, part) in value.split(separator: ";", omittingEmptySubsequences: false).enumerated() {
            let piece = String(part)
            guard let equals = piece.firstIndex(of: "=") else {
                parts.append(piece)
                continue
            }
            let name = String(piece[..<equals])
            let key = name.trimmingCharacters(in: .whitespaces).lowercased()
            if isSetCookie && (index > 0 || attributes.contains(key)) {
                parts.append(piece)
                continue
            }
            let cookie = String(piece[piece.index(after: equals)...])
            guard !isKept(cookie) else {
                parts.append(piece)
                continue
            }
            removed.insert(cookie)
            parts.append(name + "=" + VCRConfiguration.filteredPlaceholder)
        }
        let filtered = parts.joined(separator: ";")
        guard isSetCookie, value.contains(",") else { return filtered }
        // A `Set-Cookie` whose attributes hold a comma may still be several cookies (`a=1; Path=/, b=2; Path=/`).
        let cookies = setCookies(in: value)
        guard cookies.count > 1 else { return filtered }
        return cookies.map { filteringCookies(String($0), removed: &removed, keeping: isKept) }.joined(separator: ",")
    }

    /// The cookies of `Set-Cookie` fields joined by commas: a comma starts the next cookie where a cookie name and
    /// `=` follow it, not inside an `Expires` date (`Expires=Wed, 21 Oct 2026 07:28:00 GMT`).
    static func setCookies(in value: String) -> [Substring] {
        var cookies: [Substring] = []
        var start = value.startIndex
        var index = value.startIndex
        while let comma = value[index...].firstIndex(of: ",") {
            let rest = value[value.index(after: comma)...].drop { $0 == " " || $0 == "\t" }
            let name = rest.prefix { $0 != "=" && $0 != ";" && $0 != "," }
            if !name.isEmpty, name.allSatisfy({ !$0.isWhitespace }), rest.dropFirst(name.count).first == "=" {
                cookies.append(value[start..<comma])
                start = value.index(after: comma)
            }
            index = value.index(after: comma)
        }
        cookies.append(value[start...])
        return cookies
    }
}
