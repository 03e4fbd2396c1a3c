import Postgres

/// The PostgreSQL store: every read and write of the daemon goes through it.
public final class Database: Sendable {
    public let pool: PostgresPool

    public init(pool: PostgresPool) {
        self.pool = pool
    }

    /// Whether the database answers.
    public func ping() async throws(StoreError) {
        try await mappingErrors {
            try await pool.query("SELECT 1")
        }
    }
}
