import Foundation
import Postgres
import ScavengerClient
import ScavengerTestSupport
import Testing

/// Many calls on one connection, events beside replies, and what survives a lost connection.
@Suite("ScavengerClient: pipelining, reconnects and REQUEST retries", .timeLimit(.minutes(10)))
struct ConnectionTests {
    @Test("1,000 concurrent calls on one connection, with a watch's events in between, each get their own reply")
    func thousandCalls() async throws {
        try await Daemon.with { daemon in
            let client = try daemon.client()
            defer { Task { await client.close() } }
            _ = try await client.register(username: "busy", email: "busy@example.org", password: "password1")
            // A watch on the same connection: its EVENT lines come between the replies.
            let seen = Collected<WatchEvent>()
            let watching = Task {
                for try await event in client.watch(lat: 10, lon: 10, radiusMeters: 50_000) { seen.append(event) }
            }
            try await eventually("the watch is ready") { seen.all.contains { if case .ready = $0 { true } else { false } } }
            // 100 pins written at once, each a different text.
            let pins = try await withThrowingTaskGroup(of: Pin.self) { group in
                for index in 0 ..< 100 {
                    group.addTask { try await client.post(lat: 10 + Double(index) / 10_000, lon: 10, text: "pin \(index)") }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(Set(pins.map(\.text)) == Set((0 ..< 100).map { "pin \($0)" }))
            // 1,000 reads at once: GETs of those pins, HELPs of one command, NEARBYs of one pin's
            // point, and GETs of ids that do not exist; each reply must be the one its call asked for.
            let commands = try await client.help().map(\.command)
            let mismatches = try await withThrowingTaskGroup(of: String?.self) { group in
                for index in 0 ..< 1000 {
                    group.addTask {
                        let pin = pins[index % pins.count]
                        switch index % 4 {
                        case 0:
                            let got = try await client.pin(pin.id)
                            return got.id == pin.id && got.text == pin.text ? nil : "GET \(pin.id) answered \(got.id)"
                        case 1:
                            let command = commands[index % commands.count]
                            let help = try await client.help(command)
                            return help.command == command ? nil : "HELP \(command) answered \(help.command)"
                        case 2:
                            let page = try await client.nearby(lat: pin.lat, lon: pin.lon, radiusMeters: 1, limit: 1)
                            return page.items.map(\.id) == [pin.id] ? nil : "NEARBY of \(pin.id) answered \(page.items.map(\.id))"
                        default:
                            do {
                                let got = try await client.pin("pmissing\(index)")
                                return "GET pmissing\(index) answered \(got.id)"
                            } catch let error as ScavengerError {
                                return error.code == .notFound ? nil : "GET pmissing\(index) failed with \(error)"
                            }
                        }
                    }
                }
                return try await group.reduce(into: [String]()) { all, mismatch in if let mismatch { all.append(mismatch) } }
            }
            #expect(mismatches == [])
            #expect(await client.connectionCount == 1)
            // Every pin came to the watch once.
            try await eventually("the watch saw the 100 pins") {
                seen.all.filter { if case .pin = $0 { true } else { false } }.count >= 100
            }
            let watched = seen.all.compactMap { event -> String? in if case let .pin(pin, _) = event { pin.id } else { nil } }
            #expect(watched.sorted() == pins.map(\.id).sorted())
            watching.cancel()
        }
    }

    @Test(
        "a write whose reply was lost is sent again with its REQUEST key after reconnecting, and stored once",
        arguments: ["POST", "REPLY", "CREATEHUNT"])
    func lostReply(_ command: String) async throws {
        try await Daemon.with { daemon in
            let proxy = try TCPProxy(upstreamHost: "127.0.0.1", upstreamPort: daemon.port)
            defer { proxy.stop() }
            let client = try ScavengerClient(ScavengerClient.Configuration(
                host: "127.0.0.1", port: proxy.port, maximumBackoff: .milliseconds(500), maximumRetries: 20))
            defer { Task { await client.close() } }
            _ = try await client.register(username: "tunnel", email: "tunnel@example.org", password: "password1")
            let pin = try await client.post(lat: 52.52, lon: 13.405, text: "a pin to answer")
            let text = "once only \(command)"
            let counting: SQL = switch command {
            case "POST": "SELECT count(*) AS n FROM pins WHERE body = \(text)"
            case "REPLY": "SELECT count(*) AS n FROM replies WHERE body = \(text)"
            default: "SELECT count(*) AS n FROM hunts WHERE name = \(text)"
            }
            // The request reaches the daemon and runs; its reply is lost; then the connection drops.
            proxy.dropReplies()
            let write = Task { () throws -> String in
                switch command {
                case "POST": return try await client.post(lat: 52.52, lon: 13.405, text: text).id
                case "REPLY": return try await client.reply(to: pin.id, text: text).id
                default: return try await client.createHunt(name: text).id
                }
            }
            try await eventually("the write is stored") { try await daemon.schema.count(counting) == 1 }
            proxy.cutAll()
            proxy.resume()
            let id = try await write.value
            #expect(try await daemon.schema.count(counting) == 1)
            #expect(await client.connectionCount == 2)
            // The answer is the first attempt's: the stored row's id.
            let stored: SQL = switch command {
            case "POST": "SELECT count(*) AS n FROM pins WHERE id = \(id)"
            case "REPLY": "SELECT count(*) AS n FROM replies WHERE id = \(id)"
            default: "SELECT count(*) AS n FROM hunts WHERE id = \(id)"
            }
            #expect(try await daemon.schema.count(stored) == 1)
            // The session was resumed with AUTH on the new connection.
            #expect(try await client.whoami()?.name == "tunnel")
        }
    }

    @Test("a write that never reached the daemon runs once after reconnecting; one without a key fails instead of guessing")
    func lostRequest() async throws {
        try await Daemon.with { daemon in
            let proxy = try TCPProxy(upstreamHost: "127.0.0.1", upstreamPort: daemon.port)
            defer { proxy.stop() }
            let client = try ScavengerClient(ScavengerClient.Configuration(
                host: "127.0.0.1", port: proxy.port, maximumBackoff: .milliseconds(500), maximumRetries: 20))
            defer { Task { await client.close() } }
            _ = try await client.register(username: "lift", email: "lift@example.org", password: "password1")
            proxy.blackhole()
            let write = Task { try await client.post(lat: 1, lon: 2, text: "from the lift") }
            try await Task.sleep(for: .milliseconds(200))
            proxy.cutAll()
            proxy.resume()
            _ = try await write.value
            #expect(try await daemon.schema.count("SELECT count(*) AS n FROM pins WHERE body = 'from the lift'") == 1)
            // LOGIN has no key: a lost reply is CONNECTION_LOST, not a second attempt.
            proxy.dropReplies()
            let login = Task { try await client.login("lift", password: "password1") }
            try await eventually("the login's session is stored") {
                try await daemon.schema.count("SELECT count(*) AS n FROM sessions") == 2
            }
            proxy.cutAll()
            proxy.resume()
            let error = await #expect(throws: ScavengerError.self) { try await login.value }
            #expect(error?.code == .connectionLost)
        }
    }
}
