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

    /// Whether `name` is one of ``hopByHopFields``, without a lowercased copy: most names are ruled out by length.
    package static func isHopByHop(_ name: String) -> Bool {
        switch name.utf8.count {
        case 2, 7, 10, 14, 16, 17: return hopByHopFields.contains { name.equalsIgnoringASCIICase($0) }
        default: return false
        }
    }

    /// The bytes on the wire. `includesBody` is false for HEAD (the length is still the body's). Written as bytes:
    /// building the head as a String cost as much as answering the request from the cassette.
    package func serialized(closing: Bool, includesBody: Bool = true) -> Data {
        var head: [UInt8] = []
        head.reserveCapacity(256)
        head.appendUTF8("HTTP/1.1 ")
        head.appendDecimal(status)
        head.append(Byte.space)
        head.appendUTF8(Self.reason(status))
        head.appendUTF8("\r\n")
        for field in fields where !Self.isHopByHop(field.name) { head.appendField(field.name, field.value) }
        head.appendUTF8("Content-Length: ")
        head.appendDecimal(body.count)
        head.appendUTF8("\r\n")
        if closing { head.appendUTF8("Connection: close\r\n") }
        head.appendUTF8("\r\n")
        // Two appends: Data grows slowly a few bytes at a time.
        var bytes = Data(capacity: head.count + (includesBody ? body.count : 0))
        bytes.append(contentsOf: head)
        if includesBody { bytes.append(body) }
        return bytes
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
