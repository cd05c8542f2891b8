import Foundation

/// HAR 1.2 (`{"log": {"entries": [...]}}`), as written by browsers' developer tools, mitmproxy, Polly.js and
/// HTTPVCR itself.
///
/// A HAR entry is one request and its final response, so each entry is one chapter, in file order. A redirect hop
/// is an entry too (a 3xx with `redirectURL`, then the request it leads to): ``RedirectFolding`` folds such chains
/// into one chapter, as the recorder writes them. HAR has no body chunks and no interleaving: ``lossNotes(_:)``
/// (`HARFormat+Writing.swift`) says what a given tape loses when written as HAR.
package enum HARFormat {
    static func isReadable(_ document: JSONValue) -> Bool {
        guard let fields = try? FieldReader(document, path: ""), let log = try? fields.child("log"),
              case .array? = log["entries"] else { return false }
        return true
    }

    package static func tape(from document: JSONValue) throws(DecodeFailure) -> Tape {
        let document = try FieldReader(document, path: "")
        let entries = try document.child("log").array("entries")
        var interactions: [Interaction] = []
        interactions.reserveCapacity(entries.count)
        for (index, item) in entries.enumerated() {
            let entry = try FieldReader(item, path: "log.entries[\(index)]")
            interactions.append(try interaction(entry, chapter: index + 1))
        }
        return Tape(interactions: RedirectFolding.fold(interactions))
    }

    private static func interaction(_ entry: FieldReader, chapter: Int) throws(DecodeFailure) -> Interaction {
        let requestFields = try entry.child("request")
        let request = RecordedRequest(
            method: try requestFields.string("method"),
            url: try requestFields.string("url"),
            headers: try headers(requestFields),
            body: try postData(requestFields)
        )
        let responseFields = try entry.child("response")
        let status = try responseFields.int("status")
        let (timeToFirstByte, duration) = try timing(entry)
        let error = try self.error(responseFields, status: status, url: request.url)

        // Status 0 is how browsers write a request that got no response (with the reason in `_error`).
        guard status != 0 else {
            return Interaction(
                chapter: chapter,
                request: request,
                response: nil,
                error: error,
                timeToFirstByte: timeToFirstByte,
                duration: duration
            )
        }
        let body = try content(responseFields)
        var responseHeaders = try headers(responseFields)
        DecodedBodyRepair.repair(&responseHeaders, body: body)
        let redirectURL = responseFields.optionalString("redirectURL") ?? ""
        if !redirectURL.isEmpty, responseHeaders[field: "Location"] == nil {
            // Hops are folded, and clients follow them, through Location; some tools only fill in redirectURL.
            responseHeaders.append(RecordedHeader("Location", redirectURL))
        }
        let version = responseFields.optionalString("httpVersion") ?? ""
        let response = RecordedResponse(
            url: request.url,
            statusCode: status,
            httpVersion: version.isEmpty || version == "unknown" ? "HTTP/1.1" : version,
            headers: responseHeaders
        )
        return Interaction(
            chapter: chapter,
            request: request,
            response: response,
            chunks: body.isEmpty ? [] : [body],
            error: error,
            timeToFirstByte: timeToFirstByte,
            duration: duration
        )
    }

    /// Header arrays `[{"name": ..., "value": ...}]`. Repeated fields are joined with ", " (one field per name on
    /// the tape); HTTP/2 pseudo-headers such as `:authority` are dropped, as the URL loading system never shows them.
    private static func headers(_ fields: FieldReader) throws(DecodeFailure) -> [RecordedHeader] {
        guard fields.has("headers") else { return [] }
        let items = try fields.array("headers")
        var result: [RecordedHeader] = []
        for (index, item) in items.enumerated() {
            let header = try FieldReader(item, path: "\(fields.join("headers"))[\(index)]")
            let name = try header.string("name")
            let value: String
            if header.isNumber("value"), let number = header["value"].flatMap(FieldReader.text) {
                value = number
            } else {
                value = try header.string("value")
            }
            guard !name.hasPrefix(":") else { continue }
            if let existing = result.firstIndex(where: { $0.name.equalsIgnoringASCIICase(name) }) {
                result[existing].value += ", " + value
            } else {
                result.append(RecordedHeader(name, value))
            }
        }
        return result
    }

    /// `postData.text`, base64 when `encoding` says so; a form given only as `params` is rebuilt as
    /// `application/x-www-form-urlencoded` text.
    private static func postData(_ fields: FieldReader) throws(DecodeFailure) -> Data? {
        guard fields.has("postData") else { return nil }
        let post = try fields.child("postData")
        if let text = try text(post) { return text }
        guard post.has("params") else { return nil }
        var pairs: [String] = []
        for (index, item) in try post.array("params").enumerated() {
            let param = try FieldReader(item, path: "\(post.join("params"))[\(index)]")
            let name = try param.string("name")
            let value = param.optionalString("value") ?? ""
            pairs.append("\(formEncoded(name))=\(formEncoded(value))")
        }
        return Data(pairs.joined(separator: "&").utf8)
    }

    private static func content(_ fields: FieldReader) throws(DecodeFailure) -> Data {
        guard fields.has("content") else { return Data() }
        return try text(fields.child("content")) ?? Data()
    }

    /// `text`, decoded from base64 when `encoding` is "base64"; any other encoding is taken as plain text.
    private static func text(_ fields: FieldReader) throws(DecodeFailure) -> Data? {
        guard fields.has("text") else { return nil }
        if fields.optionalString("encoding")?.lowercased() == "base64" { return try fields.base64("text") }
        return Data(try fields.string("text").utf8)
    }

    /// Time to first byte is every phase before the response (blocked, dns, connect, send, wait; -1 means "not
    /// applicable"); the duration is `time`. Both are milliseconds in HAR and seconds on the tape.
    private static func timing(_ entry: FieldReader) throws(DecodeFailure) -> (TimeInterval, TimeInterval) {
        var beforeResponse = 0.0
        var receive = 0.0
        if case .object? = entry["timings"] {
            let timings = try entry.child("timings")
            for phase in ["blocked", "dns", "connect", "send", "wait", "receive"] {
                // Phases that are not numbers are ignored, as before; `nan` or `inf` (a property list) is an error.
                guard timings.isNumber(phase) else { continue }
                let value = try timings.double(phase)
                guard value > 0 else { continue }
                if phase == "receive" { receive = value } else { beforeResponse += value }
            }
            // Five finite phases can still add up to infinity.
            guard beforeResponse.isFinite else {
                throw DecodeFailure("\(timings.path): the phases before the response add up to more than a Double")
            }
        }
        let total = entry.has("time") ? try entry.double("time") : beforeResponse + receive
        let timeToFirstByte = beforeResponse / 1000
        return (timeToFirstByte, max(timeToFirstByte, max(0, total) / 1000))
    }

    /// An error HTTPVCR wrote (`_errorDomain`, `_errorCode`, `_errorUserInfo`), or, for status 0, the browser's
    /// `_error` ("net::ERR_NAME_NOT_RESOLVED") mapped to the `NSURLErrorDomain` code the loader would report.
    /// A browser's `_error` next to a real status (an aborted download) is ignored: the response is kept.
    private static func error(
        _ fields: FieldReader,
        status: Int,
        url: String
    ) throws(DecodeFailure) -> RecordedError? {
        if fields.has("_errorDomain") {
            return RecordedError(
                domain: try fields.string("_errorDomain"),
                code: try fields.int("_errorCode"),
                userInfo: try fields.stringMap("_errorUserInfo")
            )
        }
        guard status == 0 else { return nil }
        let browserError = fields.optionalString("_error") ?? ""
        let description = browserError.isEmpty ? "no response (HAR status 0)" : browserError
        return RecordedError(
            domain: NSURLErrorDomain,
            code: urlErrorCode(browserError),
            userInfo: [NSLocalizedDescriptionKey: description, "NSErrorFailingURLStringKey": url]
        )
    }

    /// Chromium network errors and the `NSURLErrorDomain` codes the loader reports for the same failure. The
    /// first name of a code is the one written.
    static let browserErrors: [(name: String, code: Int)] = [
        ("net::ERR_ABORTED", NSURLErrorCancelled),
        ("net::ERR_TIMED_OUT", NSURLErrorTimedOut),
        ("net::ERR_CONNECTION_TIMED_OUT", NSURLErrorTimedOut),
        ("net::ERR_NAME_NOT_RESOLVED", NSURLErrorCannotFindHost),
        ("net::ERR_CONNECTION_REFUSED", NSURLErrorCannotConnectToHost),
        ("net::ERR_CONNECTION_RESET", NSURLErrorNetworkConnectionLost),
        ("net::ERR_CONNECTION_CLOSED", NSURLErrorNetworkConnectionLost),
        ("net::ERR_INTERNET_DISCONNECTED", NSURLErrorNotConnectedToInternet),
        ("net::ERR_TOO_MANY_REDIRECTS", NSURLErrorHTTPTooManyRedirects),
        ("net::ERR_EMPTY_RESPONSE", NSURLErrorBadServerResponse),
        ("net::ERR_SSL_PROTOCOL_ERROR", NSURLErrorSecureConnectionFailed),
        ("net::ERR_CERT_AUTHORITY_INVALID", NSURLErrorServerCertificateUntrusted),
        ("net::ERR_CERT_DATE_INVALID", NSURLErrorServerCertificateHasBadDate),
    ]

    private static func urlErrorCode(_ browserError: String) -> Int {
        let name = browserError.uppercased()
        if let known = browserErrors.first(where: { $0.name.uppercased() == name }) { return known.code }
        if name.hasPrefix("NET::ERR_CERT_") { return NSURLErrorServerCertificateUntrusted }
        if name.hasPrefix("NET::ERR_SSL_") { return NSURLErrorSecureConnectionFailed }
        return NSURLErrorUnknown
    }

    private static func formEncoded(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._*")
        let escaped = text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
        return escaped.replacingOccurrences(of: "%20", with: "+")
    }
}
