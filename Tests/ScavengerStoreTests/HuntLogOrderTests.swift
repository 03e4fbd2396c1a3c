import Postgres
import ScavengerCore
import ScavengerStore
import ScavengerTestSupport
import Testing

/// The hunts' change log with writers that commit side by side and positions given after the
/// commit (`db/0037`): a writer takes no lock of the log, a numbering numbers what is committed,
/// so a reader sees only complete prefixes and never waits for a writer.
@Suite("The hunts' change log: parallel commits, numbered after them, complete prefixes", .timeLimit(.minutes(2)))
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

    @Test("a write that has logged and not committed holds back neither another's commit nor any reader; it is numbered after the one that committed first, and a rollback leaves no gap")
    func readersSeeCompletePrefixes() async throws {
        let (configuration, pool, db) = try await Self.migratedStore()
        let start = Int(try await db.lastHuntChange().seq)

        // First writer: logs and stays open.
        let first = try PostgresConnection.connect(configuration)
        try first.query("BEGIN")
        try first.query("SELECT log_hunt_changes(\(Self.entry("first"))::jsonb)")
        // Second writer: logs after it and commits while the first is open.
        let second = try PostgresConnection.connect(configuration)
        try second.query("SELECT log_hunt_changes(\(Self.entry("second"))::jsonb)")

        // A reader numbers what is committed and reads it, without waiting for the first.
        let read = try await db.huntChanges(after: start, limit: 10).changes
        #expect(read.map(\.hunt) == ["second"])
        #expect(read.map(\.seq) == [start + 1])
        #expect(Int(try await db.lastHuntChange().seq) == start + 1)
        try first.query("COMMIT")
        let later = try await db.huntChanges(after: start + 1, limit: 10).changes
        #expect(later.map(\.hunt) == ["first"])
        #expect(later.map(\.seq) == [start + 2])

        // A writer that rolls back was never numbered: the positions stay gap-free.
        try first.query("BEGIN")
        try first.query("SELECT log_hunt_changes(\(Self.entry("undone"))::jsonb)")
        try second.query("SELECT log_hunt_changes(\(Self.entry("third"))::jsonb)")
        try first.query("ROLLBACK")
        let afterRollback = try await db.huntChanges(after: start + 2, limit: 10).changes
        #expect(afterRollback.map(\.hunt) == ["third"])
        #expect(afterRollback.map(\.seq) == [start + 3])
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
        _ = try await db.huntChanges(after: 0, limit: 10)  // numbers it
        let place = try await db.lastHuntChange()
        #expect(place.seq > 0)
        #expect(try await db.huntChanges(after: Int(place.seq), stamp: place.stamp, limit: 10).placeHolds)
        // Nothing after the place, and a stamp of another row: the page says so even when empty.
        #expect(try await !db.huntChanges(after: Int(place.seq), stamp: place.stamp &+ 1, limit: 10).placeHolds)
        // The row lost, its position given to another change.
        try await pool.query("DELETE FROM hunt_changes WHERE seq = \(place.seq)")
        try await pool.query("""
            INSERT INTO hunt_changes (seq, hunt_id, kind) VALUES (\(place.seq), 'other', 'hunt')
            """)
        let page = try await db.huntChanges(after: Int(place.seq), stamp: place.stamp, limit: 10)
        #expect(!page.placeHolds && page.changes.isEmpty)
        // A reader that asks without a stamp (a client's WATCH … SINCE) is not checked.
        #expect(try await db.huntChanges(after: Int(place.seq), limit: 10).placeHolds)
        await pool.shutdown()
    }
}
