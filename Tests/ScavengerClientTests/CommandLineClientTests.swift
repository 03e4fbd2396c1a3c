import Foundation
import ScavengerTestSupport
import Testing

/// Runs the built `scavenger` with a config directory of its own.
struct CLI {
    let port: Int
    let config: URL

    init(port: Int) throws {
        self.port = port
        config = FileManager.default.temporaryDirectory.appendingPathComponent("scavenger-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
    }

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// `scavenger --port P arguments…`, to its end.
    func run(_ arguments: [String]) throws -> Result {
        let process = Process()
        process.executableURL = try Built.url("scavenger")
        process.arguments = ["--port", String(port)] + arguments
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = config.path
        process.environment = environment
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self), stderr: String(decoding: stderr, as: UTF8.self))
    }

    /// The JSON values of `--json` output, one a line.
    static func values(_ output: String) throws -> [[String: Any]] {
        try output.split(separator: "\n").map { line in
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                throw CLIOutput(line: String(line))
            }
            return object
        }
    }

    struct CLIOutput: Error, CustomStringConvertible {
        let line: String
        var description: String { "not a JSON object: \(line)" }
    }
}

/// Runs `tmux` on a server socket of its own (removed by ``killServer()``).
struct Tmux {
    let socket = FileManager.default.temporaryDirectory.appendingPathComponent("scavenger-tmux-\(UUID().uuidString.prefix(8))").path

    /// Ends the server and the session's processes, and removes the socket.
    func killServer() {
        _ = try? run(["kill-server"])
        try? FileManager.default.removeItem(atPath: socket)
    }

