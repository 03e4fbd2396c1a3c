import Postgres
import ScavengerStore

extension TestDatabase {
    /// Applies the project's migrations to `configuration`'s database, on a connection of its own
    /// without the configuration's command timeout: migrations take longer than a test's deadline.
    public static func migrate(_ configuration: PostgresConfiguration) async throws {
        var migrating = configuration
        migrating.commandTimeout = nil
        let pool = PostgresPool(configuration: migrating, maxConnections: 1)
        do {
            _ = try await Migrator(directory: migrationsDirectory).migrate(pool)
        } catch {
            await pool.shutdown()
            throw error
        }
        await pool.shutdown()
    }
}
