import Foundation

/// One secret in clear on a tape.
package struct Finding: Equatable, CustomStringConvertible {
    /// The request's number, as `vcr show` counts them (1-based, in the order requests start).
    package var request: Int
    /// Where on the request: `request header Authorization`, `response body JSON key json.password`.
    package var location: String
    /// What was found, with the secret shortened: `value in clear ("Basic c2Vj…")`.
    package var what: String
    /// What keeps it out of the file.
    package var remedy: Remedy

    package enum Remedy: Equatable {
        /// A header, parameter or key whose name is not known to be secret.
        case name(String)
        /// A value of a known shape (a JWT, a bearer token) somewhere unnamed.
        case value
        /// A password in a URL's authority.
        case urlPassword
    }

    package var description: String { "request \(request): \(location): \(what)" }

    /// How to filter this secret, and how to keep its value for a test instead, in words.
    package var suggestion: String {
        let keep = "to keep the value for the test, write a placeholder in its place with "
            + "VCRConfiguration.sensitiveData (the file keeps the placeholder, the test gets the value)"
        switch remedy {
        case .name(let name):
            return "\"\(name)\" names a secret: VCRConfiguration.filtersSecrets (on by default) writes it as "
                + "[FILTERED]; " + keep
        case .value:
            return "a credential by its shape: VCRConfiguration.filtersSecrets (on by default) writes it as "
                + "[FILTERED] wherever it stands; " + keep
        case .urlPassword:
            return "VCRConfiguration.filtersSecrets (on by default) writes it as [FILTERED], or take the password "
                + "out in beforeRecordRequest"
        }
    }
}

