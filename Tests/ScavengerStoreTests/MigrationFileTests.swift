import Foundation
import ScavengerTestSupport
import ScavengerStore
import Testing

@Suite("Migration files")
struct MigrationFileTests {
    @Test func readsNumberedFilesInVersionOrderAndIgnoresOthers() throws {
        let directory = try MigrationDirectory(files: [
            "0010_later.sql": "CREATE TABLE later (a int);",
            "0002_second_one.sql": "CREATE TABLE second (a int);",
            "0001_first.sql": "CREATE TABLE first (a int);\n",
            "README.md": "not a migration",
            "0003_notes.txt": "not a migration either",
            "0004_backup.sql.orig": "nor this",
        ])
        defer { directory.remove() }
        let migrator = try Migrator(directory: directory.url)
        #expect(migrator.migrations == [
            Migration(version: 1, name: "first", sql: "CREATE TABLE first (a int);\n"),
            Migration(version: 2, name: "second_one", sql: "CREATE TABLE second (a int);"),
            Migration(version: 10, name: "later", sql: "CREATE TABLE later (a int);"),
        ])
    }

    @Test func anEmptyDirectoryHasNoMigrations() throws {
        let directory = try MigrationDirectory(files: ["README": "nothing here"])
        defer { directory.remove() }
        #expect(try Migrator(directory: directory.url).migrations.isEmpty)
    }

    @Test(arguments: ["create_users.sql", "0001.sql", "x001_users.sql", "_users.sql", "v1_users.sql", " 001_space.sql", "0x1_hex.sql"])
    func rejectsBadlyNamedSQLFiles(name: String) throws {
        let directory = try MigrationDirectory(files: ["0001_fine.sql": "SELECT 1;", name: "SELECT 1;"])
        defer { directory.remove() }
        let error = #expect(throws: StoreError.self) {
            try Migrator(directory: directory.url)
        }
        let message = try #require(error?.migrationMessage, "expected .migration, got \(String(describing: error))")
        #expect(message.contains(name))
    }

    @Test(arguments: ["-001_negative.sql", "+001_plus.sql", "0001_.sql"])
    func rejectsSignedVersionsAndEmptyNames(name: String) throws {
        let directory = try MigrationDirectory(files: [name: "SELECT 1;"])
        defer { directory.remove() }
        #expect(throws: StoreError.self) {
            try Migrator(directory: directory.url)
        }
    }

    @Test func rejectsDuplicateVersions() throws {
        let directory = try MigrationDirectory(files: [
            "0001_users.sql": "SELECT 1;",
            "0002_pins.sql": "SELECT 2;",
            "0002_photos.sql": "SELECT 3;",
        ])
        defer { directory.remove() }
        let error = #expect(throws: StoreError.self) {
            try Migrator(directory: directory.url)
        }
        #expect(error?.migrationMessage != nil)
    }

    @Test func rejectsDuplicateVersionsWrittenDifferently() throws {
        let directory = try MigrationDirectory(files: ["0001_users.sql": "SELECT 1;", "1_again.sql": "SELECT 2;"])
        defer { directory.remove() }
        #expect(throws: StoreError.self) {
            try Migrator(directory: directory.url)
        }
    }

    @Test func aMissingDirectoryIsAMigrationError() throws {
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("no-such-\(UUID().uuidString)")
        let error = #expect(throws: StoreError.self) {
            try Migrator(directory: missing)
        }
        #expect(error?.migrationMessage?.contains(missing.path) == true)
    }

    @Test func theProjectDirectoryParses() throws {
        let migrator = try Migrator(directory: TestDatabase.migrationsDirectory)
        #expect(migrator.migrations.count == (try projectMigrationFiles()).count)
        for migration in migrator.migrations {
            #expect(migration.version > 0)
            #expect(!migration.name.isEmpty)
            #expect(!migration.sql.isEmpty)
        }
    }

    @Test(arguments: [
        ("", "cbf29ce484222325"),
        ("a", "af63dc4c8601ec8c"),
        ("foobar", "85944171f73967e8"),
    ])
    func checksumIsFNV1a64(sql: String, checksum: String) {
        #expect(Migration(version: 1, name: "x", sql: sql).checksum == checksum)
    }

    @Test func checksumDependsOnTheTextOnly() {
        let a = Migration(version: 1, name: "a", sql: "CREATE TABLE t (a int);")
        let b = Migration(version: 7, name: "b", sql: "CREATE TABLE t (a int);")
        let c = Migration(version: 1, name: "a", sql: "CREATE TABLE t (a int); ")
        #expect(a.checksum == b.checksum)
        #expect(a.checksum != c.checksum)
    }
}
