import Foundation
import Postgres
import ScavengerClient
import ScavengerTestSupport
import Synchronization
import Testing

/// The built executables (`scavengerd`, `scavenger`), beside the test bundle.
enum Built {
    static func url(_ name: String) throws -> URL {
        var candidates: [URL] = []
        if let bundle = Bundle.main.executableURL {
            candidates.append(bundle.deletingLastPathComponent().appendingPathComponent(name))
        }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        candidates.append(root.appendingPathComponent(".build/debug/\(name)"))
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            throw NotBuilt(name: name)
        }
        return found
    }

    struct NotBuilt: Error, CustomStringConvertible {
        let name: String
        var description: String { "\(name) is not built: run the tests through scripts/test.sh (swift build --build-tests)" }
    }
}

/// A migrated schema of its own in the test database, and a pool on it to count rows.
struct Schema: Sendable {
    let configuration: PostgresConfiguration
    let pool: PostgresPool
    /// The URL the daemon is given (through a proxy when the schema is proxied).
    let url: String
    /// In front of PostgreSQL when the schema was made `proxied`: cut it to restart the database
    /// as far as the daemon can tell.
    let proxy: TCPProxy?

    static func make(proxied: Bool = false) async throws -> Schema {
        let configuration: PostgresConfiguration
        var proxy: TCPProxy?
        if proxied {
            let made = try TestDatabase.proxiedConfiguration(prefix: "client")
            configuration = made.0
            proxy = made.1
        } else {
            configuration = try TestDatabase.isolatedConfiguration(prefix: "client")
        }
        try await TestDatabase.migrate(configuration)
        // Counting goes around the proxy when there is one, so a cut never fails a count.
        var direct = configuration
        if proxied, let schema = configuration.options {
            direct = PostgresConfiguration(connectionString: try TestDatabase.url(), options: schema)
        }
        return Schema(configuration: configuration, pool: PostgresPool(configuration: direct, maxConnections: 2), url: Self.url(configuration), proxy: proxy)
    }

    /// The configuration's URL with its `options` (the schema) as a URI parameter.
    static func url(_ configuration: PostgresConfiguration) -> String {
        guard let options = configuration.options else { return configuration.connectionString }
        let encoded = options.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? options
        let separator = configuration.connectionString.contains("?") ? "&" : "?"
        return configuration.connectionString + separator + "options=" + encoded
    }

    /// How many rows `sql` counts (`SELECT count(*) AS n …`).
    func count(_ sql: SQL) async throws -> Int {
        try await pool.query(sql)[0].int("n")
    }

    /// Gives `username` a role, as `scavengerd user role` does.
    func setRole(_ username: String, _ role: String) throws {
        let process = Process()
        process.executableURL = try Built.url("scavengerd")
        process.arguments = ["user", "role", username, role]
        var environment = ProcessInfo.processInfo.environment
        environment["DATABASE_URL"] = url
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
    }

    func shutdown() async {
        proxy?.stop()
        await pool.shutdown()
    }

    /// Runs `body` on a fresh schema and shuts it down after. At most ``Places/count`` of these
    /// run at once: each holds daemons with PostgreSQL connections of their own, and the whole
    /// test run shares the cluster's connection limit with every other suite.
    static func with<T>(proxied: Bool = false, _ body: (Schema) async throws -> T) async throws -> T {
        await Places.shared.take()
        let schema: Schema
        do {
            schema = try await make(proxied: proxied)
        } catch {
            await Places.shared.give()
            throw error
        }
        do {
            let value = try await body(schema)
            await schema.shutdown()
            await Places.shared.give()
            return value
        } catch {
            await schema.shutdown()
            await Places.shared.give()
            throw error
        }
    }
}

