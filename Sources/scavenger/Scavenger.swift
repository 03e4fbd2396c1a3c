import ArgumentParser
import Foundation
import LineEditor
import NIOSSL
import ScavengerClient

/// `scavenger`: a command-line client of scavengerd.
@main
struct Scavenger: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scavenger",
        abstract: "A command-line client of scavengerd.",
        discussion: """
            With a command, runs it and prints the reply (a table for lists of pins, hunts and \
            leaderboards; --json prints the reply's JSON, one value per line, events included). \
            Any protocol command works: `scavenger nearby 52.52 13.405 500`, `scavenger watch 52.52 13.405 500`, \
            `scavenger hunt h…`, `scavenger leaderboard h… LIMIT 10`, `scavenger join ABC234 TEAM "Red Foxes"` \
            (a word with spaces is sent quoted). Without one, opens a prompt \
            (history, Tab completes command names, events print above the line being typed). `login NAME` \
            asks for the password (without echo at a terminal, else the next line of input). login and \
            register keep the session's token in \
            $XDG_CONFIG_HOME/scavenger/token (or ~/.config/scavenger/token), used on later runs.
            """)

    @Option(help: "The server's host.") var host = "127.0.0.1"
    @Option(help: "The server's line port.") var port = 7467
    @Flag(help: "Connect with TLS.") var tls = false
    @Option(help: "With --tls: trust the certificates in this PEM file (default: the system's).") var caFile: String?
    @Flag(help: "Print each reply and event as one line of JSON.") var json = false
    @Argument(parsing: .captureForPassthrough, help: "A command and its arguments; none opens a prompt.")
    var words: [String] = []

    func run() async throws {
        // The passthrough takes every word, --help included: answer it here.
        if let first = words.first, ["--help", "-h"].contains(first) {
            print(Self.helpMessage())
            return
        }
        var configuration = ScavengerClient.Configuration(host: host, port: port, maximumRetries: 4)
        if tls {
            var settings = TLSConfiguration.makeClientConfiguration()
            if let caFile { settings.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(caFile)) }
            configuration.tls = settings
        }
        let store = TokenStore()
        let client = try ScavengerClient(configuration, token: store.load())
        let printer = Printer(json: json)
        defer { Task { await client.close() } }
        guard let command = words.first else {
            // A terminal gets the prompt; anything else (a pipe, a file) is read line by line.
            let status = isatty(STDIN_FILENO) == 1
                ? try await Prompt(client: client, printer: printer, store: store).run()
                : await Script(client: client, printer: printer, store: store).run()
            await client.close()
            if status != 0 { throw ExitCode(status) }
            return
        }
        var arguments = Array(words.dropFirst())
        if let prompt = Self.passwordPrompt([command] + arguments) {
            // `login NAME`: the password is asked for (without echo at a terminal), not typed in the shell.
            let password = isatty(STDIN_FILENO) == 1 ? await LineEditor.shared.readSecret(prompt: prompt) : await Script.readLine()
            guard let password else { throw ExitCode(1) }
            arguments.append(password)
        }
        let status = try await Self.run(command: command, arguments: arguments, client: client, printer: printer, store: store)
        await client.close()
        if status != 0 { throw ExitCode(status) }
    }

    /// Runs one command given as words; answers the exit status.
    static func run(command: String, arguments: [String], client: ScavengerClient, printer: Printer, store: TokenStore) async throws -> Int32 {
        let name = command.uppercased()
        if name == "WATCH" {
            return try await watch(arguments, client: client, printer: printer)
        }
        let line = ([name] + arguments.map(ScavengerClient.token)).joined(separator: " ")
        return await send(line, client: client, printer: printer, store: store)
    }

    /// Sends a line, prints its reply, keeps or forgets the token; answers the exit status.
    static func send(_ line: String, client: ScavengerClient, printer: Printer, store: TokenStore) async -> Int32 {
        do {
            let reply = try await client.send(line)
            let name = line.prefix { $0 != " " }.uppercased()
            if ["LOGIN", "REGISTER", "AUTH"].contains(name), let token = await client.token {
                try? store.save(token)
            } else if name == "LOGOUT" {
                store.remove()
            }
            printer.reply(reply)
            return 0
        } catch let error as ScavengerError {
            if error.code == .unauthorized, line.uppercased().hasPrefix("AUTH") { store.remove() }
            printer.error(error)
            return 1
        } catch {
            printer.error(ScavengerError(code: .connectionLost, message: "\(error)"))
            return 1
        }
    }

    /// What `watch` was asked to watch.
    enum WatchTarget {
        case area(lat: Double, lon: Double, radius: Double, kind: PinKind?)
        case hunt(String)
    }

    /// The prompt for the password that `login NAME` or `register NAME EMAIL` (given as
    /// `words`) leaves out; nil when the line has one, or is another command.
    static func passwordPrompt(_ words: [String]) -> String? {
        switch (words.first?.uppercased(), words.count) {
        case ("LOGIN", 2): return "password for \(words[1]): "
        case ("REGISTER", 3): return "password for the new account \(words[1]): "
        default: return nil
        }
    }

    static let watchUsage = "usage: watch lat lon radius_m [KIND text|photo] | watch hunt id"

    /// The target of `watch arguments…`; nil when they name none.
    static func watchArguments(_ arguments: [String]) -> WatchTarget? {
        if arguments.first?.uppercased() == "HUNT" {
            return arguments.count == 2 ? .hunt(arguments[1]) : nil
        }
        guard arguments.count == 3 || arguments.count == 5, let lat = Double(arguments[0]), let lon = Double(arguments[1]),
              let radius = Double(arguments[2])
        else { return nil }
        var kind: PinKind?
        if arguments.count == 5 {
            guard arguments[3].uppercased() == "KIND", let given = PinKind(rawValue: arguments[4].lowercased()) else { return nil }
            kind = given
        }
        return .area(lat: lat, lon: lon, radius: radius, kind: kind)
    }

    /// A line's words, split at spaces and tabs.
    static func words(_ line: String) -> [String] {
        line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
    }

    /// `watch lat lon radius [KIND k]` or `watch hunt id`: prints events until interrupted.
    static func watch(_ arguments: [String], client: ScavengerClient, printer: Printer) async throws -> Int32 {
        let encoder = ScavengerClient.makeEncoder()
        encoder.outputFormatting.insert(.sortedKeys)
        let output = printer.output
        func emit(_ object: [String: JSONValue]) {
            if let data = try? encoder.encode(object) { output.line(String(decoding: data, as: UTF8.self)) }
        }
        func value<T: Encodable>(_ item: T) -> JSONValue {
            (try? JSONDecoder().decode(JSONValue.self, from: encoder.encode(item))) ?? .null
        }
        guard let target = watchArguments(arguments) else {
            printer.error(ScavengerError(code: .badArgument, message: watchUsage))
            return 2
        }
        do {
            if case let .hunt(id) = target {
                // Stops are named by their titles in lines for people (their ids when unknown).
                let titles = printer.json ? [:] : await stopTitles(id, client: client)
                for try await event in client.watchHunt(id) {
                    if !printer.json {
                        output.line(huntEventLine(event, titles: titles))
                        LineEditor.flushOutput()
                        continue
                    }
                    switch event {
                    case let .hunt(hunt): emit(["type": "hunt", "hunt": value(hunt)])
                    case let .hint(hint): emit(["type": "hint", "text": .string(hint.text), "at": value(hint.at)])
                    case let .found(player, stop, points):
                        emit(["type": "found", "player": .string(player), "stop": .string(stop), "points": .number(Double(points))])
                    case let .score(entry): emit(["type": "score", "entry": value(entry)])
                    case let .reply(reply): emit(["type": "reply", "reply": value(reply)])
                    case let .badge(player, badge): emit(["type": "badge", "player": .string(player), "badge": value(badge)])
                    case .started: emit(["type": "started"])
                    case .reconnected: emit(["type": "reconnected"])
                    case let .closed(reason): emit(["type": "closed", "reason": .string(reason)])
                    }
                    LineEditor.flushOutput()
                }
                return 0
            }
            guard case let .area(lat, lon, radius, kind) = target else { return 2 }
            for try await event in client.watch(lat: lat, lon: lon, radiusMeters: radius, kind: kind) {
                if printer.json {
                    switch event {
                    case let .snapshot(seq): emit(["type": "snapshot", "seq": .number(Double(seq))])
                    case let .pin(pin, seq): emit(["type": "pin", "seq": .number(Double(seq)), "pin": value(pin)])
                    case let .gone(id, seq): emit(["type": "gone", "seq": .number(Double(seq)), "id": .string(id)])
                    case let .ready(seq): emit(["type": "ready", "seq": .number(Double(seq))])
                    case .disconnected: emit(["type": "disconnected"])
                    case let .resumed(seq): emit(["type": "resumed", "seq": .number(Double(seq))])
                    }
                } else {
                    switch event {
                    case .snapshot: output.line("-- the pins inside now:")
                    case let .pin(pin, _):
                        output.line("+ \(pin.id)  \(pin.distanceMeters.map { String(format: "%.0f m", $0.rounded()) } ?? "")  \(pin.author): \(pin.text)")
                    case let .gone(id, _): output.line("- \(id)")
                    case .ready: output.line("-- live:")
                    case .disconnected: output.line("-- disconnected, resuming…")
                    case .resumed: output.line("-- resumed")
                    }
                }
                LineEditor.flushOutput()
            }
            return 0
        } catch let error as ScavengerError {
            printer.error(error)
            return 1
        }
    }
}

