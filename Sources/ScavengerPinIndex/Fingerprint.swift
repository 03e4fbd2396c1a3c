import ScavengerCore

/// FNV-1a over bytes, finished with a SplitMix64 mix: stable across processes and machines
/// (unlike `Hasher`), so cursors survive restarts and work on every server.
struct Fingerprint {
    var value: UInt64 = 0xCBF2_9CE4_8422_2325

    mutating func add(byte: UInt8) {
        value = (value ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
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
        value = Self.mix(value)
    }

    static func mix(_ input: UInt64) -> UInt64 {
        var z = input &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
