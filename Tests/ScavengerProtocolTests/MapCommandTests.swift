import Logging
import ScavengerBoard
import ScavengerCore
import ScavengerProtocol
import ScavengerTestSupport
import Testing

/// MAP's and WATCH MAP's lines as a client sends them, answered from memory by the offline board
/// (no pins): the exact reply, and the exact error for bad input, never `INTERNAL`.
@Suite("MAP and WATCH MAP lines")
struct MapCommandTests {
    let context = CommandContext(session: Session(connectionID: 1), board: OfflineBoard.shared, logger: Logger(label: "test"))

    func run(_ line: String) async throws -> String {
        try #require(await CommandTable.standard.execute(line: line, context: context)).reply.line
    }

    @Test("transcript", arguments: [
        ("MAP 0 0 1 1 ZOOM 3", "OK {\"cells\":[],\"total\":0}\n"),
        ("map -10 170 10 -170 zoom 4 kind PHOTO limit 2000", "OK {\"cells\":[],\"total\":0}\n"),
        ("MAP 91 0 1 1 ZOOM 3", "ERR BAD_ARGUMENT south must be a latitude within [-90, 90]\n"),
        ("MAP 0 0 1 1 ZOOM 23", "ERR BAD_ARGUMENT ZOOM must be between 0 and 22, got 23\n"),
        ("MAP 0 0 1 1 ZOOM 3 LIMIT 2001", "ERR BAD_ARGUMENT LIMIT must be between 1 and 2000, got 2001\n"),
        ("MAP 0 0 1 1 ZOOM", "ERR BAD_ARGUMENT wrong number of arguments for MAP; usage: MAP south west north east ZOOM z [KIND text|photo] [LIMIT n]\n"),
        ("MAP 0 0 1 1 AT 3", "ERR BAD_ARGUMENT expected ZOOM after the box, got 'AT'\n"),
        ("MAP 1 0 0 1 ZOOM 3", "ERR BAD_ARGUMENT south must not be north of north\n"),
        ("MAP -80 -180 80 180 ZOOM 12", "ERR BAD_ARGUMENT the box covers 208175104 cells at zoom 12, at most 65536: zoom out or ask a smaller box\n"),
        ("WATCH MAP 0 0 1 1 ZOOM 3 KIND", "ERR BAD_ARGUMENT unexpected 'KIND' after WATCH MAP's zoom\n"),
    ])
    func transcript(line: String, expected: String) async throws {
        let reply = try await run(line)
        #expect(reply == expected, "\(reply)")
    }

    @Test("HELP MAP names its syntax and flags it read-only")
    func help() async throws {
        let reply = try await run("HELP MAP")
        #expect(reply.contains("MAP south west north east ZOOM z [KIND text|photo] [LIMIT n]") && reply.contains("readonly"), "\(reply)")
    }
}
