import ScavengerCore
import ScavengerTestSupport
import Testing

@Suite("Join codes")
struct JoinCodeTests {
    static let expectedAlphabet = Set("ABCDEFGHJKLMNPQRSTUVWXYZ23456789".utf8)

    @Test("the alphabet is A-Z and 2-9 without I, O, 0 and 1: 32 symbols")
    func alphabet() {
        #expect(JoinCode.alphabet.count == 32)
        #expect(Set(JoinCode.alphabet) == Self.expectedAlphabet)
        for excluded in "IO01" {
            #expect(!JoinCode.alphabet.contains(excluded.asciiValue!))
        }
    }

    @Test("every typed code of the alphabet's symbols is one, in any case; nothing else is")
    func everySymbolAtEveryPosition() {
        for byte in UInt8(0) ... 127 {
            let symbol = String(decoding: [byte], as: UTF8.self)
            let upper = symbol.uppercased()
            let isSymbol = Self.expectedAlphabet.contains(Array(upper.utf8)[0])
            for position in 0 ..< 6 {
                var typed = Array("ABCDEF")
                typed[position] = Character(symbol)
                let code = JoinCode(typed: String(typed))
                #expect((code != nil) == isSymbol, "\(byte) at \(position)")
                if let code { #expect(code.text == String(typed).uppercased()) }
            }
        }
    }

    @Test("typed codes are normalized to upper case, and matched by it", arguments: [
        ("ABC234", "ABC234"), ("abc234", "ABC234"), ("aBc2z9", "ABC2Z9"), ("zzzzzz", "ZZZZZZ"), ("222222", "222222"),
    ])
    func normalized(typed: String, expected: String) throws {
        let code = try #require(JoinCode(typed: typed))
        #expect(code.text == expected)
        #expect(code.description == expected)
        #expect(code == JoinCode(typed: expected.lowercased()))
        #expect((try? JoinCode.validate(typed)) != nil)
    }

    @Test("what is not a join code is refused with the rule", arguments: [
        "", "ABC23", "ABC2345", "ABCI23", "ABCO23", "ABC023", "ABC123", "abci23", "abco23", "ABC 23", " ABC23",
        "ABC23\n", "ABCDÉ2", "ＡBC234", "ABC-23", "ABC_23", "ABCDE\u{0}", "pabcdefghijklmnopqrstuvwx",
    ])
    func refused(typed: String) {
        #expect(JoinCode(typed: typed) == nil)
        #expect(throws: ValidationError("a join code is 6 of A-Z and 2-9 without I, O, 0 and 1 (in any case)")) {
            try JoinCode.validate(typed)
        }
    }

    @Test("generated codes are valid, the same for the same seed, and use every symbol at every position")
    func generated() throws {
        var generator = SplitMix64(seed: 0x5EED_C0DE)
        let codes = (0 ..< 4000).map { _ in JoinCode.random(using: &generator) }
        var again = SplitMix64(seed: 0x5EED_C0DE)
        #expect(codes == (0 ..< 4000).map { _ in JoinCode.random(using: &again) })
        for code in codes {
            #expect(code.text.utf8.count == 6)
            #expect(JoinCode(typed: code.text) == code)
            #expect(JoinCode(typed: code.text.lowercased()) == code)
        }
        for position in 0 ..< 6 {
            let symbols = Set(codes.map { Array($0.text.utf8)[position] })
            #expect(symbols == Self.expectedAlphabet, "position \(position)")
        }
        // 30 bits: 4,000 codes all differ but for a chance of about 1 in 130.
        #expect(Set(codes).count >= codes.count - 1)
        let system = JoinCode.random()
        #expect(JoinCode(typed: system.text) == system)
    }

    @Test("generation is uniform: each symbol's share at a position is near 1/32")
    func uniform() {
        var generator = SplitMix64(seed: 42)
        var counts: [UInt8: Int] = [:]
        let draws = 64_000
        for _ in 0 ..< draws / 6 {
            for byte in JoinCode.random(using: &generator).text.utf8 { counts[byte, default: 0] += 1 }
        }
        let expected = Double(draws / 6 * 6) / 32
        for (byte, count) in counts {
            #expect(abs(Double(count) - expected) < expected * 0.1, "\(Character(Unicode.Scalar(byte))): \(count)")
        }
        #expect(counts.count == 32)
    }
}