/// Looks for secrets left in clear on a tape: credentials in headers, secret-named query parameters, form
/// fields and JSON keys, and well-known token shapes (bearer tokens, JWTs, AWS access keys, private key blocks
/// and a few vendors' API keys) anywhere in headers, URLs and bodies. Bodies are read decompressed when they are
/// still gzip- or deflate-encoded, and base64 bodies are read decoded as well.
///
/// Values that filters write instead of a secret (`[FILTERED]`, `<filtered>`, `REDACTED`, `***`, …) are not
/// findings; more can be added with ``extraPlaceholders``.
package struct SecretScanner {
    /// Exact values (besides the built-in ones) that stand for a removed secret.
    package var extraPlaceholders: Set<String> = []

    package init(extraPlaceholders: Set<String> = []) {
        self.extraPlaceholders = extraPlaceholders
    }

    // MARK: Placeholders

    package func isPlaceholder(_ value: String) -> Bool {
        SecretNames.isPlaceholder(value, extra: extraPlaceholders)
    }

    /// A header value that hides its secret: a placeholder, a scheme and a placeholder (`Bearer [FILTERED]`), or,
    /// for cookies, a placeholder for every cookie's value (`session=[FILTERED]; Path=/`).
    func isPlaceholderHeaderValue(_ value: String, name: String) -> Bool {
        if isPlaceholder(value) { return true }
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if let space = trimmed.firstIndex(of: " "), !trimmed[..<space].contains("="),
           isPlaceholder(String(trimmed[trimmed.index(after: space)...])) {
            return true
        }
        guard name.lowercased().contains("cookie") else { return false }
        var values: [String] = []
        for segment in trimmed.split(whereSeparator: { $0 == ";" || $0 == "," }) {
            let parts = segment.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2 else { continue }
            let name = parts[0].trimmingCharacters(in: .whitespaces).lowercased()
            guard !SecretNames.cookieAttributes.contains(name) else { continue }
            values.append(String(parts[1]))
        }
        return !values.isEmpty && values.allSatisfy { isPlaceholder($0) || $0.isEmpty }
    }

    // MARK: Scanning

    package func scan(_ tape: Tape) -> [Finding] {
        tape.interactions.enumerated().flatMap { scan($0.element, request: $0.offset + 1) }
    }

    package func scan(_ interaction: Interaction, request number: Int) -> [Finding] {
        var report = Report(request: number)
        scanRequest(interaction.request, as: "request", into: &report)
        for (index, redirect) in interaction.redirects.enumerated() {
            let name = "redirect \(index + 1)"
            scanURL(redirect.response.url, as: "\(name) response URL", into: &report)
            scanHeaders(redirect.response.headers, as: "\(name) response", into: &report)
            scanRequest(redirect.request, as: "\(name) request", into: &report)
        }
        if let response = interaction.response {
            scanURL(response.url, as: "response URL", into: &report)
            scanHeaders(response.headers, as: "response", into: &report)
            scanBody(
                interaction.body,
                contentType: response.headers[field: "Content-Type"],
                contentEncoding: response.headers[field: "Content-Encoding"],
                as: "response body",
                into: &report
            )
        }
        if let error = interaction.error {
            for key in error.userInfo.keys.sorted() {
                let value = error.userInfo[key] ?? ""
                if key.lowercased().contains("url") {
                    scanURL(value, as: "error \(key)", into: &report)
                } else {
                    scanPatterns(value, as: "error \(key)", into: &report)
                }
            }
        }
        return report.findings
    }

    /// Findings of one request, without repeats: the same secret in the same place once, a pattern inside a
    /// value already reported there not again, and a URL secret (the request's URL is usually also the
    /// response's and the error's) only where it is first seen.
    private struct Report {
        let request: Int
        var findings: [Finding] = []
        var reportedByLocation: [String: [String]] = [:]
        var reportedInURLs: Set<String> = []

        init(request: Int) { self.request = request }

        mutating func add(_ location: String, base: String, value: String, what: String, remedy: Finding.Remedy) {
            guard !(reportedByLocation[base] ?? []).contains(where: { $0.contains(value) }) else { return }
            reportedByLocation[base, default: []].append(value)
            findings.append(Finding(request: request, location: location, what: what, remedy: remedy))
        }

        mutating func addURLSecret(_ location: String, value: String, what: String, remedy: Finding.Remedy) {
            guard reportedInURLs.insert(value).inserted else { return }
            findings.append(Finding(request: request, location: location, what: what, remedy: remedy))
        }
    }

    private func scanRequest(_ request: RecordedRequest, as name: String, into report: inout Report) {
        scanURL(request.url, as: "\(name) URL", into: &report)
        scanHeaders(request.headers, as: name, into: &report)
        if let body = request.body {
            scanBody(
                body,
                contentType: request.headers[field: "Content-Type"],
                contentEncoding: request.headers[field: "Content-Encoding"],
                as: "\(name) body",
                into: &report
            )
        }
    }

    private func scanHeaders(_ headers: [RecordedHeader], as side: String, into report: inout Report) {
        for header in headers {
            let location = "\(side) header \(header.name)"
            let value = header.value.trimmingCharacters(in: .whitespaces)
            guard !value.isEmpty else { continue }
            if SecretNames.isSecret(headerName: header.name) {
                if !isPlaceholderHeaderValue(value, name: header.name) {
                    report.add(
                        location,
                        base: location,
                        value: value,
                        what: "value in clear (\(Abbreviate.secret(value)))",
                        remedy: .name(header.name)
                    )
                }
                continue
            }
            let lower = header.name.lowercased()
            if lower == "location" || lower == "referer" || lower == "content-location" {
                scanURL(value, as: location, into: &report)
            } else {
                scanPatterns(value, as: location, into: &report)
            }
        }
    }

    /// Secret-named query parameters, a password in the authority, and token shapes anywhere in the URL.
    private func scanURL(_ url: String, as location: String, into report: inout Report) {
        guard !url.isEmpty else { return }
        if let components = URLComponents(string: url), let password = components.password, !password.isEmpty,
           !isPlaceholder(password) {
            report.addURLSecret(
                "\(location) password",
                value: password,
                what: "value in clear (\(Abbreviate.secret(password)))",
                remedy: .urlPassword
            )
        }
        var query = Substring(url)
        if let mark = query.firstIndex(of: "?") { query = query[query.index(after: mark)...] } else { query = "" }
        if let hash = query.firstIndex(of: "#") { query = query[..<hash] }
        for (name, value) in FormCoding.decodePairs(query) {
            guard SecretNames.isSecret(key: name, inURL: true), !value.isEmpty, !isPlaceholder(value) else { continue }
            report.addURLSecret(
                "\(location) query \(name)",
                value: value,
                what: "value in clear (\(Abbreviate.secret(value)))",
                remedy: .name(name)
            )
        }
        for (name, match) in patternMatches(in: url) {
            report.addURLSecret(
                location, value: match, what: "\(name) (\(abbreviate(match, kind: name)))", remedy: .value
            )
        }
    }

    private func scanBody(
        _ body: Data,
        contentType: String?,
        contentEncoding: String?,
        as location: String,
        into report: inout Report
    ) {
        guard !body.isEmpty else { return }
        var data = body
        if let contentEncoding, let decoded = Inflate.decode(body, contentEncoding: contentEncoding) {
            data = decoded
        }
        scanBodyContent(data, contentType: contentType, as: location, into: &report)
        if let decoded = Self.base64Decoded(data) {
            scanBodyContent(decoded, contentType: nil, as: "\(location) (base64-decoded)", into: &report)
        }
    }

    private func scanBodyContent(_ data: Data, contentType: String?, as location: String, into report: inout Report) {
        let text = String(decoding: data, as: UTF8.self)
        let type = contentType?.lowercased() ?? ""
        let start = text.first { !$0.isWhitespace }
        if type.contains("json") || start == "{" || start == "[", let value = LosslessJSONReader.value(of: data) {
            walkJSON(value, path: "", as: location, into: &report)
        } else if type.contains("x-www-form-urlencoded") || (type.isEmpty && Self.looksLikeForm(text)) {
            for (name, value) in FormCoding.decodePairs(text.trimmingCharacters(in: .whitespacesAndNewlines)) {
                guard SecretNames.isSecret(key: name), !value.isEmpty, !isPlaceholderHeaderValue(value, name: name)
                else { continue }
                report.add(
                    "\(location) form field \(name)",
                    base: location,
                    value: value,
                    what: "value in clear (\(Abbreviate.secret(value)))",
                    remedy: .name(name)
                )
            }
        }
        scanPatterns(text, as: location, into: &report)
    }

    /// Every string member whose key is secret-named, at any depth. Keys are shown as a path: `json.password`,
    /// `items[2].token`.
    private func walkJSON(_ value: JSONValue, path: String, as location: String, into report: inout Report) {
        switch value {
        case let .object(members):
            // By key, each once (its last value, as a dictionary keeps it).
            var byKey: [String: JSONValue] = [:]
            for (key, member) in members { byKey[key] = member }
            for key in byKey.keys.sorted() {
                let value = byKey[key]!
                let childPath = path.isEmpty ? key : "\(path).\(key)"
                if case let .string(text) = value {
                    // An echoed header (`"Authorization": "Bearer <TOKEN>"`) hides its secret as the header does.
                    if SecretNames.isSecret(key: key), !text.isEmpty, !isPlaceholderHeaderValue(text, name: key) {
                        report.add(
                            "\(location) JSON key \(childPath)",
                            base: location,
                            value: text,
                            what: "value in clear (\(Abbreviate.secret(text)))",
                            remedy: .name(key)
                        )
                    } else if let embedded = Self.embeddedJSON(text) {
                        // JSON sent as a string (httpbin's "data", webhooks' payloads): its keys count too.
                        walkJSON(embedded, path: "\(childPath)[json]", as: location, into: &report)
                    }
                } else {
                    walkJSON(value, path: childPath, as: location, into: &report)
                }
            }
        case let .array(elements):
            for (index, element) in elements.enumerated() {
                walkJSON(element, path: "\(path)[\(index)]", as: location, into: &report)
            }
        default:
            break
        }
    }

    private func scanPatterns(_ text: String, as location: String, into report: inout Report) {
        for (name, match) in patternMatches(in: text) {
            report.add(
                location, base: location, value: match, what: "\(name) (\(abbreviate(match, kind: name)))",
                remedy: .value
            )
        }
    }

    /// (shape name, how to show the secret) for every shaped secret in `text` (``SecretShapes``), placeholders
    /// left out.
    package func patternMatches(in text: String) -> [(String, String)] {
        SecretShapes.matches(in: text, isPlaceholder: isPlaceholder).map { ($0.shape, $0.shown) }
    }

    private func abbreviate(_ match: String, kind: String) -> String {
        // The BEGIN line says what kind of key it is and gives nothing away.
        kind == "private key block" ? "\"\(match)\"" : Abbreviate.secret(match)
    }

    // MARK: Helpers

    /// A string member that holds a JSON object or array.
    static func embeddedJSON(_ text: String) -> JSONValue? {
        guard let first = text.first(where: { !$0.isWhitespace }), first == "{" || first == "[" else { return nil }
        return LosslessJSONReader.value(of: Data(text.utf8))
    }

    /// `a=1&b=2` with nothing a form cannot hold.
    package static func looksLikeForm(_ text: String) -> Bool {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, trimmed.contains("="), trimmed.count < 1_000_000 else { return false }
        return !trimmed.contains { $0.isWhitespace || $0 == "{" || $0 == "<" || $0 == "\"" }
    }

    /// The bytes a body of base64 text stands for, when it is base64 (at least 16 characters, nothing else but
    /// line breaks) and decodes to text. Binary payloads are left alone: there is nothing to read in them.
    static func base64Decoded(_ data: Data) -> Data? {
        guard data.count >= 16, data.count < 50_000_000 else { return nil }
        var compact: [UInt8] = []
        compact.reserveCapacity(data.count)
        for byte in data {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "/"), UInt8(ascii: "="):
                compact.append(byte)
            case UInt8(ascii: "-"):
                compact.append(UInt8(ascii: "+"))
            case UInt8(ascii: "_"):
                compact.append(UInt8(ascii: "/"))
            case 0x0A, 0x0D:
                continue
            default:
                return nil
            }
        }
        // Letters only (a word, an identifier) is not worth decoding; real base64 mixes in digits or symbols.
        guard compact.contains(where: { !(UInt8(ascii: "A")...UInt8(ascii: "z")).contains($0) }) else { return nil }
        while compact.count % 4 != 0 { compact.append(UInt8(ascii: "=")) }
        guard let decoded = Data(base64Encoded: Data(compact)), !decoded.isEmpty else { return nil }
        let printable = decoded.filter { $0 >= 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }.count
        guard printable * 10 >= decoded.count * 9 else { return nil }
        return decoded
    }
}
