import Foundation

/// Folds redirect hops that a format stores as requests of their own into one chapter, the shape the recorder
/// writes: the first request, a `.redirect` scene per hop, then the outcome of the request the last hop led to.
///
/// HAR and VCR.py keep each hop as an entry: a 3xx with a `Location`, then the request it leads to. A hop is
/// folded only when the *next* interaction on the file is that request (``RecordedRequest/followingRedirect(_:)``);
/// a 3xx that leads anywhere else stays a chapter of its own, ending in the 3xx, as the client got it. Doing this
/// when the file is read keeps replay from having to know which format a tape came from.
package enum RedirectFolding {
    /// The interactions of a file, in file order, with hop chains folded; chapters numbered 1, 2, 3 in order.
    package static func fold(_ interactions: [Interaction]) -> [Interaction] {
        var chapters: [Interaction] = []
        chapters.reserveCapacity(interactions.count)
        var start = 0
        while start < interactions.count {
            var end = start
            while end + 1 < interactions.count, isHop(interactions[end], followedBy: interactions[end + 1]) {
                end += 1
            }
            chapters.append(chapter(interactions[start...end], number: chapters.count + 1))
            start = end + 1
        }
        return chapters
    }

    /// Whether `interaction` ended in a redirect and `next` is the request it leads to.
    static func isHop(_ interaction: Interaction, followedBy next: Interaction) -> Bool {
        guard interaction.error == nil, let response = interaction.response else { return false }
        return leads(response, from: interaction.request, to: next.request)
    }

    /// Whether `response` to `request` is a redirect whose `Location` leads to `next`: the same URL, and the
    /// method a client sends on with. Clients differ on 301 and 302 (python-requests turns every 302 into a GET,
    /// browsers only a POST), so there a GET is taken as well; nobody changes a 307's or 308's method.
    static func leads(_ response: RecordedResponse, from request: RecordedRequest, to next: RecordedRequest) -> Bool {
        guard let expected = request.followingRedirect(response), sameURL(expected.url, next.url) else {
            return false
        }
        let method = next.method.uppercased()
        if method == expected.method { return true }
        return (response.statusCode == 301 || response.statusCode == 302) && method == "GET"
    }

    /// `run`'s first request, a redirect scene per hop (at the time the hop's exchange ended, counted from the
    /// first request), then the last interaction's scenes shifted by the time the hops took.
    private static func chapter(_ run: ArraySlice<Interaction>, number: Int) -> Interaction {
        let first = run[run.startIndex]
        guard run.count > 1 else { return renumbered(first, number) }
        var scenes = [Scene(chapter: number, time: 0, event: .request(first.request))]
        var offset: TimeInterval = 0
        for (hop, next) in zip(run.dropLast(), run.dropFirst()) {
            guard let response = hop.response else { preconditionFailure("checked by isHop") }
            offset = microseconds(offset + (hop.scenes.last?.time ?? 0))
            scenes.append(Scene(chapter: number, time: offset, event: .redirect(response, to: next.request)))
        }
        for scene in run[run.endIndex - 1].scenes.dropFirst() {
            scenes.append(Scene(chapter: number, time: microseconds(offset + scene.time), event: scene.event))
        }
        return Interaction(scenes: scenes) ?? first
    }

    private static func renumbered(_ interaction: Interaction, _ number: Int) -> Interaction {
        guard interaction.chapter != number else { return interaction }
        var copy = interaction
        for index in copy.scenes.indices { copy.scenes[index].chapter = number }
        return copy
    }

    /// Sums of millisecond times pick up binary noise (0.1 + 0.2); the tape keeps no more than microseconds.
    private static func microseconds(_ seconds: TimeInterval) -> TimeInterval {
        (seconds * 1_000_000).rounded() / 1_000_000
    }

    /// The same resource: compared as written, then with what clients ignore told apart no more (the case of
    /// scheme and host, a default port, an empty path, a fragment).
    static func sameURL(_ lhs: String, _ rhs: String) -> Bool {
        lhs == rhs || (normalized(lhs).map { $0 == normalized(rhs) } ?? false)
    }

    private static func normalized(_ url: String) -> String? {
        guard var components = URLComponents(string: url) else { return nil }
        let scheme = components.scheme?.lowercased()
        components.scheme = scheme
        components.host = components.host?.lowercased()
        if (scheme == "http" && components.port == 80) || (scheme == "https" && components.port == 443) {
            components.port = nil
        }
        if components.host != nil, components.percentEncodedPath.isEmpty { components.percentEncodedPath = "/" }
        components.fragment = nil
        return components.string
    }
}

extension RecordedRequest {
    /// The request a client sends after `response` when that is a redirect (301, 302, 303, 307 or 308 with a
    /// `Location`), or nil. The `Location` is resolved against the response's URL. As the loader does it: a 303,
    /// and a 301 or 302 after a POST, become a GET without a body, `Content-Type` or `Content-Length`; a 307 or 308
    /// keeps the method and the body.
    package func followingRedirect(_ response: RecordedResponse) -> RecordedRequest? {
        switch response.statusCode {
        case 301, 302, 303, 307, 308: break
        default: return nil
        }
        guard let location = response.headers[field: "Location"],
              let target = URL(string: location, relativeTo: URL(string: response.url.isEmpty ? url : response.url)),
              target.scheme != nil
        else { return nil }
        var next = self
        next.url = target.absoluteString
        next.method = method.uppercased()
        if RedirectRule.becomesGet(status: response.statusCode, method: next.method) {
            next.method = "GET"
            next.body = nil
            next.headers[field: "Content-Type"] = nil
            next.headers[field: "Content-Length"] = nil
        }
        return next
    }
}
