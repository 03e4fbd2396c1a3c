import Foundation
import Postgres
import ScavengerTestSupport
import Testing

/// The pool against a database that is slow, cut off (a proxy that stops forwarding) or
/// restarted (a proxy that cuts every connection). Times are asserted as generous upper bounds.
@Suite("PostgreSQL faults", .timeLimit(.minutes(2)))
struct FaultTests {
    /// A pool through a proxy, with a one-second deadline.
    static func proxiedPool(
        timeout: Duration = .seconds(1), maxConnections: Int = 4
    ) throws -> (PostgresPool, TCPProxy) {
        var (configuration, proxy) = try TestDatabase.proxiedConfiguration()
        configuration.commandTimeout = timeout
        configuration.connectTimeoutSeconds = 2
        configuration.applicationName = TestDatabase.uniqueName("pgtest_fault")
        return (PostgresPool(configuration: configuration, maxConnections: maxConnections), proxy)
    }

    /// How long `body` took, and what it threw (nil: it returned).
    static func timed(_ body: () async throws -> Void) async -> (Duration, PostgresError?) {
        let start = ContinuousClock.now
        do {
            try await body()
            return (ContinuousClock.now - start, nil)
        } catch let error as PostgresError {
            return (ContinuousClock.now - start, error)
        } catch {
            Issue.record("unexpected error \(error)")
            return (ContinuousClock.now - start, nil)
        }
    }

    @Test("sessions get keepalives, tcp_user_timeout, statement_timeout and lock_timeout, with the options kept")
    func sessionSettings() throws {
        var configuration = try TestDatabase.isolatedConfiguration()
        configuration.commandTimeout = .milliseconds(1500)
        let connection = try PostgresConnection.connect(configuration)
        #expect(try connection.scalarString("SHOW statement_timeout") == "1500ms")
        #expect(try connection.scalarString("SHOW lock_timeout") == "1125ms")
        #expect(try connection.scalarString("SHOW TimeZone") == "UTC")
        // The configuration's own options (the test schema's search path) still apply.
        let options = try #require(configuration.options)
        let schema = try #require(options.split(separator: "=").last)
        #expect(try connection.scalarString("SELECT current_schema()") == String(schema))
        #expect(connection.connectionOption("keepalives") == "1")
        #expect(connection.connectionOption("keepalives_idle") == "15")
        #expect(connection.connectionOption("keepalives_interval") == "5")
        #expect(connection.connectionOption("keepalives_count") == "3")
        #expect(connection.connectionOption("tcp_user_timeout") == "30000")
        // libpq's connect_timeout is never longer than the deadline (rounded up to seconds).
        #expect(connection.connectionOption("connect_timeout") == "2")
        #expect(connection.connectionOption("password") == nil)
    }

    @Test("without a deadline, sessions have no statement_timeout; the URL overrides the keepalive defaults")
    func noDeadlineAndURLOverrides() throws {
        let url = try TestDatabase.url()
        let connection = try PostgresConnection.connect(
            PostgresConfiguration(connectionString: url + (url.contains("?") ? "&" : "?") + "keepalives_idle=7"))
        #expect(try connection.scalarString("SHOW statement_timeout") == "0")
        #expect(connection.connectionOption("keepalives_idle") == "7")
        #expect(connection.connectionOption("connect_timeout") == "5")
    }

    @Test("a lock not granted within lock_timeout is a timeout, and the session is kept")
    func lockTimeout() async throws {
        var configuration = try TestDatabase.isolatedConfiguration()
        configuration.commandTimeout = .seconds(1)
        let pool = PostgresPool(configuration: configuration, maxConnections: 2)
        try await pool.query("CREATE TABLE t (v int)")
        // The lock holder sits idle in its transaction on purpose: without a deadline of its
        // own, or the server would end it (idle_in_transaction_session_timeout) on a slow host.
        var holding = configuration
        holding.commandTimeout = nil
        let holder = try PostgresConnection.connect(holding)
        try holder.query("BEGIN")
        try holder.query("LOCK TABLE t IN ACCESS EXCLUSIVE MODE")
        let (elapsed, error) = await Self.timed {
            try await pool.query("SELECT count(*) FROM t")
        }
        #expect(error?.code == .timeout)
        #expect(error?.sqlState == "55P03")
        #expect(elapsed < .seconds(3))
        // The server gave up on the lock by itself: the session stays usable and goes back.
        #expect(pool.statistics.idle == 1)
        try holder.query("ROLLBACK")
        await pool.shutdown()
    }