extension Scavenger {
    /// The titles of a hunt's stops by id, read once with `HUNT` (none when it cannot be read).
    static func stopTitles(_ hunt: String, client: ScavengerClient) async -> [String: String] {
        guard let details = try? await client.hunt(hunt) else { return [:] }
        return Dictionary(details.stops.map { ($0.id, $0.title) }, uniquingKeysWith: { first, _ in first })
    }

    /// A hunt's event as a line for people, stops named by `titles` (by id when not there).
    static func huntEventLine(_ event: HuntEvent, titles: [String: String]) -> String {
        switch event {
        case .started: return "-- watching the hunt"
        case let .hunt(hunt): return "-- the hunt is \(hunt.state.rawValue)"
        case let .hint(hint): return "hint: \(hint.text)"
        case let .found(player, stop, points):
            return "\(player) found \(titles[stop] ?? stop) (\(points) \(points == 1 ? "point" : "points"))"
        case let .score(entry):
            // A team hunt's entry is a team's: its players follow its name.
            let who = entry.members.map { "\(entry.player) (\($0.joined(separator: ", ")))" } ?? entry.player
            return "\(who): \(entry.points) \(entry.points == 1 ? "point" : "points"), rank \(entry.rank)"
        case let .reply(reply): return "\(reply.author): \(reply.text)"
        case let .badge(player, badge): return "\(player) earned the badge \(badge.name): \(badge.description)"
        case .reconnected: return "-- reconnected (read the hunt again for what changed meanwhile)"
        case let .closed(reason): return reason == "left" ? "-- you left the hunt; the watch ended" : "-- the watch ended (\(reason))"
        }
    }
}

/// The session's token in the user's config directory, mode 0600.
struct TokenStore {
    var directory: URL {
        let environment = ProcessInfo.processInfo.environment
        if let base = environment["XDG_CONFIG_HOME"], !base.isEmpty {
            return URL(fileURLWithPath: base).appendingPathComponent("scavenger")
        }
        return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".config/scavenger")
    }

    var file: URL { directory.appendingPathComponent("token") }

    func load() -> String? {
        guard let text = try? String(contentsOf: file, encoding: .utf8) else { return nil }
        let token = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return token.isEmpty ? nil : token
    }

    func save(_ token: String) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        remove()
        guard FileManager.default.createFile(atPath: file.path, contents: Data((token + "\n").utf8), attributes: [.posixPermissions: 0o600]) else {
            throw CocoaError(.fileWriteUnknown)
        }
    }

    func remove() {
        try? FileManager.default.removeItem(at: file)
    }
}
