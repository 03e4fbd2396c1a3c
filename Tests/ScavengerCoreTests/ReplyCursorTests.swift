import ScavengerCore
import Testing

@Suite("REPLIES cursors")
struct ReplyCursorTests {
    static let pin = "pabcdefghijklmnopqrstuvwx"
    static let otherPin = "pbcdefghijklmnopqrstuvwxy"
    static let reply = "rabcdefghijklmnopqrstuvwx"

    @Test("a cursor round-trips and belongs to its pin only")
    func roundTrip() throws {
        let made = ReplyCursor(pinID: Self.pin, created: .init(microseconds: 1_700_000_000_123_456), id: Self.reply)
        let parsed = try #require(ReplyCursor(encoded: made.encoded))
        #expect(parsed == made)
        #expect(parsed.id == Self.reply)
        #expect(parsed.created.microseconds == 1_700_000_000_123_456)
        #expect(parsed.belongs(toPin: Self.pin))
        #expect(!parsed.belongs(toPin: Self.otherPin))
        #expect(made.encoded.split(separator: "_").first?.count == 16)
    }

    @Test("cursors that no page made are refused", arguments: [
        "", "bogus", "1700000000000000_\(reply)", "9223372036854775807_\(reply)",
        "0000000000000001_-1_\(reply)", "0000000000000001_253402300800000000_\(reply)",
        "0000000000000001_9223372036854775807_\(reply)", "0000000000000001_1_\(pin)",
        "0000000000000001_1_", "_1_\(reply)", "000000000000000X_1_\(reply)",
    ])
    func refused(text: String) {
        #expect(ReplyCursor(encoded: text) == nil)
    }

    @Test("the edges of the storable range are accepted", arguments: ["0", "253402300799999999"])
    func edges(micros: String) throws {
        let cursor = try #require(ReplyCursor(encoded: "00000000000000ff_\(micros)_\(Self.reply)"))
        #expect(cursor.pinTag == 0xff)
    }
}
