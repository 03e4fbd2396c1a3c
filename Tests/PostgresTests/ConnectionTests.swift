import Foundation
import Postgres
import ScavengerTestSupport
import Testing

@Suite("Connecting")
struct ConnectTests {
    @Test func connectsAndReportsABackend() throws {
        let connection = try Fixture.connect()
        #expect(connection.isHealthy)
        #expect(!connection.isInTransaction)
        #expect(connection.backendPID > 0)
        #expect(try connection.scalarInt("SELECT pg_backend_pid()") == connection.backendPID)
        // The session settings the wrapper promises.
        #expect(try connection.scalarString("SHOW TimeZone") == "UTC")
        #expect(try connection.scalarString("SHOW client_encoding") == "UTF8")
        #expect(try connection.scalarString("SELECT current_schema()")?.hasPrefix("test_") == true)
    }

    @Test func applicationNameIsReported() throws {
        var configuration = try TestDatabase.isolatedConfiguration()
        configuration.applicationName = TestDatabase.uniqueName("pgtest_app")
        let connection = try PostgresConnection.connect(configuration)
        #expect(try connection.scalarString("SELECT current_setting('application_name')") == configuration.applicationName)
    }

    @Test func nothingListeningIsAConnectionFailure() throws {
        // Port 1 on loopback: nothing listens there, the connection is refused at once.
        var components = try #require(URLComponents(string: Fixture.url(port: 1)))
        components.password = "s3cret-password"
        let configuration = PostgresConfiguration(connectionString: try #require(components.string))
        let error = #expect(throws: PostgresError.self) {
            try PostgresConnection.connect(configuration)
        }
        #expect(error?.code == .connectionFailure)
        #expect(error?.message.isEmpty == false)
        // The connection string (and its password) never appears in the error.
        #expect(error?.description.contains("s3cret-password") == false)
    }

    @Test func unknownDatabaseIsAConnectionFailureNamingIt() throws {
        let name = TestDatabase.uniqueName("no_such_database")
        let configuration = PostgresConfiguration(connectionString: try Fixture.url(database: name))
        let error = #expect(throws: PostgresError.self) {
            try PostgresConnection.connect(configuration)
        }
        #expect(error?.code == .connectionFailure)
        #expect(error?.message.contains(name) == true)
    }

    @Test(arguments: [
        "postgresql://127.0.0.1:notaport/db",
        "postgresql://[::1/db",
        "postgresql://user@127.0.0.1/db?nosuchoption=1",
        "postgresql://%zz@127.0.0.1/db",
        "not a connection string at all = = =",
    ])
    func malformedConnectionStringsThrow(connectionString: String) {
        let configuration = PostgresConfiguration(connectionString: connectionString, connectTimeoutSeconds: 2)
        let error = #expect(throws: PostgresError.self) {
            try PostgresConnection.connect(configuration)
        }
        #expect(error?.code == .connectionFailure)
        #expect(error?.message.isEmpty == false)
    }
}

@Suite("Statement errors")
struct StatementErrorTests {
    @Test(arguments: [
        ("SELEC 1", "42601", PostgresError.Code.syntaxOrAccess),
        ("SELECT * FROM no_such_table", "42P01", .syntaxOrAccess),
        ("SELECT no_such_column FROM (SELECT 1 AS a) s", "42703", .syntaxOrAccess),
        ("SELECT 'abc'::integer", "22P02", .dataException),
        ("SELECT 1 / 0", "22012", .dataException),
        ("SELECT 2147483647::integer + 1", "22003", .dataException),
    ])
    func errorsCarrySQLStateAndTheConnectionSurvives(sql: String, state: String, code: PostgresError.Code) throws {
        let connection = try Fixture.connect()
        let error = #expect(throws: PostgresError.self) {
            try connection.query(SQL(sql))
        }
        #expect(error?.sqlState == state)
        #expect(error?.code == code)
        #expect(error?.message.isEmpty == false)
        // Still usable, and not left in a failed transaction.
        #expect(connection.isHealthy)
        #expect(try connection.scalarInt("SELECT 41 + \(1)") == 42)
    }

    @Test func scriptErrorsCarrySQLState() throws {
        let connection = try Fixture.connect()
        let error = #expect(throws: PostgresError.self) {
            try connection.execute(script: "CREATE TABLE a (x int); SELECT 1 / 0;")
        }
        #expect(error?.sqlState == "22012")
        #expect(error?.code == .dataException)
        #expect(connection.isHealthy)
        // The statements of a failed simple-query string run in one implicit transaction.
        #expect(try !connection.tableExists("a"))
    }

    @Test func tooManyParametersIsAClientError() throws {
        let connection = try Fixture.connect()
        let error = #expect(throws: PostgresError.self) {
            try connection.query(SQL("SELECT 1", binds: Array(repeating: .null, count: 65536)))
        }
        #expect(error?.code == .client)
        #expect(connection.isHealthy)
    }

    @Test func emptyStatementIsNotAnError() throws {
        let connection = try Fixture.connect()
        let rows = try connection.query("")
        #expect(rows.isEmpty)
        #expect(rows.columns.isEmpty)
        try connection.execute(script: "")
    }
}

