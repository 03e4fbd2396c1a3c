import Testing
@testable import ScavengerCore

@Suite("Validation rules")
struct ValidationTests {
    @Test("usernames", arguments: [
        ("abc", true), ("a_b.c-d", true), (String(repeating: "z", count: 32), true), ("ABC123", true),
        ("ab", false), (String(repeating: "z", count: 33), false), ("has space", false), ("ümlaut", false),
        ("semi;colon", false), ("", false), ("emoji😀", false),
    ])
    func usernames(name: String, valid: Bool) {
        #expect(((try? Validation.username(name)) != nil) == valid)
    }

    @Test("emails", arguments: [
        ("a@b.co", true), ("first.last+tag@example.org", true), ("nobody", false), ("@example.org", false),
        ("a@", false), ("a@nodot", false), ("a@b@c.org", false), ("a b@c.org", false), ("a@.org", false),
        ("a@org.", false),
    ])
    func emails(email: String, valid: Bool) {
        #expect(((try? Validation.email(email)) != nil) == valid)
    }

    @Test("passwords say which rule failed", arguments: [
        ("password1", nil),
        ("пароль123", nil),
        ("short1", "at least 8 characters"),
        ("onlyletters", "at least one digit"),
        ("12345678", "at least one letter"),
        (String(repeating: "a1", count: 513), "at most 1024 bytes"),
    ])
    func passwords(password: String, failure: String?) {
        do {
            try Validation.password(password)
            #expect(failure == nil)
        } catch {
            #expect(failure.map { error.message.contains($0) } == true, "\(error.message)")
        }
    }

    @Test("texts", arguments: [
        ("hello", false, true), ("", false, false), ("", true, true), ("line\nbreak\ttab", false, true),
        ("cr\r", false, false), ("nul\u{0}", false, false), ("del\u{7F}", false, false), ("c1\u{85}", false, false),
        (String(repeating: "😀", count: 500), false, true), (String(repeating: "x", count: 501), false, false),
    ])
    func texts(text: String, allowEmpty: Bool, valid: Bool) {
        #expect(((try? Validation.text(text, allowEmpty: allowEmpty)) != nil) == valid)
    }

    @Test("bidirectional embedding, override and isolate controls are refused, by name", arguments: [
        0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069,
    ] as [UInt32])
    func bidiControls(value: UInt32) {
        let text = "invoice\(Character(Unicode.Scalar(value)!))fdp.exe"
        for name in ["text", "caption", "NOTE"] {
            #expect(throws: ValidationError(
                "\(name) must not contain bidirectional embedding, override or isolate controls (U+202A to U+202E, U+2066 to U+2069)"
            )) { try Validation.text(text, name: name) }
        }
    }

    @Test("marks, joiners, right-to-left text and the neighbours of the refused ranges stay allowed", arguments: [
        "left\u{200E}mark", "right\u{200F}mark", "👩\u{200D}💻", "\u{061C}arabic letter mark", "שלום עולם", "مرحبا",
        "before \u{2029} after", "\u{2065}", "\u{206A}",
    ])
    func bidiMarksAllowed(text: String) {
        #expect((try? Validation.text(text)) != nil)
    }
}

@Suite("Timestamps, ids and photo types")
struct DomainValueTests {
    @Test("RFC 3339 in UTC to the second", arguments: [
        (Int64(0), "1970-01-01T00:00:00Z"),
        (1_795_288_203_887_234, "2026-11-21T19:10:03Z"),
        (951_782_400_000_000, "2000-02-29T00:00:00Z"),
        (-1, "1969-12-31T23:59:59Z"),
        (4_102_444_799_999_999, "2099-12-31T23:59:59Z"),
        (-62_167_219_200_000_000, "0000-01-01T00:00:00Z"),
        (-62_167_219_200_000_001, "-0001-12-31T23:59:59Z"),
        (253_402_300_800_000_000, "10000-01-01T00:00:00Z"),
    ])
    func rfc3339(microseconds: Int64, expected: String) {
        #expect(Timestamp(microseconds: microseconds).rfc3339 == expected)
        var bytes = Array("after ".utf8)
        Timestamp(microseconds: microseconds).appendRFC3339(to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == "after " + expected)
    }

    @Test("ids: kind letter, 24 base32 characters, unique")
    func identifiers() {
        let pins = (0 ..< 1000).map { _ in Identifier.newPin() }
        #expect(Set(pins).count == pins.count)
        #expect(pins.allSatisfy(Identifier.isPin))
        #expect(!pins.contains(where: Identifier.isReply))
        let reply = Identifier.newReply()
        #expect(Identifier.isReply(reply) && !Identifier.isPin(reply))
        #expect(!Identifier.isPin("p123"))
        #expect(!Identifier.isPin("P" + String(repeating: "a", count: 24)))
        #expect(!Identifier.isPin("p" + String(repeating: "1", count: 24)))
    }

    @Test("ids use every base32 letter at every position, so all 120 bits are random")
    func identifierPositionsAreRandom() {
        let ids = (0 ..< 2000).map { _ in Array(Identifier.newPin().utf8.dropFirst()) }
        for position in 0 ..< 24 {
            #expect(Set(ids.map { $0[position] }).count == 32, "position \(position)")
        }
    }

    @Test("a control character is exactly Unicode's general category Cc")
    func controlCharacters() {
        let disagreeing = (UInt32(0) ... 0x10FFFF).compactMap(Unicode.Scalar.init).filter {
            Validation.isControl($0) != ($0.properties.generalCategory == .control)
        }
        #expect(disagreeing.isEmpty)
    }

    @Test("photo types by magic bytes", arguments: [
        ([0xFF, 0xD8, 0xFF, 0xDB] as [UInt8], "image/jpeg" as String?),
        ([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], "image/png"),
        (Array("GIF87a".utf8), "image/gif"),
        (Array("GIF89a".utf8), "image/gif"),
        (Array("RIFF1234WEBP".utf8), "image/webp"),
        (Array("RIFF1234WAVE".utf8), nil),
        ([0x89, 0x50, 0x4E, 0x47], nil),
        (Array("hello".utf8), nil),
        ([], nil),
    ])
    func photoTypes(bytes: [UInt8], mime: String?) {
        #expect(Photo.mimeType(of: bytes) == mime)
    }
}
