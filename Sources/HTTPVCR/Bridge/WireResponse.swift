import Foundation
import HTTPVCRCassettes

/// A response to write on the loopback wire. The writer frames the body itself: any Content-Length,
/// Transfer-Encoding or Connection among `fields` is dropped and its own are written.
package struct WireResponse: Sendable, Equatable {
    package var status: Int
    package var fields: [WireField]
    package var body: Data

    package init(status: Int, fields: [WireField] = [], body: Data = Data()) {
        self.status = status
        self.fields = fields
        self.body = body
    }

    /// A plain-text answer, for errors the server gives itself.
    package static func text(_ status: Int, _ text: String, error: String? = nil) -> WireResponse {
        var fields = [WireField("Content-Type", "text/plain; charset=utf-8")]
        if let error { fields.append(WireField("X-VCR-Error", error)) }
        return WireResponse(status: status, fields: fields, body: Data((text + "\n").utf8))
    }

    /// Fields a hop sets for itself and never passes on (RFC 9110 7.6.1), plus the framing the writer owns.
    package static let hopByHopFields: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade",
        "content-length",
    ]

    /// Whether `name` is one of ``hopByHopFields``, without a lowercased copy: most names are ruled out by length,
    /// the rest compared with the one or two of theirs.
    package static func isHopByHop(_ name: String) -> Bool {
        switch name.utf8.count {
        case 2: name.equalsIgnoringASCIICase("te")
        case 7: name.equalsIgnoringASCIICase("trailer") || name.equalsIgnoringASCIICase("upgrade")
        case 10: name.equalsIgnoringASCIICase("connection") || name.equalsIgnoringASCIICase("keep-alive")
        case 14: name.equalsIgnoringASCIICase("content-length")
        case 16: name.equalsIgnoringASCIICase("proxy-connection")
        case 17: name.equalsIgnoringASCIICase("transfer-encoding")
        default: false
        }
    }

    /// The bytes on the wire. `includesBody` is false for HEAD (the length is still the body's). Written as bytes:
    /// building the head as a String cost as much as answering the request from the cassette.
    package func serialized(closing: Bool, includesBody: Bool = true) -> Data {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256 + (includesBody ? body.count : 0))
        bytes.appendUTF8("HTTP/1.1 ")
        bytes.appendDecimal(status)
        bytes.append(Byte.space)
        bytes.appendUTF8(Self.reason(status))
        bytes.appendUTF8("\r\n")
        for field in fields where !Self.isHopByHop(field.name) { bytes.appendField(field.name, field.value) }
        bytes.appendUTF8("Content-Length: ")
        bytes.appendDecimal(body.count)
        bytes.appendUTF8("\r\n")
        if closing { bytes.appendUTF8("Connection: close\r\n") }
        bytes.appendUTF8("\r\n")
        // The body into the same array, then one copy: appending to a `Data` cost more than writing the head.
        if includesBody { body.withUnsafeBytes { bytes.append(contentsOf: $0.bindMemory(to: UInt8.self)) } }
        return Data(bytes)
    }

    static func reason(_ status: Int) -> StaticString {
        switch status {
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 404: "Not Found"
        case 408: "Request Timeout"
        case 413: "Content Too Large"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 502: "Bad Gateway"
        case 505: "HTTP Version Not Supported"
        // Clients read the code, not the phrase (RFC 9112 4): any text does.
        default: "Status"
        }
    }
}
