import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCRCassettes

/// An upload whose body the loader keeps from URL protocols (Apple platforms: ``Load/Sent/hidesBody``).
///
/// It replays from the tape wherever nothing needs the body, and is refused, unsent, where something does: a
/// recording (the server would get no body, the tape would keep none), a request HTTPVCR would send on itself
/// (ejected meanwhile, or left out by `beforeRecordRequest`), and a matcher that compares bodies (with the body
/// filters whose result it compares). The body filters alone need nothing: matching reads their result only through
/// such a matcher, and the secure defaults filter every body, so refusing on their account would refuse every upload.
/// Matchers of the app's own are not asked (``Matcher/init(name:matches:)``): they get the request without a body.
enum HiddenBody {
    /// What needs the body of an upload HTTPVCR cannot see.
    enum Need: Equatable {
        /// The cassette would record the request; `matchedNothing`: it did not record it regardless (`.all` does).
        case recording(RecordMode, matchedNothing: Bool)
        /// HTTPVCR would send the request itself, unrecorded, for the reason given.
        case passingBy(String)
        /// A matcher that compares bodies; `filter`: the configured body filter whose result it compares.
        case matcher(String, filter: String?)
    }

    /// What needs the body before the request is matched: recording everything, or a matcher that reads it.
    static func need(before cassette: Cassette) -> Need? {
        if cassette.recordMode == .all { return .recording(.all, matchedNothing: false) }
        guard let matcher = cassette.configuration.matchers.first(where: \.readsBody) else { return nil }
        return .matcher(matcher.name, filter: cassette.configuration.postBodyFilter == nil ? nil : "postBodyFilter")
    }

    /// A mismatch of a request matched without its body, with what may have made it differ.
    static func noting(_ error: VCRError) -> VCRError {
        var noted = error
        noted.message += "\n  note: HTTPVCR could not see this upload's body (the loader keeps an upload task's "
            + "body from URL protocols), so it was matched without one: a matcher of your own that reads the body, or "
            + "a secret the body filters take out and replace elsewhere in the request, can make it differ. Set the "
            + "body on the request (request.httpBody) and send it with data(for:) to match it with its body."
        return noted
    }
}

extension VCRError {
    /// An upload whose body HTTPVCR cannot see, refused because `need` needs it.
    static func hiddenBody(of request: URLRequest, neededFor need: HiddenBody.Need) -> VCRError {
        let described = Mismatch.describe(request)
        let why: String
        let fix: String
        switch need {
        case let .recording(mode, matchedNothing):
            why = (matchedNothing ? "It matched nothing on the cassette, and record mode \(mode) records it"
                : "Record mode \(mode) records every request")
                + ": recording needs the body, which the server would not get and the cassette would not keep."
            fix = "Set the body on the request (request.httpBody) and send it with data(for:) instead of "
                + "upload(for:from:) or uploadTask(with:from:), so that it is recorded with its body."
                + (matchedNothing ? " If the cassette should hold it already, replay with record mode .never to see "
                    + "what differs." : "")
        case let .passingBy(reason):
            why = "\(reason), so HTTPVCR would send it to the server itself: that needs the body, which the server "
                + "would not get."
            fix = "Set the body on the request (request.httpBody) and send it with data(for:) instead of "
                + "upload(for:from:) or uploadTask(with:from:)."
        case let .matcher(name, filter):
            why = "The cassette matches requests by body (matcher .\(name)"
                + (filter.map { ", which compares the body as \($0) rewrites it" } ?? "")
                + "): matching needs the body."
            fix = "Set the body on the request (request.httpBody) and send it with data(for:) instead of "
                + "upload(for:from:) or uploadTask(with:from:), or leave .\(name) out of the cassette's matchers "
                + "(configuration.matchers) to replay it by the rest."
        }
        return VCRError(
            .unsupportedRequest,
            "HTTPVCR cannot see the body of the upload task \(described): the loader keeps an upload task's body "
                + "from URL protocols (Apple platforms). \(why) It was refused, unsent. \(fix)",
            request: described
        )
    }
}
