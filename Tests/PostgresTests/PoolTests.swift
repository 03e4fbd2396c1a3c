import Dispatch
import Synchronization
@testable import Postgres
import ScavengerTestSupport
import Testing

@Suite("PostgresPool", .timeLimit(.minutes(2)))
struct PoolTests {
    struct Abort: Error {}

    /// A pool on a fresh schema whose sessions carry an application name of their own, so
    /// that a test can find (and terminate) exactly its own backends.
    static func namedPool(maxConnections: Int = 4) throws -> (PostgresPool, applicationName: String) {
        var configuration = try TestDatabase.isolatedConfiguration()
        configuration.applicationName = TestDatabase.uniqueName("pgtest_pool")
        return (PostgresPool(configuration: configuration, maxConnections: maxConnections), configuration.applicationName)
    }

    /// Terminates every backend with this application name from a separate session, waiting
    /// until each is gone; returns how many there were.
    @discardableResult
    static func terminateBackends(applicationName: String) throws -> Int {
        let admin = try PostgresConnection.connect(PostgresConfiguration(connectionString: try TestDatabase.url()))
        let rows = try admin.query("""
            SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity
            WHERE application_name = \(applicationName) AND pid <> pg_backend_pid()
            """)
        for row in rows {
            #expect(try row.bool(0) as Bool)
        }
        return rows.count
    }

    @Test func queriesRunAndConnectionsAreReused() async throws {
        let pool = try TestDatabase.isolatedPool(maxConnections: 4)
        let first = try await pool.withConnection { $0.backendPID }
        let second = try await pool.withConnection { $0.backendPID }
        #expect(first == second)
        #expect(pool.statistics.open == 1)
        #expect(pool.statistics.idle == 1)
        let rows = try await pool.query("SELECT \(20)::int + \(22)::int AS answer")
        #expect(try rows.first?.int("answer") as Int? == 42)
        await pool.shutdown()
    }

    @Test("a call that finds no connection free is counted as a wait, with the time it waited")
    func waitsAreCounted() async throws {
        // The pool's clock moves only when the test moves it, so the wait is known exactly.
        let clock = ManualClock()
        let pool = PostgresPool(
            configuration: try TestDatabase.isolatedConfiguration(), maxConnections: 1, now: ManualClock.reading(clock))
        _ = try await pool.query("SELECT 1")
        let before = pool.waitStatistics
        #expect(before.waiting == 0 && before.waits == 0 && before.waited == .zero)
        // The holder keeps the only connection until released, so the second call must queue
        // however slowly this host runs the tasks.
        let release = DispatchSemaphore(value: 0)
        let holding = Task { try await pool.withConnection { _ in release.wait() } }
        try await eventually("the holder has the connection", timeout: .seconds(30)) { pool.statistics.idle == 0 }
        let queued = Task { try await pool.query("SELECT 2") }
        try await eventually("the second call queues", timeout: .seconds(30)) { pool.waitStatistics.waiting == 1 }
        #expect(pool.waitStatistics.waits == 1)
        clock.advance(by: .milliseconds(150))
        release.signal()
        _ = try await holding.value
        _ = try await queued.value
        let after = pool.waitStatistics
        #expect(after == PostgresPool.WaitStatistics(waiting: 0, waits: 1, waited: .milliseconds(150)))
        await pool.shutdown()
    }

    @Test func moreTasksThanConnectionsAllSucceed() async throws {
        let maxConnections = 4
        let pool = try TestDatabase.isolatedPool(maxConnections: maxConnections)
        try await pool.query("CREATE TABLE hits (task int PRIMARY KEY, pid int NOT NULL)")
        let results = try await withThrowingTaskGroup(of: (pid: Int, open: Int).self) { group in
            for task in 0 ..< 50 {
                group.addTask {
                    try await pool.withConnection { connection in
                        let openDuring = pool.statistics.open
                        try connection.query("SELECT pg_sleep(0.01)")
                        try connection.query("INSERT INTO hits VALUES (\(task), pg_backend_pid())")
                        return (connection.backendPID, max(openDuring, pool.statistics.open))
                    }
                }
            }
            var results: [(pid: Int, open: Int)] = []
            for try await result in group {
                results.append(result)
                #expect(pool.statistics.open <= maxConnections)
            }
            return results
        }
        #expect(results.count == 50)
        #expect(results.allSatisfy { $0.open >= 1 && $0.open <= maxConnections })
        #expect(Set(results.map(\.pid)).count <= maxConnections)
        let stored = try await pool.query("SELECT count(*), count(DISTINCT pid) FROM hits")
        let row = try #require(stored.first)
        #expect(try row.int(0) as Int == 50)
        #expect((try row.int(1) as Int) <= maxConnections)
        let statistics = pool.statistics
        #expect(statistics.open <= maxConnections)
        #expect(statistics.idle == statistics.open)
        await pool.shutdown()
    }

