import Foundation

extension CassetteFile {
    /// What writing `tape` in `format` loses, one sentence per problem (for `vcr convert` to show): HAR has no
    /// chunk boundaries, no interleaving and no response URLs. Empty for HTTPVCR's own JSON and property list,
    /// which hold a tape completely.
    package static func lossNotes(_ tape: Tape, writingAs format: CassetteFormat) -> [String] {
        switch format {
        case .json, .plist: []
        case .har: HARFormat.lossNotes(tape)
        case .yahttpvcr, .vcrpy: ["HTTPVCR reads \(format.rawValue) cassettes but does not write them"]
        }
    }
}
