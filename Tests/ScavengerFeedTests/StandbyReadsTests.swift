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
@Suite("Loads from a standby: the bulk there, the place and the log on the primary", .timeLimit(.minutes(5)))
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
}
