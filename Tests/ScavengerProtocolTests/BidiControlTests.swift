import Logging
import ScavengerBoard
import ScavengerProtocol
import ScavengerTestSupport
import Testing

@Suite("Texts with bidirectional controls are refused on every path")
struct BidiControlTests {
    let context = CommandContext(session: Session(connectionID: 1), board: OfflineBoard.shared, logger: Logger(label: "test"))

    static let rule = "must not contain bidirectional embedding, override or isolate controls (U+202A to U+202E, U+2066 to U+2069)"
    static let pin = "p" + String(repeating: "a", count: 24)

    // Refused while parsing, before the login each of these needs is looked at.
    @Test("POST, POSTPHOTO captions, REPLY and every NOTE answer BAD_ARGUMENT", arguments: [
        ("POST 1 2 evil\u{202E}txt.exe", "text"),
        ("POST 1 2 \"isolate \u{2066}x\u{2069}\"", "text"),
        ("POSTPHOTO 1 2 /9j/4A== CAPTION a\u{202B}b", "caption"),
        ("REPLY \(pin) \u{202D}override", "text"),
        ("REPORT \(pin) spam NOTE see\u{202A}this", "NOTE"),
        ("RESOLVE \(pin) ban DURATION 60 NOTE x\u{2067}", "NOTE"),
        ("BAN alice permanent NOTE \u{2068}", "NOTE"),
    ])
    func refused(line: String, name: String) async throws {
        let outcome = try #require(await CommandTable.standard.execute(line: line, context: context))
        #expect(outcome.reply.line == "ERR BAD_ARGUMENT \(name) \(Self.rule)\n")
    }

    @Test("LRM, RLM and ZWJ still pass parsing")
    func marksPass() async throws {
        let outcome = try #require(await CommandTable.standard.execute(line: "POST 1 2 a\u{200E}b\u{200F}c👩\u{200D}💻", context: context))
        #expect(outcome.reply.line.hasPrefix("ERR UNAUTHORIZED"), "\(outcome.reply.line)")
    }
}
