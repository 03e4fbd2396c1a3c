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
}
