import Foundation

/// HAR 1.2 (`{"log": {"entries": [...]}}`), as written by browsers' developer tools, mitmproxy, Polly.js and
/// HTTPVCR itself.
///
/// A HAR entry is one request and its final response, so each entry is one chapter, in file order. Redirects are
/// separate entries (a 3xx with `redirectURL`); they stay separate chapters and the player follows the
/// `Location` chain across them. HAR has no body chunks and no interleaving: ``lossNotes(_:)`` says what a given
/// tape loses when written as HAR.
enum HARFormat {
    static func isReadable(_ object: Any) -> Bool {
        guard let document = object as? [String: Any], let log = document["log"] as? [String: Any] else {
            return false
        }
        return log["entries"] is [Any]
    }

    // MARK: Reading

    static func tape(from object: Any) throws(DecodeFailure) -> Tape {
        let document = try FieldReader(object, path: "")
        let entries = try document.child("log").array("entries")
        var interactions: [Interaction] = []
        interactions.reserveCapacity(entries.count)
        for (index, item) in entries.enumerated() {
            let entry = try FieldReader(item, path: "log.entries[\(index)]")
            interactions.append(try interaction(entry, chapter: index + 1))
        }
        return Tape(interactions: interactions)
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
            // The player follows redirects through Location; some tools only fill in redirectURL.
            responseHeaders.append(HTTPHeader("Location", redirectURL))
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
    /// the tape); HTTP/2 pseudo-headers such as `:authority` are dropped, as URLSession never shows them.
    private static func headers(_ fields: FieldReader) throws(DecodeFailure) -> [HTTPHeader] {
        guard fields.has("headers") else { return [] }
        let items = try fields.array("headers")
        var result: [HTTPHeader] = []
        for (index, item) in items.enumerated() {
            let header = try FieldReader(item, path: "\(fields.join("headers"))[\(index)]")
            let name = try header.string("name")
            let value: String
            if let number = header.object["value"] as? NSNumber {
                value = number.stringValue
            } else {
                value = try header.string("value")
            }
            guard !name.hasPrefix(":") else { continue }
            if let existing = result.firstIndex(where: { $0.name.equalsIgnoringASCIICase(name) }) {
                result[existing].value += ", " + value
            } else {
                result.append(HTTPHeader(name, value))
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
        if entry.object["timings"] is [String: Any] {
            let timings = try entry.child("timings")
            for phase in ["blocked", "dns", "connect", "send", "wait", "receive"] {
                // Phases that are not numbers are ignored, as before; `nan` or `inf` (a property list) is an error.
                guard timings.object[phase] is NSNumber else { continue }
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
    /// `_error` ("net::ERR_NAME_NOT_RESOLVED") mapped to the `NSURLErrorDomain` code URLSession would report.
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

    /// Chromium network errors and the `NSURLErrorDomain` codes URLSession reports for the same failure. The
    /// first name of a code is the one written.
    private static let browserErrors: [(name: String, code: Int)] = [
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

// MARK: - Writing

extension HARFormat {
    static let creatorName = "HTTPVCR"
    static let creatorVersion = "1"

    /// The tape as a HAR 1.2 log: one entry per chapter in the order chapters start, and one more per redirect
    /// hop inside a chapter, so nothing a HAR can hold is lost. Chapters that never finished are left out.
    static func document(_ tape: Tape) -> JSONValue {
        var entries: [JSONValue] = []
        for interaction in tape.interactions {
            appendEntries(of: interaction, to: &entries)
        }
        return .object([
            ("log", .object([
                ("version", .string("1.2")),
                ("creator", .object([("name", .string(creatorName)), ("version", .string(creatorVersion))])),
                ("entries", .array(entries)),
            ])),
        ])
    }

    private static func appendEntries(of interaction: Interaction, to entries: inout [JSONValue]) {
        var request = interaction.request
        var segmentStart: TimeInterval = 0
        for scene in interaction.scenes {
            guard case let .redirect(response, to: next) = scene.event else { continue }
            let elapsed = max(0, scene.time - segmentStart)
            entries.append(entry(
                index: entries.count,
                request: request,
                response: response,
                body: Data(),
                error: nil,
                timeToFirstByte: elapsed,
                duration: elapsed,
                redirectURL: response.headers[field: "Location"] ?? next.url
            ))
            request = next
            segmentStart = scene.time
        }
        guard interaction.response != nil || interaction.error != nil else { return }
        let timeToFirstByte = max(0, (interaction.timeToFirstByte ?? segmentStart) - segmentStart)
        let end = max(0, (interaction.scenes.last?.time ?? 0) - segmentStart)
        entries.append(entry(
            index: entries.count,
            request: request,
            response: interaction.response,
            body: interaction.body,
            error: interaction.error,
            timeToFirstByte: timeToFirstByte,
            duration: max(timeToFirstByte, end),
            redirectURL: interaction.response?.headers[field: "Location"] ?? ""
        ))
    }

    private static func entry(
        index: Int,
        request: RecordedRequest,
        response: RecordedResponse?,
        body: Data,
        error: RecordedError?,
        timeToFirstByte: TimeInterval,
        duration: TimeInterval,
        redirectURL: String
    ) -> JSONValue {
        let httpVersion = response?.httpVersion ?? "HTTP/1.1"
        return .object([
            ("startedDateTime", .string(startedDateTime(index))),
            ("time", .double(milliseconds(duration))),
            ("request", requestValue(request, httpVersion: httpVersion)),
            ("response", responseValue(response, body: body, error: error, redirectURL: redirectURL)),
            ("cache", .object([])),
            ("timings", .object([
                ("send", .double(0)),
                ("wait", .double(milliseconds(timeToFirstByte))),
                ("receive", .double(milliseconds(duration - timeToFirstByte))),
            ])),
        ])
    }

    private static func requestValue(_ request: RecordedRequest, httpVersion: String) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("method", .string(request.method)),
            ("url", .string(request.url)),
            ("httpVersion", .string(httpVersion)),
            ("cookies", .array([])),
            ("headers", headersValue(request.headers)),
            ("queryString", queryString(request.url)),
        ]
        if let body = request.body {
            var post: [(String, JSONValue)] = [("mimeType", .string(request.headers[field: "Content-Type"] ?? ""))]
            post.append(contentsOf: textMembers(body))
            members.append(("postData", .object(post)))
        }
        members.append(("headersSize", .int(-1)))
        members.append(("bodySize", .int(request.body?.count ?? 0)))
        return .object(members)
    }

    private static func responseValue(
        _ response: RecordedResponse?,
        body: Data,
        error: RecordedError?,
        redirectURL: String
    ) -> JSONValue {
        let status = response?.statusCode ?? 0
        var content: [(String, JSONValue)] = [
            ("size", .int(body.count)),
            ("mimeType", .string(response?.headers[field: "Content-Type"] ?? "")),
        ]
        if response != nil { content.append(contentsOf: textMembers(body)) }
        var members: [(String, JSONValue)] = [
            ("status", .int(status)),
            ("statusText", .string(response.map { reasonPhrase($0.statusCode) } ?? "")),
            ("httpVersion", .string(response?.httpVersion ?? "")),
            ("cookies", .array([])),
            ("headers", headersValue(response?.headers ?? [])),
            ("content", .object(content)),
            ("redirectURL", .string(redirectURL)),
            ("headersSize", .int(-1)),
            ("bodySize", .int(response == nil ? -1 : body.count)),
        ]
        if let error {
            // `_error` is what browsers and HAR viewers show; the other fields give the exact error back.
            members.append(("_error", .string(errorSummary(error))))
            members.append(("_errorDomain", .string(error.domain)))
            members.append(("_errorCode", .int(error.code)))
            members.append(("_errorUserInfo", .object(
                error.userInfo.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) }
            )))
        }
        return .object(members)
    }

    private static func headersValue(_ headers: [HTTPHeader]) -> JSONValue {
        .array(headers.map { .object([("name", .string($0.name)), ("value", .string($0.value))]) })
    }

    private static func queryString(_ url: String) -> JSONValue {
        let items = URLComponents(string: url)?.queryItems ?? []
        return .array(items.map { .object([("name", .string($0.name)), ("value", .string($0.value ?? ""))]) })
    }

    /// Text when the bytes are text, otherwise base64 with `"encoding": "base64"`.
    private static func textMembers(_ body: Data) -> [(String, JSONValue)] {
        if let text = BodyText.text(body) { return [("text", .string(text))] }
        return [("text", .string(body.base64EncodedString())), ("encoding", .string("base64"))]
    }

    private static func errorSummary(_ error: RecordedError) -> String {
        if error.domain == NSURLErrorDomain, let known = browserErrors.first(where: { $0.code == error.code }) {
            return known.name
        }
        return error.userInfo[NSLocalizedDescriptionKey] ?? "\(error.domain) error \(error.code)"
    }

    /// The tape has no wall-clock times, only order: entries start at the epoch, one millisecond apart, so that
    /// viewers that sort by `startedDateTime` keep the tape's order.
    private static func startedDateTime(_ index: Int) -> String {
        let milliseconds = min(max(0, index), 86_400_000 - 1)
        let seconds = milliseconds / 1000
        return String(
            format: "1970-01-01T%02d:%02d:%02d.%03dZ",
            seconds / 3600, seconds / 60 % 60, seconds % 60, milliseconds % 1000
        )
    }

    private static func milliseconds(_ seconds: TimeInterval) -> Double {
        (max(0, seconds) * 1_000_000).rounded() / 1000
    }

    private static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 201: "Created"
        case 202: "Accepted"
        case 204: "No Content"
        case 206: "Partial Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 304: "Not Modified"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 409: "Conflict"
        case 410: "Gone"
        case 422: "Unprocessable Content"
        case 429: "Too Many Requests"
        case 500: "Internal Server Error"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        default: ""
        }
    }
}

// MARK: - What HAR cannot hold

extension HARFormat {
    /// What writing `tape` as HAR loses, one sentence per problem, for `vcr convert` to print on stderr. Empty
    /// when the HAR file holds everything the tape does.
    static func lossNotes(_ tape: Tape) -> [String] {
        var notes: [String] = []
        let interactions = tape.interactions

        var firstScene: [Int: Int] = [:]
        var lastScene: [Int: Int] = [:]
        for (index, scene) in tape.scenes.enumerated() {
            if firstScene[scene.chapter] == nil { firstScene[scene.chapter] = index }
            lastScene[scene.chapter] = index
        }
        var latestEnd = -1
        var overlapping: [Int] = []
        for interaction in interactions {
            let chapter = interaction.chapter
            if let first = firstScene[chapter], first < latestEnd { overlapping.append(chapter) }
            latestEnd = max(latestEnd, lastScene[chapter] ?? -1)
        }
        if !overlapping.isEmpty {
            let list = overlapping.map(String.init).joined(separator: ", ")
            notes.append(
                "chapter\(overlapping.count == 1 ? "" : "s") \(list) start before an earlier request finished; "
                    + "HAR lists requests one after another, so chronological playback of the HAR file plays them "
                    + "in sequence instead of interleaved"
            )
        }

        for interaction in interactions {
            notes.append(contentsOf: lossNotes(interaction))
        }
        return notes
    }

    private static func lossNotes(_ interaction: Interaction) -> [String] {
        let label = "chapter \(interaction.chapter) (\(interaction.request.method) \(interaction.request.url))"
        guard interaction.response != nil || interaction.error != nil else {
            return ["\(label): unfinished (no response and no error), so it is left out"]
        }
        var notes: [String] = []
        let redirects = interaction.redirects
        if !redirects.isEmpty {
            notes.append(
                "\(label): its \(redirects.count) redirect hop\(redirects.count == 1 ? " is" : "s are") written as "
                    + "separate entries; read back, each hop is a request of its own, which the player follows "
                    + "through Location"
            )
        }
        let chunks = interaction.chunks.filter { !$0.isEmpty }
        if chunks.count > 1 {
            notes.append(
                "\(label): chunk boundaries are merged: its \(chunks.count) body chunks become one body and their "
                    + "arrival times are lost"
            )
        }
        if let response = interaction.response {
            let finalRequest = redirects.last?.request ?? interaction.request
            if response.url != finalRequest.url {
                notes.append(
                    "\(label): the response URL \(response.url) is not kept (HAR responses have none); read back, "
                        + "it is the request's URL"
                )
            }
            var headers = response.headers
            if DecodedBodyRepair.repair(&headers, body: interaction.body) {
                notes.append(
                    "\(label): its body is not compressed although Content-Encoding says so; read back, "
                        + "Content-Encoding is removed and Content-Length is the body's length"
                )
            }
        }
        var headerLists = [interaction.request.headers]
        for redirect in redirects { headerLists += [redirect.response.headers, redirect.request.headers] }
        if let response = interaction.response { headerLists.append(response.headers) }
        let repeated = Set(headerLists.flatMap(repeatedNames)).sorted()
        if !repeated.isEmpty {
            notes.append(
                "\(label): repeated \(repeated.joined(separator: ", ")) header fields are joined with \", \" "
                    + "when read back"
            )
        }
        return notes
    }

    private static func repeatedNames(_ headers: [HTTPHeader]) -> [String] {
        var seen: Set<String> = []
        var repeated: [String] = []
        for header in headers {
            let name = header.name.lowercased()
            if !seen.insert(name).inserted { repeated.append(header.name) }
        }
        return repeated
    }
}
