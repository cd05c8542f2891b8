import Foundation
import HTTPVCRCassettes

extension UpstreamForwarder {
    /// The fields of a forwarded answer, from what URLSession kept of them: one value per name, repeated ones joined
    /// with ", ".
    ///
    /// URLSession keeps them in a dictionary, so the server's order is lost: they are sorted by name, which keeps a
    /// recording the same from one run to the next. Each joined `Set-Cookie` is split back into the fields the server
    /// sent (``splitSetCookie(_:)``). `Content-Encoding` is dropped, as URLSession hands back the decoded body, and
    /// `Content-Length` then becomes `decodedBodyLength` (nil where the response has no body, a HEAD's: left as it
    /// came).
    static func responseFields(_ fields: [(name: String, value: String)], decodedBodyLength: Int?) -> [RecordedHeader] {
        let wasDecoded = fields.contains { $0.name.equalsIgnoringASCIICase("Content-Encoding") }
        return fields
            .filter { !$0.name.equalsIgnoringASCIICase("Content-Encoding") }
            .sorted { $0.name.lowercased() < $1.name.lowercased() }
            .flatMap { field -> [RecordedHeader] in
                if field.name.equalsIgnoringASCIICase("Set-Cookie") {
                    return splitSetCookie(field.value).map { RecordedHeader(field.name, $0) }
                }
                if wasDecoded, let decodedBodyLength, field.name.equalsIgnoringASCIICase("Content-Length") {
                    return [RecordedHeader(field.name, String(decodedBodyLength))]
                }
                return [RecordedHeader(field.name, field.value)]
            }
    }

    /// The `Set-Cookie` fields URLSession joined into `joined` with ", ", apart again, in order.
    ///
    /// A cookie's own text may hold ", " too (`Expires=Wed, 21 Oct 2015 07:28:00 GMT`), so the value is split only
    /// where what follows the comma, up to the next `;` or `,`, is `name=…` with a token for a name: a new cookie.
    /// A value that is one cookie (or empty) comes back as it is, as one field.
    ///
    /// `"a=1; Expires=Wed, 21 Oct 2015 07:28:00 GMT, b=2"` becomes `["a=1; Expires=Wed, 21 Oct 2015 07:28:00 GMT",
    /// "b=2"]`.
    static func splitSetCookie(_ joined: String) -> [String] {
        var cookies: [String] = []
        var current = Substring(joined)
        var searchFrom = current.startIndex
        while let comma = current[searchFrom...].firstIndex(of: ",") {
            let next = current[current.index(after: comma)...].drop { $0 == " " }
            if startsACookie(next) {
                cookies.append(String(current[..<comma]))
                current = next
                searchFrom = current.startIndex
            } else {
                searchFrom = current.index(after: comma)
            }
        }
        cookies.append(String(current))
        return cookies
    }

    /// Whether `text` starts `name=` (RFC 6265 4.1.1: the name a token), before any `;` or `,`.
    private static func startsACookie(_ text: Substring) -> Bool {
        let name = text.prefix { $0 != "=" && $0 != ";" && $0 != "," }
        guard !name.isEmpty, name.endIndex < text.endIndex, text[name.endIndex] == "=" else { return false }
        return name.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)
                || "!#$%&'*+-.^_`|~".unicodeScalars.contains(scalar))
        }
    }
}
