import Foundation
import Postgres
import Synchronization
import ScavengerStore
import ScavengerTestSupport
import Testing

@Suite("Migrator against PostgreSQL", .timeLimit(.minutes(2)))
struct MigratorTests {
    @Test func appliesEveryProjectMigrationInOrderAndRecordsThem() async throws {
        let files = try projectMigrationFiles()
        #expect(!files.isEmpty)
        let migrator = try Migrator(directory: TestDatabase.migrationsDirectory)
        #expect(migrator.migrations.count == files.count)
        let versions = migrator.migrations.map(\.version)
        #expect(versions == versions.sorted())
        #expect(versions.first == 1)

        let pool = try TestDatabase.isolatedPool()
        let outcome = try await migrator.migrate(pool)
        #expect(outcome.applied == versions)
        #expect(outcome.alreadyApplied == 0)

        let recorded = try await pool.recordedMigrations()
        #expect(recorded.map(\.version) == versions)
        #expect(recorded.map(\.name) == migrator.migrations.map(\.name))
        #expect(recorded.map(\.checksum) == migrator.migrations.map(\.checksum))
        #expect(try await Migrator.appliedVersions(pool) == versions)
        #expect(recorded.first?.name == "users_and_sessions")
        await pool.shutdown()
    }

    @Test func aSecondRunAppliesNothing() async throws {
        let migrator = try Migrator(directory: TestDatabase.migrationsDirectory)
        let pool = try TestDatabase.isolatedPool()
        _ = try await migrator.migrate(pool)
        let before = try await pool.query("SELECT version, applied_at::text FROM schema_migrations ORDER BY version")
            .map { "\(try $0.int(0) as Int) \(try $0.string(1) as String)" }
        let again = try await migrator.migrate(pool)
        #expect(again.applied.isEmpty)
        #expect(again.alreadyApplied == migrator.migrations.count)
        let after = try await pool.query("SELECT version, applied_at::text FROM schema_migrations ORDER BY version")
            .map { "\(try $0.int(0) as Int) \(try $0.string(1) as String)" }
        #expect(after == before)
        await pool.shutdown()
    }

