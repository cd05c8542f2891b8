import Foundation
import HTTPVCRCassettes

/// A configuration's ``VolatileValue``s, ready to use on requests: where each one is in a request, and the request
/// as matching compares it (each volatile value replaced by its shape).
struct VolatileValues: Sendable {
    /// Names as declared, compared without ASCII case (a few each: a scan, nothing lowercased per request).
    private let queryNames: [String]
    private let headerNames: [String]
    private let formNames: [String]
    private let jsonPaths: [(declared: VolatileValue, path: JSONPath)]
    /// Each path's last member name, quoted as JSON writes it: a body holding none of them holds no value the paths
    /// select, and is not parsed. Nil when a path ends otherwise (`[*]`).
    private let jsonNames: [Data]?

    /// One volatile value found in a request.
    struct Place: Equatable {
        /// The declaration that names it.
        let declared: VolatileValue
        /// Where it is: the parameter, field or header name, or the JSON location (`$.items[0].id`).
        let location: String
        /// Its text, percent-decoded.
        let text: String
    }

    /// Declarations that are not valid (a JSONPath outside the subset) are left out: ``invalid(in:)`` names them.
    init(_ declared: [VolatileValue]) {
        var query: [String] = [], header: [String] = [], form: [String] = []
        var paths: [(VolatileValue, JSONPath)] = []
        for value in declared {
            switch value {
            case let .query(name): query.append(name)
            case let .header(name): header.append(name)
            case let .form(name): form.append(name)
            case let .jsonPath(text): if let path = JSONPath(text) { paths.append((value, path)) }
            }
        }
        queryNames = query
        headerNames = header
        formNames = form
        jsonPaths = paths
        let names = paths.map { _, path -> Data? in
            guard case let .member(name)? = path.steps.last else { return nil }
            return Data(("\"" + name + "\"").utf8)
        }
        jsonNames = names.contains(nil) ? nil : names.compactMap { $0 }
    }

    /// The declarations among `declared` that cannot be used, each with why.
    static func invalid(in declared: [VolatileValue]) -> [(VolatileValue, String)] {
        declared.compactMap { value in
            guard case let .jsonPath(text) = value, JSONPath(text) == nil else { return nil }
            return (value, "a JSONPath is `$` followed by `.name`, `['name']`, `[2]` or `[*]`")
        }
    }

    var isEmpty: Bool { queryNames.isEmpty && headerNames.isEmpty && formNames.isEmpty && jsonPaths.isEmpty }

    // MARK: Finding them

    /// Every volatile value in `request`, in the order: query, header fields, body.
    func places(in request: RecordedRequest) -> [Place] {
        guard !isEmpty else { return [] }
        var places: [Place] = []
        if !queryNames.isEmpty, let query = Self.query(of: request.url) {
            for segment in query.split(separator: "&") {
                let (name, value) = FormCoding.decodePair(segment)
                if queryNames.containsIgnoringCase(name) {
                    places.append(Place(declared: .query(name), location: name, text: value))
                }
            }
        }
        for header in request.headers where headerNames.containsIgnoringCase(header.name) {
            places.append(Place(declared: .header(header.name), location: header.name, text: header.value))
        }
        guard let body = request.body, !body.isEmpty, !Self.isEncoded(request) else { return places }
        if !formNames.isEmpty, Self.isForm(request), let text = BodyText.text(body) {
            for (name, value) in FormCoding.decodePairs(text) where formNames.containsIgnoringCase(name) {
                places.append(Place(declared: .form(name), location: name, text: value))
            }
        }
        if !jsonPaths.isEmpty, let document = json(of: body) {
            for (declared, path) in jsonPaths {
                for (location, value) in path.values(in: document) {
                    guard let text = Self.text(of: value) else { continue }
                    places.append(Place(declared: declared, location: location, text: text))
                }
            }
        }
        return places
    }

    /// Whether `request` may hold a volatile value: a quick look at names, which ``places(in:)`` confirms.
    func mayHoldAny(_ request: RecordedRequest) -> Bool {
        guard !isEmpty else { return false }
        if !queryNames.isEmpty, let query = Self.query(of: request.url), query.split(separator: "&").contains(where: {
            queryNames.containsIgnoringCase(FormCoding.decodePair($0).name)
        }) {
            return true
        }
        if request.headers.contains(where: { headerNames.containsIgnoringCase($0.name) }) { return true }
        guard let body = request.body, !body.isEmpty, !Self.isEncoded(request) else { return false }
        if !formNames.isEmpty, Self.isForm(request) { return true }
        guard !jsonPaths.isEmpty, Self.looksLikeJSON(body) else { return false }
        return jsonNames.map { names in names.contains { body.range(of: $0) != nil } } ?? true
    }

    // MARK: The request as matching compares it

