import Logging
import ScavengerBoard
import ScavengerCore
import ScavengerProtocol
import ScavengerTestSupport
import Testing

/// The offline board's database is not there: what needs it answers UNAVAILABLE, and nothing
/// pretends otherwise.
@Suite("Commands with the database down")
struct DatabaseDownTests {
    func run(_ line: String, session: Session) async throws -> String {
        let context = CommandContext(session: session, board: OfflineBoard.shared, logger: Logger(label: "test"))
        return try #require(await CommandTable.standard.execute(line: line, context: context)).reply.line
    }

    @Test("WHOAMI of a logged-in connection is UNAVAILABLE when the session cannot be checked, not null")
    func whoamiLoggedIn() async throws {
        let session = Session(connectionID: 1)
        session.logIn(user: User(name: "alice", role: .user), userID: 1, tokenHash: Array(repeating: 7, count: 32))
        #expect(try await run("WHOAMI", session: session) == "ERR UNAVAILABLE the database is unavailable; retry\n")
        // The login stays: the session did not end, the database could not say.
        #expect(session.user?.name == "alice")
    }

    @Test("WHOAMI of a connection that never logged in is null, without the database")
    func whoamiAnonymous() async throws {
        #expect(try await run("WHOAMI", session: Session(connectionID: 2)) == #"OK {"user":null}"# + "\n")
    }
}
