import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The part of a decision that runs the app's closures: its matchers, and the filters written again for an older tape
/// (``Playback/Policy/refilter``, ``Playback/Policy/beforePlaceholdersWon``). They run outside the playback's lock:
/// what they need is taken under it, and what they chose is claimed under it again (a chapter still unplayed), so a
/// closure that takes a lock of HTTPVCR's, or waits for another request, cannot take locks out of order or deadlock.
///
/// The answer is the one the lock held throughout would give: a chapter only ever goes from unplayed to played, so
/// the first unplayed one of those the closures chose is the first unplayed match when it is claimed, and a request
/// that matched nothing still matches nothing. The index the tape is matched in changes once at most (refiltered):
/// what was found in the one before is found again.
extension Playback {
    /// What the closures found so far, for one request.
    struct Checked {
        /// For the request as it is, and as the filters wrote it before placeholders won: the unplayed chapters whose
        /// keys matched and that every predicate passed, in tape order, and the index they were found in.
        var passing: [Which: (generation: Int, chapters: [Int])] = [:]
        var refiltered: Refiltered?
        var earlier: FilteredRequest??
        /// The last chapter, played or not, that matches: what a repeat replays.
        var lastMatch: (generation: Int, chapter: Int?)?
    }

    enum Which: Hashable {
        case asItIs
        case beforePlaceholdersWon
    }

    enum Refiltered {
        case unchanged
        case changed([RecordedRequest], MatchIndex)
    }

    /// What the decision needs run outside the lock before it can go on, or the decision.
    enum Step {
        case decided(Decision)
        case check(Which, FilteredRequest, candidates: [Int], generation: Int, requests: [RecordedRequest])
        case checkLast(candidates: [Int], generation: Int, requests: [RecordedRequest])
        case refilter
        case beforePlaceholdersWon
        case explain(matched: [Bool])
    }

    /// Decides what the common case did not: each step, under the lock, says what it needs, which is run outside it,
    /// until one decides.
    @inline(never)
    func decideBeyondTheTape(_ request: FilteredRequest, original: FilteredRequest, _ recipient: Requester) -> Decision {
        var checked = Checked()
        while true {
            let (step, run): (Step, ArraySlice<Delivery>?) = state.withLock { state in
                (nextStep(request, in: &state, recipient, checked), state.takeTurn())
            }
            if let run = consume run { deliver(startingWith: run) }
            switch step {
            case let .decided(decision):
                return decision
            case let .check(which, checkedRequest, candidates, generation, requests):
                let live = RequestParts(checkedRequest.request)
                checked.passing[which] = (generation, candidates.filter { passes(live, requests[$0]) })
            case let .checkLast(candidates, generation, requests):
                let live = RequestParts(request.request)
                checked.lastMatch = (generation, candidates.last { passes(live, requests[$0]) })
            case .refilter:
                checked.refiltered = refiltered()
            case .beforePlaceholdersWon:
                // From the request as filtered, then viewed as the tape is (when it has volatile values).
                checked.earlier = .some(policy.beforePlaceholdersWon?(original).map { earlier in
                    volatile.map { viewed(earlier, by: $0) } ?? earlier
                })
            case let .explain(matched):
                return .refuse(refusal(of: request, matched: matched))
            }
        }
    }

