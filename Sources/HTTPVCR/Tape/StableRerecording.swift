import Foundation

/// Keeps a re-recorded cassette's diff to what really changed: an interaction recorded again with the same request
/// and the same answer (status, headers but for the volatile ones, body, or the same error) keeps its previous
/// scenes, times, chunk boundaries, `recordedAt` and volatile headers (`Date`, request ids) byte for byte.
enum StableRerecording {
    /// Response headers that differ on every answer without the answer being different.
    static let volatileHeaders: Set<String> = [
        "date", "age", "expires", "last-modified", "etag", "x-request-id", "request-id", "x-correlation-id",
        "x-amzn-trace-id", "x-amzn-requestid", "x-amz-request-id", "x-amz-id-2", "cf-ray", "x-runtime",
        "server-timing", "x-trace-id", "traceparent", "x-cache", "x-served-by", "x-timer", "report-to", "nel",
    ]

    /// `recorded` (scenes with their place on the tape) with each chapter that re-recorded one of `previous`
    /// unchanged given that interaction's scenes instead, in the recorded chapter's place.
    static func keepingUnchanged(
        _ recorded: [(anchor: Int, order: UInt64, scene: Scene)],
        previous: [Interaction]
    ) -> [(anchor: Int, order: UInt64, scene: Scene)] {
        guard !previous.isEmpty, !recorded.isEmpty else { return recorded }
        var positions: [Int: [Int]] = [:]
        var chapters: [Int] = []
        for (index, entry) in recorded.enumerated() {
            if positions[entry.scene.chapter] == nil { chapters.append(entry.scene.chapter) }
            positions[entry.scene.chapter, default: []].append(index)
        }
        var result = recorded
        var used = Set<Int>()
        for chapter in chapters {
            let indices = positions[chapter] ?? []
            guard let interaction = Interaction(scenes: indices.map { recorded[$0].scene }),
                  let match = previous.indices.first(where: { !used.contains($0) && same(interaction, previous[$0]) }),
                  previous[match].scenes.count == indices.count
            else { continue }
            used.insert(match)
            for (index, scene) in zip(indices, previous[match].scenes) {
                result[index].scene = Scene(chapter: chapter, time: scene.time, event: scene.event)
            }
        }
        return result
    }

    /// The same request, answered the same way.
    private static func same(_ new: Interaction, _ old: Interaction) -> Bool {
        var newRequest = new.request
        var oldRequest = old.request
        newRequest.recordedAt = nil
        oldRequest.recordedAt = nil
        guard newRequest == oldRequest, new.redirects.count == old.redirects.count, new.body == old.body,
              new.error == old.error
        else { return false }
        for (newHop, oldHop) in zip(new.redirects, old.redirects) {
            var newNext = newHop.request
            var oldNext = oldHop.request
            newNext.recordedAt = nil
            oldNext.recordedAt = nil
            guard newNext == oldNext, same(newHop.response, oldHop.response) else { return false }
        }
        switch (new.response, old.response) {
        case (nil, nil):
            return true
        case let (newResponse?, oldResponse?):
            return same(newResponse, oldResponse)
        default:
            return false
        }
    }

    private static func same(_ new: RecordedResponse, _ old: RecordedResponse) -> Bool {
        new.statusCode == old.statusCode && new.url == old.url && stableHeaders(new.headers) == stableHeaders(old.headers)
    }

    private static func stableHeaders(_ headers: [RecordedHeader]) -> [RecordedHeader] {
        headers.filter { !volatileHeaders.contains($0.name.lowercased()) }
    }
}
