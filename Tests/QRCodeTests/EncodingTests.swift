import QRCode
import Testing

/// `count` bytes of lower-case letters: 8-bit mode only (no digit or upper-case run to pack).
private func letters(_ count: Int) -> String {
    let alphabet = Array("abcdefghijklmnopqrstuvwxyz".unicodeScalars)
    var text = String.UnicodeScalarView()
    for index in 0..<count { text.append(alphabet[index * 7 % alphabet.count]) }
    return String(text)
}

@Suite struct Sizes {
    // "scavenger" is 9 bytes in 8-bit mode; version 1 holds 17, 14, 11 and 7 such bytes from low
    // to high correction, version 2 holds 14 at high.
    @Test("A short text's size at each correction level",
          arguments: [(QRCode.Correction.low, 21), (.medium, 21), (.quartile, 21), (.high, 25)])
    func shortText(correction: QRCode.Correction, size: Int) throws {
        let code = try QRCode.encode("scavenger", correction: correction)
        #expect(code.size == size)
        #expect(code.version == (size - 17) / 4)
        #expect(code.correction == correction)
    }

    @Test("One character is version 1 at every level", arguments: QRCode.Correction.allCases)
    func oneCharacter(correction: QRCode.Correction) throws {
        #expect(try QRCode.encode("A", correction: correction).size == 21)
    }

    // Numeric mode packs 3 digits in 10 bits: version 1 holds 17 digits at high correction,
    // where it holds only 7 bytes of 8-bit text.
    @Test("Digits are packed in numeric mode")
    func digits() throws {
        #expect(try QRCode.encode("01234567890123456", correction: .high).size == 21)
        #expect(try QRCode.encode("012345678901234567", correction: .high).size == 25)
    }

    @Test("Medium is the default correction")
    func defaultCorrection() throws {
        #expect(try QRCode.encode("scavenger").correction == .medium)
    }

    // 8-bit capacity at medium: version 5 holds 84 bytes, version 6 holds 106.
    @Test("A longer text needs a bigger version")
    func longerText() throws {
        let code = try QRCode.encode(letters(100), correction: .medium)
        #expect(code.version == 6)
        #expect(code.size == 41)
        #expect(try QRCode.encode(letters(84), correction: .medium).version == 5)
        #expect(try QRCode.encode(letters(85), correction: .medium).version == 6)
    }

    @Test("Upper and lower case are kept apart")
    func caseSensitive() throws {
        #expect(try QRCode.encode("HUNT", correction: .low) != QRCode.encode("hunt", correction: .low))
    }

    @Test("Text with a NUL character is encoded in full")
    func nul() throws {
        // 14 bytes is version 1's 8-bit capacity at medium; a C string would stop at the NUL.
        let text = "abcdef\u{0}ghijklm"
        #expect(text.utf8.count == 14)
        #expect(try QRCode.encode(text, correction: .medium).version == 1)
        #expect(try QRCode.encode(text + "n", correction: .medium).version == 2)
        #expect(try QRCode.encode("a\u{0}b") != QRCode.encode("a"))
    }
}

@Suite struct FunctionPatterns {
    /// The three finder patterns (7×7: a dark ring, a light ring, a dark 3×3 centre), their light
    /// separators, the timing patterns on row and column 6 and the dark module beside the
    /// bottom-left finder, as ISO/IEC 18004 places them.
    @Test("Finders, separators, timing and the dark module", arguments: [
        ("A", QRCode.Correction.low), ("scavenger", .high), (String(repeating: "hunt ", count: 60), .quartile),
    ])
    func functionPatterns(text: String, correction: QRCode.Correction) throws {
        let code = try QRCode.encode(text, correction: correction)
        let size = code.size
        #expect(size == 17 + 4 * code.version)
        for (left, top) in [(0, 0), (size - 7, 0), (0, size - 7)] {
            for dy in 0..<7 {
                for dx in 0..<7 {
                    let ring = max(abs(dx - 3), abs(dy - 3))
                    #expect(code.isDark(x: left + dx, y: top + dy) == (ring != 2),
                            "finder at (\(left), \(top)), module (\(dx), \(dy))")
                }
            }
        }
        for i in 0...7 {
            #expect(!code.isDark(x: 7, y: i) && !code.isDark(x: i, y: 7), "top-left separator")
            #expect(!code.isDark(x: size - 8, y: i) && !code.isDark(x: size - 1 - i, y: 7), "top-right separator")
            #expect(!code.isDark(x: 7, y: size - 1 - i) && !code.isDark(x: i, y: size - 8), "bottom-left separator")
        }
        for i in 8..<(size - 8) {
            #expect(code.isDark(x: i, y: 6) == i.isMultiple(of: 2), "horizontal timing at \(i)")
            #expect(code.isDark(x: 6, y: i) == i.isMultiple(of: 2), "vertical timing at \(i)")
        }
        #expect(code.isDark(x: 8, y: 4 * code.version + 9), "the dark module")
        // No finder at the bottom-right corner.
        var bottomRightIsFinder = true
        for dy in 0..<7 {
            for dx in 0..<7 where code.isDark(x: size - 7 + dx, y: size - 7 + dy) != (max(abs(dx - 3), abs(dy - 3)) != 2) {
                bottomRightIsFinder = false
            }
        }
        #expect(!bottomRightIsFinder)
    }
}

