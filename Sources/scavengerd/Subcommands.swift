import ArgumentParser
import Foundation
import Postgres
import ScavengerCore
import ScavengerGeography
import ScavengerProtocol
import ScavengerStore

// `scavengerd`'s subcommands besides `serve`: migrations, expiry, users' roles, regions, and the
// README's generated tables.

struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Apply the SQL migrations in db/ that have not been applied; idempotent.")

    @OptionGroup var database: DatabaseOptions
    @Option(help: "Directory of NNNN_name.sql files (default: ./db, or db/ beside the executable's checkout).")
    var migrations: String?

    func run() async throws {
        try await reportingFailure {
            guard let directory = migrations.map({ URL(fileURLWithPath: $0) }) ?? Migrator.defaultDirectory() else {
                throw CLIError("no migrations directory found: pass --migrations DIR")
            }
            let migrator = try Migrator(directory: directory)
            let pool = PostgresPool(configuration: try database.configuration(), maxConnections: 1)
            defer { Task { await pool.shutdown() } }
            let outcome = try await migrator.migrate(pool)
            for version in outcome.applied {
                let name = migrator.migrations.first { $0.version == version }?.name ?? ""
                print(String(format: "applied %04d_%@", version, name))
            }
            print("database is up to date: \(migrator.migrations.count) migrations, \(outcome.applied.count) applied now")
        }
    }
}

struct Expire: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "One pass of pin expiry, for cron: deletes expired pins with their replies and photos, and expired sessions.")

    @OptionGroup var database: DatabaseOptions
    @Option(help: "Rows per transaction: small batches keep locks short while feeds keep answering.")
    var batchSize = 5000
    @Option(help: "Seconds of the change logs to keep (at least 3600): a daemon away from the database longer reloads its feed, and a WATCH … SINCE from before it answers resumed false.")
    var keepChanges = ServeDefaults.keepChanges
    @Option(help: "Seconds a write's REQUEST key is kept (the daemons' --request-key-seconds; default 24 hours); older keys are deleted.")
    var requestKeySeconds = ServeDefaults.requestKeySeconds

    func validate() throws {
        guard requestKeySeconds >= 1 else { throw ArgumentParser.ValidationError("--request-key-seconds must be at least 1") }
        guard (1 ... 100_000).contains(batchSize) else {
            throw ArgumentParser.ValidationError("--batch-size must be within 1…100000")
        }
        // Clients resuming a watch are promised an hour of the log at least.
        guard keepChanges >= ServeDefaults.minimumKeepChanges else {
            throw ArgumentParser.ValidationError("--keep-changes must be at least \(ServeDefaults.minimumKeepChanges) seconds")
        }
    }

    func run() async throws {
        try await reportingFailure {
            let started = ContinuousClock.now
            var report = ExpiryReport()
            try await RegionCommand.withDatabase(database) { store in
                report = try await store.expire(
                    batchSize: batchSize, keepChangesSeconds: keepChanges, keepRequestKeysSeconds: requestKeySeconds)
            }
            let elapsed = ContinuousClock.now - started
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            print("expired \(report.pins) pins, \(report.replies) replies, \(report.photoBytes) photo bytes, "
                + "\(report.sessions) sessions, \(report.changes) change-log entries, \(report.requestKeys) request keys, "
                + "\(report.mail) mail rows in \(String(format: "%.3f", seconds)) s")
        }
    }
}

struct UserCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user", abstract: "Manage users.", subcommands: [SetRole.self, SetPassword.self])

    struct SetRole: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "role", abstract: "Set a user's role.")

        @OptionGroup var database: DatabaseOptions
        @Argument(help: "The user's name (case-insensitive).") var username: String
        @Argument(help: "user, moderator or admin.") var role: String

        func run() async throws {
            try await reportingFailure {
                guard let newRole = Role(rawValue: role) else {
                    throw CLIError("role must be user, moderator or admin, not \(role)")
                }
                let pool = PostgresPool(configuration: try database.configuration(), maxConnections: 1)
                defer { Task { await pool.shutdown() } }
                guard try await Database(pool: pool).setRole(username: username, role: newRole) else {
                    throw CLIError("no user named \(username)")
                }
                print("\(username) is now \(newRole.rawValue)")
            }
        }
    }
}

struct RegionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "region", abstract: "Manage named regions.", subcommands: [Set.self, List.self, Delete.self])

    /// Runs `body` with a store on a one-connection pool.
    static func withDatabase(_ options: DatabaseOptions, _ body: (Database) async throws -> Void) async throws {
        let pool = PostgresPool(configuration: try options.configuration(), maxConnections: 1)
        do {
            try await body(Database(pool: pool))
        } catch {
            await pool.shutdown()
            throw error
        }
        await pool.shutdown()
    }

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Define or replace a region from a GeoJSON Polygon or MultiPolygon (bare, Feature, or FeatureCollection of one).")

        @OptionGroup var database: DatabaseOptions
        @Argument(help: "1–64 of a-z, 0-9 and '-'.") var name: String
        @Argument(help: "The GeoJSON file.") var file: String

        func run() async throws {
            try await reportingFailure {
                guard let data = FileManager.default.contents(atPath: file) else {
                    throw CLIError("cannot read \(file)")
                }
                guard let text = String(data: data, encoding: .utf8) else { throw CLIError("\(file) is not UTF-8 text") }
                let region = try RegionDefinition.parse(name: name, geoJSON: text)
                try await RegionCommand.withDatabase(database) { store in
                    let update = try await store.setRegion(region)
                    print("region \(name) set: \(update.pinsInRegion) pins in it, \(update.pinsReassigned) pins reassigned")
                }
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the regions with their live pins and bounding boxes.")

        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            try await reportingFailure {
                try await RegionCommand.withDatabase(database) { store in
                    for region in try await store.regionSummaries() {
                        let box = region.envelope
                        print("\(region.name)\t\(region.pins) pins\tlon \(box.minX)…\(box.maxX) lat \(box.minY)…\(box.maxY)")
                    }
                }
            }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a region; its pins belong to no region (or another that contains them).")

        @OptionGroup var database: DatabaseOptions
        @Argument(help: "The region's name.") var name: String

        func run() async throws {
            try await reportingFailure {
                try await RegionCommand.withDatabase(database) { store in
                    guard let update = try await store.deleteRegion(named: name) else {
                        throw CLIError("no region named \(name)")
                    }
                    print("region \(name) deleted: \(update.pinsReassigned) pins unassigned or moved")
                }
            }
        }
    }
}

struct Commands: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the protocol's command reference as a Markdown table (the README's is generated from it).")

    func run() async throws {
        print(CommandTable.standard.markdownReference, terminator: "")
    }
}

struct Limits: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the table of limits and defaults as Markdown (the README's is generated from it).")

    func run() async throws {
        print(LimitsTable.markdown, terminator: "")
    }
}
