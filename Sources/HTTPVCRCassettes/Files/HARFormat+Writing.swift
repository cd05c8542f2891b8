import Foundation

/// Writing HAR 1.2, and what a tape loses when written as HAR.
extension HARFormat {
    static let creatorName = "HTTPVCR"
    static let creatorVersion = "1"

    /// The tape as a HAR 1.2 log: one entry per chapter in the order chapters start, and one more per redirect
    /// hop inside a chapter, so nothing a HAR can hold is lost. Chapters that never finished are left out.
    package static func document(_ tape: Tape) -> JSONValue {
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

    private static func headersValue(_ headers: [RecordedHeader]) -> JSONValue {
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
    package static func lossNotes(_ tape: Tape) -> [String] {
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

        // The reader folds a 3xx and the entry after it when that is where the 3xx leads: two chapters that only
        // look like a followed redirect become one.
        let written = interactions.filter { $0.response != nil || $0.error != nil }
        for (interaction, next) in zip(written, written.dropFirst()) {
            let last = interaction.redirects.last?.request ?? interaction.request
            guard interaction.error == nil, let response = interaction.response,
                  RedirectFolding.leads(readBack(response, of: last), from: last, to: next.request)
            else { continue }
            notes.append(
                "\(label(interaction)): it ends in a \(response.statusCode) to \(next.request.url), which chapter "
                    + "\(next.chapter) asks for next; read back, the two are one chapter, as if the redirect had "
                    + "been followed"
            )
        }
        return notes
    }

    private static func label(_ interaction: Interaction) -> String {
        "chapter \(interaction.chapter) (\(interaction.request.method) \(interaction.request.url))"
    }

    /// A response as the reader gives it back: HAR responses have no URL, so it is its request's.
    private static func readBack(_ response: RecordedResponse, of request: RecordedRequest) -> RecordedResponse {
        var copy = response
        copy.url = request.url
        return copy
    }

    private static func lossNotes(_ interaction: Interaction) -> [String] {
        let label = label(interaction)
        guard interaction.response != nil || interaction.error != nil else {
            return ["\(label): unfinished (no response and no error), so it is left out"]
        }
        var notes: [String] = []
        // Hops are written as entries of their own, which the reader folds back into this chapter when the
        // Location of each leads to the entry after it.
        let redirects = interaction.redirects
        var request = interaction.request
        for redirect in redirects {
            var hop = readBack(redirect.response, of: request)
            if hop.headers[field: "Location"] == nil {
                hop.headers.append(RecordedHeader("Location", redirect.request.url))  // the writer's redirectURL
            }
            if redirect.response.url != request.url {
                notes.append(
                    "\(label): the URL \(redirect.response.url) of its \(hop.statusCode) is not kept (HAR responses "
                        + "have none); read back, it is the request's URL"
                )
            }
            if DecodedBodyRepair.repair(&hop.headers, body: Data()) {
                notes.append(
                    "\(label): its \(hop.statusCode) has Content-Encoding but no body is kept for a hop; read back, "
                        + "Content-Encoding is removed"
                )
            }
            if !RedirectFolding.leads(hop, from: request, to: redirect.request) {
                notes.append(
                    "\(label): its \(hop.statusCode) does not lead to \(redirect.request.url) by its Location and "
                        + "method; read back, the hop is a chapter of its own that ends in the \(hop.statusCode)"
                )
            }
            request = redirect.request
        }
        let chunks = interaction.chunks.filter { !$0.isEmpty }
        if chunks.count > 1 {
            notes.append(
                "\(label): chunk boundaries are merged: its \(chunks.count) body chunks become one body and their "
                    + "arrival times are lost"
            )
        }
        if let response = interaction.response {
            if response.url != request.url {
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

    private static func repeatedNames(_ headers: [RecordedHeader]) -> [String] {
        var seen: Set<String> = []
        var repeated: [String] = []
        for header in headers {
            let name = header.name.lowercased()
            if !seen.insert(name).inserted { repeated.append(header.name) }
        }
        return repeated
    }
}
