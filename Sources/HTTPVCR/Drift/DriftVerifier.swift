import Foundation
import HTTPVCRCassettes

/// ``RecordMode/verify`` for one cassette: each request sent live is recorded as usual (the app gets the live
/// answer through the recording's delivery), and when its recording would be taped, it is compared here with the
/// recording the cassette's matchers find for it instead (each recording used once, in tape order). What differs
/// is kept for ``Cassette/drift``; the tape is never changed, so the cassette is never saved.
final class DriftVerifier: Sendable {
    /// The tape as loaded, one interaction per chapter, with its request as the matchers see it.
    private let recorded: [(interaction: Interaction, parts: RequestParts)]
    private let matchers: [Matcher]
    private let comparedValuePaths: [String]
    private let state: Locked<State>

    private struct State {
        /// Which recordings a request was matched with.
        var used: [Bool]
        /// Changed and new requests, in the order they ended.
        var found: [CassetteDrift] = []
    }

    /// Declared volatile values: compared by shape on both sides, as in replay.
    private let volatile: VolatileValues

    init(_ tape: Tape, configuration: VCRConfiguration) {
        let volatile = VolatileValues(configuration.volatileValues)
        self.volatile = volatile
        recorded = tape.interactions.map { ($0, RequestParts(volatile.matchingView(of: $0.request))) }
        matchers = configuration.matchers
        comparedValuePaths = configuration.comparedValuePaths
        state = Locked(State(used: Array(repeating: false, count: recorded.count)), level: .verifier)
    }

    /// Compares a request's live chapter (its scenes as they would have been taped: filtered, request first) with
    /// its recording.
    func verify(_ scenes: [Scene]) {
        guard let live = Interaction(scenes: scenes) else { return }
        let parts = RequestParts(volatile.matchingView(of: live.request))
        // The matchers may be the app's closures: they run outside the lock, and the recording they chose is claimed
        // under it, or looked for again past it when another request took it meanwhile (a recording is only ever
        // taken, so what was passed over stays passed over).
        var start = recorded.startIndex
        while true {
            let used = state.withLock { $0.used }
            let match = recorded.indices[start...].first { index in
                !used[index] && matchers.allSatisfy { $0.matches(parts, recorded[index].parts) }
            }
            // What a new request looks like it needs declared, worked out here too (it runs the matchers).
            let proposed = match != nil ? [] : recorded.indices.first { index in
                !used[index] && recorded[index].parts.method == parts.method && recorded[index].parts.path == parts.path
            }.map { proposals(for: live.request, near: recorded[$0]) } ?? []
            let claimed = state.withLock { state -> Bool in
                guard let match else {
                    state.found.append(CassetteDrift(
                        .new, request: ShapeComparison.describe(live.request), differences: proposed
                    ))
                    return true
                }
                guard !state.used[match] else { return false }
                state.used[match] = true
                if let drift = ShapeComparison.drift(
                    recorded: recorded[match].interaction, live: live, comparedValuePaths: comparedValuePaths
                ) {
                    state.found.append(drift)
                }
                return true
            }
            guard !claimed, let match else { return }
            start = match + 1
        }
    }

    /// The values that changed but kept their shape where `live` fails the matchers against its closest recording.
    private func proposals(
        for live: RecordedRequest, near: (interaction: Interaction, parts: RequestParts)
    ) -> [CassetteDrift.Difference] {
        let liveParts = RequestParts(live)
        let failing = matchers.filter { !$0.matches(liveParts, RequestParts(near.interaction.request)) }.map(\.name)
        let recordedPlaces = VolatileCandidates.Parts(matchers: failing)
        return VolatileCandidates.between(live, near.interaction.request, in: recordedPlaces).map {
            CassetteDrift.Difference(.looksVolatile, at: $0.value.description, recorded: $0.recorded, live: $0.live)
        }
    }

    /// The drift so far: changed and new requests as they ended, then every recording no request used.
    var drift: [CassetteDrift] {
        state.withLock { state in
            state.found + recorded.indices.filter { !state.used[$0] }.map { index in
                CassetteDrift(.unused, request: ShapeComparison.describe(recorded[index].interaction.request))
            }
        }
    }
}