@Suite("Integrity violations")
struct ConstraintTests {
    static let schema = """
        CREATE TABLE parent (id int PRIMARY KEY);
        CREATE TABLE item (
            id        int CONSTRAINT item_id_key UNIQUE,
            quantity  int CONSTRAINT item_quantity_positive CHECK (quantity > 0),
            label     text NOT NULL DEFAULT 'x',
            parent_id int CONSTRAINT item_parent_fk REFERENCES parent (id)
        );
        INSERT INTO parent VALUES (1);
        """

    @Test func uniqueViolationNamesTheConstraint() throws {
        let connection = try Fixture.connect()
        try connection.execute(script: Self.schema)
        try connection.query("INSERT INTO item (id, quantity) VALUES (\(1), \(5))")
        let error = #expect(throws: PostgresError.self) {
            try connection.query("INSERT INTO item (id, quantity) VALUES (\(1), \(6))")
        }
        #expect(error?.code == .uniqueViolation)
        #expect(error?.sqlState == "23505")
        #expect(error?.constraint == "item_id_key")
        #expect(connection.isHealthy)
        #expect(try connection.scalarInt("SELECT count(*) FROM item") == 1)
    }

    @Test func checkViolationNamesTheConstraint() throws {
        let connection = try Fixture.connect()
        try connection.execute(script: Self.schema)
        let error = #expect(throws: PostgresError.self) {
            try connection.query("INSERT INTO item (id, quantity) VALUES (\(1), \(0))")
        }
        #expect(error?.code == .checkViolation)
        #expect(error?.sqlState == "23514")
        #expect(error?.constraint == "item_quantity_positive")
        #expect(try connection.scalarInt("SELECT count(*) FROM item") == 0)
    }

    @Test func notNullViolation() throws {
        let connection = try Fixture.connect()
        try connection.execute(script: Self.schema)
        let error = #expect(throws: PostgresError.self) {
            try connection.query("INSERT INTO item (id, quantity, label) VALUES (\(1), \(1), \(String?.none))")
        }
        #expect(error?.code == .notNullViolation)
        #expect(error?.sqlState == "23502")
    }

    @Test func foreignKeyViolationNamesTheConstraint() throws {
        let connection = try Fixture.connect()
        try connection.execute(script: Self.schema)
        try connection.query("INSERT INTO item (id, quantity, parent_id) VALUES (\(1), \(1), \(1))")
        let error = #expect(throws: PostgresError.self) {
            try connection.query("INSERT INTO item (id, quantity, parent_id) VALUES (\(2), \(1), \(99))")
        }
        #expect(error?.code == .foreignKeyViolation)
        #expect(error?.sqlState == "23503")
        #expect(error?.constraint == "item_parent_fk")
    }
}

@Suite("Transactions on a connection")
struct ConnectionTransactionTests {
    struct Abort: Error {}

    @Test func commitsWhenTheBodyReturns() throws {
        let connection = try Fixture.connect()
        try connection.query("CREATE TABLE t (v text)")
        let value = try connection.transaction { connection in
            #expect(connection.isInTransaction)
            try connection.query("INSERT INTO t VALUES (\("kept"))")
            return 7
        }
        #expect(value == 7)
        #expect(!connection.isInTransaction)
        // Visible from another session: really committed.
        let other = try PostgresConnection.connect(
            PostgresConfiguration(connectionString: try TestDatabase.url()))
        let schema = try #require(try connection.scalarString("SELECT current_schema()"))
        #expect(try other.scalarInt("SELECT count(*) FROM \(unescaped: schema).t WHERE v = 'kept'") == 1)
    }

