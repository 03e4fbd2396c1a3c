import Sodium
import Testing

@Suite("Digest")
struct DigestTests {
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (
            "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        ),
        (
            "The quick brown fox jumps over the lazy dog",
            "d7a8fbb307d7809469ca9abcb0082e4f8d5651e46d3cdb762d02d0bf37c9e592"
        ),
    ])
    func sha256KnownVectors(_ input: String, _ expected: String) {
        #expect(Hex.encode(Digest.sha256(input)) == expected)
        #expect(Hex.encode(Digest.sha256(Array(input.utf8))) == expected)
        // A non-contiguous collection takes the copying path.
        #expect(Hex.encode(Digest.sha256(Array(input.utf8).lazy.map { $0 })) == expected)
        #expect(Hex.encode(Digest.sha256(input.utf8)) == expected)
    }

    @Test func sha256MillionA() {
        let input = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
        #expect(
            Hex.encode(Digest.sha256(input))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        )
    }

    @Test func sha256IsAlways32BytesAndSlicesWork() {
        let bytes: [UInt8] = Array(0...255)
        #expect(Digest.sha256(bytes).count == 32)
        #expect(Digest.sha256(bytes[3..<3]) == Digest.sha256([UInt8]()))
        #expect(Digest.sha256(bytes[97..<100]) == Digest.sha256("abc"))
    }

    struct Pair: Sendable, CustomTestStringConvertible {
        let a: [UInt8]
        let b: [UInt8]
        let equal: Bool
        var testDescription: String { "\(a) vs \(b) → \(equal)" }
    }

    @Test(arguments: [
        Pair(a: [], b: [], equal: true),
        Pair(a: [1], b: [1], equal: true),
        Pair(a: [1, 2, 3], b: [1, 2, 3], equal: true),
        Pair(a: [1, 2, 3], b: [1, 2, 4], equal: false),
        Pair(a: [0, 2, 3], b: [1, 2, 3], equal: false),
        Pair(a: [1, 2, 3], b: [1, 2], equal: false),
        Pair(a: [], b: [0], equal: false),
        Pair(a: [0], b: [], equal: false),
        Pair(a: [0xff], b: [0x7f], equal: false),
        Pair(a: Array(repeating: 7, count: 64), b: Array(repeating: 7, count: 64), equal: true),
        Pair(a: Array(repeating: 7, count: 64), b: Array(repeating: 7, count: 63) + [8], equal: false),
    ])
    func constantTimeEqual(_ pair: Pair) {
        #expect(Digest.constantTimeEqual(pair.a, pair.b) == pair.equal)
        #expect(Digest.constantTimeEqual(pair.b, pair.a) == pair.equal)
    }

    @Test func constantTimeEqualOnDigests() {
        #expect(Digest.constantTimeEqual(Digest.sha256("token"), Digest.sha256("token")))
        #expect(!Digest.constantTimeEqual(Digest.sha256("token"), Digest.sha256("tokem")))
    }
}
