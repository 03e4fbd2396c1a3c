import Foundation
@testable import Postgres
import ScavengerTestSupport
import Testing

/// The pool against a database that is slow, cut off (a proxy that stops forwarding) or
/// restarted (a proxy that cuts every connection). What is asserted is what happened (which
/// answer, which connects were tried, in what order); times only as guards against hangs, far
/// above what the work takes, never as a measure of it.
@Suite("PostgreSQL faults", .timeLimit(.minutes(2)))
struct FaultTests {
    /// What a call that should end at its one-second deadline may take before it counts as
    /// hung: many times that, so that a loaded machine never decides a test.
    static let hangGuard: Duration = .seconds(30)

    /// A pool through a proxy, with a one-second deadline; its bookkeeping reads `clock`.
    static func proxiedPool(
        timeout: Duration = .seconds(1), maxConnections: Int = 4, clock: ManualClock? = nil
    ) throws -> (PostgresPool, TCPProxy) {
        var (configuration, proxy) = try TestDatabase.proxiedConfiguration()
        configuration.commandTimeout = timeout
        configuration.connectTimeoutSeconds = 2
        configuration.applicationName = TestDatabase.uniqueName("pgtest_fault")
        return (PostgresPool(configuration: configuration, maxConnections: maxConnections, now: ManualClock.reading(clock)), proxy)
    }

    /// What `body` threw (nil: it returned).
    static func failure(_ body: () async throws -> Void) async -> PostgresError? {
        do {
            try await body()
            return nil
        } catch let error as PostgresError {
            return error
        } catch {
            Issue.record("unexpected error \(error)")
            return nil
        }
    }

