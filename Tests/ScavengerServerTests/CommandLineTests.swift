import Foundation
import Postgres
import ScavengerTestSupport
import Sodium
import Testing

/// Runs the built `scavengerd` executable.
struct Executable {
    /// Beside the test bundle in the build directory.
    static var url: URL {
        get throws {
            var candidates: [URL] = []
            if let bundle = Bundle.main.executableURL {
                candidates.append(bundle.deletingLastPathComponent().appendingPathComponent("scavengerd"))
            }
            let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent()
            candidates.append(root.appendingPathComponent(".build/debug/scavengerd"))
            guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
                throw NotBuilt()
            }
            return found
        }
    }

    struct NotBuilt: Error, CustomStringConvertible {
        var description: String { "scavengerd is not built: run the tests through scripts/test.sh (swift build --build-tests)" }
    }

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs `scavengerd arguments…` against the schema of `configuration`, with `extra` in its
    /// environment and `input` on its standard input (a pipe; none when nil).
    static func run(
        _ arguments: [String], configuration: PostgresConfiguration, environment extra: [String: String] = [:], input: String? = nil
    ) throws -> Result {
        let process = Process()
        process.executableURL = try url
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment.merging(extra) { $1 }
        environment["DATABASE_URL"] = databaseURL(configuration)
        process.environment = environment
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let stdin = Pipe()
        if input != nil { process.standardInput = stdin }
        try process.run()
        if let input {
            stdin.fileHandleForWriting.write(Data(input.utf8))
            try stdin.fileHandleForWriting.close()
        }
        let stdout = readToEnd(out.fileHandleForReading)
        let stderr = readToEnd(err.fileHandleForReading)
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
            stderr: String(decoding: stderr, as: UTF8.self))
    }

    /// The configuration's URL with its `options` (the test schema) carried as a URI parameter.
    static func databaseURL(_ configuration: PostgresConfiguration) -> String {
        guard let options = configuration.options else { return configuration.connectionString }
        let encoded = options.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? options
        let separator = configuration.connectionString.contains("?") ? "&" : "?"
        return configuration.connectionString + separator + "options=" + encoded
    }
}

