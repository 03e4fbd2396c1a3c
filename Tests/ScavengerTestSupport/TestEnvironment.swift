import CoreMetrics
import Logging
import Postgres
import ScavengerBoard
import ScavengerCore
import ScavengerFeed
import ScavengerStore
import Sodium
import Synchronization

/// A migrated database in a fresh schema of its own and a real board on it: what the server's,
/// the HTTP port's and the console's tests build on. Tests register and write much faster than
/// people, so there are no rate limits unless a test sets them.
public struct TestEnvironment: Sendable {
    /// The schema's configuration, as given (migrations and other processes use it as is).
    public let configuration: PostgresConfiguration
    public let pool: PostgresPool
    public let board: Board
    /// The board's feed and hasher, kept here (not read out of the board), so that this support
    /// library builds without `@testable` and so in release builds too.
    public let feed: Feed
    private let passwords: PasswordHasher
    private let slot: Slot

    public var database: Database { feed.database }

    /// - Parameters:
    ///   - configuration: the database to use; by default a fresh schema of the test database
    ///     (``TestDatabase/isolatedConfiguration(prefix:)``).
    ///   - commandTimeout: the board's pool's deadline per command, when it needs one.
    ///   - metrics: where the store records its metrics, if anywhere.
    ///   - loadFeed: false leaves the feed unloaded (a daemon that has just started).
    ///   - clock: the time of day the feed and the board read (a ``HeldClock`` for a test that
    ///     moves time on); the system's by default.
    public static func make(
        configuration: PostgresConfiguration? = nil, prefix: String = "test", commandTimeout: Duration? = nil,
        pinRules: PinRules = PinRules(), feedRules: FeedRules = FeedRules(),
        moderationRules: ModerationRules = ModerationRules(), sessionTTLSeconds: Int = 3600,
        hashing: PasswordHashing = .minimum, hashingThreads: Int = 2, metrics: (any MetricsFactory)? = nil,
        loadFeed: Bool = true, clock: any WallClock = .system, configure: (inout BoardRules) -> Void = { _ in }
    ) async throws -> TestEnvironment {
        let slot = await Slot.take()
        let pool: PostgresPool
        let feed: Feed
        let schema: PostgresConfiguration
        do {
            schema = try configuration ?? TestDatabase.isolatedConfiguration(prefix: prefix)
            try await TestDatabase.migrate(schema)
            var boardConfiguration = schema
            if let commandTimeout { boardConfiguration.commandTimeout = commandTimeout }
            pool = PostgresPool(configuration: boardConfiguration, maxConnections: 6)
            feed = Feed(database: Database(pool: pool, metrics: metrics), logger: quietLogger("test-feed"), clock: clock)
        } catch {
            slot.give()
            throw error
        }
        do {
            if loadFeed { try await feed.load() }
        } catch {
            await pool.shutdown()
            slot.give()
            throw error
        }
        var rules = BoardRules(
            pins: pinRules, feed: feedRules, moderation: moderationRules, sessionTTLSeconds: sessionTTLSeconds,
            writeRates: .unlimited, registrationRate: nil)
        configure(&rules)
        let passwords = PasswordHasher(parameters: hashing, threads: hashingThreads)
        let board = Board(feed: feed, passwords: passwords, rules: rules)
        return TestEnvironment(configuration: schema, pool: pool, board: board, feed: feed, passwords: passwords, slot: slot)
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

    /// A second daemon's board on the same database, rules and clock: a feed (not loaded yet)
    /// and a hasher of its own. Shut its hasher down when done.
    public func secondDaemon() -> Board {
        Board(
            feed: Feed(database: Database(pool: pool), logger: Self.quietLogger("second-daemon"), clock: feed.clock),
            passwords: PasswordHasher(parameters: .minimum), rules: board.rules)
    }

    public func shutdown() async {
        await passwords.shutdown()
        await pool.shutdown()
        slot.give()
    }

    /// A place among the environments alive at once, of which there are at most
    /// ``Slot/places``: every database test makes one, and when all the suites run together
    /// they would otherwise all be open at the same moment, with the connections each pool has
    /// used (a run saw 200, the test cluster's limit, scripts/lib.sh; with 32 places runs here
    /// peaked at about 80). A test waits here for a place; the wait ends as other tests end, so it has no
    /// deadline of its own. A test's time limit counts that wait, unless its suite takes its places
    /// before its tests start (``EnvironmentPlaces``): then the wait is the suite's own tests'.
    final class Slot: Sendable {
        static let places = 32
        /// The places every test shares.
        static let shared = PlacePool(places: places)
        /// The places the running suite took for its tests (``EnvironmentPlaces``), if it did.
        @TaskLocal static var suitePlaces: PlacePool?

        private let pool: PlacePool
        private let given = Atomic<Bool>(false)

        private init(pool: PlacePool) {
            self.pool = pool
        }

        /// A place from the suite's own places when it took some, else from the shared ones.
        static func take() async -> Slot {
            let pool = suitePlaces ?? shared
            await pool.take()
            return Slot(pool: pool)
        }

        /// Gives the place to the next waiting environment (once; later calls do nothing).
        func give() {
            guard !given.exchange(true, ordering: .sequentiallyConsistent) else { return }
            pool.give()
        }
    }

    /// A number of places handed out first come, first served; a taker waits for one without a
    /// deadline (places come back as tests end).
    final class PlacePool: Sendable {
        private struct Places: ~Copyable {
            var free: Int
            var waiting: [CheckedContinuation<Void, Never>] = []
        }

        private let state: Mutex<Places>

        init(places: Int) {
            state = Mutex(Places(free: places))
        }

        func take() async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { places -> Bool in
                    guard places.free > 0 else {
                        places.waiting.append(continuation)
                        return false
                    }
                    places.free -= 1
                    return true
                }
                if now { continuation.resume() }
            }
        }

        func give() {
            let next = state.withLock { places -> CheckedContinuation<Void, Never>? in
                guard !places.waiting.isEmpty else {
                    places.free += 1
                    return nil
                }
                return places.waiting.removeFirst()
            }
            next?.resume()
        }
    }

    static func quietLogger(_ label: String) -> Logger {
        var logger = Logger(label: label)
        logger.logLevel = .warning
        return logger
    }
}
