import Logging
import ScavengerBoard
import ScavengerCore
import ScavengerProtocol
import ScavengerTestSupport
import Testing

/// Cursors are client input: whatever a client sends as CURSOR is answered `BAD_ARGUMENT` (or
/// a page), never `INTERNAL`. These are refused while parsing, before any database: the offline
/// board answers them.
@Suite("Cursors from clients")
struct CursorArgumentTests {
    let context = CommandContext(session: Session(connectionID: 1), board: OfflineBoard.shared, logger: Logger(label: "test"))

    static let pin = "pabcdefghijklmnopqrstuvwx"
    static let reply = "rabcdefghijklmnopqrstuvwx"

    func run(_ line: String) async throws -> String {
        try #require(await CommandTable.standard.execute(line: line, context: context)).reply.line
    }

    static let notAReplyCursor = "ERR BAD_ARGUMENT CURSOR is not a cursor this command returned\n"

    @Test("REPLIES refuses cursors it did not make, out-of-range times and cursors of another pin", arguments: [
        ("bogus", notAReplyCursor),
        (#""""#, notAReplyCursor),
        // The older form, not bound to a pin, with an ordinary and an extreme time.
        ("1700000000000000_\(reply)", notAReplyCursor),
        ("9223372036854775807_\(reply)", notAReplyCursor),
        // Times no reply can have: before 1970, after 9999, beyond 64 bits.
        ("0000000000000001_-1_\(reply)", notAReplyCursor),
        ("0000000000000001_9223372036854775807_\(reply)", notAReplyCursor),
        ("0000000000000001_253402300800000000_\(reply)", notAReplyCursor),
        ("0000000000000001_99999999999999999999_\(reply)", notAReplyCursor),
        ("0000000000000001_+5_\(reply)", notAReplyCursor),
        ("0000000000000001__\(reply)", notAReplyCursor),
        // A malformed pin tag or reply id.
        ("000000000000000G_1_\(reply)", notAReplyCursor),
        ("00000000000000001_1_\(reply)", notAReplyCursor),
        ("000000000000000A_1_\(reply)", notAReplyCursor),
        ("0000000000000001_1_\(pin)", notAReplyCursor),
        ("0000000000000001_1_\(reply)_x", notAReplyCursor),
        // Well formed, but made for another pin's chat.
        ("0000000000000001_1700000000000000_\(reply)", "ERR BAD_ARGUMENT CURSOR belongs to another query (the replies of another pin)\n"),
    ])
    func repliesCursors(cursor: String, expected: String) async throws {
        #expect(try await run("REPLIES \(Self.pin) CURSOR \(cursor)") == expected)
    }

    static let notANearbyCursor = "ERR BAD_ARGUMENT CURSOR is not a cursor NEARBY returned\n"

    @Test("NEARBY refuses malformed cursors, impossible distances and cursors of another query", arguments: [
        ("bogus", notANearbyCursor),
        ("0000000000000001.7ff8000000000000.\(pin)", notANearbyCursor),  // NaN
        ("0000000000000001.7ff0000000000000.\(pin)", notANearbyCursor),  // infinity
        ("0000000000000001.bff0000000000000.\(pin)", notANearbyCursor),  // -1
        ("0000000000000001.3ff0000000000000.\(reply)", notANearbyCursor),
        ("0000000000000001.3ff000000000000.\(pin)", notANearbyCursor),
        ("0000000000000001.3ff0000000000000.\(pin)", "ERR BAD_ARGUMENT CURSOR belongs to a different NEARBY query\n"),
    ])
    func nearbyCursors(cursor: String, expected: String) async throws {
        #expect(try await run("NEARBY 1 1 100 CURSOR \(cursor)") == expected)
    }

    static let notARegionCursor = "ERR BAD_ARGUMENT CURSOR is not a cursor REGION returned\n"

    @Test("REGION refuses malformed cursors; extreme times pass parsing (pages come from memory)", arguments: [
        ("bogus", notARegionCursor),
        ("0000000000000001.000000000000000.\(pin)", notARegionCursor),
        ("0000000000000001.0000000000000000.\(reply)", notARegionCursor),
        // Well formed: parsing passes, and the region is looked up (there is none offline).
        ("0000000000000001.0006000000000000.\(pin)", "ERR NOT_FOUND no region named 'nowhere'\n"),
        ("0000000000000001.ffffffffffffffff.\(pin)", "ERR NOT_FOUND no region named 'nowhere'\n"),
        ("0000000000000001.7fffffffffffffff.\(pin)", "ERR NOT_FOUND no region named 'nowhere'\n"),
    ])
    func regionCursors(cursor: String, expected: String) async throws {
        #expect(try await run("REGION nowhere CURSOR \(cursor)") == expected)
    }

    @Test("MODLOG refuses anything but a positive entry id in plain digits", arguments: [
        ("0", false), ("-1", false), ("+5", false), ("abc", false), ("1.5", false), ("1e3", false),
        ("99999999999999999999", false), (#""""#, false), (" 5", false),
        // Accepted by parsing (then refused for want of a login, offline).
        ("5", true), ("9223372036854775807", true),
    ])
    func modlogCursors(cursor: String, accepted: Bool) async throws {
        let reply = try await run("MODLOG CURSOR \(cursor.hasPrefix(" ") ? quotedJSON(cursor) : cursor)")
        if accepted {
            #expect(reply.hasPrefix("ERR UNAUTHORIZED "))
        } else {
            #expect(reply == "ERR BAD_ARGUMENT CURSOR is not a cursor MODLOG returned\n")
        }
    }

    private func quotedJSON(_ text: String) -> String {
        JSON.string(text).encoded
    }
}