@Suite struct Errors {
    @Test("Empty text is refused")
    func empty() {
        #expect(throws: QRCodeError.empty) { try QRCode.encode("") }
        #expect(QRCodeError.empty.description == "cannot make a QR code of empty text")
    }

    // Version 40's 8-bit capacity: 2,953, 2,331, 1,663 and 1,273 bytes from low to high.
    @Test("The largest text at each level fits in version 40; one byte more is too long",
          arguments: QRCode.Correction.allCases)
    func capacity(correction: QRCode.Correction) throws {
        let limit = correction.byteCapacity
        let code = try QRCode.encode(letters(limit), correction: correction)
        #expect(code.version == 40)
        #expect(code.size == 177)
        #expect(throws: QRCodeError.tooLong(byteCount: limit + 1, correction: correction)) {
            try QRCode.encode(letters(limit + 1), correction: correction)
        }
    }

    @Test("Too long for low correction: 2,954 bytes")
    func tooLongMessage() {
        let error = #expect(throws: QRCodeError.self) { try QRCode.encode(letters(2954), correction: .low) }
        #expect(error == .tooLong(byteCount: 2954, correction: .low))
        #expect(error?.description
                == "text of 2954 bytes is too long for a QR code at low error correction (at most 2953 bytes of arbitrary text)")
    }

    // Numeric mode: version 40 at low correction holds 7,089 digits, the most of any QR code.
    @Test("7,089 digits fit; 7,090 and a megabyte are too long")
    func digits() throws {
        let digits = String(repeating: "0123456789", count: 709)
        #expect(try QRCode.encode(String(digits.prefix(7089)), correction: .low).version == 40)
        #expect(throws: QRCodeError.tooLong(byteCount: 7090, correction: .low)) {
            try QRCode.encode(digits, correction: .low)
        }
        #expect(throws: QRCodeError.tooLong(byteCount: 1 << 20, correction: .medium)) {
            try QRCode.encode(String(repeating: "x", count: 1 << 20))
        }
    }

    @Test("Multi-byte characters count as their UTF-8 bytes")
    func utf8Bytes() throws {
        // "é" is 2 bytes: 1,476 of them are 2,952 bytes, one more is 2,954.
        #expect(try QRCode.encode(String(repeating: "é", count: 1476), correction: .low).version == 40)
        #expect(throws: QRCodeError.tooLong(byteCount: 2954, correction: .low)) {
            try QRCode.encode(String(repeating: "é", count: 1477), correction: .low)
        }
    }
}

@Suite struct Concurrency {
    @Test("Codes encoded at once on many tasks are the same as one at a time")
    func concurrentEncoding() async throws {
        let texts = (0..<64).map { "https://example.org/hunt/\($0)?stop=\($0 * 7)" }
        let expected = try texts.map { try QRCode.encode($0, correction: .quartile) }
        let results = try await withThrowingTaskGroup(of: (Int, QRCode).self) { group in
            for (index, text) in texts.enumerated() {
                group.addTask { (index, try QRCode.encode(text, correction: .quartile)) }
            }
            var results = [QRCode?](repeating: nil, count: texts.count)
            for try await (index, code) in group { results[index] = code }
            return results
        }
        #expect(results == expected)
    }
}
