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
        let configuration = PostgresConfiguration(connectionString: "postgresql://127.0.0.1:1/unreachable?connect_timeout=2")
        let store = Database(pool: PostgresPool(configuration: configuration, maxConnections: 1))
        var logger = Logger(label: "offline-board")
        logger.logLevel = .critical
        let feed = Feed(database: store, logger: logger)
        feed.loadOffline([])
        return Board(feed: feed, passwords: PasswordHasher(parameters: .minimum))
    }()
}
