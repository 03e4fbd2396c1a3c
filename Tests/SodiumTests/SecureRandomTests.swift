import Sodium
import Testing

@Suite("SecureRandom and Hex")
struct SecureRandomTests {
    @Test func tokenIs64LowercaseHex() {
        let token = SecureRandom.token()
        #expect(token.count == 64)
        #expect(token.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
        #expect(Hex.decode(token)?.count == 32)
    }

    @Test func tokensDiffer() {
        let tokens = (0..<100).map { _ in SecureRandom.token() }
        #expect(Set(tokens).count == tokens.count)
    }

    @Test(arguments: [0, 1, 16, 32, 1000])
    func bytesHaveRequestedCount(_ count: Int) {
        #expect(SecureRandom.bytes(count).count == count)
    }

    @Test func bytesAreNotConstant() {
        let a = SecureRandom.bytes(32)
        let b = SecureRandom.bytes(32)
        #expect(a != b)
        #expect(a != [UInt8](repeating: 0, count: 32))
        // 4096 random bytes should hit most byte values.
        #expect(Set(SecureRandom.bytes(4096)).count > 200)
    }

    @Test(arguments: [
        ([], ""),
        ([0x00], "00"),
        ([0x0f, 0xf0], "0ff0"),
        ([0xde, 0xad, 0xbe, 0xef], "deadbeef"),
        (Array(0...255), nil),
    ] as [([UInt8], String?)])
    func hexRoundTrip(_ bytes: [UInt8], _ expected: String?) {
        let encoded = Hex.encode(bytes)
        if let expected { #expect(encoded == expected) }
        #expect(encoded.count == bytes.count * 2)
        #expect(encoded == encoded.lowercased())
        #expect(Hex.decode(encoded) == bytes)
    }

    @Test(arguments: ["0", "abc", "zz", "0g", " 00", "éé", "0x00"])
    func hexDecodeRejectsInvalid(_ string: String) {
        #expect(Hex.decode(string) == nil)
    }

    @Test func hexDecodeAcceptsUppercase() {
        #expect(Hex.decode("DEADbeef") == [0xde, 0xad, 0xbe, 0xef])
    }
}
