import Foundation

/// A small seeded generator (SplitMix64), so every run of a test sees the same data.
public struct SplitMix64: RandomNumberGenerator {
    /// Advances by a fixed odd step on every draw.
    public var state: UInt64

    /// A generator whose sequence is fixed by `seed`.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in the closed range.
    public mutating func double(in range: ClosedRange<Double>) -> Double {
        range.lowerBound + (range.upperBound - range.lowerBound) * Double(next() >> 11) / Double((1 << 53) - 1)
    }

    /// Uniform in the half-open range.
    public mutating func double(in range: Range<Double>) -> Double {
        range.lowerBound + (range.upperBound - range.lowerBound) * Double(next() >> 11) / Double(1 << 53)
    }

    /// Log-uniform: as many small values as large ones.
    public mutating func logUniform(_ range: ClosedRange<Double>) -> Double {
        let value = range.lowerBound * pow(range.upperBound / range.lowerBound, double(in: 0 ... 1))
        return min(range.upperBound, max(range.lowerBound, value))
    }

    /// Uniform in the closed range (with a negligible modulo bias).
    public mutating func int(in range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.upperBound - range.lowerBound + 1))
    }

    /// True with the given probability.
    public mutating func chance(_ probability: Double) -> Bool { double(in: 0 ..< 1) < probability }

    /// A pin id (`p` and 24 of `a-z 2-7`) drawn from this generator.
    public mutating func pinID() -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz234567")
        return "p" + String((0 ..< 24).map { _ in alphabet[Int(next() % 32)] })
    }
}
