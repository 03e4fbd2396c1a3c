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

    /// `scavenger --port P arguments…`, to its end; `input` (when given) is its standard input,
    /// a pipe, else it reads nothing (/dev/null).
    func run(_ arguments: [String], input: String? = nil) throws -> Result {
        let process = Process()
        process.executableURL = try Built.url("scavenger")
        process.arguments = ["--port", String(port)] + arguments
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = config.path
        process.environment = environment
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let inputPipe = Pipe()
        process.standardInput = input == nil ? FileHandle.nullDevice : inputPipe
        try process.run()
        if let input {
            inputPipe.fileHandleForWriting.write(Data(input.utf8))
            try inputPipe.fileHandleForWriting.close()
        }
        let stdout = readToEnd(out.fileHandleForReading)
        let stderr = readToEnd(err.fileHandleForReading)
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
                let data = handle.availableData
                // At the end of the pipe the handler goes (a source left on a closed descriptor
                // has crashed libdispatch's event loop).
                if data.isEmpty { return handle.readabilityHandler = nil }
                let text = String(decoding: data, as: UTF8.self)
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

    /// A port nothing listens on: one the system handed out and took back.
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        try #require(bound)
        return Int(UInt16(bigEndian: address.sin_port))
    }

    @Test("nothing listens: `cannot connect to HOST:PORT (connection refused)`, exit 1, in every mode")
    func cannotConnect() throws {
        let port = try Self.freePort()
        let cli = try CLI(port: port)
        let expected = "scavenger: cannot connect to 127.0.0.1:\(port) (connection refused)\n"
        let once = try cli.run(["ping"])
        #expect(once.status == 1 && once.stderr == expected && once.stdout.isEmpty, "\(once)")
        let json = try cli.run(["--json", "hunts"])
        #expect(json.status == 1)
        let error = try CLI.values(json.stdout).first
        #expect(error?["error"] as? String == "CONNECTION_LOST")
        #expect(error?["message"] as? String == "cannot connect to 127.0.0.1:\(port) (connection refused)")
        let piped = try cli.run([], input: "ping\n")
        #expect(piped.status == 1 && piped.stderr == expected, "\(piped)")
    }

    @Test("piped input: no prompt, replies only; an ERR goes to stderr, the lines after it still run, exit 1")
    func piped() async throws {
        try await Daemon.with { daemon in
            let cli = try CLI(port: daemon.port)
            let result = try cli.run([], input: "ping\n\n# a comment\nget pmissing\nPING\n")
            #expect(result.status == 1)
            #expect(result.stdout == "\"PONG\"\n\"PONG\"\n", "\(result.stdout)")
            #expect(result.stderr.hasPrefix("ERR NOT_FOUND"), "\(result.stderr)")
            #expect(!result.stdout.contains("scavenger>") && !result.stderr.contains("scavenger>"))
            let fine = try cli.run([], input: "ping\nquit\nget pmissing\n")
            #expect(fine.status == 0 && fine.stdout == "\"PONG\"\n" && fine.stderr.isEmpty, "\(fine)")
        }
    }

    @Test("help is a table of the commands (--json keeps the JSON), help NAME its syntax; replies keep their key order")
    func help() async throws {
        try await Daemon.with { daemon in
            let cli = try CLI(port: daemon.port)
            let table = try cli.run(["help"])
            let lines = table.stdout.split(separator: "\n")
            #expect(table.status == 0)
            #expect(lines.first?.hasPrefix("COMMAND") == true && lines.first?.contains("SUMMARY") == true, "\(table.stdout)")
            #expect(lines.contains { $0.hasPrefix("PING ") && $0.contains("Answers \"PONG\".") })
            #expect(lines.contains { $0.hasPrefix("CHECKIN ") })
            #expect(!table.stdout.contains("\"syntax\""))
            let json = try cli.run(["--json", "help"])
            let commands = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]]
            #expect(commands?.first?["command"] as? String == "PING")
            let one = try cli.run(["help", "nearby"])
            #expect(one.stdout.hasPrefix("NEARBY lat lon radius_m"), "\(one.stdout)")
            #expect(one.stdout.contains("\n  Live pins within radius_m"))
            // HELLO answers server, version, protocol, user: printed in that order, not sorted.
            let hello = try cli.run(["hello"]).stdout
            let server = try #require(hello.range(of: "\"server\"")), proto = try #require(hello.range(of: "\"protocol\""))
            #expect(server.lowerBound < proto.lowerBound, "\(hello)")
        }
    }

    @Test("hunt shows the stops' clues, the hints and a player's standing; counts are singular for one; distances whole metres; badges is a table")
    func hunt() async throws {
        try await Daemon.with { daemon in
            let host = try CLI(port: daemon.port), player = try CLI(port: daemon.port)
            #expect(try host.run(["register", "hostess", "hostess@example.org", "password1"]).status == 0)
            #expect(try player.run(["register", "pia", "pia@example.org", "password1"]).status == 0)
            let created = try CLI.values(host.run(["--json", "createhunt", "Museum island", "PUBLIC"]).stdout)[0]["hunt"] as? [String: Any]
            let id = try #require(created?["id"] as? String)
            let stop = try CLI.values(host.run(
                ["--json", "addstop", id, "52.5169", "13.4019", "40", "1", "Lustgarten", "CLUE", "Where the big bowl stands"]).stdout)[0]["stop"] as? [String: Any]
            let stopID = try #require(stop?["id"] as? String)
            #expect(try host.run(["starthunt", id]).status == 0)
            #expect(try player.run(["join", id]).status == 0)
            #expect(try host.run(["hint", id, "Look for the granite bowl"]).status == 0)
            // About 11 m north of the stop: the check-in's distance is printed in whole metres.
            let checkin = try player.run(["checkin", stopID, "52.5170", "13.4019"])
            #expect(checkin.status == 0, "\(checkin)")
            let distance = try #require(checkin.stdout.firstMatch(of: /"distance_m": ([0-9.]+)/))
            #expect(!distance.1.contains("."), "\(checkin.stdout)")

            let details = try player.run(["hunt", id]).stdout
            #expect(details.hasPrefix("Museum island (\(id)): running, hosted by hostess, 1 player\n"), "\(details)")
            #expect(details.contains("CLUE") && details.contains("Where the big bowl stands"))
            #expect(details.contains("hints:") && details.contains("Look for the granite bowl"))
            #expect(details.contains("you: 1 point, 1 stop found, rank 1"), "\(details)")

            // Badges (protocol 1.4) as a table: the find completed the hunt of one stop.
            let badges = try player.run(["badges"]).stdout.split(separator: "\n")
            #expect(badges.first?.hasPrefix("BADGE") == true && badges.first?.contains("DESCRIPTION") == true, "\(badges)")
            #expect(badges.dropFirst().filter { !$0.allSatisfy { $0 == "-" || $0 == " " } }.map { $0.split(separator: " ").first ?? "" }
                == ["first-find", "finisher"], "\(badges)")
            #expect(try host.run(["badges"]).stdout.hasSuffix("\n(none)\n"))
            #expect(!details.contains("time trial"))
        }
    }

    @Test("a time trial: hunt says so, and its leaderboard has a TIME column")
    func trial() async throws {
        try await Daemon.with { daemon in
            let host = try CLI(port: daemon.port), player = try CLI(port: daemon.port)
            #expect(try host.run(["register", "hostess", "hostess@example.org", "password1"]).status == 0)
            #expect(try player.run(["register", "pia", "pia@example.org", "password1"]).status == 0)
            let created = try CLI.values(host.run(["--json", "createhunt", "Sprint", "PUBLIC", "TRIAL", "600"]).stdout)[0]["hunt"] as? [String: Any]
            let id = try #require(created?["id"] as? String)
            let stop = try CLI.values(host.run(["--json", "addstop", id, "52.5169", "13.4019", "40", "1", "Lustgarten"]).stdout)[0]["stop"] as? [String: Any]
            let stopID = try #require(stop?["id"] as? String)
            #expect(try host.run(["starthunt", id]).status == 0)
            #expect(try player.run(["join", id]).status == 0)
            #expect(try host.run(["hunt", id]).stdout.contains("time trial: 600 s from each player's first check-in"))
            let before = try host.run(["leaderboard", id]).stdout.split(separator: "\n")
            #expect(before.first?.contains("TIME") == true && before.count == 2 && before[1].contains(" - "), "\(before)")
            #expect(try player.run(["checkin", stopID, "52.5169", "13.4019"]).status == 0)
            let after = try host.run(["leaderboard", id]).stdout.split(separator: "\n")
            #expect(after.count == 2 && after[1].contains("pia") && after[1].contains(" s "), "\(after)")
        }
    }

    @Test("a team hunt: join takes TEAM with a name of two words (an argument, or quoted in piped lines), hunt shows the team's standing, leaderboard is a table of teams with their members")
    func teams() async throws {
        try await Daemon.with { daemon in
            let host = try CLI(port: daemon.port), ann = try CLI(port: daemon.port), bob = try CLI(port: daemon.port)
            let carol = try CLI(port: daemon.port)
            #expect(try host.run(["register", "hostess", "hostess@example.org", "password1"]).status == 0)
            for (cli, name) in [(ann, "ann"), (bob, "bob"), (carol, "carol")] {
                #expect(try cli.run(["register", name, "\(name)@example.org", "password1"]).status == 0)
            }
            let created = try CLI.values(host.run(["--json", "createhunt", "Relay", "TEAMS", "SIZE", "3"]).stdout)[0]["hunt"] as? [String: Any]
            let id = try #require(created?["id"] as? String), code = try #require(created?["code"] as? String)
            #expect(created?["teams"] as? Int == 3)
            let stop = try CLI.values(host.run(["--json", "addstop", id, "52.5169", "13.4019", "40", "10", "Gate"]).stdout)[0]["stop"] as? [String: Any]
            let stopID = try #require(stop?["id"] as? String)
            #expect(try host.run(["starthunt", id]).status == 0)
            // A word with a space is one argument: the CLI quotes it.
            let joined = try ann.run(["join", code, "TEAM", "Red Foxes"])
            #expect(joined.status == 0, "\(joined)")
            #expect(try bob.run(["join", code, "TEAM", "Red Foxes"]).status == 0)
            // A line typed (here piped) is sent as written, its quotes included.
            let piped = try carol.run([], input: "join \(code) TEAM \"Blue Jays\"\n")
            #expect(piped.status == 0, "\(piped)")
            let missing = try carol.run(["join", code])
            #expect(missing.status == 1 && missing.stderr.hasPrefix("ERR BAD_ARGUMENT"), "\(missing)")
            #expect(try ann.run(["checkin", stopID, "52.5169", "13.4019"]).status == 0)

            let details = try bob.run(["hunt", id]).stdout
            #expect(details.contains("teams of up to 3"), "\(details)")
            #expect(details.contains("your team Red Foxes: 10 points, 1 stop found, rank 1"), "\(details)")
            let board = try host.run(["leaderboard", id]).stdout.split(separator: "\n")
            #expect(board.first?.hasPrefix("RANK  TEAM") == true && board.first?.hasSuffix("MEMBERS") == true, "\(board)")
            let red = board.first { $0.contains("Red Foxes") }
            #expect(red?.hasPrefix("1 ") == true && red?.contains("ann") == true && red?.contains("bob") == true, "\(board)")
            #expect(board.contains { $0.contains("Blue Jays") && $0.hasSuffix("carol") }, "\(board)")
        }
    }

    @Test("the prompt (tmux): no line with a password, token or code reaches the history, an older history is cleaned; a watch typed there resumes after a daemon restart")
    func promptSecretsAndWatch() async throws {
        try await Daemon.with { daemon in
            let cli = try CLI(port: daemon.port)
            #expect(try cli.run(["register", "bob", "bob@example.org", "password1"]).status == 0)
            let history = cli.config.appendingPathComponent("scavenger/history")
            try "whoami\nregister eve eve@example.org hunter22\nhunts\n".write(to: history, atomically: true, encoding: .utf8)
            let tmux = Tmux()
            let command = "env XDG_CONFIG_HOME=\(cli.config.path) \(try Built.url("scavenger").path) --port \(daemon.port)"
            try tmux.run(["new-session", "-d", "-s", "cli", "-x", "160", "-y", "50", command])
            defer { tmux.killServer() }
            try await eventually("the prompt shows") { try tmux.screen().contains("scavenger>") }
            // The older history was cleaned when the prompt opened.
            #expect(try String(contentsOf: history, encoding: .utf8) == "whoami\nhunts\n")
            try tmux.run(["send-keys", "-t", "cli", "login bob password1", "Enter"])
            try await eventually("the login is answered") { try tmux.screen().contains("\"token\"") }
            try tmux.run(["send-keys", "-t", "cli", "checkin smissing 52.52 13.405 CODE sesame", "Enter"])
            try await eventually("the check-in is refused") { try tmux.screen().contains("ERR ") }
            try tmux.run(["send-keys", "-t", "cli", "ping", "Enter"])
            try await eventually("PONG is printed") { try tmux.screen().contains("\"PONG\"") }
            let kept = try String(contentsOf: history, encoding: .utf8)
            #expect(kept.contains("ping") && !kept.contains("password1") && !kept.contains("sesame") && !kept.contains("hunter22"), "\(kept)")
            let mode = try FileManager.default.attributesOfItem(atPath: history.path)[.posixPermissions] as? Int
            #expect(mode == 0o600)
            // Up recalls ping, then hunts: the secret lines were never in the history.
            try tmux.run(["send-keys", "-t", "cli", "Up", "Up"])
            try await eventually("the history skips the secrets") {
                try tmux.screen().split(separator: "\n").last { !$0.isEmpty }?.hasPrefix("scavenger> hunts") == true
            }
            try tmux.run(["send-keys", "-t", "cli", "C-u", "C-l"])

            // A watch typed at the prompt runs beside it and comes back after the daemon does.
            try tmux.run(["send-keys", "-t", "cli", "watch 52.52 13.405 500", "Enter"])
            try await eventually("the watch is live") { try tmux.screen().contains("-- live:") }
            try await daemon.kill9()
            try await eventually("the watch says it is resuming") { try tmux.screen().contains("-- disconnected") }
            try await daemon.restart()
            try await eventually("the watch resumed") { try tmux.screen().contains("-- resumed") }
            #expect(try cli.run(["post", "52.52", "13.405", "after the restart"]).status == 0)
            try await eventually("the new pin shows") { try tmux.screen().contains("bob: after the restart") }
            try tmux.run(["send-keys", "-t", "cli", "unwatch 1", "Enter"])
            try await eventually("the watch ends") { try tmux.screen().contains("-- watch 1 ended") }
            try tmux.run(["send-keys", "-t", "cli", "quit", "Enter"])
        }
    }
}
