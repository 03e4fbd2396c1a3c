import Logging
import Postgres
import ScavengerBoard
import ScavengerFeed
import ScavengerStore
import Sodium

/// A real board whose database is not there (a closed port): for tests of what is answered
/// without the database (parsing, in-memory commands), where any command that does reach the
/// database gets `UNAVAILABLE` quickly. Its feed is empty, loaded without a database.
public enum OfflineBoard {
    public static let shared: Board = {
        let store = unreachableDatabase()
        var logger = Logger(label: "offline-board")
        logger.logLevel = .critical
        let feed = Feed(database: store, logger: logger)
        feed.loadOffline([])
        return Board(feed: feed, passwords: PasswordHasher(parameters: .minimum))
    }()

    /// A store whose database is not there (a closed port): every call fails quickly with
    /// `unavailable`. For feeds tested without a database.
    public static func unreachableDatabase() -> Database {
        let configuration = PostgresConfiguration(connectionString: "postgresql://127.0.0.1:1/unreachable?connect_timeout=2")
        return Database(pool: PostgresPool(configuration: configuration, maxConnections: 1))
    }
}