    /// The next step, under the lock: the request as it is, against the tape's requests as the filters write them
    /// now (refiltered once, on a first miss), as the filters wrote it before placeholders won, a repeat, then record
    /// or refuse.
    private func nextStep(
        _ request: FilteredRequest, in state: inout State, _ recipient: Requester, _ checked: Checked
    ) -> Step {
        if let step = replay(request, as: .asItIs, in: &state, recipient, checked) { return step }
        if !state.isRefiltered, policy.refilter != nil {
            guard let refiltered = checked.refiltered else { return .refilter }
            state.isRefiltered = true
            if case let .changed(requests, index) = refiltered {
                state.matchRequests = requests
                state.index = index
                state.generation += 1
                if let step = replay(request, as: .asItIs, in: &state, recipient, checked) { return step }
            }
        }
        if policy.beforePlaceholdersWon != nil {
            guard let earlier = checked.earlier else { return .beforePlaceholdersWon }
            if let earlier, let step = replay(earlier, as: .beforePlaceholdersWon, in: &state, recipient, checked) {
                return step
            }
        }
        if policy.allowsPlaybackRepeats {
            var chapter: Int?
            if let last = checked.lastMatch, last.generation == state.generation {
                chapter = last.chapter
            } else if predicates.isEmpty {
                chapter = state.index.lastMatch(
                    for: request,
                    recordedRequest: { [matchRequests = state.matchRequests] in RequestParts(matchRequests[$0]) }
                )
            } else {
                let candidates = state.index.lastCandidates(for: request)
                if !candidates.isEmpty {
                    return .checkLast(
                        candidates: candidates, generation: state.generation, requests: state.matchRequests
                    )
                }
            }
            if let chapter {
                replayAgain(chapter, in: &state, recipient)
                return .decided(.replaying)
            }
        }
        if !policy.isWriteProtected { return .decided(.record) }
        return .explain(matched: state.matched)
    }

    /// Starts replaying the first unplayed match of `request`: found here with the built-in matchers, claimed from
    /// what the predicates passed, or nil and the candidates for them to check. Nil and no step: no match.
    private func replay(
        _ request: FilteredRequest, as which: Which, in state: inout State, _ recipient: Requester,
        _ checked: Checked
    ) -> Step? {
        if predicates.isEmpty {
            return startReplay(of: request, in: &state, recipient) ? .decided(.replaying) : nil
        }
        if let found = checked.passing[which], found.generation == state.generation {
            guard let chapter = found.chapters.first(where: { !state.matched[$0] }) else { return nil }
            state.matched[chapter] = true
            begin(chapter, in: &state, recipient)
            return .decided(.replaying)
        }
        let matched = state.matched
        let candidates = state.index.candidates(
            for: request,
            recordedRequest: { [matchRequests = state.matchRequests] in RequestParts(matchRequests[$0]) },
            isPlayed: { matched[$0] }
        )
        guard !candidates.isEmpty else { return nil }
        return .check(
            which, request, candidates: candidates, generation: state.generation, requests: state.matchRequests
        )
    }

    /// Every predicate passes `live` against a recorded request. The app's closures: never under the lock.
    private func passes(_ live: RequestParts, _ recorded: RecordedRequest) -> Bool {
        let recorded = RequestParts(recorded)
        return predicates.allSatisfy { $0.matches(live, recorded) }
    }

    /// The tape's requests as the filters write them now, and their index; unchanged for a tape recorded with
    /// today's filters. Once a cassette: a tape recorded with them pays nothing, an old one once, on its first miss.
    private func refiltered() -> Refiltered {
        guard let refilter = policy.refilter else { return .unchanged }
        var refiltered = requests.map(refilter)
        guard refiltered != requests else { return .unchanged }
        if let volatile { refiltered = refiltered.map(volatile.matchingView) }
        return .changed(refiltered, MatchIndex(matchers: policy.matchers, requests: refiltered))
    }

    /// Why a write-protected cassette refuses a request nothing matched, `matched` as it was then.
    private func refusal(of request: FilteredRequest, matched: [Bool]) -> VCRError {
        let (message, kind) = Mismatch.explain(
            request: RequestParts(request.request),
            cassettePath: policy.cassettePath,
            recordMode: policy.recordMode,
            matchers: policy.matchers,
            requests: views.map { RequestParts($0) },
            isPlayed: { matched[$0] },
            advice: policy.mismatchAdvice ?? .library
        )
        var error = VCRError(
            .noMatch, message, cassettePath: policy.cassettePath, request: Mismatch.describe(request.request)
        )
        error.mismatch = kind
        return error
    }
}
