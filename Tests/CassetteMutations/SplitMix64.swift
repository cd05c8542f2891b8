/// A tiny deterministic random number generator (SplitMix64): the same seed gives the same mutants on every machine
/// and every Swift version, so a mutant is reproduced from its run seed and index alone.
///
/// Only its own helpers are used, not `Int.random(in:using:)`, whose way of drawing from the generator is the
/// standard library's to change.
public struct SplitMix64: Sendable {
    private var state: UInt64

    public init(seed: UInt64) {
        state = seed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }

    /// A number in `0..<count`, or 0 when `count` is 0 or less; the modulo bias is far below anything a fuzzer
    /// notices.
    public mutating func below(_ count: Int) -> Int {
        count > 0 ? Int(next() % UInt64(count)) : 0
    }

    /// A number in `range`.
    public mutating func within(_ range: ClosedRange<Int>) -> Int {
        range.lowerBound + below(range.upperBound - range.lowerBound + 1)
    }

    /// True `percent` times in a hundred.
    public mutating func chance(_ percent: Int) -> Bool {
        below(100) < percent
    }

    public mutating func pick<T>(_ choices: [T]) -> T {
        choices[below(choices.count)]
    }

    /// The seed of mutant `index` of the run seeded `seed`: each mutant gets a generator of its own, so that one
    /// can be made without making those before it.
    public static func seed(ofMutant index: Int, inRun seed: UInt64) -> UInt64 {
        var generator = SplitMix64(seed: seed ^ (UInt64(truncatingIfNeeded: index) &* 0xD1B5_4A32_D192_ED03))
        return generator.next()
    }
}