    /// Runs `tmux -S socket arguments…` and answers what it printed (through a file). Spawned
    /// and reaped by hand: Foundation's `Process` waits, on Linux, for descriptors that the tmux
    /// server `new-session` starts keeps open, so it never sees that client end.
    @discardableResult
    func run(_ arguments: [String]) throws -> String {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("tmux-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: output) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv = (["tmux", "-S", socket] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        // CI runs with no terminal and maybe no TERM: tmux needs one to draw its session in.
        var environment = ProcessInfo.processInfo.environment
        if (environment["TERM"] ?? "").isEmpty || environment["TERM"] == "dumb" { environment["TERM"] = "xterm-256color" }
        environment["TMUX"] = nil
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { envp.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawnp(&pid, "tmux", &actions, nil, argv, envp)
        guard spawned == 0 else { throw SpawnFailed(errno: spawned) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        return (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
    }

    struct SpawnFailed: Error, CustomStringConvertible {
        let errno: Int32
        var description: String { "cannot run tmux: errno \(errno)" }
    }

    /// The screen's text.
    func screen() throws -> String { try run(["capture-pane", "-p", "-t", "cli"]) }
}

@Suite("scavenger, the command-line client", .timeLimit(.minutes(10)))
struct CommandLineClientTests {
    @Test("--json: register keeps the token (0600), later runs use it, lists parse, an ERR is a JSON object and exit 1; tables by default")
    func json() async throws {
        try await Daemon.with { daemon in
            let cli = try CLI(port: daemon.port)
            let registered = try cli.run(["--json", "register", "alice", "alice@example.org", "password1"])
            #expect(registered.status == 0, "\(registered.stderr)")
            let session = try CLI.values(registered.stdout)
            #expect(session.count == 1 && (session[0]["user"] as? [String: Any])?["name"] as? String == "alice")
            let tokenFile = cli.config.appendingPathComponent("scavenger/token")
            let token = try String(contentsOf: tokenFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(token == session[0]["token"] as? String)
            let mode = try FileManager.default.attributesOfItem(atPath: tokenFile.path)[.posixPermissions] as? Int
            #expect(mode == 0o600)

            // A later run is logged in with the token (AUTH), and quotes text with spaces.
            let posted = try cli.run(["--json", "post", "52.52", "13.405", "Free coffee \"here\""])
            #expect(posted.status == 0, "\(posted.stderr)")
            let pin = try CLI.values(posted.stdout)[0]["pin"] as? [String: Any]
            #expect(pin?["author"] as? String == "alice" && pin?["text"] as? String == "Free coffee \"here\"")
            let whoami = try CLI.values(cli.run(["--json", "whoami"]).stdout)
            #expect((whoami[0]["user"] as? [String: Any])?["name"] as? String == "alice")

            let nearby = try cli.run(["--json", "nearby", "52.52", "13.405", "500"])
            let pins = try CLI.values(nearby.stdout)[0]["pins"] as? [[String: Any]]
            #expect(pins?.map { $0["id"] as? String } == [pin?["id"] as? String])
            // The table.
            let table = try cli.run(["nearby", "52.52", "13.405", "500"])
            let lines = table.stdout.split(separator: "\n")
            #expect(lines.first?.hasPrefix("ID") == true && lines.first?.contains("DISTANCE") == true)
            #expect(lines.count == 2 && lines[1].contains("Free coffee") && lines[1].contains("alice"))

            // An ERR: a JSON object on standard output with --json, the line on standard error without.
            let missing = try cli.run(["--json", "get", "pmissing"])
            #expect(missing.status == 1)
            #expect(try CLI.values(missing.stdout).first?["error"] as? String == "NOT_FOUND")
            let plain = try cli.run(["get", "pmissing"])
            #expect(plain.status == 1 && plain.stderr.hasPrefix("ERR NOT_FOUND"))

            // Hunts as a table, the long tail by passthrough.
            let hunt = try CLI.values(cli.run(["--json", "createhunt", "Museum island", "PUBLIC"]).stdout)[0]["hunt"] as? [String: Any]
            #expect(hunt?["code"] is String)
            let hunts = try cli.run(["hunts"])
            #expect(hunts.stdout.hasPrefix("ID") && hunts.stdout.contains("Museum island"))
            let huntID = try #require(hunt?["id"] as? String)
            let board = try cli.run(["leaderboard", huntID])
            #expect(board.status == 0 && board.stdout.hasPrefix("RANK"))
            _ = try cli.run(["addstop", huntID, "52.5169", "13.4019", "40", "10", "Lustgarten"])
            let details = try cli.run(["hunt", huntID]).stdout
            #expect(details.hasPrefix("Museum island (\(huntID)): scheduled, hosted by alice"), "\(details)")
            #expect(details.contains("join code: ") && details.contains("Lustgarten"))
            let usage = try cli.run(["--help"])
            #expect(usage.status == 0 && usage.stdout.contains("--json") && usage.stdout.contains("--tls"))

            // LOGOUT forgets the token.
            #expect(try cli.run(["logout"]).status == 0)
            #expect(!FileManager.default.fileExists(atPath: tokenFile.path))
        }
    }

    @Test("watch --json streams the snapshot, then live pins, one JSON value a line")
    func watch() async throws {
        try await Daemon.with { daemon in
            let cli = try CLI(port: daemon.port)
            let process = Process()
            process.executableURL = try Built.url("scavenger")
            process.arguments = ["--port", String(daemon.port), "--json", "watch", "52.52", "13.405", "500"]
            let out = Pipe()
            process.standardOutput = out
            let lines = Collected<String>()
            out.fileHandleForReading.readabilityHandler = { handle in
                let text = String(decoding: handle.availableData, as: UTF8.self)
                for line in text.split(separator: "\n") { lines.append(String(line)) }
            }
            try process.run()
            defer { process.terminate() }
            try await eventually("the snapshot is ready") { lines.all.contains { $0.contains("\"ready\"") } }
            #expect(try cli.run(["register", "bob", "bob@example.org", "password1"]).status == 0)
            #expect(try cli.run(["post", "52.52", "13.405", "live"]).status == 0)
            try await eventually("the pin arrives") { lines.all.contains { $0.contains("\"live\"") } }
            let types = try lines.all.map { try CLI.values($0)[0]["type"] as? String }
            #expect(types == ["snapshot", "ready", "pin"])
        }
    }

    @Test("the prompt in a terminal (tmux): a command's reply is printed, Tab completes a command name, history recalls")
    func prompt() async throws {
        try await Daemon.with { daemon in
            let cli = try CLI(port: daemon.port)
            let tmux = Tmux()
            let command = "env XDG_CONFIG_HOME=\(cli.config.path) \(try Built.url("scavenger").path) --port \(daemon.port)"
            try tmux.run(["new-session", "-d", "-s", "cli", "-x", "160", "-y", "50", command])
            defer { tmux.killServer() }
            try await eventually("the prompt shows") { try tmux.screen().contains("scavenger>") }
            try tmux.run(["send-keys", "-t", "cli", "ping", "Enter"])
            try await eventually("PONG is printed") { try tmux.screen().contains("\"PONG\"") }
            // Tab completes a command name from HELP, in the case typed.
            try tmux.run(["send-keys", "-t", "cli", "leaderb", "Tab"])
            try await eventually("the name is completed") { try tmux.screen().contains("scavenger> leaderboard") }
            try tmux.run(["send-keys", "-t", "cli", "C-u"])
            try tmux.run(["send-keys", "-t", "cli", "WHOA", "Tab", "Enter"])
            try await eventually("WHOAMI is answered") {
                let screen = try tmux.screen()
                return screen.contains("scavenger> WHOAMI") && screen.contains("\"user\"") && screen.contains("null")
            }
            // Up recalls the last line from the history.
            try tmux.run(["send-keys", "-t", "cli", "Up"])
            try await eventually("the history recalls it") {
                try tmux.screen().split(separator: "\n").last { !$0.isEmpty }?.hasPrefix("scavenger> WHOAMI") == true
            }
            try tmux.run(["send-keys", "-t", "cli", "C-u", "quit", "Enter"])
        }
    }
}