    @Test("a statement past the deadline answers at the deadline, is cancelled, and its connection is not reused")
    func slowStatementIsCancelled() async throws {
        var configuration = try TestDatabase.isolatedConfiguration()
        configuration.commandTimeout = .seconds(1)
        configuration.applicationName = TestDatabase.uniqueName("pgtest_cancel")
        let pool = PostgresPool(configuration: configuration, maxConnections: 2)
        let admin = try PostgresConnection.connect(PostgresConfiguration(connectionString: try TestDatabase.url()))
        let first = try await pool.withConnection { $0.backendPID }
        let (elapsed, error) = await Self.timed {
            try await pool.withConnection { connection in
                // Only the pool's deadline may stop it, not the server's statement_timeout.
                try connection.query("SET statement_timeout = 0")
                try connection.query("SELECT pg_sleep(30)")
            }
        }
        #expect(error?.code == .timeout)
        #expect(elapsed < .seconds(3))
        // The cancel request stopped the statement on the server: the backend is no longer busy.
        try await eventually("the cancelled statement has stopped on the server") {
            let busy = try? admin.query("""
                SELECT 1 FROM pg_stat_activity WHERE pid = \(first) AND state = 'active'
                """)
            return busy?.isEmpty == true
        }
        try await eventually("the pool holds at most one connection") { pool.statistics.open <= 1 }
        let next = try await pool.withConnection { $0.backendPID }
        #expect(next != first)
        await pool.shutdown()
    }

    @Test("waiting for a free connection counts toward the deadline; the slot comes back")
    func waitingCountsTowardTheDeadline() async throws {
        var configuration = try TestDatabase.isolatedConfiguration()
        configuration.commandTimeout = .seconds(1)
        let pool = PostgresPool(configuration: configuration, maxConnections: 1)
        try await pool.query("SELECT 1")
        let holder = Task {
            try await pool.withConnection { _ in Thread.sleep(forTimeInterval: 2.5) }
        }
        try await Task.sleep(for: .milliseconds(100))
        let (elapsed, error) = await Self.timed {
            try await pool.query("SELECT 1")
        }
        #expect(error?.code == .timeout)
        #expect(elapsed < .seconds(3))
        // The holder's caller got its answer at its own deadline, while its thread slept on.
        let holderError = await #expect(throws: PostgresError.self) { try await holder.value }
        #expect(holderError?.code == .timeout)
        // Once the thread is back, its (abandoned) connection is closed and the slot is free.
        try await eventually("the pool holds no connection") { pool.statistics.open == 0 }
        #expect(try await pool.query("SELECT 1").count == 1)
        await pool.shutdown()
    }

    @Test("a partition: the query answers timeout at the deadline; once it heals the first write succeeds")
    func partitionThenHeal() async throws {
        let (pool, proxy) = try Self.proxiedPool(maxConnections: 2)
        defer { proxy.stop() }
        try await pool.query("CREATE TABLE t (v int)")
        proxy.blackhole()
        let (elapsed, error) = await Self.timed {
            try await pool.query("SELECT count(*) FROM t")
        }
        #expect(error?.code == .timeout)
        #expect(elapsed < .seconds(3))
        proxy.resume()
        try await pool.query("INSERT INTO t VALUES (1)", idempotent: false)
        #expect(try await pool.query("SELECT count(*) FROM t").first?.int(0) as Int? == 1)
        try await eventually("the pool holds at most two connections") { pool.statistics.open <= 2 }
        await pool.shutdown()
    }