    @Test func transactionCommitsOnReturn() async throws {
        let pool = try TestDatabase.isolatedPool()
        try await pool.query("CREATE TABLE t (v text)")
        let value = try await pool.transaction { connection in
            try connection.query("INSERT INTO t VALUES (\("kept"))")
            return "done"
        }
        #expect(value == "done")
        let rows = try await pool.query("SELECT v FROM t")
        #expect(try rows.map { try $0.string(0) as String } == ["kept"])
        await pool.shutdown()
    }

    @Test func transactionRollsBackOnThrow() async throws {
        let pool = try TestDatabase.isolatedPool()
        try await pool.query("CREATE TABLE t (v text)")
        await #expect(throws: Abort.self) {
            try await pool.transaction { connection in
                try connection.query("INSERT INTO t VALUES (\("lost"))")
                throw Abort()
            }
        }
        #expect(try await pool.query("SELECT v FROM t").isEmpty)
        // The connection went back clean and is reused.
        #expect(pool.statistics.open == 1)
        #expect(try await pool.withConnection { !$0.isInTransaction && $0.isHealthy })
        await pool.shutdown()
    }

    @Test("a transaction the server ends with a deadlock or a serialization failure runs again from the start, and is counted", arguments: ["40P01", "40001"])
    func transactionRetriedAfterDeadlock(sqlState: String) async throws {
        let pool = try TestDatabase.isolatedPool()
        try await pool.query("CREATE TABLE t (v integer)")
        let runs = Atomic<Int>(0)
        let value = try await pool.transaction { connection in
            let run = runs.add(1, ordering: .relaxed).newValue
            try connection.query("INSERT INTO t VALUES (\(run))")
            if run < 3 {
                try connection.execute(script: "DO $$ BEGIN RAISE EXCEPTION 'made to fail' USING ERRCODE = '\(sqlState)'; END $$")
            }
            return run
        }
        #expect(value == 3)
        // Only the last run's row is written: the failed ones rolled back whole.
        #expect(try await pool.query("SELECT v FROM t").map { try $0.int(0) as Int } == [3])
        #expect(pool.retryStatistics.retries == 2 && pool.retryStatistics.exhausted == 0)
        await pool.shutdown()
    }

    @Test("a transaction that keeps failing is given up after its tries, with the error; other errors are never tried again")
    func transactionRetriesAreBounded() async throws {
        var configuration = try TestDatabase.isolatedConfiguration()
        configuration.transactionAttempts = 4
        let pool = PostgresPool(configuration: configuration, maxConnections: 2)
        let runs = Atomic<Int>(0)
        await #expect(throws: PostgresError.self) {
            try await pool.transaction { connection in
                runs.add(1, ordering: .relaxed)
                try connection.execute(script: "DO $$ BEGIN RAISE EXCEPTION 'always' USING ERRCODE = '40P01'; END $$")
            }
        }
        #expect(runs.load(ordering: .relaxed) == 4)
        #expect(pool.retryStatistics.retries == 3 && pool.retryStatistics.exhausted == 1)
        await #expect(throws: PostgresError.self) {
            try await pool.transaction { connection in
                runs.add(1, ordering: .relaxed)
                try connection.execute(script: "DO $$ BEGIN RAISE EXCEPTION 'unique' USING ERRCODE = '23505'; END $$")
            }
        }
        #expect(runs.load(ordering: .relaxed) == 5)
        await pool.shutdown()
    }

    @Test("the back-off before each new try: 2 ms, doubling, at most 64 ms", arguments: [(1, 2_000), (2, 4_000), (3, 8_000), (6, 64_000), (20, 64_000)])
    func retryBackOff(attempt: Int, ceiling: Int64) {
        #expect(PostgresPool.retryBackOff(attempt: attempt) == ceiling)
    }

    @Test func aConnectionLeftInATransactionIsNotReused() async throws {
        let pool = try TestDatabase.isolatedPool()
        let leaked = try await pool.withConnection { connection in
            try connection.query("BEGIN")
            return connection.backendPID
        }
        #expect(pool.statistics.open == 0)
        let next = try await pool.withConnection { connection in
            (connection.backendPID, connection.isInTransaction)
        }
        #expect(next.0 != leaked)
        #expect(!next.1)
        await pool.shutdown()
    }

    @Test func aBrokenConnectionIsDiscarded() async throws {
        let pool = try TestDatabase.isolatedPool()
        let before = try await pool.withConnection { $0.backendPID }
        let error = await #expect(throws: PostgresError.self) {
            try await pool.withConnection { connection in
                try connection.query("SELECT pg_terminate_backend(pg_backend_pid())")
            }
        }
        #expect(error?.code == .connectionFailure)
        #expect(pool.statistics.open == 0)
        #expect(pool.statistics.idle == 0)
        let after = try await pool.withConnection { $0.backendPID }
        #expect(after != before)
        #expect(try await pool.query("SELECT 1").count == 1)
        await pool.shutdown()
    }

    @Test func idempotentQueryIsRetriedOnceAfterTheConnectionBroke() async throws {
        let (pool, applicationName) = try Self.namedPool()
        try await pool.query("CREATE TABLE t (v int)")
        #expect(pool.statistics.idle == 1)
        #expect(try Self.terminateBackends(applicationName: applicationName) == 1)
        // The idle connection is dead, the pool does not know yet: the read is retried.
        let rows = try await pool.query("SELECT count(*) FROM t", idempotent: true)
        #expect(try rows.first?.int(0) as Int? == 0)
        #expect(pool.statistics.open == 1)
        await pool.shutdown()
    }

    @Test func aWriteAfterTheIdleConnectionWasTerminatedRunsOnAFreshOne() async throws {
        let (pool, applicationName) = try Self.namedPool()
        try await pool.query("CREATE TABLE t (v int)")
        let before = try await pool.withConnection { $0.backendPID }
        #expect(try Self.terminateBackends(applicationName: applicationName) == 1)
        // The idle connection is dead: the pool sees it before handing it out, so the write
        // (never retried) runs on a new one.
        let after = try await pool.withConnection { connection in
            try connection.query("INSERT INTO t VALUES (1)")
            return connection.backendPID
        }
        #expect(after != before)
        #expect(try await pool.query("SELECT count(*) FROM t").first?.int(0) as Int? == 1)
        await pool.shutdown()
    }

    @Test func nonIdempotentQueryIsNotRetried() async throws {
        let pool = try TestDatabase.isolatedPool()
        try await pool.query("CREATE SEQUENCE s")
        // The statement's side effect (nextval is not rolled back) happens, then its connection
        // breaks: it must not run a second time.
        let error = await #expect(throws: PostgresError.self) {
            try await pool.query("SELECT nextval('s'), pg_terminate_backend(pg_backend_pid())", idempotent: false)
        }
        #expect(error?.code == .connectionFailure)
        #expect(pool.statistics.open == 0)
        #expect(try await pool.query("SELECT nextval('s')", idempotent: false).first?.int(0) as Int? == 2)
        await pool.shutdown()
    }

    @Test func retryAfterEveryIdleConnectionBroke() async throws {
        // What a PostgreSQL restart looks like: every idle connection in the pool is dead.
        let (pool, applicationName) = try Self.namedPool(maxConnections: 4)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0 ..< 4 {
                group.addTask {
                    // Hold each connection until all four are open.
                    try await pool.withConnection { connection in
                        let deadline = ContinuousClock.now + .seconds(20)
                        while pool.statistics.open < 4, ContinuousClock.now < deadline {
                            try connection.query("SELECT pg_sleep(0.02)")
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(pool.statistics.idle == 4)
        #expect(try Self.terminateBackends(applicationName: applicationName) == 4)
        // The documented contract: a read "is run once more on a fresh connection".
        let rows = try await pool.query("SELECT 1", idempotent: true)
        #expect(rows.count == 1)
        await pool.shutdown()
    }

    @Test func shutdownMakesLaterCallsFail() async throws {
        let pool = try TestDatabase.isolatedPool()
        try await pool.query("SELECT 1")
        await pool.shutdown()
        #expect(pool.statistics.open == 0)
        #expect(pool.statistics.idle == 0)
        let queryError = await #expect(throws: PostgresError.self) {
            try await pool.query("SELECT 1")
        }
        #expect(queryError?.code == .poolClosed)
        let connectionError = await #expect(throws: PostgresError.self) {
            try await pool.withConnection { $0.backendPID }
        }
        #expect(connectionError?.code == .poolClosed)
        let transactionError = await #expect(throws: PostgresError.self) {
            try await pool.transaction { $0.backendPID }
        }
        #expect(transactionError?.code == .poolClosed)
    }

    @Test("submitted calls answer through their completion; a completion may submit the next, which runs on the connection just handed back")
    func submittedCallsChain() async throws {
        let pool = try TestDatabase.isolatedPool(maxConnections: 2)
        let answers = await withCheckedContinuation { (done: CheckedContinuation<[Result<Int, any Error>], Never>) in
            let collected = Mutex<[Result<Int, any Error>]>([])
            @Sendable func next(_ round: Int) {
                pool.submit({ connection in
                    if round == 3 { throw Abort() }
                    return connection.backendPID
                }, completion: { result in
                    let count = collected.withLock { $0.append(result); return $0.count }
                    if count < 5 { next(round + 1) } else { done.resume(returning: collected.withLock { $0 }) }
                })
            }
            next(1)
        }
        #expect(answers.count == 5)
        #expect(throws: Abort.self) { try answers[2].get() }
        let pids = answers.enumerated().filter { $0.offset != 2 }.compactMap { try? $0.element.get() }
        #expect(pids.count == 4)
        #expect(Set(pids).count == 1, "one connection, handed back before each completion ran")
        #expect(pool.statistics.open == 1)
        await pool.shutdown()
    }

    @Test("a call submitted to a closed pool is answered before submit returns")
    func submitToAClosedPool() async throws {
        let pool = try TestDatabase.isolatedPool()
        await pool.shutdown()
        let answer = Mutex<Result<Int, any Error>?>(nil)
        pool.submit({ $0.backendPID }, completion: { result in answer.withLock { $0 = result } })
        let error = try #require(answer.withLock { $0 }).error as? PostgresError
        #expect(error?.code == .poolClosed)
    }

    @Test func shutdownFailsWaitersWhileACallRuns() async throws {
        let (pool, applicationName) = try Self.namedPool(maxConnections: 1)
        let admin = try PostgresConnection.connect(PostgresConfiguration(connectionString: try TestDatabase.url()))
        let running = Task {
            try await pool.withConnection { connection in
                try connection.query("SELECT pg_sleep(60)")
            }
        }
        // Wait until the only connection is busy in pg_sleep.
        var sleeper: Int?
        let deadline = ContinuousClock.now + .seconds(20)
        while sleeper == nil, ContinuousClock.now < deadline {
            let rows = try admin.query("""
                SELECT pid FROM pg_stat_activity
                WHERE application_name = \(applicationName) AND state = 'active' AND query LIKE '%pg_sleep%'
                """)
            sleeper = try rows.first?.int(0)
            if sleeper == nil { try await Task.sleep(for: .milliseconds(20)) }
        }
        let pid = try #require(sleeper)
        #expect(pool.statistics.open == 1)
        #expect(pool.statistics.idle == 0)

        let waiting = Task { try await pool.query("SELECT 1") }
        try await eventually("the call queues", timeout: .seconds(30)) { pool.waitStatistics.waiting == 1 }
        let shutdown = Task { await pool.shutdown() }
        // The waiter is failed at once, while the running call still holds the connection.
        let error = await #expect(throws: PostgresError.self) {
            try await waiting.value
        }
        #expect(error?.code == .poolClosed)

        // Let the running call end; shutdown waits for it, then the connection is closed.
        #expect(try admin.query("SELECT pg_cancel_backend(\(pid))").first?.bool(0) as Bool? == true)
        await shutdown.value
        let canceled = await #expect(throws: PostgresError.self) {
            try await running.value
        }
        #expect(canceled?.code == .queryCanceled)
        #expect(pool.statistics.open == 0)
    }

    @Test func unreachableDatabaseFailsAndFreesTheSlot() async throws {
        let pool = PostgresPool(
            configuration: PostgresConfiguration(connectionString: try Fixture.url(port: 1)), maxConnections: 1)
        for _ in 0 ..< 3 {
            let error = await #expect(throws: PostgresError.self) {
                try await pool.query("SELECT 1")
            }
            #expect(error?.code == .connectionFailure)
            #expect(pool.statistics.open == 0)
        }
        await pool.shutdown()
    }
}

extension Result {
    /// The failure, if this is one.
    var error: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