    @Test func rollsBackWhenTheBodyThrows() throws {
        let connection = try Fixture.connect()
        try connection.query("CREATE TABLE t (v text)")
        #expect(throws: Abort.self) {
            try connection.transaction { connection in
                try connection.query("INSERT INTO t VALUES (\("lost"))")
                throw Abort()
            }
        }
        #expect(!connection.isInTransaction)
        #expect(connection.isHealthy)
        #expect(try connection.scalarInt("SELECT count(*) FROM t") == 0)
    }

    @Test func aFailedCommitThrowsAndLeavesTheConnectionClean() throws {
        let connection = try Fixture.connect()
        try connection.query("CREATE TABLE t (v int CONSTRAINT t_v_key UNIQUE DEFERRABLE INITIALLY DEFERRED)")
        let error = #expect(throws: PostgresError.self) {
            try connection.transaction { connection in
                try connection.query("INSERT INTO t VALUES (\(1)), (\(1))")  // checked at COMMIT
            }
        }
        #expect(error?.code == .uniqueViolation)
        #expect(error?.constraint == "t_v_key")
        #expect(!connection.isInTransaction)
        #expect(connection.isHealthy)
        #expect(try connection.scalarInt("SELECT count(*) FROM t") == 0)
    }

    @Test func rollsBackAfterAFailedStatement() throws {
        let connection = try Fixture.connect()
        try connection.query("CREATE TABLE t (v int PRIMARY KEY)")
        let error = #expect(throws: PostgresError.self) {
            try connection.transaction { connection in
                try connection.query("INSERT INTO t VALUES (\(1))")
                try connection.query("INSERT INTO t VALUES (\(1))")
            }
        }
        #expect(error?.code == .uniqueViolation)
        #expect(!connection.isInTransaction)
        #expect(connection.isHealthy)
        #expect(try connection.scalarInt("SELECT count(*) FROM t") == 0)
    }
}

/// Only a server that takes writes: a standby, or a primary an operator set read-only, is never
/// written to through the pool (issue 41: following the primary on purpose).
@Suite("Read-write sessions only")
struct ReadWriteTests {
    @Test("a server that reports itself read-only is passed over; the connection string may ask for any")
    func readOnlyServersArePassedOver() throws {
        var configuration = try TestDatabase.isolatedConfiguration()
        // A session whose server says default_transaction_read_only = on looks, to libpq, like
        // a standby would.
        configuration.options = (configuration.options ?? "") + " -c default_transaction_read_only=on"
        let refused = #expect(throws: PostgresError.self) { try PostgresConnection.connect(configuration) }
        #expect(refused?.code == .connectionFailure)
        #expect(refused?.message.contains("read-only") == true, "\(refused?.message ?? "")")
        configuration.connectionString += (configuration.connectionString.contains("?") ? "&" : "?") + "target_session_attrs=any"
        let connection = try PostgresConnection.connect(configuration)
        #expect(try connection.scalarString("SHOW default_transaction_read_only") == "on")
    }

    @Test("a write refused as read-only is readOnly, and its connection is replaced by one that takes writes")
    func refusedWriteRetiresTheConnection() async throws {
        let configuration = try TestDatabase.isolatedConfiguration()
        let pool = PostgresPool(configuration: configuration, maxConnections: 1)
        // The pool's one connection turns read-only, as a fenced primary's sessions do.
        let first = try await pool.withConnection { connection in
            try connection.query("SET default_transaction_read_only = on")
            return connection.backendPID
        }
        let refused = await #expect(throws: PostgresError.self) { try await pool.query("CREATE TABLE written (a int)") }
        #expect(refused?.code == .readOnly && refused?.sqlState == "25006")
        // Not reused: the next write gets a connection of its own, which takes it.
        try await pool.query("CREATE TABLE written (a int)")
        let next = try await pool.withConnection { $0.backendPID }
        #expect(next != first)
        await pool.shutdown()
    }
}
