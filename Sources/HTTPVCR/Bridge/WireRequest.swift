import Foundation
import HTTPVCRCassettes

/// One header field as it came on the wire: name with its case, value without surrounding whitespace.
package struct WireField: Sendable, Equatable {
    package var name: String
    package var value: String

    package init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// A request read off the loopback wire: fields in their order, the body already unframed.
package struct WireRequest: Sendable, Equatable {
    package var method: String
    /// The request target as sent: `/path?query` (origin form), or an absolute URL.
    package var target: String
    /// `HTTP/1.1` or `HTTP/1.0`.
    package var version: String
    package var fields: [WireField]
    package var body: Data

    /// The first value of the field `name`, compared without case.
    package func field(_ name: String) -> String? {
        fields.first { $0.name.equalsIgnoringASCIICase(name) }?.value
    }

    /// Whether the client asked to close after this exchange (HTTP/1.0 closes unless it asks to keep alive).
    package var wantsClose: Bool {
        let connection = field("Connection") ?? ""
        if version == "HTTP/1.0" { return !connection.containsIgnoringASCIICase("keep-alive") }
        return connection.containsIgnoringASCIICase("close")
    }
}

/// Why bytes on the wire are not a request. Each maps to the 4xx/5xx the server answers before it closes.
package enum WireError: Error, Equatable, Sendable, CaseIterable {
    /// The connection ended in the middle of a request.
    case truncated
    /// The request line and fields passed ``WireLimits/headBytes``.
    case headTooLarge
    /// More fields than ``WireLimits/fields``.
    case tooManyFields
    /// A body (declared or chunked) over ``WireLimits/bodyBytes``.
    case bodyTooLarge
    /// A request line that is not `METHOD SP target SP HTTP/x.y`.
    case badRequestLine
    /// An HTTP version other than 1.0 and 1.1.
    case unsupportedVersion
    /// A field line without a colon, with space before it, folded, or with control bytes.
    case badField
    /// A line ended by LF alone, or a CR not followed by LF: only CRLF ends a line.
    case bareLineFeed
    /// A Content-Length that is not digits, or several that disagree.
    case badContentLength
    /// Both Content-Length and Transfer-Encoding: the classic smuggling shape, refused.
    case conflictingFraming
    /// A Transfer-Encoding other than `chunked` alone, or chunk data not ended by CRLF.
    case badFraming
    /// A chunk size that is not 1 to 16 hex digits.
    case badChunkSize
    /// The client sent nothing (or not the whole request) within the read timeout.
    case timeout

    /// The status the server answers with.
    package var status: Int {
        switch self {
        case .headTooLarge, .tooManyFields: 431
        case .bodyTooLarge: 413
        case .unsupportedVersion: 505
        case .timeout: 408
        default: 400
        }
    }

    /// A short name for counts and the `X-VCR-Error` field.
    package var kind: String { String(describing: self) }
}

/// What the parser accepts at most.
package struct WireLimits: Sendable {
    /// Request line and fields together, CRLFs included.
    package var headBytes = 64 * 1024
    package var fields = 100
    package var bodyBytes = 64 * 1024 * 1024

    package init(headBytes: Int = 64 * 1024, fields: Int = 100, bodyBytes: Int = 64 * 1024 * 1024) {
        self.headBytes = headBytes
        self.fields = fields
        self.bodyBytes = bodyBytes
    }
}
