/// FNV-1a, 64 bits: a hash that is the same in every process and on every machine (unlike
/// `Hasher`), for fingerprints that are stored or travel in cursors. Not for secrets.
public struct FNV1a: Sendable {
    /// The hash of the bytes added so far.
    public private(set) var value: UInt64 = 0xCBF2_9CE4_8422_2325

    public init() {}

    /// Adds one byte.
    public mutating func add(byte: UInt8) {
        value = (value ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
    }

    /// The hash of `bytes`.
    public static func hash(_ bytes: some Sequence<UInt8>) -> UInt64 {
        var hash = FNV1a()
        for byte in bytes { hash.add(byte: byte) }
        return hash.value
    }
}

/// What identifies a feed query apart from its page, for its cursors: FNV-1a over the query's
/// values, each value finished with a SplitMix64 mix, so cursors survive restarts and work on
/// every server.
struct Fingerprint {
    private var hash = FNV1a()

    var value: UInt64 { hash.value }

    mutating func add(byte: UInt8) {
        hash.add(byte: byte)
    }

    mutating func add(number: Double) {
        let bits = (number + 0).bitPattern  // -0 and 0 are the same query
        for shift in stride(from: 0, to: 64, by: 8) { add(byte: UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }
    }

    mutating func add(kind: PinKind?) {
        switch kind {
        case nil: add(byte: 0)
        case .text: add(byte: 1)
        case .photo: add(byte: 2)
        }
        hash = FNV1a(mixing: hash)
    }
}

extension FNV1a {
    /// A hash state whose value is `state`'s, spread by SplitMix64's finalizer.
    fileprivate init(mixing state: FNV1a) {
        value = Self.mix(state.value)
    }

    /// SplitMix64's finalizer: spreads the bits of `input` over the whole word.
    package static func mix(_ input: UInt64) -> UInt64 {
        var z = input &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
