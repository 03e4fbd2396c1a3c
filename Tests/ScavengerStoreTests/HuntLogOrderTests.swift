import Postgres
import ScavengerCore
import ScavengerStore
import ScavengerTestSupport
import Testing

/// The hunts' change log with writers that commit side by side (`db/0020`): a write holds the
/// log's lock shared, a reader exclusively, so a reader sees only complete prefixes of the log.
@Suite("The hunts' change log: parallel commits, complete prefixes", .timeLimit(.minutes(2)))
struct HuntLogOrderTests {
    /// One `hunt` entry of `hunt`, as the log's function takes it.
    static func entry(_ hunt: String) -> String {
        #"[{"hunt":"\#(hunt)","kind":"hunt","payload":{}}]"#
    }

    /// A migrated schema of its own, a pool on it and the store.
    static func migratedStore() async throws -> (PostgresConfiguration, PostgresPool, Database) {
        let configuration = try TestDatabase.isolatedConfiguration()
        try await TestDatabase.migrate(configuration)
        let pool = PostgresPool(configuration: configuration, maxConnections: 4)
        return (configuration, pool, Database(pool: pool))
    }

    /// Waits (polling the server's own view, not the clock) until a backend waits for the
    /// log's lock.
    static func untilSomeoneWaitsForTheLog(_ pool: PostgresPool) async throws {
        while try await pool.query("""
            SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND classid = 7468 AND NOT granted
            """).isEmpty {
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    @Test("a write that has logged but not committed lets another commit, and holds readers back until it ends: they never see a hole")
    func readersSeeCompletePrefixes() async throws {
        let (configuration, pool, db) = try await Self.migratedStore()
        let start = Int(try await db.lastHuntChange().seq)

        // First writer: logs (position start+1) and stays open.
        let first = try PostgresConnection.connect(configuration)
        try first.query("BEGIN")
        try first.query("SELECT log_hunt_changes(\(Self.entry("first"))::jsonb)")
        // Second writer: logs after it (start+2) and commits while the first is open.
        let second = try PostgresConnection.connect(configuration)
        let secondAt: Int = try second.query("SELECT log_hunt_changes(\(Self.entry("second"))::jsonb) AS seq")[0].int("seq")
        #expect(secondAt == start + 2)

        // Readers wait for the first writer: each read must not return "second" without "first".
        let read = Task { try await db.huntChanges(after: start, limit: 10).changes.map(\.hunt) }
        try await Self.untilSomeoneWaitsForTheLog(pool)
        let through = Task { Int(try await db.lastHuntChange().seq) }
        try first.query("COMMIT")
        #expect(try await read.value == ["first", "second"])
        #expect(try await through.value == start + 2)

        // A writer that rolls back leaves a gap in the numbers, never a hole in what is read.
        try first.query("BEGIN")
        try first.query("SELECT log_hunt_changes(\(Self.entry("undone"))::jsonb)")
        try second.query("SELECT log_hunt_changes(\(Self.entry("third"))::jsonb)")
        let afterRollback = Task { try await db.huntChanges(after: start + 2, limit: 10).changes.map(\.hunt) }
        try await Self.untilSomeoneWaitsForTheLog(pool)
        try first.query("ROLLBACK")
        #expect(try await afterRollback.value == ["third"])
        await pool.shutdown()
    }

    @Test("a committed hunt write wakes every listener, from outside its transaction; a write that logs nothing wakes none")
    func committedWritesWakeListeners() async throws {
        let (configuration, pool, db) = try await Self.migratedStore()
        let (_, hunt) = try await db.hostAndHunt()
        // Its own connection, listening: other tests share the database and its channels, so
        // only wake-ups naming this store (its writer id) count.
        let listener = try PostgresConnection.connect(configuration)
        try listener.query("LISTEN \(unescaped: ChangeListener.huntsChannel)")
        let writer = db.writerID
        func ours(waitingMilliseconds: Int) throws -> Int {
            let heard = try listener.waitForNotifications(timeoutMilliseconds: waitingMilliseconds)
            return heard.filter { $0.payload == writer }.count
        }

        // A refused write logs nothing and commits nothing; then a hint is logged and committed.
        struct Refused: Error {}
        await #expect(throws: StoreError.self) {
            _ = try await db.addHint(huntID: hunt.id, text: "no") { _, _ in throw Refused() }
        }
        _ = try await db.addHint(huntID: hunt.id, text: "By the river") { _, _ in }
        // The hint's wake-up arrives (from outside its transaction, which has committed), and it
        // is the only one: the refusal sent none.
        var heard = 0
        while heard == 0 { heard += try ours(waitingMilliseconds: 1_000) }
        heard += try ours(waitingMilliseconds: 200)
        #expect(heard == 1)
        await pool.shutdown()
    }

    @Test("a place holds at the start, with no stamp, when its row has the stamp, or when expire trimmed through it", arguments: [
        (0, 5, nil, 0, true), (7, nil, nil, 0, true), (7, 5, 5, 0, true), (7, 5, 6, 0, false), (7, 5, nil, 3, false),
        (7, 5, nil, 7, true), (7, 5, nil, 9, true),
    ] as [(Int64, Int64?, Int64?, Int64, Bool)])
    func placeHolds(seq: Int64, stamp: Int64?, found: Int64?, trimmedThrough: Int64, holds: Bool) {
        #expect(LogPlace.holds(seq: seq, stamp: stamp, found: found, trimmedThrough: trimmedThrough) == holds)
    }

    @Test("the row at a reader's place given to another change (a failover) is found out; the right one is not")
    func rewrittenPlaceIsFoundOut() async throws {
        let (_, pool, db) = try await Self.migratedStore()
        try await pool.query("SELECT log_hunt_changes(\(Self.entry("first"))::jsonb)")
        let place = try await db.lastHuntChange()
        #expect(place.seq > 0)
        #expect(try await db.huntChanges(after: Int(place.seq), stamp: place.stamp, limit: 10).placeHolds)
        // Nothing after the place, and a stamp of another row: the page says so even when empty.
        #expect(try await !db.huntChanges(after: Int(place.seq), stamp: place.stamp &+ 1, limit: 10).placeHolds)
        // The row lost, its position given to another change.
        try await pool.query("DELETE FROM hunt_changes WHERE seq = \(place.seq)")
        try await pool.query("""
            INSERT INTO hunt_changes (seq, hunt_id, kind) OVERRIDING SYSTEM VALUE VALUES (\(place.seq), 'other', 'hunt')
            """)
        let page = try await db.huntChanges(after: Int(place.seq), stamp: place.stamp, limit: 10)
        #expect(!page.placeHolds && page.changes.isEmpty)
        // A reader that asks without a stamp (a client's WATCH … SINCE) is not checked.
        #expect(try await db.huntChanges(after: Int(place.seq), limit: 10).placeHolds)
        await pool.shutdown()
    }
}
