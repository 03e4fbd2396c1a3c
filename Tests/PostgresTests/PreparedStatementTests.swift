import Postgres
import Testing

@Suite("Prepared statements")
struct PreparedStatementTests {
    @Test("a parameterized statement is prepared once per connection and reused")
    func reused() throws {
        let connection = try Fixture.connect()
        for value in 0 ..< 5 {
            let rows = try connection.query("SELECT \(value)::int + 1 AS next")
            #expect(try rows[0].int(0) as Int == value + 1)
        }
        let statements = try connection.query("SELECT count(*) FROM pg_prepared_statements")
        #expect(try statements[0].int(0) as Int == 1)  // statements without parameters run unprepared
    }

    @Test("statements that differ only in the middle of a long text are prepared apart")
    func longTextsDifferingInTheMiddle() throws {
        let connection = try Fixture.connect()
        let padding = String(repeating: " ", count: 100)
        for (word, expected) in [("'left'", "left"), ("'rght'", "rght"), ("'left'", "left")] {
            let rows = try connection.query(SQL("SELECT \(padding)\(word)\(padding)::text || $1", binds: [.text("!")]))
            #expect(try rows[0].string(0) as String == expected + "!")
        }
        let statements = try connection.query("SELECT count(*) FROM pg_prepared_statements")
        #expect(try statements[0].int(0) as Int == 2)
    }

    @Test("a plan invalidated by a schema change is prepared again")
    func invalidated() throws {
        let connection = try Fixture.connect()
        try connection.execute(script: "CREATE TABLE plan_test (a int); INSERT INTO plan_test VALUES (1)")
        let query: (Int) throws -> Int = { value in
            try connection.query("SELECT * FROM plan_test WHERE a = \(value)").columns.count
        }
        #expect(try query(1) == 1)
        try connection.execute(script: "ALTER TABLE plan_test ADD COLUMN b int")
        // PostgreSQL refuses the old plan once ("cached plan must not change result type") …
        var columns: Int?
        do {
            columns = try query(1)
        } catch {
            #expect((error as? PostgresError)?.sqlState == "0A000")
        }
        // … and the next call prepares it afresh.
        #expect(try columns ?? query(1) == 2)
        #expect(connection.isHealthy)
    }
}
