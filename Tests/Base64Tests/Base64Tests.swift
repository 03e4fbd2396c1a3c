import Base64
import Foundation
import ScavengerTestSupport
import Testing

/// Deterministic bytes, so a failing size can be reproduced.
private func randomBytes(count: Int, seed: UInt64) -> [UInt8] {
    var generator = SplitMix64(seed: seed)
    var bytes = [UInt8]()
    bytes.reserveCapacity(count + 8)
    while bytes.count < count {
        withUnsafeBytes(of: generator.next().littleEndian) { bytes.append(contentsOf: $0) }
    }
    return Array(bytes.prefix(count))
}

private let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

@Suite struct EncodingAndDecoding {
    @Test("RFC 4648 test vectors", arguments: [
        ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"),
        ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy"),
    ])
    func rfcVectors(plain: String, encoded: String) throws {
        let bytes = Array(plain.utf8)
        #expect(Base64.encode(bytes) == encoded)
        #expect(Base64.encodeToASCII(bytes) == Array(encoded.utf8))
        #expect(try Base64.decode(encoded) == bytes)
        #expect(try Base64.decode(Array(encoded.utf8)) == bytes)
    }

    @Test("Random bytes round-trip byte-exactly and match Foundation",
          arguments: [0, 1, 2, 3, 4, 5, 53, 54, 55, 56, 57, 71, 72, 73, 107, 108, 109, 110, 161, 162, 163, 1000])
    func roundTrip(size: Int) throws {
        try checkRoundTrip(randomBytes(count: size, seed: UInt64(size) &+ 1))
    }

    @Test("A 4 MiB buffer round-trips byte-exactly and matches Foundation")
    func largeRoundTrip() throws {
        try checkRoundTrip(randomBytes(count: 4 << 20, seed: 42))
    }

    @Test("Every byte value at every position of a group survives a round trip")
    func allByteValues() throws {
        for shift in 0..<3 {
            let bytes = [UInt8](repeating: 0, count: shift) + (0...255).map { UInt8($0) }
            try checkRoundTrip(bytes)
        }
    }

    private func checkRoundTrip(_ bytes: [UInt8]) throws {
        let encoded = Base64.encode(bytes)
        #expect(!encoded.utf8.contains(UInt8(ascii: "\n")))
        #expect(!encoded.utf8.contains(UInt8(ascii: "\r")))
        #expect(encoded.utf8.count == Base64.encodedLength(ofByteCount: bytes.count))
        #expect(encoded == Data(bytes).base64EncodedString())
        #expect(Base64.encodeToASCII(bytes) == Array(encoded.utf8))
        let decoded = try Base64.decode(encoded)
        #expect(decoded.count == bytes.count)
        #expect(decoded == bytes)
        #expect(try Base64.decode(Array(encoded.utf8)) == bytes)
    }

    @Test("Empty input encodes and decodes to empty")
    func empty() throws {
        #expect(Base64.encode([UInt8]()) == "")
        #expect(Base64.encodeToASCII([UInt8]()) == [])
        #expect(try Base64.decode("") == [])
        #expect(try Base64.decode([UInt8]()) == [])
        #expect(try Base64.decode("", maximumDecodedLength: 0) == [])
    }

    @Test("Any byte collection, contiguous or not, is accepted")
    func inputKinds() throws {
        let hello = Array("hello".utf8)
        let line = "PHOTO aGVsbG8= end"
        let field = line.split(separator: " ")[1]  // Substring
        #expect(try Base64.decode(field) == hello)
        #expect(try Base64.decode(field.utf8) == hello)
        #expect(try Base64.decode(Array(line.utf8)[6..<14]) == hello)  // ArraySlice
        #expect(try Base64.decode(Data("aGVsbG8=".utf8)) == hello)
        // Not contiguous: copied first.
        #expect(try Base64.decode(repeatElement(UInt8(ascii: "A"), count: 8)) == [0, 0, 0, 0, 0, 0])
        #expect(try Base64.decode("aGVsbG8=".utf8.lazy.map { $0 }) == hello)

        #expect(Base64.encode(hello[1...]) == "ZWxsbw==")
        #expect(Base64.encode(Data(hello)) == "aGVsbG8=")
        #expect(Base64.encode(repeatElement(UInt8(0), count: 3)) == "AAAA")
        #expect(Base64.encode(hello.lazy.map { $0 }) == "aGVsbG8=")
        #expect(Base64.encodeToASCII(repeatElement(UInt8(0xFF), count: 2)) == Array("//8=".utf8))
    }

    @Test("Length helpers", arguments: [
        (0, 0), (1, 4), (2, 4), (3, 4), (4, 8), (54, 72), (55, 76), (5 << 20, 6_990_508),
    ])
    func lengths(byteCount: Int, encodedLength: Int) {
        #expect(Base64.encodedLength(ofByteCount: byteCount) == encodedLength)
        let maximum = Base64.maximumDecodedLength(ofEncodedLength: encodedLength)
        #expect(maximum >= byteCount && maximum - byteCount <= 2)
    }
}

