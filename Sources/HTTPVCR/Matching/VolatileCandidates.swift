import Foundation
import HTTPVCRCassettes

/// Values that look volatile: at the same place in a live request and its recording, different, and of one shape
/// (two timestamps, two UUIDs, two hex digests). What a no-match message and `verify` propose to declare.
enum VolatileCandidates {
    /// The parts of a request a comparison may propose from.
    struct Parts: OptionSet {
        let rawValue: Int
        static let query = Parts(rawValue: 1)
        static let headers = Parts(rawValue: 2)
        static let body = Parts(rawValue: 4)
        static let all: Parts = [.query, .headers, .body]

        /// The parts the named matchers compare.
        init(matchers: some Sequence<String>) {
            self = []
            for name in matchers {
                switch name {
                case Matcher.query.name, Matcher.uri.name: insert(.query)
                case Matcher.headers.name: insert(.headers)
                case Matcher.body.name: insert(.body)
                default: break
                }
            }
        }

        init(rawValue: Int) { self.rawValue = rawValue }
    }

    /// A value that looks volatile: the declaration that would match it, and its two texts.
    struct Candidate: Equatable {
        let value: VolatileValue
        let recorded: String
        let live: String
    }

    /// The declarations that would make `live` and `recorded` alike where they differ in `parts`, leaving out what
    /// `declared` holds already; in request order, each once.
    static func between(
        _ live: RecordedRequest, _ recorded: RecordedRequest, in parts: Parts = .all, declared: [VolatileValue] = []
    ) -> [Candidate] {
        var found: [Candidate] = []
        func propose(_ value: VolatileValue, _ liveText: String, _ recordedText: String) {
            guard liveText != recordedText, looksVolatile(liveText, recordedText),
                  !declared.contains(value), !found.contains(where: { $0.value == value })
            else { return }
            found.append(Candidate(value: value, recorded: recordedText, live: liveText))
        }
        if parts.contains(.query) {
            let recordedPairs = pairs(ofQueryIn: recorded.url)
            for (name, value) in pairs(ofQueryIn: live.url) {
                if let old = recordedPairs.first(where: { $0.name == name }) { propose(.query(name), value, old.value) }
            }
        }
        if parts.contains(.headers) {
            for header in live.headers {
                if let old = recorded.headers[field: header.name] { propose(.header(header.name), header.value, old) }
            }
        }
        guard parts.contains(.body), let liveBody = live.body, let recordedBody = recorded.body else { return found }
        if let liveJSON = LosslessJSONReader.value(of: liveBody), let recordedJSON = LosslessJSONReader.value(of: recordedBody) {
            compare(liveJSON, recordedJSON, at: "$") { location, liveText, recordedText in
                propose(.jsonPath(location), liveText, recordedText)
            }
        } else if let liveText = BodyText.text(liveBody), let recordedText = BodyText.text(recordedBody),
                  liveText.contains("="), recordedText.contains("=") {
            let recordedPairs = FormCoding.decodePairs(recordedText)
            for (name, value) in FormCoding.decodePairs(liveText) {
                if let old = recordedPairs.first(where: { $0.name == name }) { propose(.form(name), value, old.value) }
            }
        }
        return found
    }

    /// Two texts of one shape that says "made anew each time"; plain words and numbers of unlike form are not.
    static func looksVolatile(_ live: String, _ recorded: String) -> Bool {
        let shape = VolatileShape(of: live)
        guard shape == VolatileShape(of: recorded) else { return false }
        switch shape {
        case .uuid, .timestamp, .hex: return true
        // A nonce or a signature: long enough not to be a word, of one length.
        case .token: return live.utf8.count >= 8 && live.utf8.count == recorded.utf8.count
        case .number, .text, .empty: return false
        }
    }

    private static func pairs(ofQueryIn url: String) -> [(name: String, value: String)] {
        VolatileValues.query(of: url).map { FormCoding.decodePairs($0) } ?? []
    }

    /// Scalars at the same place in both documents; array elements at one index, written `[*]`.
    private static func compare(
        _ live: JSONValue, _ recorded: JSONValue, at location: String, _ found: (String, String, String) -> Void
    ) {
        switch (live, recorded) {
        case let (.object(liveMembers), .object(recordedMembers)):
            for (name, value) in liveMembers {
                guard let old = recordedMembers.first(where: { $0.0 == name })?.1 else { continue }
                compare(value, old, at: JSONPathLocation.appending(key: name, to: location), found)
            }
        case let (.array(liveElements), .array(recordedElements)):
            for (value, old) in zip(liveElements, recordedElements) { compare(value, old, at: location + "[*]", found) }
        default:
            if let liveText = VolatileValues.text(of: live), let recordedText = VolatileValues.text(of: recorded) {
                found(location, liveText, recordedText)
            }
        }
    }
}
