import Foundation

extension Data {
    /// Every occurrence of `needle` replaced with `replacement`, searching on after each replacement (so a
    /// replacement that contains the needle is not replaced again).
    package func replacingOccurrences(of needle: Data, with replacement: Data) -> Data {
        guard !needle.isEmpty, range(of: needle) != nil else { return self }
        var result = self
        var searchStart = result.startIndex
        while let found = result.range(of: needle, in: searchStart..<result.endIndex) {
            result.replaceSubrange(found, with: replacement)
            searchStart = found.lowerBound + replacement.count
        }
        return result
    }
}
