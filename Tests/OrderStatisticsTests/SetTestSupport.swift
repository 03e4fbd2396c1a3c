import Testing

// What the tests of both order-statistic sets share.

/// A small seeded generator (SplitMix64), so every run sees the same operations.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Compared by `key` only, so two values can be equal and still be told apart by `tag`.
struct Keyed: Comparable {
    var key: Int
    var tag: String

    static func < (lhs: Keyed, rhs: Keyed) -> Bool { lhs.key < rhs.key }
    static func == (lhs: Keyed, rhs: Keyed) -> Bool { lhs.key == rhs.key }
}

/// Every order of `values`.
func permutations(of values: [Int]) -> [[Int]] {
    guard values.count > 1 else { return [values] }
    return values.indices.flatMap { index in
        var rest = values
        let first = rest.remove(at: index)
        return permutations(of: rest).map { [first] + $0 }
    }
}