    @Test func usersAndSessionsTablesWork() async throws {
        let pool = try TestDatabase.isolatedPool()
        _ = try await Migrator(directory: TestDatabase.migrationsDirectory).migrate(pool)
        #expect(try await pool.tableExists("users"))
        #expect(try await pool.tableExists("sessions"))

        let inserted = try await pool.query("""
            INSERT INTO users (name, email, password_hash) VALUES (\("Alice"), \("alice@example.com"), \("$argon2id$x"))
            RETURNING id, role
            """)
        let alice = try #require(inserted.first)
        let aliceID: Int = try alice.int("id")
        #expect(aliceID > 0)
        #expect(try alice.string("role") as String == "user")

        // Names and emails are unique regardless of case.
        let duplicateName = await #expect(throws: PostgresError.self) {
            try await pool.query("""
                INSERT INTO users (name, email, password_hash) VALUES (\("ALICE"), \("other@example.com"), \("h"))
                """)
        }
        #expect(duplicateName?.code == .uniqueViolation)
        #expect(duplicateName?.constraint == "users_name_unique")
        let duplicateEmail = await #expect(throws: PostgresError.self) {
            try await pool.query("""
                INSERT INTO users (name, email, password_hash) VALUES (\("bob"), \("Alice@Example.COM"), \("h"))
                """)
        }
        #expect(duplicateEmail?.code == .uniqueViolation)
        #expect(duplicateEmail?.constraint == "users_email_unique")

        // The name and role rules are the database's.
        for (name, role) in [("no spaces", "user"), ("ab", "user"), ("carol", "root")] {
            let error = await #expect(throws: PostgresError.self) {
                try await pool.query("""
                    INSERT INTO users (name, email, password_hash, role) VALUES (\(name), \("c@example.com"), \("h"), \(role))
                    """)
            }
            #expect(error?.code == .checkViolation, "\(name) \(role)")
        }

        // Sessions belong to a user, hold a 32-byte hash and go with the user.
        let token = [UInt8](repeating: 7, count: 32)
        try await pool.query("""
            INSERT INTO sessions (token_hash, user_id, expires_at) VALUES (\(token), \(aliceID), now() + interval '1 day')
            """)
        let orphan = await #expect(throws: PostgresError.self) {
            try await pool.query("""
                INSERT INTO sessions (token_hash, user_id, expires_at)
                VALUES (\([UInt8](repeating: 8, count: 32)), \(aliceID + 1000), now())
                """)
        }
        #expect(orphan?.code == .foreignKeyViolation)
        let shortHash = await #expect(throws: PostgresError.self) {
            try await pool.query("""
                INSERT INTO sessions (token_hash, user_id, expires_at) VALUES (\([UInt8](repeating: 9, count: 31)), \(aliceID), now())
                """)
        }
        #expect(shortHash?.code == .checkViolation)
        try await pool.query("DELETE FROM users WHERE id = \(aliceID)")
        #expect(try await pool.query("SELECT 1 FROM sessions").isEmpty)
        await pool.shutdown()
    }

    @Test func concurrentMigratorsOnOneSchemaApplyEachMigrationOnce() async throws {
        let configuration = try TestDatabase.isolatedConfiguration()
        let migrator = try Migrator(directory: TestDatabase.migrationsDirectory)
        let pools = (0 ..< 3).map { _ in PostgresPool(configuration: configuration, maxConnections: 1) }
        let outcomes = try await withThrowingTaskGroup(of: Migrator.Outcome.self) { group in
            for pool in pools {
                group.addTask { try await migrator.migrate(pool) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let versions = migrator.migrations.map(\.version)
        #expect(outcomes.count == 3)
        #expect(outcomes.flatMap(\.applied).sorted() == versions)
        #expect(outcomes.map(\.alreadyApplied).reduce(0, +) == 2 * versions.count)
        // Exactly one run did the work (the lock is held for the whole run).
        #expect(outcomes.filter { !$0.applied.isEmpty }.count == 1)
        #expect(try await pools[0].recordedMigrations().map(\.version) == versions)
        for pool in pools { await pool.shutdown() }
    }

    @Test func concurrentSlowMigratorsWaitForEachOther() async throws {
        // The runs overlap for sure, by construction rather than by sleeping: the first migration
        // waits for a lock this test holds until one run is inside it and the other waits for the
        // migrator's lock. Without that lock the second run would fail on `CREATE TABLE` or on
        // the primary key of schema_migrations.
        let key = Int64.random(in: 1 ... 1 << 40)
        let migrator = Migrator(migrations: [
            Migration(version: 1, name: "first", sql: "SELECT pg_advisory_xact_lock(\(key)); CREATE TABLE first_table (a int);"),
            Migration(version: 2, name: "second", sql: "CREATE TABLE second_table (b int);"),
        ])
        let (configuration, holder) = try MigrationHold.take(key)
        let a = PostgresPool(configuration: configuration, maxConnections: 1)
        let b = PostgresPool(configuration: configuration, maxConnections: 1)
        let runs = [Task { try await migrator.migrate(a) }, Task { try await migrator.migrate(b) }]
        let outcomes: [Migrator.Outcome]
        do {
            try await eventually("one run waits inside its first migration, the other for the migrator's lock") {
                try holder.lockWaits() == 2
            }
            try holder.release()
            outcomes = [try await runs[0].value, try await runs[1].value]
        } catch {
            try? holder.release()
            for run in runs { _ = try? await run.value }
            throw error
        }
        #expect(outcomes.flatMap(\.applied).sorted() == [1, 2])
        #expect(outcomes.map(\.alreadyApplied).sorted() == [0, 2])
        let counts = try await a.query("SELECT version, count(*) FROM schema_migrations GROUP BY version ORDER BY version")
        #expect(try counts.map { [try $0.int(0) as Int, try $0.int(1) as Int] } == [[1, 1], [2, 1]])
        #expect(try await a.tableExists("first_table"))
        #expect(try await a.tableExists("second_table"))
        await a.shutdown()
        await b.shutdown()
    }

    @Test func migrationsInDifferentSchemasDoNotShareTheLock() async throws {
        // Each test schema has its own lock key: while a run in one schema is held inside its
        // migration (by a lock this test holds), a run in another schema goes through. Were the
        // lock shared, it would still be waiting when the hang guard gives up.
        let key = Int64.random(in: 1 ... 1 << 40)
        let slow = Migrator(migrations: [Migration(version: 1, name: "slow", sql: "SELECT pg_advisory_xact_lock(\(key));")])
        let fast = Migrator(migrations: [Migration(version: 1, name: "fast", sql: "CREATE TABLE f (a int);")])
        let (slowConfiguration, holder) = try MigrationHold.take(key)
        let slowPool = PostgresPool(configuration: slowConfiguration, maxConnections: 1)
        let fastPool = try TestDatabase.isolatedPool(maxConnections: 1)
        let slowRun = Task { try await slow.migrate(slowPool) }
        let fastFinished = MigrationHold.Flag()
        var fastRun: Task<Migrator.Outcome, any Error>?
        do {
            try await eventually("the slow run waits inside its migration") { try holder.lockWaits() == 1 }
            fastRun = Task {
                defer { fastFinished.set() }
                return try await fast.migrate(fastPool)
            }
            // A blocked migration cannot be cancelled: the hold is let go whatever happens here.
            try await eventually("the run in the other schema finishes while the slow one is held") { fastFinished.isSet }
        } catch {
            try? holder.release()
            _ = try? await slowRun.value
            _ = try? await fastRun?.value
            throw error
        }
        try holder.release()
        #expect(try await fastRun?.value.applied == [1])
        #expect(try await slowRun.value.applied == [1])
        await slowPool.shutdown()
        await fastPool.shutdown()
    }

    @Test func aMigrationChangedAfterItRanIsRefused() async throws {
        let pool = try TestDatabase.isolatedPool()
        let original = Migration(version: 1, name: "create_things", sql: "CREATE TABLE things (a int);")
        _ = try await Migrator(migrations: [original]).migrate(pool)

        var edited = original
        edited.sql = "CREATE TABLE things (a int, b int);"
        #expect(edited.checksum != original.checksum)
        let next = Migration(version: 2, name: "more", sql: "CREATE TABLE more (a int);")
        let error = await #expect(throws: StoreError.self) {
            try await Migrator(migrations: [edited, next]).migrate(pool)
        }
        let message = try #require(error?.migrationMessage, "expected .migration, got \(String(describing: error))")
        #expect(message.contains("1_create_things"))
        // Nothing after the refused migration ran.
        #expect(try await Migrator.appliedVersions(pool) == [1])
        #expect(try await !pool.tableExists("more"))
        // The unchanged text is still accepted.
        #expect(try await Migrator(migrations: [original, next]).migrate(pool).applied == [2])
        await pool.shutdown()
    }

    @Test func aFailingMigrationLeavesNothingBehind() async throws {
        let configuration = try TestDatabase.isolatedConfiguration()
        let pool = PostgresPool(configuration: configuration, maxConnections: 1)
        let first = Migration(version: 1, name: "fine", sql: "CREATE TABLE fine (a int);")
        let broken = Migration(version: 2, name: "broken", sql: "CREATE TABLE t(a int); SELECT 1/0;")
        let third = Migration(version: 3, name: "later", sql: "CREATE TABLE later (a int);")
        let error = await #expect(throws: StoreError.self) {
            try await Migrator(migrations: [first, broken, third]).migrate(pool)
        }
        let message = try #require(error?.migrationMessage, "expected .migration, got \(String(describing: error))")
        #expect(message.contains("2_broken"))
        #expect(message.contains("division by zero"))

        #expect(try await Migrator.appliedVersions(pool) == [1])
        #expect(try await pool.tableExists("fine"))
        #expect(try await !pool.tableExists("t"))
        #expect(try await !pool.tableExists("later"))
        // The connection went back to the pool clean, and the lock was released: another
        // session can take it.
        #expect(pool.statistics.idle == 1)
        #expect(try await pool.withConnection { $0.isHealthy && !$0.isInTransaction })
        let other = try PostgresConnection.connect(configuration)
        let locked = try other.query("SELECT pg_try_advisory_lock(hashtext('scavenger.migrate.' || current_schema()))")
        #expect(try locked.first?.bool(0) as Bool? == true)
        try other.query("SELECT pg_advisory_unlock(hashtext('scavenger.migrate.' || current_schema()))")

        // Once fixed, the rest applies.
        let fixed = Migration(version: 2, name: "broken", sql: "CREATE TABLE t(a int);")
        let outcome = try await Migrator(migrations: [first, fixed, third]).migrate(pool)
        #expect(outcome.applied == [2, 3])
        #expect(outcome.alreadyApplied == 1)
        await pool.shutdown()
    }

    @Test func theMigrationsTableIsCreatedEvenWithNothingToApply() async throws {
        let pool = try TestDatabase.isolatedPool()
        let outcome = try await Migrator(migrations: []).migrate(pool)
        #expect(outcome.applied.isEmpty)
        #expect(outcome.alreadyApplied == 0)
        #expect(try await pool.tableExists("schema_migrations"))
        #expect(try await Migrator.appliedVersions(pool).isEmpty)
        await pool.shutdown()
    }

    @Test func migrationsRunInVersionOrderWhateverTheGivenOrder() async throws {
        let pool = try TestDatabase.isolatedPool()
        let migrator = Migrator(migrations: [
            Migration(version: 3, name: "c", sql: "ALTER TABLE base ADD COLUMN c int;"),
            Migration(version: 1, name: "a", sql: "CREATE TABLE base (a int);"),
            Migration(version: 2, name: "b", sql: "ALTER TABLE base ADD COLUMN b int;"),
        ])
        #expect(migrator.migrations.map(\.version) == [1, 2, 3])
        #expect(try await migrator.migrate(pool).applied == [1, 2, 3])
        let columns = try await pool.query("SELECT * FROM base").columns
        #expect(columns == ["a", "b", "c"])
        await pool.shutdown()
    }

    @Test func unreachableDatabaseIsUnavailable() async throws {
        var components = try #require(URLComponents(string: TestDatabase.url()))
        components.port = 1
        let pool = PostgresPool(configuration: PostgresConfiguration(connectionString: try #require(components.string)))
        let error = await #expect(throws: StoreError.self) {
            try await Migrator(migrations: []).migrate(pool)
        }
        if case .unavailable = error {} else {
            Issue.record("expected .unavailable, got \(String(describing: error))")
        }
        await pool.shutdown()
    }
}

/// A lock a test holds to keep migrations waiting inside a run until it lets go, and a way to
/// see who waits: a state to wait for, instead of a sleep.
struct MigrationHold {
    let connection: PostgresConnection
    let key: Int64
    let applicationName: String

    /// A fresh schema whose sessions carry a name of their own, and the lock `key` taken on a
    /// connection to it.
    static func take(_ key: Int64) throws -> (PostgresConfiguration, MigrationHold) {
        var configuration = try TestDatabase.isolatedConfiguration()
        configuration.applicationName = TestDatabase.uniqueName("migration_hold")
        let connection = try PostgresConnection.connect(configuration)
        try connection.query("SELECT pg_advisory_lock(\(key))")
        return (configuration, MigrationHold(connection: connection, key: key, applicationName: configuration.applicationName))
    }

    /// How many of the schema's sessions wait for an advisory lock (this one's or the migrator's).
    func lockWaits() throws -> Int {
        try connection.query("""
            SELECT count(*) FROM pg_stat_activity
            WHERE application_name = \(applicationName) AND wait_event_type = 'Lock' AND wait_event = 'advisory'
            """)[0].int(0)
    }

    func release() throws {
        try connection.query("SELECT pg_advisory_unlock(\(key))")
    }

    /// Set once, read from other tasks.
    final class Flag: Sendable {
        private let value = Mutex(false)
        var isSet: Bool { value.withLock { $0 } }
        func set() { value.withLock { $0 = true } }
    }
}
