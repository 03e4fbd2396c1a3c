import Testing
@testable import ScavengerProtocol

@Suite("Tokenizer")
struct TokenizerTests {
    @Test("splits on spaces and tabs", arguments: [
        ("PING", ["PING"]),
        ("  PING  ", ["PING"]),
        ("GET\tabc", ["GET", "abc"]),
        ("POST 1 2 hello", ["POST", "1", "2", "hello"]),
        ("a \t b\t\tc", ["a", "b", "c"]),
        ("", []),
        (" \t ", []),
        ("x\"y", ["x\"y"]),
    ])
    func splits(line: String, expected: [String]) throws {
        #expect(try Tokenizer.tokenize(line).map(\.text) == expected)
    }

    @Test("decodes JSON string literals", arguments: [
        (#""hello world""#, "hello world"),
        (#""""#, ""),
        (#""a\"b""#, "a\"b"),
        (#""back\\slash""#, "back\\slash"),
        (#""line\nbreak\ttab\r""#, "line\nbreak\ttab\r"),
        (#""\/\b\f""#, "/\u{08}\u{0C}"),
        (#""\u00e9\u4e2d""#, "é中"),
        (#""\ud83d\ude00""#, "😀"),
        (#""raw 😀 é""#, "raw 😀 é"),
        (#""POST 1 2 x""#, "POST 1 2 x"),
    ])
    func quoted(line: String, expected: String) throws {
        let tokens = try Tokenizer.tokenize(line)
        #expect(tokens == [Token(expected, quoted: true)])
    }

    @Test("mixes quoted and bare tokens")
    func mixed() throws {
        let tokens = try Tokenizer.tokenize(#"POST 52.5 13.4 "hi there" TTL 60"#)
        #expect(tokens.map(\.text) == ["POST", "52.5", "13.4", "hi there", "TTL", "60"])
        #expect(tokens.map(\.quoted) == [false, false, false, true, false, false])
    }

    @Test("rejects malformed quoted tokens", arguments: [
        #""unterminated"#,
        #""bad \x escape""#,
        #""\u12""#,
        #""\u12G4""#,
        #""\ud83d alone""#,
        #""\ude00""#,
        #""\ud83d\u0041""#,
        "\"raw\u{01}control\"",
        #""glued"tail"#,
        #""trailing backslash\"#,
    ])
    func rejects(line: String) {
        #expect(throws: CommandError.self) { try Tokenizer.tokenize(line) }
        do {
            _ = try Tokenizer.tokenize(line)
        } catch {
            #expect(error.code == .badRequest)
        }
    }
}

@Suite("Number grammar")
struct NumberGrammarTests {
    @Test("accepts plain decimals", arguments: [
        ("0", 0.0), ("-0", -0.0), ("12", 12), ("-12", -12), ("3.25", 3.25), ("-90.000", -90),
        ("1e3", 1000), ("1E3", 1000), ("2.5e-3", 0.0025), ("1e+2", 100), ("007", 7),
    ])
    func accepts(text: String, value: Double) {
        #expect(NumberGrammar.matches(text))
        #expect(NumberGrammar.double(text) == value)
    }

    @Test("rejects everything else", arguments: [
        "", "-", "+1", "1.", ".5", "-.5", "1e", "1e+", "e5", "nan", "NaN", "inf", "-inf", "Infinity",
        "0x10", "0x1p3", "1,5", "1 ", " 1", "١٢", "1_000", "--1", "1.2.3", "1e5.5", "12a",
    ])
    func rejects(text: String) {
        #expect(!NumberGrammar.matches(text))
        #expect(NumberGrammar.double(text) == nil)
    }

    @Test("short numbers are parsed exactly as the standard library parses them", arguments: [
        "0.1", "0.3", "-0.0", "48.8566", "-122.4194", "1000", "0.000001", "123456789012345", "1234567890123456",
        "12345678901234567890", "9007199254740993", "0.1e-22", "1e22", "1e23", "1e-22", "1e-23", "179.99999999999999",
        "89.999999999999999999", "2.2250738585072014e-308", "4.9e-324", "1e-400", "0e999", "00000000000000000000001.5",
        "0.00000000000000000000000000000000000000000000001",
    ])
    func matchesStandardLibrary(text: String) {
        #expect(NumberGrammar.double(text)?.bitPattern == Double(text)?.bitPattern)
    }

    @Test("generated decimals parse to the standard library's value, bit for bit")
    func generatedDecimals() {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func random(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        var mismatches: [String] = []
        for _ in 0 ..< 20_000 {
            var text = random(2) == 0 ? "-" : ""
            let digits = 1 + random(18)
            let point = random(digits + 1)
            for position in 0 ..< digits {
                if position == point, position > 0 { text += "." }
                text += String(random(10))
            }
            if random(4) == 0 { text += "e\(random(60) - 30)" }
            if NumberGrammar.double(text)?.bitPattern != Double(text)?.bitPattern { mismatches.append(text) }
        }
        #expect(mismatches.isEmpty)
    }

    @Test("a number too large to be finite is rejected")
    func overflow() {
        #expect(NumberGrammar.matches("1e999"))
        #expect(NumberGrammar.double("1e999") == nil)
    }
}

@Suite("Arguments")
struct ArgumentsTests {
    @Test("latitude and longitude ranges", arguments: [
        ("90", true), ("-90", true), ("90.0000001", false), ("-91", false), ("45.5", true),
    ])
    func latitude(text: String, valid: Bool) {
        var arguments = Arguments(command: "T", tokens: [Token(text), Token("0")][...])
        #expect(((try? arguments.location()) != nil) == valid)
    }

    @Test("longitude range", arguments: [("180", true), ("-180", true), ("180.5", false), ("-181", false)])
    func longitude(text: String, valid: Bool) {
        var arguments = Arguments(command: "T", tokens: [Token("0"), Token(text)][...])
        #expect(((try? arguments.location()) != nil) == valid)
    }

    @Test("whole numbers", arguments: [
        ("60", 60 as Int?), ("1e2", 100), ("1.5", nil), ("0", nil), ("-5", nil), ("1e30", nil), ("abc", nil),
    ])
    func integer(text: String, expected: Int?) {
        #expect((try? Arguments.integer(Token(text), "TTL", in: 1 ... 1_000_000)) == expected)
    }

    @Test("options: case-insensitive keywords, each once, known only")
    func options() throws {
        var arguments = Arguments(command: "NEARBY", tokens: [Token("limit"), Token("5"), Token("Kind"), Token("text")])
        let options = try arguments.options(["LIMIT", "KIND", "CURSOR"])
        #expect(options["LIMIT"]?.text == "5")
        #expect(options["KIND"]?.text == "text")

        var duplicate = Arguments(command: "X", tokens: [Token("LIMIT"), Token("1"), Token("limit"), Token("2")])
        #expect(throws: CommandError.self) { try duplicate.options(["LIMIT"]) }
        var unknown = Arguments(command: "X", tokens: [Token("COLOR"), Token("red")])
        #expect(throws: CommandError.self) { try unknown.options(["LIMIT"]) }
        var dangling = Arguments(command: "X", tokens: [Token("LIMIT")])
        #expect(throws: CommandError.self) { try dangling.options(["LIMIT"]) }
    }

    @Test("tokenizing stops after the most tokens the caller can use", arguments: [0, 1, 3])
    func maximumTokens(limit: Int) throws {
        let tokens = try Tokenizer.tokenize(#"a "b c" d e f"#, maximumTokens: limit)
        #expect(tokens == Array([Token("a"), Token("b c", quoted: true), Token("d")].prefix(limit)))
    }
}