    /// `request` with each volatile value replaced by its shape's placeholder; the same request when it has none.
    func matchingView(of request: RecordedRequest) -> RecordedRequest {
        guard mayHoldAny(request) else { return request }
        var view = request
        if !queryNames.isEmpty, let query = Self.query(of: request.url) {
            let segments = query.split(separator: "&", omittingEmptySubsequences: false).map { segment -> String in
                let (name, value) = FormCoding.decodePair(segment)
                guard queryNames.containsIgnoringCase(name) else { return String(segment) }
                let equals = segment.firstIndex(of: "=") ?? segment.endIndex
                return segment[..<equals] + "=" + VolatileShape(of: value).placeholder
            }
            view.url = Self.url(request.url, withQuery: segments.joined(separator: "&"))
        }
        for index in view.headers.indices where headerNames.containsIgnoringCase(view.headers[index].name) {
            view.headers[index].value = VolatileShape(of: view.headers[index].value).placeholder
        }
        guard let body = request.body, !body.isEmpty, !Self.isEncoded(request) else { return view }
        if !formNames.isEmpty, Self.isForm(request), let text = BodyText.text(body) {
            let pairs = FormCoding.decodePairs(text).map { name, value in
                let kept = formNames.containsIgnoringCase(name) ? VolatileShape(of: value).placeholder : value
                return String(decoding: FormCoding.encode(name, as: .body), as: UTF8.self) + "="
                    + String(decoding: FormCoding.encode(kept, as: .body), as: UTF8.self)
            }
            view.body = Data(pairs.joined(separator: "&").utf8)
        }
        if !jsonPaths.isEmpty, var document = json(of: body) {
            for (_, path) in jsonPaths {
                document = path.replacing(in: document) { value in
                    Self.text(of: value).map { .string(VolatileShape(of: $0).placeholder) } ?? value
                }
            }
            view.body = document.serialized()
        }
        return view
    }

    // MARK: Reading requests

    /// The query of a URL's text (before any fragment), or nil when it has none.
    static func query(of url: String) -> Substring? {
        guard let (mark, end) = querySpan(of: url), url.utf8.index(after: mark) < end else { return nil }
        return url[url.utf8.index(after: mark)..<end]
    }

    private static func url(_ url: String, withQuery query: String) -> String {
        guard let (mark, end) = querySpan(of: url) else { return url }
        return url[...mark] + query + url[end...]
    }

    /// Where the `?` is, and where the query ends (a `#` or the end). Read as bytes: looking for a character in a
    /// String steps over grapheme clusters, a cost every recorded request paid when a cassette was inserted.
    private static func querySpan(of url: String) -> (mark: String.Index, end: String.Index)? {
        let offsets = url.utf8.withContiguousStorageIfAvailable { bytes -> (mark: Int, end: Int)? in
            guard let mark = bytes.firstIndex(of: UInt8(ascii: "?")) else { return nil }
            return (mark, bytes[mark...].firstIndex(of: UInt8(ascii: "#")) ?? bytes.count)
        }
        if let offsets {
            guard let offsets else { return nil }
            let mark = url.utf8.index(url.utf8.startIndex, offsetBy: offsets.mark)
            return (mark, url.utf8.index(mark, offsetBy: offsets.end - offsets.mark))
        }
        guard let mark = url.utf8.firstIndex(of: UInt8(ascii: "?")) else { return nil }
        return (mark, url.utf8[mark...].firstIndex(of: UInt8(ascii: "#")) ?? url.endIndex)
    }

    private static func isForm(_ request: RecordedRequest) -> Bool {
        request.headers[field: "Content-Type"]?.lowercased().hasPrefix("application/x-www-form-urlencoded") ?? false
    }

    /// A compressed body is left alone: its values are not in its bytes.
    private static func isEncoded(_ request: RecordedRequest) -> Bool {
        let encoding = request.headers[field: "Content-Encoding"]?.lowercased() ?? ""
        return !encoding.isEmpty && encoding != "identity"
    }

    private static func looksLikeJSON(_ body: Data) -> Bool {
        guard let first = body.first(where: { !Byte.isJSONWhitespace($0) }) else { return false }
        return first == Byte.openBrace || first == Byte.openBracket
    }

    private func json(of body: Data) -> JSONValue? {
        Self.looksLikeJSON(body) ? LosslessJSONReader.value(of: body) : nil
    }

    /// A scalar's text as JSON writes it (a string without its quotes); nil for objects, arrays and null.
    static func text(of value: JSONValue) -> String? {
        switch value {
        case let .string(text): text
        case let .int(number): String(number)
        case let .double(number): String(number)
        case let .number(text): text
        case let .bool(flag): flag ? "true" : "false"
        case .null, .object, .array, .data, .date: nil
        }
    }
}

extension [String] {
    fileprivate func containsIgnoringCase(_ name: some StringProtocol) -> Bool {
        contains { $0.equalsIgnoringASCIICase(name) }
    }
}
