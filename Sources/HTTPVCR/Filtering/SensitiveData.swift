import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// ``VCRConfiguration/sensitiveData`` resolved: each real value and the placeholder the cassette holds instead.
/// Recording (and matching) hides values behind placeholders everywhere in a request and its response; replaying
/// puts the values back into responses, where the code under test may need them.
struct SensitiveData {
    /// Longest value first, so that a value containing another is replaced whole.
    private let pairs: [(placeholder: String, value: String)]

    init(_ configuration: VCRConfiguration) {
        pairs = configuration.sensitiveData.compactMap { placeholder, value in
            guard let value = value(), !value.isEmpty, value != placeholder else { return nil }
            return (placeholder, value)
        }.sorted { $0.value.count > $1.value.count }
    }

    var isEmpty: Bool { pairs.isEmpty }

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

    func hiding(_ data: Data) -> Data {
        pairs.reduce(data) { $0.replacingOccurrences(of: Data($1.value.utf8), with: Data($1.placeholder.utf8)) }
    }

    func revealing(_ data: Data) -> Data {
        pairs.reduce(data) { $0.replacingOccurrences(of: Data($1.placeholder.utf8), with: Data($1.value.utf8)) }
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

    func hiding(in response: inout RecordedResponse) {
        response.url = hiding(url: response.url)
        for index in response.headers.indices { response.headers[index].value = hiding(response.headers[index].value) }
    }

    func hiding(in error: inout RecordedError) {
        for (key, value) in error.userInfo { error.userInfo[key] = hiding(value) }
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
            for (key, value) in error.userInfo { error.userInfo[key] = revealing(value) }
            return .error(error)
        }
    }

    private func revealing(_ response: RecordedResponse) -> RecordedResponse {
        var response = response
        response.url = revealing(url: response.url)
        for index in response.headers.indices {
            response.headers[index].value = revealing(response.headers[index].value)
        }
        return response
    }
}
