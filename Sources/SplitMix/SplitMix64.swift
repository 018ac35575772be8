/// SplitMix64: a small seeded generator. Every reproducible stream in the project comes
/// from here: the forwarder's retry jitter, the fuzzers' and benchmarks' generated input,
/// randomised tests (a seed replays a run exactly).
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in 0 ..< 1 (the top 53 bits).
    public mutating func unit() -> Double {
        Double(next() >> 11) * (1.0 / 9_007_199_254_740_992.0)
    }

    /// `count` random bytes.
    public mutating func bytes(_ count: Int) -> [UInt8] {
        (0 ..< count).map { _ in UInt8(truncatingIfNeeded: next()) }
    }
}
