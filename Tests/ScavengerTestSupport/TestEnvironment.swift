import CoreMetrics
import Logging
import Postgres
import ScavengerBoard
import ScavengerCore
import ScavengerFeed
import ScavengerStore
import Sodium

/// A migrated database in a fresh schema of its own and a real board on it: what the server's,
/// the HTTP port's and the console's tests build on. Tests register and write much faster than
/// people, so there are no rate limits unless a test sets them.
public struct TestEnvironment: Sendable {
    /// The schema's configuration, as given (migrations and other processes use it as is).
    public let configuration: PostgresConfiguration
    public let pool: PostgresPool
    public let board: Board

    public var database: Database { board.store }
    public var feed: Feed { board.feed }

    /// - Parameters:
    ///   - configuration: the database to use; by default a fresh schema of the test database
    ///     (``TestDatabase/isolatedConfiguration(prefix:)``).
    ///   - commandTimeout: the board's pool's deadline per command, when it needs one.
    ///   - metrics: where the store records its metrics, if anywhere.
    ///   - loadFeed: false leaves the feed unloaded (a daemon that has just started).
    public static func make(
        configuration: PostgresConfiguration? = nil, prefix: String = "test", commandTimeout: Duration? = nil,
        pinRules: PinRules = PinRules(), feedRules: FeedRules = FeedRules(),
        moderationRules: ModerationRules = ModerationRules(), sessionTTLSeconds: Int = 3600,
        hashing: PasswordHashing = .minimum, hashingThreads: Int = 2, metrics: (any MetricsFactory)? = nil,
        loadFeed: Bool = true, configure: (inout BoardRules) -> Void = { _ in }
    ) async throws -> TestEnvironment {
        let configuration = try configuration ?? TestDatabase.isolatedConfiguration(prefix: prefix)
        try await TestDatabase.migrate(configuration)
        var boardConfiguration = configuration
        if let commandTimeout { boardConfiguration.commandTimeout = commandTimeout }
        let pool = PostgresPool(configuration: boardConfiguration, maxConnections: 6)
        let feed = Feed(database: Database(pool: pool, metrics: metrics), logger: quietLogger("test-feed"))
        do {
            if loadFeed { try await feed.load() }
        } catch {
            await pool.shutdown()
            throw error
        }
        var rules = BoardRules(
            pins: pinRules, feed: feedRules, moderation: moderationRules, sessionTTLSeconds: sessionTTLSeconds,
            writeRates: .unlimited, registrationRate: nil)
        configure(&rules)
        let board = Board(feed: feed, passwords: PasswordHasher(parameters: hashing, threads: hashingThreads), rules: rules)
        return TestEnvironment(configuration: configuration, pool: pool, board: board)
    }

    /// Runs `body`, then shuts the environment down, whether `body` threw or not.
    public func use<T>(_ body: (TestEnvironment) async throws -> T) async throws -> T {
        let value: T
        do {
            value = try await body(self)
        } catch {
            await shutdown()
            throw error
        }
        await shutdown()
        return value
    }

    /// A listener keeping the feed in step with other processes' writes.
    public func listener() async throws -> FeedListener {
        FeedListener(
            feed: feed, logger: Self.quietLogger("test-listener"), listening: try await feed.startListening(),
            purgeIntervalSeconds: 1)
    }

    /// A second store on the same schema, as another process (another daemon, the CLI) would be.
    public func otherProcess() -> Database {
        Database(pool: pool)
    }

    /// A second daemon's board on the same database and rules: a feed (not loaded yet) and a
    /// hasher of its own. Shut its hasher down when done.
    public func secondDaemon() -> Board {
        Board(
            feed: Feed(database: Database(pool: pool), logger: Self.quietLogger("second-daemon")),
            passwords: PasswordHasher(parameters: .minimum), rules: board.rules)
    }

    public func shutdown() async {
        await board.passwords.shutdown()
        await pool.shutdown()
    }

    static func quietLogger(_ label: String) -> Logger {
        var logger = Logger(label: label)
        logger.logLevel = .warning
        return logger
    }
}