/// A rejected input and its error, shown escaped in test output (some contain control characters).
struct Rejection: Sendable, CustomTestStringConvertible {
    let text: String
    let error: Base64Error
    init(_ text: String, _ error: Base64Error) {
        self.text = text
        self.error = error
    }
    var testDescription: String { "\(text.debugDescription) → \(error)" }
}

@Suite struct StrictDecoding {
    @Test("Rejected text reports the specific error", arguments: [
        // libb64 alone would skip '*' and '!' and return "hello".
        Rejection("aGV*sb!G8=", .invalidCharacter(UInt8(ascii: "*"), offset: 3)),
        Rejection("Zg", .invalidLength(2)),
        Rejection("Zg=", .invalidLength(3)),
        Rejection("Zm9vY", .invalidLength(5)),
        Rejection("=", .invalidLength(1)),
        Rejection("==", .invalidLength(2)),
        Rejection("Zg===", .misplacedPadding(offset: 2)),
        Rejection("Zg==Zg==", .misplacedPadding(offset: 2)),
        Rejection("Zg=A", .misplacedPadding(offset: 2)),
        Rejection("A===", .misplacedPadding(offset: 1)),
        Rejection("====", .misplacedPadding(offset: 0)),
        Rejection("Zm9v====", .misplacedPadding(offset: 4)),
        Rejection("Zm9v Zm9v", .invalidCharacter(0x20, offset: 4)),
        Rejection("Zm9v\nZm9v", .invalidCharacter(0x0A, offset: 4)),
        Rejection("Zm9vYmFy\n", .invalidCharacter(0x0A, offset: 8)),
        Rejection("Zm9vYmFy\r\n", .invalidCharacter(0x0D, offset: 8)),
        Rejection("Zg==\n", .invalidCharacter(0x0A, offset: 4)),
        Rejection(" Zg==", .invalidCharacter(0x20, offset: 0)),
        Rejection("Zm\t9v", .invalidCharacter(0x09, offset: 2)),
        Rejection("Zg=\u{0}", .invalidCharacter(0x00, offset: 3)),
        Rejection("-_", .invalidCharacter(UInt8(ascii: "-"), offset: 0)),
        Rejection("Zm9v-_8=", .invalidCharacter(UInt8(ascii: "-"), offset: 4)),
        Rejection("Zm9vYmF_", .invalidCharacter(UInt8(ascii: "_"), offset: 7)),
        Rejection("Zm9vé===", .invalidCharacter(0xC3, offset: 4)),
        Rejection("Zm9v\u{7F}AAA", .invalidCharacter(0x7F, offset: 4)),
        Rejection("Zh==", .nonCanonical(offset: 1)),
        Rejection("Zm9=", .nonCanonical(offset: 2)),
        Rejection("Zm9vYmF=", .nonCanonical(offset: 6)),
    ])
    func rejected(_ rejection: Rejection) {
        let (text, expected) = (rejection.text, rejection.error)
        #expect(throws: expected) { try Base64.decode(text) }
        #expect(throws: expected) { try Base64.decode(Array(text.utf8)) }
        #expect(throws: expected) { try Base64.decode(text.utf8.lazy.map { $0 }) }
    }

    @Test("A bad byte is found at any position of a long text")
    func badByteAtEveryPosition() throws {
        let valid = Array(Base64.encode(randomBytes(count: 75, seed: 3)).utf8)  // 100 symbols, no padding
        #expect(try Base64.decode(valid).count == 75)
        for offset in valid.indices {
            var text = valid
            text[offset] = UInt8(ascii: "*")
            #expect(throws: Base64Error.invalidCharacter(UInt8(ascii: "*"), offset: offset)) { try Base64.decode(text) }
            text[offset] = UInt8(ascii: "=")
            if offset < valid.count - 1 {
                #expect(throws: Base64Error.misplacedPadding(offset: offset)) { try Base64.decode(text) }
            }
        }
    }

    @Test("Non-ASCII and invalid UTF-8 bytes are rejected", arguments: [
        ([0xFF, 0x41, 0x41, 0x41], Base64Error.invalidCharacter(0xFF, offset: 0)),
        ([0x41, 0x41, 0x41, 0x80], .invalidCharacter(0x80, offset: 3)),
        ([0x5A, 0x67, 0x3D, 0xBD], .invalidCharacter(0xBD, offset: 3)),
        ([0x5A, 0x6D, 0x39, 0x76, 0xC0, 0xAB, 0x3D, 0x3D], .invalidCharacter(0xC0, offset: 4)),
    ] as [([UInt8], Base64Error)])
    func nonASCII(bytes: [UInt8], expected: Base64Error) {
        #expect(throws: expected) { try Base64.decode(bytes) }
    }

