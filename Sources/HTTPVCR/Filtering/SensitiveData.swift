import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCRCassettes

/// ``VCRConfiguration/sensitiveData`` resolved: each real value and the placeholder the cassette holds instead.
/// Recording (and matching) hides values behind placeholders everywhere in a request and its response; replaying
/// puts the values back into responses, where the code under test may need them.
struct SensitiveData {
    /// Longest value first, so that a value containing another is replaced whole; one placeholder per value.
    private let pairs: [(placeholder: String, value: String)]

    init(_ configuration: VCRConfiguration) {
        if !configuration.sensitiveData.isEmpty { checkNoLockHeld(running: "a sensitiveData value") }
        let resolved = configuration.sensitiveData.compactMap { placeholder, value -> (String, String)? in
            guard let value = value(), !value.isEmpty, value != placeholder else { return nil }
            return (placeholder, value)
        }
        // In an order that does not depend on the dictionary's: the same file on every run, and one value written
        // as one placeholder (the first by name) when two placeholders name it.
        var seen: Set<String> = []
        pairs = resolved.sorted { ($0.1.count, $1.0) > ($1.1.count, $0.0) }.filter { seen.insert($0.1).inserted }
    }

    var isEmpty: Bool { pairs.isEmpty }

    /// The placeholders with a value to stand for: what the secure defaults leave as they are
    /// (``SecretFilter/isNamedPlaceholder(_:)``).
    var placeholders: Set<String> { Set(pairs.map(\.placeholder)) }

    func hiding(_ text: String) -> String {
        pairs.reduce(text) { $0.replacingOccurrences(of: $1.value, with: $1.placeholder) }
    }

    func revealing(_ text: String) -> String {
        pairs.reduce(text) { $0.replacingOccurrences(of: $1.placeholder, with: $1.value) }
    }

    /// A URL keeps its placeholders percent-encoded (`%3CAPI_KEY%3E`), so that it is still a URL; a value may be
    /// there percent-encoded too.
    func hiding(url text: String) -> String {
        pairs.reduce(text) { text, pair in
            let placeholder = Self.percentEncoded(pair.placeholder)
            return text.replacingOccurrences(of: pair.value, with: placeholder)
                .replacingOccurrences(of: Self.percentEncoded(pair.value), with: placeholder)
        }
    }

    func revealing(url text: String) -> String {
        pairs.reduce(text) { text, pair in
            text.replacingOccurrences(of: Self.percentEncoded(pair.placeholder), with: Self.percentEncoded(pair.value))
                .replacingOccurrences(of: pair.placeholder, with: pair.value)
        }
    }

    private static func percentEncoded(_ text: String) -> String {
        String(decoding: FormCoding.encode(text, as: .query), as: UTF8.self)
    }

    /// A body holds a value as it is, or percent-encoded (a form field, a URL echoed in JSON): each form is
    /// written as the placeholder in the same form, so that replay puts back what was there.
    func hiding(_ data: Data) -> Data {
        pairs.reduce(data) { data, pair in
            Self.encodedForms(of: pair).reduce(data) { data, form in
                data.replacingOccurrences(of: Data(form.value.utf8), with: Data(form.placeholder.utf8))
            }
        }
    }

    func revealing(_ data: Data) -> Data {
        pairs.reduce(data) { data, pair in
            Self.encodedForms(of: pair).reduce(data) { data, form in
                data.replacingOccurrences(of: Data(form.placeholder.utf8), with: Data(form.value.utf8))
            }
        }
    }

    /// The pair as it is, then percent-encoded as a query and as a form encode it, where that changes the value.
    private static func encodedForms(of pair: (placeholder: String, value: String))
        -> [(placeholder: String, value: String)]
    {
        var forms = [pair]
        for spelling in [FormCoding.Spelling.query, .body] {
            let value = String(decoding: FormCoding.encode(pair.value, as: spelling), as: UTF8.self)
            guard value != pair.value, !forms.contains(where: { $0.value == value }) else { continue }
            forms.append((String(decoding: FormCoding.encode(pair.placeholder, as: spelling), as: UTF8.self), value))
        }
        return forms
    }

    /// The values hidden in a live or recorded request: URL, header values, body.
    func hiding(in request: inout URLRequest) {
        guard !isEmpty else { return }
        if let url = request.url, let hidden = URL(string: hiding(url: url.absoluteString)) { request.url = hidden }
        for (name, value) in request.allHTTPHeaderFields ?? [:] {
            let hidden = hiding(value)
            if hidden != value { request.setValue(hidden, forHTTPHeaderField: name) }
        }
        if let body = request.httpBody { request.httpBody = hiding(body) }
    }

    /// The values hidden in a response's URL and header values: a `Location` is a URL, and keeps its placeholders
    /// percent-encoded.
    func hiding(in response: inout RecordedResponse) {
        guard !isEmpty else { return }
        response.url = hiding(url: response.url)
        for index in response.headers.indices {
            let header = response.headers[index]
            response.headers[index].value = Self.isURL(header) ? hiding(url: header.value) : hiding(header.value)
        }
    }

    func hiding(in error: inout RecordedError) {
        guard !isEmpty else { return }
        for (key, value) in error.userInfo { error.userInfo[key] = Self.isURL(key: key) ? hiding(url: value) : hiding(value) }
    }

    private static func isURL(_ header: RecordedHeader) -> Bool {
        header.name.equalsIgnoringASCIICase("Location") || header.name.equalsIgnoringASCIICase("Content-Location")
    }

    /// The failing URL of an error (`NSErrorFailingURLKey`, `NSErrorFailingURLStringKey`).
    private static func isURL(key: String) -> Bool {
        key.lowercased().contains("url")
    }

    /// A recorded scene as the code under test gets it: the values back in the response, its body and errors.
    /// Requests keep their placeholders: live requests are matched with the values hidden.
    func revealing(_ event: Scene.Event) -> Scene.Event {
        guard !isEmpty else { return event }
        switch event {
        case .request, .completion:
            return event
        case let .redirect(response, to: request):
            return .redirect(revealing(response), to: request)
        case let .response(response):
            return .response(revealing(response))
        case let .data(data):
            return .data(revealing(data))
        case var .error(error):
            for (key, value) in error.userInfo {
                error.userInfo[key] = Self.isURL(key: key) ? revealing(url: value) : revealing(value)
            }
            return .error(error)
        }
    }

    private func revealing(_ response: RecordedResponse) -> RecordedResponse {
        var response = response
        response.url = revealing(url: response.url)
        for index in response.headers.indices {
            let header = response.headers[index]
            response.headers[index].value = Self.isURL(header) ? revealing(url: header.value) : revealing(header.value)
        }
        return response
    }
}