/// The schemas (with their daemons) alive at once in this test target.
actor Places {
    static let shared = Places()
    static let count = 3
    private var free = count
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func take() async {
        if free > 0 {
            free -= 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func give() {
        if waiting.isEmpty { free += 1 } else { waiting.removeFirst().resume() }
    }
}

/// A `scavengerd serve` process on a schema, with no rate limits; it can be killed with
/// SIGKILL and started again on the same port.
final class Daemon: Sendable {
    private let output = Output()

    /// The running process and what it wrote to standard error.
    final class Output: Sendable {
        let state = Mutex<(process: Process?, stderr: String)>((nil, ""))
    }
    let schema: Schema
    let extra: [String]
    /// The line port, fixed once the first start picked it.
    let port: Int
    /// The TLS port, with TLS arguments.
    let tlsPort: Int?

    static let unlimited = [
        "--post-rate", "off", "--photo-rate", "off", "--reply-rate", "off", "--report-rate", "off", "--register-rate", "off",
        "--join-failure-rate", "off", "--password-threads", "1", "--database-connections", "3", "--log-level", "info",
    ]

    init(schema: Schema, _ extra: [String] = []) async throws {
        self.schema = schema
        self.extra = extra
        let (port, tlsPort) = try await Self.start(schema: schema, port: 0, extra: extra, into: output)
        self.port = port
        self.tlsPort = tlsPort
    }

    private static func start(
        schema: Schema, port: Int, extra: [String], into output: Output
    ) async throws -> (Int, Int?) {
        let process = Process()
        process.executableURL = try Built.url("scavengerd")
        process.arguments = ["serve", "--port", String(port)] + unlimited + extra
        var variables = ProcessInfo.processInfo.environment
        variables["DATABASE_URL"] = schema.url
        process.environment = variables
        let pipe = Pipe()
        process.standardError = pipe
        process.standardOutput = FileHandle.nullDevice
        output.state.withLock { $0 = (process, "") }
        pipe.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            // At the end of the pipe the handler goes: left on, libdispatch keeps a source on a
            // descriptor that is closed and reused, and has crashed the test process in its
            // event loop (_dispatch_event_loop_drain).
            if data.isEmpty { return handle.readabilityHandler = nil }
            output.state.withLock { state in
                if state.process === process { state.stderr += String(decoding: data, as: UTF8.self) }
            }
        }
        try process.run()
        let deadline = ContinuousClock.now + .seconds(90)
        while true {
            let text = output.state.withLock { $0.stderr }
            if let found = loggedPort(text, { $0.contains("listening") && !$0.contains("TLS") && !$0.contains("HTTP") }) {
                let tls = extra.contains("--tls-port") ? loggedPort(text, { $0.contains("listening with TLS") }) : nil
                if !extra.contains("--tls-port") || tls != nil { return (found, tls) }
            }
            guard process.isRunning, ContinuousClock.now < deadline else {
                throw NotListening(stderr: text)
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    struct NotListening: Error, CustomStringConvertible {
        let stderr: String
        var description: String { "scavengerd did not start listening: \(stderr.suffix(2000))" }
    }

    private static func loggedPort(_ text: String, _ matches: (Substring) -> Bool) -> Int? {
        guard let line = text.split(separator: "\n").first(where: matches),
              let colon = line.range(of: ":", options: .backwards)
        else { return nil }
        return Int(line[colon.upperBound...].prefix { $0.isNumber })
    }

    var stderr: String { output.state.withLock { $0.stderr } }

    /// SIGKILL, and waits for the process to be gone.
    func kill9() async throws {
        guard let process = output.state.withLock({ $0.process }) else { return }
        kill(process.processIdentifier, SIGKILL)
        while process.isRunning { try await Task.sleep(for: .milliseconds(20)) }
    }

    /// Starts it again on the same port (retrying while the port is still taken).
    func restart() async throws {
        var attempts = 0
        while true {
            do {
                _ = try await Self.start(schema: schema, port: port, extra: extra, into: output)
                return
            } catch let error as NotListening {
                attempts += 1
                if attempts >= 20 { throw error }
                try await Task.sleep(for: .milliseconds(250))
            }
        }
    }

    /// SIGTERM, then SIGKILL if it has not stopped within a minute (a guard, not a measure).
    func stop() async {
        guard let process = output.state.withLock({ $0.process }) else { return }
        process.terminate()
        let deadline = ContinuousClock.now + .seconds(60)
        while process.isRunning, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(50)) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    /// A client of this daemon's line port.
    func client(retries: Int = 12, token: String? = nil) throws -> ScavengerClient {
        try ScavengerClient(
            ScavengerClient.Configuration(host: "127.0.0.1", port: port, maximumBackoff: .milliseconds(500), maximumRetries: retries),
            token: token)
    }

    /// Runs `body` with a daemon on a fresh schema, then stops both.
    static func with<T>(proxied: Bool = false, _ extra: [String] = [], _ body: (Daemon) async throws -> T) async throws -> T {
        try await Schema.with(proxied: proxied) { schema in
            let daemon = try await Daemon(schema: schema, extra)
            do {
                let value = try await body(daemon)
                await daemon.stop()
                return value
            } catch {
                await daemon.stop()
                throw error
            }
        }
    }
}

/// Collects what a stream delivers, from another task.
final class Collected<Element: Sendable>: Sendable {
    private let items = Mutex<[Element]>([])
    func append(_ item: Element) { items.withLock { $0.append(item) } }
    var all: [Element] { items.withLock { $0 } }
}
