import Foundation
import ScavengerTestSupport
import Testing

/// The prompt in a terminal (tmux): events printed above the line being typed, passwords asked for
/// without echo; and the lines of a hunt watch naming stops by title.
@Suite("scavenger's prompt: events above the line, passwords without echo, stops by title", .timeLimit(.minutes(10)))
struct PromptTests {
    /// The prompt of `cli` in a new tmux session `cli`, once it shows.
    static func open(_ cli: CLI, port: Int) async throws -> Tmux {
        let tmux = Tmux()
        let command = "env XDG_CONFIG_HOME=\(cli.config.path) \(try Built.url("scavenger").path) --port \(port)"
        try tmux.run(["new-session", "-d", "-s", "cli", "-x", "160", "-y", "50", command])
        try await eventually("the prompt shows") { try tmux.screen().contains("scavenger>") }
        return tmux
    }

    /// The screen's lines up to its last non-empty one, without their trailing spaces.
    static func lines(_ tmux: Tmux) throws -> [String] {
        let lines = try tmux.screen().split(separator: "\n", omittingEmptySubsequences: false).map { line in
            String(line.reversed().drop { $0 == " " }.reversed())
        }
        guard let last = lines.lastIndex(where: { !$0.isEmpty }) else { return [] }
        return Array(lines[...last])
    }

    @Test("an event that comes while a line is being typed is printed on its own line above it; the line is drawn again, still editable, and Enter sends all of it")
    func eventAboveTheLine() async throws {
        try await Daemon.with { daemon in
            let cli = try CLI(port: daemon.port), poster = try CLI(port: daemon.port)
            #expect(try poster.run(["register", "bob", "bob@example.org", "password1"]).status == 0)
            let tmux = try await Self.open(cli, port: daemon.port)
            defer { tmux.killServer() }
            try tmux.run(["send-keys", "-t", "cli", "watch 52.52 13.405 500", "Enter"])
            try await eventually("the watch is live") { try tmux.screen().contains("-- live:") }
            // A partial line, the cursor moved back into it: no Enter.
            try tmux.run(["send-keys", "-t", "cli", "help neary", "Left"])
            try await eventually("the partial line shows") { try Self.lines(tmux).last == "scavenger> help neary" }
            #expect(try poster.run(["post", "52.52", "13.405", "while you type"]).status == 0)
            try await eventually("the event is printed") { try tmux.screen().contains("bob: while you type") }
            try await eventually("the line is drawn again below the event") { try Self.lines(tmux).last == "scavenger> help neary" }
            let lines = try Self.lines(tmux)
            let event = try #require(lines.lastIndex { $0.contains("bob: while you type") })
            #expect(lines[event].hasPrefix("+ ") && !lines[event].contains("scavenger>"), "\(lines)")
            #expect(event == lines.count - 2, "\(lines)")
            #expect(!lines.dropLast().contains { $0.contains("help near") }, "the line was not left behind: \(lines)")
            // Still editable where the cursor was: "b" goes before the "y".
            try tmux.run(["send-keys", "-t", "cli", "b", "Enter"])
            try await eventually("the whole line was sent") { try tmux.screen().contains("NEARBY lat lon radius_m") }
            try tmux.run(["send-keys", "-t", "cli", "quit", "Enter"])
        }
    }

