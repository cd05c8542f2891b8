import Foundation
import HTTPVCRCassettes

/// What a replayed chapter's response says in place of the recorded request's volatile values: the live request's,
/// wherever the server echoed them (header fields, the response URL, the body; as written, percent-encoded or
/// form-encoded), byte for byte otherwise, with `Content-Length` following the body.
struct VolatileEchoes: Sendable {
    /// Recorded bytes and what replaces them, longest first so that a value inside another is not cut.
    private let replacements: [(recorded: [UInt8], live: [UInt8])]
    /// How many bytes longer the body is with the replacements (negative: shorter).
    private let lengthChange: Int

    /// Header fields whose recorded value was filtered, by lowercased name: the live value goes in their place.
    private let filteredFields: [String: String]

    /// Nil when no value differs or the chapter echoes none.
    init?(recorded: [VolatileValues.Place], live: [VolatileValues.Place], body: [Data]) {
        var replacements: [(recorded: [UInt8], live: [UInt8])] = []
        var filteredFields: [String: String] = [:]
        var seen: Set<String> = []
        for place in recorded where !place.text.isEmpty {
            guard let counterpart = live.first(where: {
                $0.location == place.location && $0.declared.kind == place.declared.kind
            }), counterpart.text != place.text, seen.insert(place.location + "\u{0}" + place.text).inserted
            else { continue }
            if place.text == VCRConfiguration.filteredPlaceholder {
                // Filtered in the file, and so in the echo: found where it is named, not by its text.
                let name = place.location.split(separator: ".").last.map(String.init) ?? place.location
                replacements += Self.namedEchoes(of: name, recorded: place.text, live: counterpart.text)
                if place.declared.kind == .header { filteredFields[name.lowercased()] = counterpart.text }
            } else {
                replacements += Self.spellings(of: place.text, live: counterpart.text)
            }
        }
        guard !replacements.isEmpty || !filteredFields.isEmpty else { return nil }
        replacements.sort { $0.recorded.count > $1.recorded.count }
        self.replacements = replacements
        self.filteredFields = filteredFields
        lengthChange = body.reduce(0) { total, chunk in total + Self.replacing(Array(chunk), replacements).count - chunk.count }
    }

    /// A value as written, and as a query and a form body encode it.
    private static func spellings(of recorded: String, live: String) -> [(recorded: [UInt8], live: [UInt8])] {
        var pairs = [(Array(recorded.utf8), Array(live.utf8))]
        for spelling in [FormCoding.Spelling.query, .body] {
            let encoded = (FormCoding.encode(recorded, as: spelling), FormCoding.encode(live, as: spelling))
            if !pairs.contains(where: { $0.0 == encoded.0 }) { pairs.append(encoded) }
        }
        return pairs
    }

    /// A filtered value where an echo names it: `name=[FILTERED]` (as written or encoded) and `"name": "[FILTERED]"`.
    private static func namedEchoes(of name: String, recorded: String, live: String) -> [(recorded: [UInt8], live: [UInt8])] {
        var pairs: [(recorded: [UInt8], live: [UInt8])] = spellings(of: recorded, live: live).map {
            (Array(name.utf8) + [Byte.equals] + $0.recorded, Array(name.utf8) + [Byte.equals] + $0.live)
        }
        let escaped = String(decoding: JSONValue.string(live).serialized().dropLast(), as: UTF8.self)
        for separator in [": ", ":"] {
            pairs.append((Array("\"\(name)\"\(separator)\"\(recorded)\"".utf8), Array("\"\(name)\"\(separator)\(escaped)".utf8)))
        }
        return pairs
    }

    /// `event` as the live request's response would have it.
    func applied(to event: Tape.Scene.Event) -> Tape.Scene.Event {
        switch event {
        case var .response(response):
            response.url = replaced(response.url)
            for index in response.headers.indices {
                if response.headers[index].name.equalsIgnoringASCIICase("Content-Length"), lengthChange != 0,
                   let length = Int(response.headers[index].value) {
                    response.headers[index].value = String(length + lengthChange)
                } else if response.headers[index].value == VCRConfiguration.filteredPlaceholder,
                          let live = filteredFields[response.headers[index].name.lowercased()] {
                    response.headers[index].value = live
                } else {
                    response.headers[index].value = replaced(response.headers[index].value)
                }
            }
            return .response(response)
        case let .data(chunk):
            let bytes = Self.replacing(Array(chunk), replacements)
            return bytes.count == chunk.count && bytes.elementsEqual(chunk) ? event : .data(Data(bytes))
        case .request, .redirect, .error, .completion:
            return event
        }
    }

    private func replaced(_ text: String) -> String {
        let bytes = Self.replacing(Array(text.utf8), replacements)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `bytes` with each occurrence of a recorded value replaced, left to right, the longest value first where
    /// several start at one place.
    private static func replacing(_ bytes: [UInt8], _ replacements: [(recorded: [UInt8], live: [UInt8])]) -> [UInt8] {
        guard let shortest = replacements.map(\.recorded.count).min(), shortest > 0, bytes.count >= shortest else {
            return bytes
        }
        var output: [UInt8] = []
        var index = 0
        var copied = 0
        while index + shortest <= bytes.count {
            if let match = replacements.first(where: { index + $0.recorded.count <= bytes.count
                && bytes[index..<(index + $0.recorded.count)].elementsEqual($0.recorded) }) {
                if output.isEmpty { output.reserveCapacity(bytes.count) }
                output += bytes[copied..<index]
                output += match.live
                index += match.recorded.count
                copied = index
            } else {
                index += 1
            }
        }
        guard copied > 0 else { return bytes }
        output += bytes[copied...]
        return output
    }
}

extension VolatileValue {
    /// Which part of a request it names, whatever the name.
    enum Kind: Hashable { case query, header, form, jsonPath }

    var kind: Kind {
        switch self {
        case .query: .query
        case .header: .header
        case .form: .form
        case .jsonPath: .jsonPath
        }
    }
}
