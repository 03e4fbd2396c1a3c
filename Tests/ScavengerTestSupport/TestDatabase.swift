import Foundation
import Postgres

/// The real PostgreSQL the tests run against, named by `SCAVENGER_TEST_DATABASE_URL`
/// (`scripts/test.sh` starts a cluster and sets it). Tests fail, never skip, without it.
public enum TestDatabase {
    /// The connection string, or a failure that says how to get one.
    public static func url() throws -> String {
        let environment = ProcessInfo.processInfo.environment
        guard let url = environment["SCAVENGER_TEST_DATABASE_URL"] ?? environment["DATABASE_URL"], !url.isEmpty else {
            throw MissingDatabase()
        }
        return url
    }

    public struct MissingDatabase: Error, CustomStringConvertible {
        public var description: String {
            "SCAVENGER_TEST_DATABASE_URL is not set: run the tests with scripts/test.sh, which starts PostgreSQL"
        }
    }

    /// A configuration whose sessions use a fresh, empty schema of their own, so that tests
    /// running in parallel never see each other's tables.
    public static func isolatedConfiguration(prefix: String = "test") throws -> PostgresConfiguration {
        let url = try url()
        let schema = uniqueName(prefix)
        let setup = try PostgresConnection.connect(PostgresConfiguration(connectionString: url))
        try setup.query("CREATE SCHEMA \(unescaped: schema)")
        return PostgresConfiguration(connectionString: url, options: "-c search_path=\(schema)")
    }

    /// ``isolatedConfiguration(prefix:)`` reached through a ``TCPProxy`` in front of the test
    /// database, so that a test can cut the database off; stop the proxy when done.
    public static func proxiedConfiguration(prefix: String = "test") throws -> (PostgresConfiguration, TCPProxy) {
        var configuration = try isolatedConfiguration(prefix: prefix)
        guard var components = URLComponents(string: configuration.connectionString),
              let host = components.host, let port = components.port
        else {
            throw TCPProxy.SocketError(description: "the test database URL names no host and port")
        }
        let proxy = try TCPProxy(upstreamHost: host, upstreamPort: port)
        components.host = "127.0.0.1"
        components.port = proxy.port
        guard let url = components.string else { throw TCPProxy.SocketError(description: "cannot rewrite the test database URL") }
        configuration.connectionString = url
        return (configuration, proxy)
    }

    /// A name no other test (or test run) uses: schemas, channels, application names.
    public static func uniqueName(_ prefix: String) -> String {
        "\(prefix)_\(UInt64.random(in: 0 ... UInt64.max) % 1_000_000_000_000)"
    }

    /// A pool on a fresh schema.
    public static func isolatedPool(maxConnections: Int = 4) throws -> PostgresPool {
        PostgresPool(configuration: try isolatedConfiguration(), maxConnections: maxConnections)
    }

    /// The project's `db/` directory.
    public static var migrationsDirectory: URL {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("db")
    }
}

extension PostgresConnection {
    /// Whether a table of this name exists in the session's schema (blocking).
    public func tableExists(_ name: String) throws -> Bool {
        try query(TestDatabase.tableExists(name)).first?.bool(0) == true
    }
}

extension PostgresPool {
    /// Whether a table of this name exists in the sessions' schema.
    public func tableExists(_ name: String) async throws -> Bool {
        try await query(TestDatabase.tableExists(name)).first?.bool(0) == true
    }
}

extension TestDatabase {
    static func tableExists(_ name: String) -> SQL {
        "SELECT to_regclass(\(name)) IS NOT NULL"
    }
}
