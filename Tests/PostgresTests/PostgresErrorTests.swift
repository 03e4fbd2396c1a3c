@testable import Postgres
import Testing

@Suite("PostgresError")
struct PostgresErrorTests {
    @Test(arguments: [
        ("23505", PostgresError.Code.uniqueViolation),
        ("23503", .foreignKeyViolation),
        ("23514", .checkViolation),
        ("23502", .notNullViolation),
        ("40001", .serializationFailure),
        ("40P01", .serializationFailure),
        ("57014", .queryCanceled),
        ("55P03", .timeout),
        ("08006", .connectionFailure),
        ("08001", .connectionFailure),
        ("57P01", .connectionFailure),
        ("57P02", .connectionFailure),
        ("57P03", .connectionFailure),
        ("42601", .syntaxOrAccess),
        ("42P01", .syntaxOrAccess),
        ("42501", .syntaxOrAccess),
        ("22P02", .dataException),
        ("22012", .dataException),
        ("XX000", .server),
        ("23000", .server),
        ("53300", .server),
    ])
    func sqlStateMapsToCode(state: String, code: PostgresError.Code) {
        #expect(PostgresError.code(forSQLState: state) == code)
    }

    @Test func descriptionNamesCodeStateAndMessageOnly() {
        let error = PostgresError(
            code: .uniqueViolation, sqlState: "23505", message: "duplicate key", constraint: "users_name_unique")
        #expect(error.description == "PostgresError.uniqueViolation (23505): duplicate key")
        let bare = PostgresError(code: .poolClosed, message: "closed")
        #expect(bare.description == "PostgresError.poolClosed: closed")
    }
}

@Suite("A commit whose synchronous standby did not confirm it")
struct UnconfirmedCommitTests {
    @Test("PostgreSQL's warnings for a cancelled wait for synchronous replication are recognised; others are not", arguments: [
        ("canceling wait for synchronous replication due to user request", true),
        ("canceling the wait for synchronous replication and terminating connection due to administrator command", true),
        ("there is no transaction in progress", false),
        ("canceling statement due to user request", false),
        ("", false),
    ])
    func recognised(message: String, cancelled: Bool) {
        #expect(PostgresConnection.isCancelledReplicationWait(message) == cancelled)
    }
}