    @Test("Exactly the canonical last symbols are accepted, and they round-trip", arguments: [1, 2])
    func canonicalTrailingBits(paddingCount: Int) throws {
        let prefix: [UInt8] = paddingCount == 2 ? [UInt8(ascii: "Q")] : Array("QU".utf8)
        let unusedBits = paddingCount == 2 ? 0x0F : 0x03
        var accepted = 0
        for (value, symbol) in alphabet.enumerated() {
            let text = prefix + [symbol] + [UInt8](repeating: UInt8(ascii: "="), count: paddingCount)
            if value & unusedBits == 0 {
                let bytes = try Base64.decode(text)
                #expect(bytes.count == 3 - paddingCount)
                #expect(Base64.encodeToASCII(bytes) == text)
                accepted += 1
            } else {
                #expect(throws: Base64Error.nonCanonical(offset: prefix.count)) { try Base64.decode(text) }
            }
        }
        #expect(accepted == (paddingCount == 2 ? 4 : 16))
    }

    @Test("Foundation's line-wrapped output is refused")
    func lineWrapped() {
        let wrapped = Data(randomBytes(count: 100, seed: 7)).base64EncodedString(options: .lineLength76Characters)
        #expect(throws: Base64Error.invalidCharacter(0x0D, offset: 76)) { try Base64.decode(wrapped) }
    }

    @Test("The decoded-length limit is exact")
    func limit() throws {
        #expect(try Base64.decode("Zm9vYmE=", maximumDecodedLength: 5) == Array("fooba".utf8))
        #expect(throws: Base64Error.tooLarge(limit: 4)) { try Base64.decode("Zm9vYmE=", maximumDecodedLength: 4) }
        #expect(throws: Base64Error.tooLarge(limit: 5)) { try Base64.decode("Zm9vYmFy", maximumDecodedLength: 5) }
        #expect(try Base64.decode("Zm9vYmFy", maximumDecodedLength: 6) == Array("foobar".utf8))
        #expect(throws: Base64Error.tooLarge(limit: 0)) { try Base64.decode("Zg==", maximumDecodedLength: 0) }
        // Longer than any encoding of 5 bytes: refused before the content is looked at.
        #expect(throws: Base64Error.tooLarge(limit: 5)) { try Base64.decode("***********", maximumDecodedLength: 5) }
        // Within the limit, the content is checked.
        #expect(throws: Base64Error.invalidCharacter(UInt8(ascii: "*"), offset: 0)) {
            try Base64.decode("********", maximumDecodedLength: 6)
        }
    }

    @Test("Text longer than libb64's Int32 lengths is refused without reading it")
    func int32Limit() {
        #expect(Base64.encodedLength(ofByteCount: Base64.decodedLengthLimit) <= Int(Int32.max))
        #expect(Base64.encodedLength(ofByteCount: Base64.decodedLengthLimit + 1) > Int(Int32.max))
        // Repeated is not contiguous and has no storage: had it been copied, this would allocate 2 GiB.
        let huge = repeatElement(UInt8(ascii: "A"), count: Int(Int32.max) + 1)
        #expect(throws: Base64Error.tooLarge(limit: Base64.decodedLengthLimit)) { try Base64.decode(huge) }
        #expect(throws: Base64Error.tooLarge(limit: Base64.decodedLengthLimit)) {
            try Base64.decode(huge, maximumDecodedLength: .max)
        }
    }
}

@Suite struct ErrorMessages {
    @Test("Messages are one line and precise", arguments: [
        (Base64Error.invalidLength(3), "invalid base64: length 3 is not a multiple of 4"),
        (.invalidCharacter(UInt8(ascii: "*"), offset: 3),
         "invalid base64: character '*' (0x2A) at offset 3 is not in the standard alphabet"),
        (.invalidCharacter(0x0A, offset: 8), "invalid base64: byte 0x0A at offset 8 is not in the standard alphabet"),
        (.invalidCharacter(0x0D, offset: 0), "invalid base64: byte 0x0D at offset 0 is not in the standard alphabet"),
        (.invalidCharacter(0xC3, offset: 4), "invalid base64: byte 0xC3 at offset 4 is not in the standard alphabet"),
        (.invalidCharacter(0x27, offset: 1), "invalid base64: byte 0x27 at offset 1 is not in the standard alphabet"),
        (.misplacedPadding(offset: 2),
         "invalid base64: misplaced padding '=' at offset 2 (only one or two '=' at the very end)"),
        (.nonCanonical(offset: 1),
         "invalid base64: non-canonical encoding, unused bits of the character at offset 1 are not zero"),
        (.tooLarge(limit: 5_242_880), "base64 data decodes to more than 5242880 bytes"),
    ])
    func message(error: Base64Error, expected: String) {
        #expect(error.description == expected)
        #expect(!error.description.contains { $0.isNewline })
    }

    @Test("No byte value can put a control character in a message")
    func everyByte() {
        for byte in UInt8.min...UInt8.max {
            let message = Base64Error.invalidCharacter(byte, offset: 0).description
            #expect(message.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value < 0x7F })
        }
    }
}
