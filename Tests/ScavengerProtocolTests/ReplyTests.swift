import Testing
@testable import ScavengerProtocol

@Suite("JSON and replies")
struct ReplyTests {
    @Test("JSON encoding", arguments: [
        (JSON.null, "null"),
        (.bool(true), "true"),
        (.int(-42), "-42"),
        (.double(12), "12"),
        (.double(0.5), "0.5"),
        (.double(-1e-7), "-1e-07"),
        (.double(.nan), "null"),
        (.double(.infinity), "null"),
        (.string("a\"b\\c\nd\te\u{01}\u{7F}é😀"), #""a\"b\\c\nd\te\u0001\u007fé😀""#),
        (.array([1, "x", nil]), #"[1,"x",null]"#),
        (.object([("b", 1), ("a", .object([("c", true)]))]), #"{"b":1,"a":{"c":true}}"#),
    ])
    func encoding(value: JSON, expected: String) {
        #expect(value.encoded == expected)
    }

    @Test("strings encode alike from a String, stored bytes (a slice) or any collection", arguments: [
        ("plain", #""plain""#), ("", #""""#), ("say \"hi\"", #""say \"hi\"""#), ("a\\b", #""a\\b""#),
        ("tab\tnew\nline\r", #""tab\tnew\nline\r""#), ("bell\u{07}del\u{7F}", #""bell\u0007del\u007f""#),
        ("grüße 🌍", #""grüße 🌍""#), ("end\"", #""end\"""#),
    ])
    func strings(text: String, expected: String) {
        var fromString: [UInt8] = []
        JSON.encodeString(text, into: &fromString)
        let stored = Array("xx".utf8) + Array(text.utf8)
        var fromSlice: [UInt8] = []
        JSON.encodeString(utf8: stored[2...], into: &fromSlice)
        var fromOther: [UInt8] = []
        JSON.encodeString(utf8: Array(text.utf8).reversed().reversed(), into: &fromOther)
        #expect(String(decoding: fromString, as: UTF8.self) == expected)
        #expect(fromSlice == fromString)
        #expect(fromOther == fromString)
    }

    @Test("encoded JSON never holds a raw newline")
    func noNewline() {
        let value: JSON = ["text": .string("one\ntwo\r\nthree\u{2028}")]
        #expect(!value.encoded.contains("\n"))
        #expect(!value.encoded.contains("\r"))
    }

    @Test("reply lines")
    func lines() {
        #expect(Reply.ok("PONG").line == "OK \"PONG\"\n")
        #expect(Reply.error(.notFound, "no such pin").line == "ERR NOT_FOUND no such pin\n")
    }

    @Test("error messages are one line and bounded")
    func sanitized() {
        let line = Reply.error(.badArgument, "bad\r\nvalue " + String(repeating: "x", count: 1000)).line
        #expect(line.filter { $0 == "\n" }.count == 1)
        #expect(!line.contains("\r"))
        #expect(line.count < Reply.maximumMessageLength + 40)
    }

    @Test("echoed input is cut short and quoted")
    func echo() {
        #expect(Reply.echo("abc") == "'abc'")
        #expect(Reply.echo(String(repeating: "y", count: 100)).count == 43)
        #expect(!Reply.echo("a\nb").contains("\n"))
    }

    @Test("messages and echoes are bounded in bytes, even when one character holds thousands of scalars")
    func combiningMarks() {
        let oneCharacter = "e" + String(repeating: "\u{301}", count: 5000)
        #expect(oneCharacter.count == 1)
        #expect(Reply.echo(oneCharacter).utf8.count <= 2 + 40 * 4 + 3)
        let line = Reply.error(.unknownCommand, "unknown command " + oneCharacter).line
        #expect(line.utf8.count <= 40 + Reply.maximumMessageLength * 4)
    }
}

import ScavengerCore

@Suite("Pin encoding")
struct PinEncodingTests {
    @Test("the pin object has the contract's fields in order, a photo pin's size and paths (1.5), and distance_m for NEARBY")
    func pinObject() {
        let pin = Pin(
            id: "pabcdefghijklmnopqrstuvwx", lat: 52.5, lon: -13.25, kind: .photo, text: "say \"hi\"\n",
            author: "alice", created: Timestamp(microseconds: 1_795_288_203_887_234),
            expires: Timestamp(microseconds: 1_795_460_000_000_000), region: "berlin",
            photo: PhotoInfo(mime: "image/png", bytes: 12, width: 640, height: 480), replies: 3)
        #expect(JSON.pin(pin).encoded == #"{"id":"pabcdefghijklmnopqrstuvwx","lat":52.5,"lon":-13.25,"kind":"photo","text":"say \"hi\"\n","author":"alice","created":"2026-11-21T19:10:03Z","expires":"2026-11-23T18:53:20Z","region":"berlin","photo":{"mime":"image/png","bytes":12},"replies":3,"width":640,"height":480,"url":"/photos/pabcdefghijklmnopqrstuvwx","thumb":"/photos/pabcdefghijklmnopqrstuvwx?size=thumb"}"#)
        var plain = pin
        plain.photo = nil
        plain.region = nil
        #expect(JSON.pin(plain, distance: 12.5).encoded.hasSuffix(#""region":null,"photo":null,"replies":3,"distance_m":12.5}"#))
    }
}