    /// The pool's own answer when it does not even try to connect.
    static let notTrying = "the database could not be reached a moment ago; not trying again yet"

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
        let error = await Self.failure {
            try await pool.query("SELECT count(*) FROM t")
        }
        // The server's lock_timeout (three quarters of the deadline) answered, not the pool's
        // deadline, whose timeout carries no SQLSTATE.
        #expect(error?.code == .timeout)
        #expect(error?.sqlState == "55P03")
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
        let error = await Self.failure {
            try await pool.withConnection { connection in
                // Only the pool's deadline may stop it, not the server's statement_timeout.
                try connection.query("SET statement_timeout = 0")
                try connection.query("SELECT pg_sleep(90)")
            }
        }
        // The pool's deadline answered (its own message), not the 90 s statement's end.
        #expect(error?.code == .timeout)
        #expect(error?.message.hasPrefix("no answer from the database") == true)
        // The cancel request stopped the statement on the server: the backend is no longer busy.
        try await eventually("the cancelled statement has stopped on the server", timeout: Self.hangGuard) {
            let busy = try? admin.query("""
                SELECT 1 FROM pg_stat_activity WHERE pid = \(first) AND state = 'active'
                """)
            return busy?.isEmpty == true
        }
        try await eventually("the pool holds at most one connection", timeout: Self.hangGuard) { pool.statistics.open <= 1 }
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
        // The holder keeps the only connection until the test lets it go: the queued call can
        // only end by its deadline.
        let release = DispatchSemaphore(value: 0)
        defer { release.signal() }
        let holder = Task {
            try await pool.withConnection { _ in release.wait() }
        }
        try await eventually("the holder has the connection", timeout: Self.hangGuard) { pool.statistics.idle == 0 }
        let error = await Self.failure {
            try await pool.query("SELECT 1")
        }
        #expect(error?.code == .timeout)
        #expect(error?.message.hasPrefix("no database connection was free") == true)
        #expect(pool.waitStatistics.waits == 1 && pool.waitStatistics.waiting == 0)
        // The holder's caller got its answer at its own deadline, while its thread held on.
        let holderError = await #expect(throws: PostgresError.self) { try await holder.value }
        #expect(holderError?.code == .timeout)
        #expect(pool.statistics.open == 1)
        // Once the thread is back, its (abandoned) connection is closed and the slot is free.
        release.signal()
        try await eventually("the pool holds no connection", timeout: Self.hangGuard) { pool.statistics.open == 0 }
        #expect(try await pool.query("SELECT 1").count == 1)
        await pool.shutdown()
    }

    @Test("a partition: the query answers timeout at the deadline; once it heals the first write succeeds")
    func partitionThenHeal() async throws {
        let (pool, proxy) = try Self.proxiedPool(maxConnections: 2)
        defer { proxy.stop() }
        try await pool.query("CREATE TABLE t (v int)")
        proxy.blackhole()
        let error = await Self.failure {
            try await pool.query("SELECT count(*) FROM t")
        }
        // The pool's deadline answered (the kernel would have given up only after 30 s, with a
        // connection failure).
        #expect(error?.code == .timeout)
        #expect(error?.message.hasPrefix("no answer from the database") == true)
        proxy.resume()
        try await pool.query("INSERT INTO t VALUES (1)", idempotent: false)
        #expect(try await pool.query("SELECT count(*) FROM t").first?.int(0) as Int? == 1)
        try await eventually("the pool holds at most two connections", timeout: Self.hangGuard) { pool.statistics.open <= 2 }
        await pool.shutdown()
    }

    @Test("a lease stuck on an unreachable server is freed: its socket is cut one timeout after the deadline")
    func stuckLeaseIsFreed() async throws {
        let (pool, proxy) = try Self.proxiedPool(maxConnections: 1)
        defer { proxy.stop() }
        try await pool.query("SELECT 1")
        proxy.blackhole()
        let error = await Self.failure { try await pool.query("SELECT 1") }
        #expect(error?.code == .timeout)
        // Still cut off, yet the only slot comes back: nothing stays blocked for ever.
        try await eventually("the pool holds no connection", timeout: Self.hangGuard) { pool.statistics.open == 0 }
        proxy.resume()
        try await eventually("the pool answers again", timeout: Self.hangGuard) { (try? await pool.query("SELECT 1")) != nil }
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
                        let deadline = ContinuousClock.now + Self.hangGuard
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
        try await eventually("the proxy has no connection left", timeout: Self.hangGuard) { proxy.connectionCount == 0 }
        for value in 1 ... idleConnections + 1 {
            try await pool.query("INSERT INTO t VALUES (\(value))", idempotent: false)
        }
        #expect(try await pool.query("SELECT count(*) FROM t").first?.int(0) as Int? == idleConnections + 1)
        await pool.shutdown()
    }

    @Test("an unreachable database: twenty commands in a row all fail, all but the first at once, without trying; it recovers")
    func unreachableFailsFast() async throws {
        // The pool's clock stands still: the back-off after the first failure lasts until the
        // test moves it on, however slowly this machine runs the twenty calls.
        let clock = ManualClock()
        let (pool, proxy) = try Self.proxiedPool(maxConnections: 4, clock: clock)
        defer { proxy.stop() }
        proxy.blackhole()
        var errors: [PostgresError?] = []
        for _ in 0 ..< 20 {
            errors.append(await Self.failure { try await pool.query("SELECT 1") })
        }
        // The first call tried: its connect hung, and its deadline answered it.
        #expect(errors.first??.code == .timeout)
        // The other nineteen failed without trying, and at once: the pool answers "not trying"
        // only when a call asks (a queued call would have waited for one of four slots, and
        // at most one is taken).
        #expect(errors.dropFirst().allSatisfy { $0?.code == .connectionFailure && $0?.message == Self.notTrying }, "\(errors)")
        #expect(pool.connectAttempts == 1)
        #expect(proxy.acceptedCount == 1)
        proxy.resume()
        clock.advance(by: .seconds(5))
        try await eventually("the pool answers again", timeout: Self.hangGuard) { (try? await pool.query("SELECT 1")) != nil }
        await pool.shutdown()
    }

    @Test("a refused connection backs off: while it lasts, connects fail at once without trying; then it tries again")
    func refusedBacksOff() async throws {
        var configuration = PostgresConfiguration(connectionString: try Fixture.url(port: 1))
        configuration.commandTimeout = .seconds(1)
        let clock = ManualClock()
        let pool = PostgresPool(configuration: configuration, maxConnections: 2, now: ManualClock.reading(clock))
        /// One call, not retried, so that each answer is the one attempt's.
        func call() async -> String? {
            let error = await Self.failure { try await pool.query("SELECT 1", idempotent: false) }
            #expect(error?.code == .connectionFailure)
            return error?.message
        }
        let refused = await call()
        #expect(refused != nil && refused != Self.notTrying)
        #expect(pool.connectAttempts == 1)
        // Within the back-off (100 ms after the failure), calls fail without trying.
        for _ in 0 ..< 4 { #expect(await call() == Self.notTrying) }
        clock.advance(by: .milliseconds(99))
        #expect(await call() == Self.notTrying)
        #expect(pool.connectAttempts == 1)
        // Once it has passed, the pool tries again; failing again, it backs off twice as long.
        clock.advance(by: .milliseconds(1))
        #expect(await call() == refused)
        #expect(pool.connectAttempts == 2)
        clock.advance(by: .milliseconds(199))
        #expect(await call() == Self.notTrying)
        clock.advance(by: .milliseconds(1))
        #expect(await call() == refused)
        #expect(pool.connectAttempts == 3)
        #expect(pool.statistics.open == 0)
        await pool.shutdown()
    }
}