@Suite("The scavengerd command line")
struct CommandLineTests {
    func file(_ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("region-\(UUID().uuidString).json").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test("region set, list and delete; bad input is one line on stderr and a non-zero exit")
    func regions() async throws {
        try await TestEnvironment.make().use { environment in
            let configuration = environment.configuration
            let good = try file(GeoJSONFixtures.square(west: 13, south: 52, size: 1))
            let set = try Executable.run(["region", "set", "berlin", good], configuration: configuration)
            #expect(set.status == 0, "\(set.stderr)")
            #expect(set.stdout.contains("region berlin set"))
            let list = try Executable.run(["region", "list"], configuration: configuration)
            #expect(list.status == 0)
            #expect(list.stdout.hasPrefix("berlin\t0 pins"))

            let cases: [(String, String)] = [
                ("not json", "not valid JSON"),
                (#"{"type":"Point","coordinates":[1,2]}"#, "Point"),
                (#"{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1]]]}"#, "closed"),
                (#"{"type":"Polygon","coordinates":[[[0,0],[2,2],[2,0],[0,2],[0,0]]]}"#, "invalid"),
            ]
            for (text, fragment) in cases {
                let result = try Executable.run(["region", "set", "bad", try file(text)], configuration: configuration)
                #expect(result.status != 0)
                #expect(result.stderr.hasPrefix("scavengerd: "))
                #expect(result.stderr.filter { $0 == "\n" }.count == 1, "\(result.stderr)")
                #expect(result.stderr.lowercased().contains(fragment.lowercased()), "\(result.stderr)")
            }
            let badName = try Executable.run(["region", "set", "Bad Name", good], configuration: configuration)
            #expect(badName.status != 0 && badName.stderr.contains("region name"))
            let missing = try Executable.run(["region", "set", "x", "/nonexistent.json"], configuration: configuration)
            #expect(missing.status != 0 && missing.stderr.contains("cannot read"))

            #expect(try Executable.run(["region", "delete", "berlin"], configuration: configuration).status == 0)
            let again = try Executable.run(["region", "delete", "berlin"], configuration: configuration)
            #expect(again.status != 0 && again.stderr == "scavengerd: no region named berlin\n")
        }
    }

    @Test("user role: sets a role; an unknown user or role fails")
    func userRole() async throws {
        try await TestEnvironment.make().use { environment in
            _ = try await environment.database.register(
                name: "mod", email: "mod@example.org", passwordHash: "x", tokenHash: [UInt8](repeating: 1, count: 32),
                sessionTTLSeconds: 60)
            let ok = try Executable.run(["user", "role", "mod", "moderator"], configuration: environment.configuration)
            #expect(ok.status == 0, "\(ok.stderr)")
            let account = try await environment.database.credentials(login: "mod")
            #expect(account?.account.user.role == .moderator)
            #expect(try Executable.run(["user", "role", "nobody", "admin"], configuration: environment.configuration).status != 0)
            #expect(try Executable.run(["user", "role", "mod", "king"], configuration: environment.configuration).status != 0)
        }
    }

    @Test("user password: sets the password from a pipe with REGISTER's rules and ends the user's sessions")
    func userPassword() async throws {
        try await TestEnvironment.make().use { environment in
            let token = [UInt8](repeating: 7, count: 32)
            _ = try await environment.database.register(
                name: "Forgetful", email: "f@example.org", passwordHash: "x", tokenHash: token, sessionTTLSeconds: 600)
            #expect(try await environment.database.account(sessionTokenHash: token) != nil)

            let short = try Executable.run(["user", "password", "forgetful"], configuration: environment.configuration, input: "short\n")
            #expect(short.status != 0 && short.stderr.contains("password"), "\(short.stderr)")
            #expect(try await environment.database.account(sessionTokenHash: token) != nil)

            let ok = try Executable.run(
                ["user", "password", "forgetful"], configuration: environment.configuration, input: "a new secret 42\n")
            #expect(ok.status == 0, "\(ok.stderr)")
            let credentials = try #require(try await environment.database.credentials(login: "Forgetful"))
            #expect(PasswordHasher.verifySync("a new secret 42", against: credentials.passwordHash))
            #expect(try await environment.database.account(sessionTokenHash: token) == nil)

            let nobody = try Executable.run(["user", "password", "nobody"], configuration: environment.configuration, input: "long enough 1\n")
            #expect(nobody.status != 0 && nobody.stderr == "scavengerd: no user named nobody\n", "\(nobody.stderr)")
            let empty = try Executable.run(["user", "password", "forgetful"], configuration: environment.configuration, input: "")
            #expect(empty.status != 0)
        }
    }

    @Test("migrate is idempotent and says so")
    func migrate() async throws {
        try await TestEnvironment.make().use { environment in
            let result = try Executable.run(
                ["migrate", "--migrations", TestDatabase.migrationsDirectory.path], configuration: environment.configuration)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("0 applied now"))
        }
    }

    @Test("serve refuses a malformed rate or throttle flag at start, saying which", arguments: [
        (["--post-rate", "0/60"], "--post-rate"),
        (["--reply-rate", "ten/60"], "--reply-rate"),
        (["--register-rate", "5"], "--register-rate"),
        (["--staff-rate-factor", "0"], "--staff-rate-factor"),
        (["--login-max-backoff", "0"], "--login-max-backoff"),
        (["--password-threads", "0"], "--password-threads"),
        (["--password-queue", "-1"], "--password-queue"),
    ])
    func badAbuseFlags(flags: [String], named: String) throws {
        // A database that is not there: a flag that passes would make serve wait for it.
        let configuration = PostgresConfiguration(connectionString: "postgresql://127.0.0.1:1/none?connect_timeout=1")
        let result = try Executable.run(["serve", "--port", "0"] + flags, configuration: configuration)
        #expect(result.status != 0)
        #expect(result.stderr.contains(named), "\(result.stderr)")
    }

    @Test("serve refuses a database timeout under one second", arguments: ["0", "-3"])
    func badDatabaseTimeout(value: String) throws {
        let configuration = PostgresConfiguration(connectionString: "postgresql://127.0.0.1:1/none?connect_timeout=1")
        let result = try Executable.run(["serve", "--port", "0", "--database-timeout=\(value)"], configuration: configuration)
        #expect(result.status != 0)
        #expect(result.stderr.contains("--database-timeout must be at least 1"), "\(result.stderr)")
    }
}
