import Foundation
import HTTPVCRCassettes

extension Cassette {
    /// In `.all`: values the requests recorded anew changed from the recordings they replace while keeping their
    /// shape (a timestamp, a UUID, a signature), and that ``VCRConfiguration/volatileValues`` does not declare: what
    /// to declare so that the next run matches them (Docs/VolatileValues.md). Empty in every other mode.
    ///
    /// Each new request is compared with the first recording it replaces that has the same method and path.
    public var volatileCandidates: [VolatileValue] {
        let previous = loaded.previous.interactions
        guard !previous.isEmpty else { return [] }
        var paired = Array(repeating: false, count: previous.count)
        var found: [VolatileValue] = []
        for interaction in tape.interactions {
            let live = RequestParts(interaction.request)
            guard let index = previous.indices.first(where: { index in
                guard !paired[index] else { return false }
                let recorded = RequestParts(previous[index].request)
                return recorded.method == live.method && recorded.path == live.path
            }) else { continue }
            paired[index] = true
            let candidates = VolatileCandidates.between(
                interaction.request, previous[index].request, declared: configuration.volatileValues + found
            )
            found += candidates.map { $0.value }
        }
        return found
    }
}
