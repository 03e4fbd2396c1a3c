import ScavengerCore
import Testing

@Suite("The cursor codec every opaque cursor is written and read with")
struct CursorCodecTests {
    @Test("16 lowercase hex digits, both ways", arguments: [0, 1, 0xdead_beef, UInt64.max] as [UInt64])
    func hexRoundTrip(value: UInt64) {
        let text = CursorCodec.hex(value)
        #expect(text.utf8.count == 16 && text == text.lowercased())
        #expect(CursorCodec.hex(Substring(text)) == value)
    }

    @Test("anything but exactly 16 lowercase hex digits is refused", arguments: [
        "", "0", "000000000000000", "00000000000000000", "DEADBEEF00000000", "+000000000000001", "00000000000000g0", " 000000000000000",
    ])
    func hexRefused(text: String) {
        #expect(CursorCodec.hex(Substring(text)) == nil)
    }

    @Test("plain ASCII digits, 1 to 19, no sign", arguments: [
        ("0", 0), ("42", 42), ("9223372036854775807", Int64.max), ("", nil), ("-1", nil), ("+1", nil), ("1 ", nil),
        ("99999999999999999999", nil), ("٣", nil),
    ] as [(String, Int64?)])
    func decimal(text: String, value: Int64?) {
        #expect(CursorCodec.decimal(Substring(text)) == value)
    }

    @Test("fields: exactly as many, the last keeps its separators")
    func fields() {
        #expect(CursorCodec.fields("a_b_c_d_e", separator: "_", count: 4) == ["a", "b", "c", "d_e"])
        #expect(CursorCodec.fields("a.b", separator: ".", count: 3) == nil)
        #expect(CursorCodec.fields("a..", separator: ".", count: 3) == ["a", "", ""])
    }
}