    @Test("a lease stuck on an unreachable server is freed: its socket is cut one timeout after the deadline")
    func stuckLeaseIsFreed() async throws {
        let (pool, proxy) = try Self.proxiedPool(maxConnections: 1)
        defer { proxy.stop() }
        try await pool.query("SELECT 1")
        proxy.blackhole()
        let (_, error) = await Self.timed { try await pool.query("SELECT 1") }
        #expect(error?.code == .timeout)
        // Still cut off, yet the only slot comes back: nothing stays blocked for ever.
        try await eventually("the pool holds no connection") { pool.statistics.open == 0 }
        proxy.resume()
        try await eventually("the pool answers again") { (try? await pool.query("SELECT 1")) != nil }
        await pool.shutdown()
    }

    @Test("a restart: every idle connection is cut; the first write after it succeeds", arguments: [1, 3])
    func restartThenWrite(idleConnections: Int) async throws {
        let (pool, proxy) = try Self.proxiedPool(maxConnections: 4)
        defer { proxy.stop() }
        try await pool.query("CREATE TABLE t (v int)")
        // Open `idleConnections` connections at once, then let them all go idle.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0 ..< idleConnections {
                group.addTask {
                    try await pool.withConnection { connection in
                        let deadline = ContinuousClock.now + .seconds(5)
                        while pool.statistics.open < idleConnections, ContinuousClock.now < deadline {
                            Thread.sleep(forTimeInterval: 0.01)
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(pool.statistics.idle == idleConnections)
        proxy.cutAll()
        try await eventually("the proxy has no connection left") { proxy.connectionCount == 0 }
        for value in 1 ... idleConnections + 1 {
            try await pool.query("INSERT INTO t VALUES (\(value))", idempotent: false)
        }
        #expect(try await pool.query("SELECT count(*) FROM t").first?.int(0) as Int? == idleConnections + 1)
        await pool.shutdown()
    }

    @Test("an unreachable database: twenty commands in a row all fail, all but the first at once, without trying; it recovers")
    func unreachableFailsFast() async throws {
        let (pool, proxy) = try Self.proxiedPool(maxConnections: 4)
        defer { proxy.stop() }
        proxy.blackhole()
        var durations: [Duration] = []
        for _ in 0 ..< 20 {
            let (elapsed, error) = await Self.timed { try await pool.query("SELECT 1") }
            #expect(error?.code == .timeout || error?.code == .connectionFailure)
            durations.append(elapsed)
        }
        // Nobody waits past the deadline; after the first, the pool does not even try: the
        // other nineteen together take less than one deadline, and reach the proxy (almost) never.
        #expect(durations.allSatisfy { $0 < .seconds(3) }, "\(durations)")
        let rest = durations.dropFirst().reduce(Duration.zero, +)
        #expect(rest < .seconds(1), "\(durations)")
        #expect(proxy.acceptedCount <= 2)
        proxy.resume()
        try await eventually("the pool answers again") { (try? await pool.query("SELECT 1")) != nil }
        await pool.shutdown()
    }

    @Test("a refused connection backs off: while it lasts, connects fail at once without trying")
    func refusedBacksOff() async throws {
        var configuration = PostgresConfiguration(connectionString: try Fixture.url(port: 1))
        configuration.commandTimeout = .seconds(1)
        let pool = PostgresPool(configuration: configuration, maxConnections: 2)
        var messages: Set<String> = []
        for _ in 0 ..< 5 {
            // Not retried, so that each answer is the one attempt's.
            let (elapsed, error) = await Self.timed { try await pool.query("SELECT 1", idempotent: false) }
            #expect(error?.code == .connectionFailure)
            #expect(elapsed < .seconds(3))
            if let error { messages.insert(error.message) }
        }
        // The first answer is libpq's; the next ones, within the back-off, the pool's own.
        #expect(messages.count == 2, "\(messages)")
        #expect(pool.statistics.open == 0)
        await pool.shutdown()
    }
}
