import Foundation

/// Keeps a re-recorded cassette's diff to what really changed. An interaction recorded again with the same request
/// and the same answer (status, headers but for the volatile ones, body, or the same error) keeps its previous
/// scenes, times, chunk boundaries, `recordedAt`, volatile headers (`Date`, request ids) and chapter number, byte
/// for byte.
///
/// Interactions that overlapped in time, in this recording or in the file it replaces, form a group: from the moment
/// one is sent until none is in flight. Inside a group the order carries nothing the app relies on (each request was
/// sent before another had ended; which answer came first was the network's doing), and in one whose every
/// interaction came back unchanged the previous file's order is as true as today's: it is kept, so that the file
/// does not change from one recording to the next. Groups follow one another in the real order, and a group with
/// anything new or changed keeps its real order: a request sent after another ended may depend on that answer.
package enum StableRerecording {
    /// A recorded scene and its place on the tape: the playhead when it happened, then when.
    package typealias Entry = (anchor: Int, order: UInt64, scene: Scene)

    /// Response headers that differ on every answer without the answer being different.
    static let volatileHeaders: Set<String> = [
        "date", "age", "expires", "last-modified", "etag", "x-request-id", "request-id", "x-correlation-id",
        "x-amzn-trace-id", "x-amzn-requestid", "x-amz-request-id", "x-amz-id-2", "cf-ray", "x-runtime",
        "server-timing", "x-trace-id", "traceparent", "x-cache", "x-served-by", "x-timer", "report-to", "nel",
    ]

    /// `recorded` in tape order (by playhead, then time), with each chapter that re-recorded one of `previous`
    /// unchanged given that interaction's scenes and chapter number, and each group of overlapping chapters that all
    /// did so in the order `previous` had them.
    package static func arranged(_ recorded: [Entry], previous: PreviousRecordings) -> [Entry] {
        let inOrder = recorded.indices.sorted {
            (recorded[$0].anchor, recorded[$0].order, $0) < (recorded[$1].anchor, recorded[$1].order, $1)
        }
        guard !previous.interactions.isEmpty, !recorded.isEmpty else { return inOrder.map { recorded[$0] } }
        var positions: [Int: [Int]] = [:]
        var chapters: [Int] = []
        for (index, entry) in recorded.enumerated() {
            if positions[entry.scene.chapter] == nil { chapters.append(entry.scene.chapter) }
            positions[entry.scene.chapter, default: []].append(index)
        }
        var result = recorded
        // Where each kept scene was on the previous tape, and each kept chapter's number there.
        var previousPlace: [Int: Int] = [:]
        var previousNumber: [Int: Int] = [:]
        var previousGroup: [Int: Int] = [:]
        var used = Set<Int>()
        for chapter in chapters {
            let indices = positions[chapter] ?? []
            guard let interaction = Interaction(scenes: indices.map { recorded[$0].scene }),
                  let match = previous.interactions.indices.first(where: {
                      !used.contains($0) && same(interaction, previous.interactions[$0])
                  }),
                  previous.interactions[match].scenes.count == indices.count
            else { continue }
            used.insert(match)
            previousNumber[chapter] = previous.interactions[match].chapter
            previousGroup[chapter] = previous.groups[match]
            for (offset, index) in indices.enumerated() {
                let scene = previous.interactions[match].scenes[offset]
                result[index].scene = Scene(chapter: chapter, time: scene.time, event: scene.event)
                previousPlace[index] = previous.places[match][offset]
            }
        }
        let numbers = chapterNumbers(chapters, keeping: previousNumber)
        return groups(inOrder, of: result, joinedBy: previousGroup).flatMap { group in
            group.allSatisfy { previousPlace[$0] != nil }
                ? group.sorted { previousPlace[$0, default: 0] < previousPlace[$1, default: 0] }
                : group
        }.map { index in
            var entry = result[index]
            entry.scene.chapter = numbers[entry.scene.chapter] ?? entry.scene.chapter
            return entry
        }
    }

    /// `inOrder` (indices of `entries`, in tape order) cut wherever no chapter is in flight, unless chapters on both
    /// sides were in one group of the previous tape (`previousGroup`, by chapter). Only `.all` has a previous tape,
    /// and it erased the tape: every recorded scene is at the same playhead.
    private static func groups(_ inOrder: [Int], of entries: [Entry], joinedBy previousGroup: [Int: Int]) -> [[Int]] {
        let cuts = Overlaps.groupStarts(inOrder.map { entries[$0].scene.chapter })
        var groups: [[Int]] = []
        var joined = Set<Int>()
        for (start, end) in zip(cuts, cuts.dropFirst() + [inOrder.count]) {
            let group = inOrder[start..<end]
            let previous = Set(group.compactMap { previousGroup[entries[$0].scene.chapter] })
            if !groups.isEmpty, !joined.isDisjoint(with: previous) {
                groups[groups.count - 1].append(contentsOf: group)
                joined.formUnion(previous)
            } else {
                groups.append(Array(group))
                joined = previous
            }
        }
        return groups
    }

    /// The number each recorded chapter is written with: a kept chapter its previous one, any other its own unless
    /// a kept chapter has it (then one above every number in use). Only `.all` has previous recordings, and it
    /// erased the tape: no loaded chapter can hold these numbers.
    private static func chapterNumbers(_ chapters: [Int], keeping kept: [Int: Int]) -> [Int: Int] {
        guard !kept.isEmpty else { return [:] }
        var numbers = kept
        let keptNumbers = Set(kept.values)
        var taken = keptNumbers.union(chapters.filter { kept[$0] == nil })
        for chapter in chapters where kept[chapter] == nil && keptNumbers.contains(chapter) {
            let number = Tape.unusedChapter(from: (taken.max() ?? 0) + 1, notIn: taken)
            taken.insert(number)
            numbers[chapter] = number
        }
        return numbers
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

/// What a cassette held before `.all` erased it: its interactions, and where each one's scenes were on its tape.
package struct PreviousRecordings {
    /// Nothing: every mode but `.all`.
    package static let none = PreviousRecordings(Tape())

    /// The erased tape's interactions, in the order they start.
    package let interactions: [Interaction]
    /// For each of ``interactions``, the places of its scenes on the erased tape.
    let places: [[Int]]
    /// For each of ``interactions``, which group of overlapping interactions it was in (``StableRerecording``).
    let groups: [Int]

    package init(_ tape: Tape) {
        var interactions: [Interaction] = []
        var places: [[Int]] = []
        for positions in ChapterLayout(scenes: tape.scenes).scenesOfChapter {
            guard let interaction = Interaction(scenes: positions.map { tape.scenes[$0] }) else { continue }
            interactions.append(interaction)
            places.append(positions)
        }
        self.interactions = interactions
        self.places = places
        var groups = Array(repeating: 0, count: tape.scenes.count)
        let starts = Overlaps.groupStarts(tape.scenes.map(\.chapter))
        for (group, (start, end)) in zip(starts, starts.dropFirst() + [tape.scenes.count]).enumerated() {
            for place in start..<end { groups[place] = group }
        }
        self.groups = places.map { groups[$0[0]] }
    }
}

/// Where chapters overlap on a tape.
enum Overlaps {
    /// Where each group of overlapping chapters starts in `chapters` (the chapter of each scene, in tape order): at
    /// a scene sent when no chapter was in flight.
    static func groupStarts(_ chapters: [Int]) -> [Int] {
        var remaining: [Int: Int] = [:]
        for chapter in chapters { remaining[chapter, default: 0] += 1 }
        var seen = Set<Int>()
        var starts: [Int] = []
        var inFlight = 0
        for (position, chapter) in chapters.enumerated() {
            if inFlight == 0 { starts.append(position) }
            if seen.insert(chapter).inserted { inFlight += 1 }
            remaining[chapter, default: 1] -= 1
            if remaining[chapter] == 0 { inFlight -= 1 }
        }
        return starts
    }
}
