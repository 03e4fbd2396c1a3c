import Foundation
import Postgres
import ScavengerCore

/// One forward-only migration: `db/NNNN_name.sql`.
public struct Migration: Sendable, Equatable {
    public var version: Int
    public var name: String
    public var sql: String

    public init(version: Int, name: String, sql: String) {
        self.version = version
        self.name = name
        self.sql = sql
    }

    /// A stable fingerprint of the text (FNV-1a 64), to notice a migration edited after it ran.
    public var checksum: String {
        String(FNV1a.hash(sql.utf8), radix: 16)
    }
}

/// Applies the SQL migrations in order, each in its own transaction, recording them in
/// `schema_migrations`. Idempotent, and safe when several run at once (an advisory lock).
public struct Migrator: Sendable {
    public let migrations: [Migration]

    public init(migrations: [Migration]) {
        self.migrations = migrations.sorted { $0.version < $1.version }
    }

    /// Reads `NNNN_name.sql` files from a directory; other files are ignored.
    public init(directory: URL) throws(StoreError) {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        } catch {
            throw .migration("cannot read the migrations directory \(directory.path): \(error.localizedDescription)")
        }
        var migrations: [Migration] = []
        for file in names where file.hasSuffix(".sql") {
            let stem = file.dropLast(4)
            guard let underscore = stem.firstIndex(of: "_"), stem.index(after: underscore) < stem.endIndex,
                  !stem[..<underscore].isEmpty, stem[..<underscore].allSatisfy({ $0.isASCII && $0.isNumber }),
                  let version = Int(stem[..<underscore])
            else {
                throw .migration("\(file) is not named NNNN_name.sql")
            }
            guard let sql = try? String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8) else {
                throw .migration("cannot read \(file)")
            }
            migrations.append(Migration(version: version, name: String(stem[stem.index(after: underscore)...]), sql: sql))
        }
        let versions = migrations.map(\.version)
        guard Set(versions).count == versions.count else {
            throw .migration("two migrations share a version number in \(directory.path)")
        }
        self.init(migrations: migrations)
    }

    /// Finds `db/` in the working directory or above the running executable.
    public static func defaultDirectory(executablePath: String = CommandLine.arguments.first ?? "") -> URL? {
        var candidates = [URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("db")]
        var directory = URL(fileURLWithPath: executablePath).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0 ..< 5 {
            candidates.append(directory.appendingPathComponent("db"))
            directory = directory.deletingLastPathComponent()
        }
        return candidates.first { url in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) && isDirectory.boolValue
                && ((try? FileManager.default.contentsOfDirectory(atPath: url.path))?.contains { $0.hasSuffix(".sql") } ?? false)
        }
    }

    /// What one run did.
    public struct Outcome: Sendable, Equatable {
        /// Versions applied by this run, in order.
        public var applied: [Int]
        /// How many were already there.
        public var alreadyApplied: Int
    }

    /// Applies what has not been applied yet.
    public func migrate(_ pool: PostgresPool) async throws(StoreError) -> Outcome {
        let migrations = self.migrations
        return try await mappingErrors {
            try await pool.withConnection { connection in
                try Migrator.migrate(migrations, on: connection)
            }
        }
    }

    static func migrate(_ migrations: [Migration], on connection: PostgresConnection) throws -> Outcome {
        // One lock per schema, held for the whole run: a second migrator waits, then finds
        // everything applied.
        try connection.query("SELECT pg_advisory_lock(hashtext('scavenger.migrate.' || current_schema()))")
        defer {
            _ = try? connection.query("SELECT pg_advisory_unlock(hashtext('scavenger.migrate.' || current_schema()))")
        }
        try connection.query("""
            CREATE TABLE IF NOT EXISTS schema_migrations (
                version    integer PRIMARY KEY,
                name       text NOT NULL,
                checksum   text NOT NULL,
                applied_at timestamptz NOT NULL DEFAULT now()
            )
            """)
        var recorded: [Int: String] = [:]
        let rows = try connection.query("SELECT version, checksum FROM schema_migrations")
        let (version, checksum) = try (rows.column("version"), rows.column("checksum"))
        for row in rows {
            recorded[try row.int(version)] = try row.string(checksum) as String
        }
        var applied: [Int] = []
        for migration in migrations {
            if let checksum = recorded[migration.version] {
                guard checksum == migration.checksum else {
                    throw StoreError.migration(
                        "migration \(migration.version)_\(migration.name) was changed after it was applied; add a new migration instead")
                }
                continue
            }
            do {
                try connection.transaction { connection in
                    try connection.execute(script: migration.sql)
                    try connection.query("""
                        INSERT INTO schema_migrations (version, name, checksum)
                        VALUES (\(migration.version), \(migration.name), \(migration.checksum))
                        """)
                }
            } catch let error as PostgresError {
                throw StoreError.migration("\(migration.version)_\(migration.name): \(error.message)")
            }
            applied.append(migration.version)
        }
        return Outcome(applied: applied, alreadyApplied: migrations.count - applied.count)
    }

    /// Versions recorded as applied.
    public static func appliedVersions(_ pool: PostgresPool) async throws(StoreError) -> [Int] {
        try await mappingErrors {
            let rows = try await pool.query("""
                SELECT version FROM schema_migrations ORDER BY version
                """)
            let version = try rows.column("version")
            return try rows.map { row in try row.int(version) as Int }
        }
    }
}