    @Test("login NAME asks for the password without echo (an event meanwhile is printed above), and logs in; the password is in neither the screen nor the history; piped, it is the next line (register NAME EMAIL likewise)")
    func loginWithoutEcho() async throws {
        try await Daemon.with { daemon in
            let cli = try CLI(port: daemon.port), poster = try CLI(port: daemon.port)
            #expect(try poster.run(["register", "bob", "bob@example.org", "sesame-42"]).status == 0)
            let tmux = try await Self.open(cli, port: daemon.port)
            defer { tmux.killServer() }
            try tmux.run(["send-keys", "-t", "cli", "watch 52.52 13.405 500", "Enter"])
            try await eventually("the watch is live") { try tmux.screen().contains("-- live:") }
            try tmux.run(["send-keys", "-t", "cli", "login bob", "Enter"])
            try await eventually("the password is asked for") { try Self.lines(tmux).last == "password for bob:" }
            try tmux.run(["send-keys", "-t", "cli", "sesa"])
            #expect(try poster.run(["post", "52.52", "13.405", "during the password"]).status == 0)
            try await eventually("the event is printed above the question") {
                let lines = try Self.lines(tmux)
                return lines.count >= 2 && lines[lines.count - 2].contains("bob: during the password") && lines.last == "password for bob:"
            }
            try tmux.run(["send-keys", "-t", "cli", "me-42", "Enter"])
            try await eventually("the login is answered") { try tmux.screen().contains("\"token\"") }
            let screen = try tmux.screen()
            #expect(!screen.contains("sesa") && !screen.contains("me-42"), "\(screen)")
            #expect(screen.contains("\"name\": \"bob\""), "\(screen)")
            // Logged in: the token was kept, and the prompt's connection is bob's.
            try tmux.run(["send-keys", "-t", "cli", "whoami", "Enter"])
            try await eventually("whoami answers bob") { try tmux.screen().components(separatedBy: "\"name\": \"bob\"").count >= 3 }
            #expect(try cli.run(["whoami"]).stdout.contains("bob"))
            let history = try String(contentsOf: cli.config.appendingPathComponent("scavenger/history"), encoding: .utf8)
            #expect(history.contains("whoami") && !history.contains("sesame") && !history.contains("login"), "\(history)")
            try tmux.run(["send-keys", "-t", "cli", "quit", "Enter"])

            // Not a terminal: the password is the next line; `login NAME PASSWORD` still works.
            let piped = try CLI(port: daemon.port)
            let result = try piped.run(["--json"], input: "login bob\nsesame-42\nwhoami\n")
            #expect(result.status == 0, "\(result)")
            #expect(try CLI.values(result.stdout).compactMap { ($0["user"] as? [String: Any])?["name"] as? String } == ["bob", "bob"])
            let once = try piped.run(["--json", "login", "bob"], input: "sesame-42\n")
            #expect(once.status == 0 && once.stdout.contains("\"token\""), "\(once)")
            #expect(try piped.run(["login", "bob", "sesame-42"]).status == 0)
            // register NAME EMAIL likewise.
            let registered = try piped.run(["--json", "register", "carol", "carol@example.org"], input: "carols-pass7\n")
            #expect(registered.status == 0 && registered.stdout.contains("\"token\""), "\(registered)")
            #expect(try piped.run(["--json"], input: "logout\nlogin carol\ncarols-pass7\n").stdout.contains("carol"))
        }
    }

    @Test("watch hunt names the stop found by its title")
    func huntWatchTitles() async throws {
        try await Daemon.with { daemon in
            let host = try CLI(port: daemon.port), player = try CLI(port: daemon.port)
            #expect(try host.run(["register", "hostess", "hostess@example.org", "password1"]).status == 0)
            #expect(try player.run(["register", "pia", "pia@example.org", "password1"]).status == 0)
            let created = try CLI.values(host.run(["--json", "createhunt", "Museum island", "PUBLIC"]).stdout)[0]["hunt"] as? [String: Any]
            let id = try #require(created?["id"] as? String)
            let stop = try CLI.values(host.run(["--json", "addstop", id, "52.5169", "13.4019", "40", "1", "Lustgarten"]).stdout)[0]["stop"] as? [String: Any]
            let stopID = try #require(stop?["id"] as? String)
            #expect(try host.run(["starthunt", id]).status == 0)
            #expect(try player.run(["join", id]).status == 0)

            let process = Process()
            process.executableURL = try Built.url("scavenger")
            process.arguments = ["--port", String(daemon.port), "watch", "hunt", id]
            var environment = ProcessInfo.processInfo.environment
            environment["XDG_CONFIG_HOME"] = host.config.path
            process.environment = environment
            process.standardInput = FileHandle.nullDevice
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
            try await eventually("the watch started") { lines.all.contains("-- watching the hunt") }
            #expect(try player.run(["checkin", stopID, "52.5169", "13.4019"]).status == 0)
            try await eventually("the find is printed") { lines.all.contains { $0.contains(" found ") } }
            #expect(lines.all.contains("pia found Lustgarten (1 point)"), "\(lines.all)")
            #expect(!lines.all.contains { $0.contains(stopID) }, "\(lines.all)")
        }
    }
}
