import Logging
import Postgres
import ScavengerCore
@testable import ScavengerFeed
import ScavengerStore
import ScavengerTestSupport
import Testing

/// Start-up loads read from a standby (`--read-database-url`): the pages of pins and the users'
/// totals from the standby once it shows the load's place, the place and the log from the primary.
/// Here the "standby" is a second pool on the test database (a primary shows its own commits, so
/// it counts as caught up) or a server that cannot be reached; the streaming standby itself is
/// the fault-injection suite's (`scripts/chaos.sh`).
// The limit guards against a hang. The suite takes its TestEnvironment place before its tests start
// (`.environmentPlaces()`), so the limit does not count a full run's queue for one.
@Suite("Loads from a standby: the bulk there, the place and the log on the primary", .timeLimit(.minutes(5)), .environmentPlaces())
struct StandbyReadsTests {
    static let logger = Logger(label: "test-standby-reads")

    /// A feed on `environment`'s database whose loads may read from a pool on `url`.
    static func feed(_ environment: TestEnvironment, standby configuration: PostgresConfiguration) -> (Feed, PostgresPool) {
        let pool = PostgresPool(configuration: configuration, maxConnections: 2)
        let reads = StandbyReads(standby: Database(pool: pool), maximumWait: .seconds(2))
        return (Feed(database: Database(pool: environment.pool), logger: logger, standbyReads: reads), pool)
    }

    /// Writes `count` pins as another process; returns their author.
    static func writePins(_ count: Int, in environment: TestEnvironment) async throws -> (Database, Account) {
        let other = environment.otherProcess()
        let author = try await registerAlice(in: other)
        for n in 0 ..< count { _ = try await other.createPin(textPin("pin \(n)", by: author.id, lon: Double(n) / 10_000)) }
        return (other, author)
    }

    @Test("pins and rankings are read from a standby that shows the load's place, and the feed goes on from the primary's log")
    func loadsFromTheStandby() async throws {
        try await TestEnvironment.make().use { environment in
            let (other, author) = try await Self.writePins(30, in: environment)
            let (feed, standbyPool) = Self.feed(environment, standby: environment.configuration)
            #expect(try await feed.load() == 30)
            #expect(try await feed.hunts.load() >= 0)
            #expect(standbyPool.statistics.open > 0, "the pages and totals were read on the standby's pool")
            // From the place the load read, the log on the primary: a pin written since comes in.
            _ = try await other.createPin(textPin("after", by: author.id, lon: 0.01))
            try await feed.catchUp()
            #expect(feed.count == 31)
            await standbyPool.shutdown()
        }
    }

    @Test("a standby that cannot be reached is passed over: the load reads the primary")
    func unreachableStandby() async throws {
        try await TestEnvironment.make().use { environment in
            _ = try await Self.writePins(5, in: environment)
            // Port 1 on loopback: nothing listens there.
            let nowhere = PostgresConfiguration(connectionString: "postgresql://postgres@127.0.0.1:1/nothing", connectTimeoutSeconds: 2)
            let (feed, standbyPool) = Self.feed(environment, standby: nowhere)
            #expect(try await feed.load() == 5)
            #expect(try await feed.hunts.load() >= 0)
            #expect(standbyPool.statistics.open == 0)
            await standbyPool.shutdown()
        }
    }

    static let primary = PrimaryPlace(lsn: "0/3000060", systemIdentifier: 7_716_370_833_290_239_991, timeline: 2)

    /// A server offered as the standby, against ``primary``, and what a load does with it.
    static let verdicts: [(StandbyPlace, StandbyReads.Verdict)] = {
        let system = primary.systemIdentifier
        return [
            // A standby of the primary, caught up, and not yet.
            (StandbyPlace(systemIdentifier: system, inRecovery: true, timeline: 2, replayed: true), .read),
            (StandbyPlace(systemIdentifier: system, inRecovery: true, timeline: 2, replayed: false), .wait("it has not replayed up to the load's place")),
            // The primary itself (or a pool that fell back to it): its own history.
            (StandbyPlace(systemIdentifier: system, inRecovery: false, timeline: 2, replayed: true), .read),
            // The old primary, not fenced after the failover: the same system, its own timeline, however far it wrote.
            (StandbyPlace(systemIdentifier: system, inRecovery: false, timeline: 1, replayed: true),
             .passOver("it is a primary of another history (on timeline 1, the primary on 2)")),
            // A standby still on the old timeline may yet follow the switch; one on a later timeline never comes back.
            (StandbyPlace(systemIdentifier: system, inRecovery: true, timeline: 1, replayed: true),
             .wait("it has not followed the primary's timeline yet (on timeline 1, the primary on 2)")),
            (StandbyPlace(systemIdentifier: system, inRecovery: true, timeline: 3, replayed: true),
             .passOver("another history (on timeline 3, the primary on 2)")),
            // Another cluster, whatever its timeline and position.
            (StandbyPlace(systemIdentifier: system + 1, inRecovery: true, timeline: 2, replayed: true),
             .passOver("another database system (system identifier \(system + 1), the primary's \(system))")),
            // No WAL receiver, or a role without pg_read_all_stats: not shown to be the primary's.
            (StandbyPlace(systemIdentifier: system, inRecovery: true, timeline: nil, replayed: true),
             .passOver("its timeline is not known (no WAL receiver running, or the role lacks pg_read_all_stats)")),
        ]
    }()

    @Test("a standby is read only with the primary's system identifier and timeline, replayed past the load's place",
          arguments: StandbyReadsTests.verdicts)
    func verdict(standby: StandbyPlace, expected: StandbyReads.Verdict) {
        #expect(StandbyReads.check(primary: Self.primary, standby: standby) == expected)
    }

    @Test("the store reads where the primary and a server offered as its standby stand, at one moment each")
    func storeReadsPlaces() async throws {
        try await TestEnvironment.make().use { environment in
            let primary = try await environment.feed.database.primaryPlace()
            #expect(primary.timeline >= 1 && primary.lsn.contains("/"))
            let pool = PostgresPool(configuration: environment.configuration, maxConnections: 1)
            let standby = try await Database(pool: pool).standbyPlace(against: primary.lsn)
            // The test database is a primary: offered as its own standby, it is its own history.
            #expect(standby == StandbyPlace(systemIdentifier: primary.systemIdentifier, inRecovery: false, timeline: primary.timeline, replayed: true))
            #expect(StandbyReads.check(primary: primary, standby: standby) == .read)
            // A place it has not reached.
            let ahead = try await Database(pool: pool).standbyPlace(against: "FFFFFFFF/0")
            #expect(!ahead.replayed)
            await pool.shutdown()
        }
    }
}
