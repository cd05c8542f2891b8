import Foundation

extension Tape {
    /// One thing that happened to one request, at one moment, as it sits on a cassette's tape.
    ///
    /// A tape is the ordered list of scenes of every request a cassette holds. Scenes of one request share a
    /// ``chapter``; scenes of concurrent requests interleave in the order they really happened, which is what
    /// chronological playback reproduces.
    public struct Scene: Sendable, Equatable {
        /// The request this scene belongs to: every scene of one request has the same chapter number.
        public var chapter: Int
        /// Seconds from the moment the request was sent until this scene happened.
        public var time: TimeInterval
        /// What happened.
        public var event: Event

        /// A scene of request `chapter`, `time` seconds after it was sent.
        public init(chapter: Int, time: TimeInterval = 0, event: Event) {
            self.chapter = chapter
            self.time = time
            self.event = event
        }

        /// What can happen to a request, in the order a chapter holds them: its request, any hops, a response and
        /// its data if one came, then a completion or an error.
        public enum Event: Sendable, Equatable {
            /// The request as it was sent (after filtering). Always the first scene of a chapter.
            indirect case request(RecordedRequest)
            /// A redirect hop: the 3xx response, and the request that followed it.
            indirect case redirect(RecordedResponse, to: RecordedRequest)
            /// The final response's status line and headers.
            indirect case response(RecordedResponse)
            /// One chunk of the response body, as it was received.
            case data(Data)
            /// The request failed: a transport error, a timeout, a cancellation.
            case error(RecordedError)
            /// The request finished successfully.
            case completion
        }
    }
}

/// Inside the package a scene is just a `Scene`; users write `Tape.Scene`, so that HTTPVCR's name meets no other
/// module's (SwiftUI has a `Scene`).
package typealias Scene = Tape.Scene

/// A request as recorded on a tape: what the matchers compare and what a reader of the cassette sees.
public struct RecordedRequest: Sendable, Equatable {
    /// The HTTP method, as sent: `GET`, `POST`.
    public var method: String
    /// The URL, as text.
    public var url: String
    /// Header fields in the order they are written; names keep their original case.
    public var headers: [RecordedHeader]
    /// The body sent, if any.
    public var body: Data?
    /// When the request was recorded, to the second (a chapter's request; nil on cassettes written before HTTPVCR
    /// kept it, and on a hop's next request). ``VCRConfiguration/reRecordInterval`` reads it.
    public var recordedAt: Date?

    /// A recorded request. Without `recordedAt` it never counts as expired (``VCRConfiguration/reRecordInterval``).
    public init(
        method: String,
        url: String,
        headers: [RecordedHeader] = [],
        body: Data? = nil,
        recordedAt: Date? = nil
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.recordedAt = recordedAt
    }
}

/// A response's status line and headers as recorded on a tape. Its body is in the chapter's data scenes.
///
/// It is also how the door for other clients takes and gives a response with every header field in order
/// (``VCR/dataKeepingFields(for:sending:)``), where Foundation's HTTP response type would keep one value per name.
public struct RecordedResponse: Sendable, Equatable {
    /// The response's URL, after the redirects the client followed.
    public var url: String
    /// The HTTP status code: 200, 404.
    public var statusCode: Int
    /// `HTTP/1.1`, `HTTP/2`: what the client reported (the URL loading system reports none: `HTTP/1.1`).
    public var httpVersion: String
    /// Header fields in the order they came; a name the server sent twice is two fields.
    public var headers: [RecordedHeader]

    /// A response's status line and header fields, as they are recorded.
    public init(url: String, statusCode: Int, httpVersion: String = "HTTP/1.1", headers: [RecordedHeader] = []) {
        self.url = url
        self.statusCode = statusCode
        self.httpVersion = httpVersion
        self.headers = headers
    }
}

/// A transport error as recorded on a tape: enough to rebuild an `NSError` with the same domain, code and
/// (string) user info.
public struct RecordedError: Sendable, Equatable {
    /// The error's domain: `NSURLErrorDomain`.
    public var domain: String
    /// The error's code in its domain: `NSURLErrorTimedOut`.
    public var code: Int
    /// The user info entries that can be written as text (strings, URLs, numbers), as text: the description, the
    /// failing URL.
    public var userInfo: [String: String]

    /// An error as it is recorded.
    public init(domain: String, code: Int, userInfo: [String: String] = [:]) {
        self.domain = domain
        self.code = code
        self.userInfo = userInfo
    }
}

/// One header field. Kept as an ordered list rather than a dictionary so that cassettes keep the case a server
/// sent, and a name it sent more than once (two `Set-Cookie`) as more than one field, in order.
public struct RecordedHeader: Sendable, Equatable, Hashable {
    /// The field's name, in the case it was sent.
    public var name: String
    /// The field's value, as sent.
    public var value: String

    /// A header field named `name` with `value`.
    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

extension Array where Element == RecordedHeader {
    /// The value of the first field with this name, compared case-insensitively.
    public subscript(field name: String) -> String? {
        get { first { $0.name.equalsIgnoringASCIICase(name) }?.value }
        set {
            let matches = { (header: RecordedHeader) in header.name.equalsIgnoringASCIICase(name) }
            guard let newValue else { return removeAll(where: matches) }
            if let index = firstIndex(where: matches) {
                self[index].value = newValue
                let duplicates = self[(index + 1)...].filter(matches)
                if !duplicates.isEmpty {
                    self = Array(self[...index]) + self[(index + 1)...].filter { !matches($0) }
                }
            } else {
                append(RecordedHeader(name, newValue))
            }
        }
    }

    /// The fields as Foundation wants them: one value per name, the values of a name that comes more than once
    /// joined with ", " in their order, as the URL loading system gives a response with repeated fields.
    public var dictionary: [String: String] {
        // One hash per field, into storage sized once: this runs for every replayed response.
        Dictionary(lazy.map { ($0.name, $0.value) }, uniquingKeysWith: { first, next in "\(first), \(next)" })
    }

    /// Fields from a Foundation dictionary, sorted by name so that the same headers always give the same list.
    public init(_ dictionary: [String: String]) {
        self = dictionary.map { RecordedHeader($0.key, $0.value) }.sortedByName()
    }

    /// Sorted by name case-insensitively, names equal but for case in a fixed order too; fields of the same name
    /// keep their order (the standard library's sort is stable). Each name is lowercased once, not at every
    /// comparison.
    package func sortedByName() -> [RecordedHeader] {
        map { (sortKey: $0.name.lowercasedIfNeeded, header: $0) }
            .sorted { ($0.sortKey, $0.header.name) < ($1.sortKey, $1.header.name) }
            .map(\.header)
    }
}
