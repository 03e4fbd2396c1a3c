import Foundation
import Postgres
import ScavengerCore
import ScavengerStore
import ScavengerTestSupport
import Testing

extension StoreError {
    /// The message of a `.migration` error, nil for any other case.
    var migrationMessage: String? {
        if case .migration(let message) = self { return message }
        return nil
    }
}

/// A temporary directory of migration files, removed by `remove()`.
struct MigrationDirectory {
    let url: URL

    init(files: [String: String]) throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("scavenger-migrations-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        for (name, text) in files {
            try Data(text.utf8).write(to: url.appendingPathComponent(name))
        }
    }

    func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}

extension PostgresPool {
    /// `(version, name, checksum)` of every recorded migration, by version.
    func recordedMigrations() async throws -> [(version: Int, name: String, checksum: String)] {
        try await query("SELECT version, name, checksum FROM schema_migrations ORDER BY version").map { row in
            (try row.int(0) as Int, try row.string(1) as String, try row.string(2) as String)
        }
    }
}

/// The `.sql` files of the project's `db/` directory, as `Migrator(directory:)` should see them.
func projectMigrationFiles() throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: TestDatabase.migrationsDirectory.path)
        .filter { $0.hasSuffix(".sql") }
        .sorted()
}

extension Database {
    /// A host ("host", token 7…7) and a private, unscheduled hunt of theirs named "Walk".
    func hostAndHunt() async throws -> (host: Account, hunt: HuntRecord) {
        let host = try await register(
            name: "host", email: "host@example.com", passwordHash: "$argon2id$h", tokenHash: Array(repeating: 7, count: 32),
            sessionTTLSeconds: 3600)
        let hunt = try await createHunt(NewHunt(
            hostID: host.id, name: "Walk", description: "", code: JoinCode.random(), ordered: false, isPublic: false,
            schedule: HuntSchedule(), rate: nil))
        return (host, hunt)
    }
}
