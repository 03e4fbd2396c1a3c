import Foundation
import ScavengerClient
import ScavengerTestSupport
import Testing

/// A watch delivering every change exactly once across failures.
@Suite("ScavengerClient: watches resume across failures", .timeLimit(.minutes(10)))
struct WatchResumeTests {
    /// What a watch delivered: the ids of its `pin` and `gone` events, and its other events.
    struct Seen {
        var pins: [String] = []
        var gones: [String] = []
        var snapshots = 0
        var resumed = 0
        var disconnected = 0
    }

    static func summary(_ events: [WatchEvent]) -> Seen {
        var seen = Seen()
        for event in events {
            switch event {
            case let .pin(pin, _): seen.pins.append(pin.id)
            case let .gone(id, _): seen.gones.append(id)
            case .snapshot: seen.snapshots += 1
            case .resumed: seen.resumed += 1
            case .disconnected: seen.disconnected += 1
            case .ready: break
            }
        }
        return seen
    }

    /// Starts a watch of (52.52, 13.405, 1 km) on `client`, collecting its events until ready.
    static func startWatch(_ client: ScavengerClient) async throws -> (Collected<WatchEvent>, Task<Void, any Error>) {
        let events = Collected<WatchEvent>()
        let task = Task {
            for try await event in client.watch(lat: 52.52, lon: 13.405, radiusMeters: 1000) { events.append(event) }
        }
        try await eventually("the watch is ready") { events.all.contains { if case .ready = $0 { true } else { false } } }
        return (events, task)
    }

    @Test("the watched daemon is killed with SIGKILL and restarted; a second daemon writes meanwhile: every change comes once")
    func daemonKilled() async throws {
        try await Schema.with { schema in
            let watched = try await Daemon(schema: schema)
            let writing = try await Daemon(schema: schema)
            let watcher = try watched.client()
            let writer = try writing.client()
            defer { Task { await watcher.close(); await writer.close() } }
            _ = try await writer.register(username: "writer", email: "w@example.org", password: "password1")
            let before = try await writer.post(lat: 52.52, lon: 13.405, text: "before the watch")
            let (events, task) = try await Self.startWatch(watcher)
            // In the snapshot, or live just after it when the watched daemon had not read the
            // other's write yet when the watch began: once either way.
            try await eventually("the pin written before arrives") { Self.summary(events.all).pins == [before.id] }

            let first = try await writer.post(lat: 52.5201, lon: 13.405, text: "first")
            try await eventually("the first pin arrives") { Self.summary(events.all).pins.contains(first.id) }
            try await watched.kill9()
            // While the watched daemon is down: two pins, and one deleted.
            let second = try await writer.post(lat: 52.5202, lon: 13.405, text: "second")
            let third = try await writer.post(lat: 52.5203, lon: 13.405, text: "third")
            try await writer.delete(first.id)
            try await eventually("the watch noticed the loss") { Self.summary(events.all).disconnected >= 1 }
            try await watched.restart()
            try await eventually("the missed changes arrive") {
                let seen = Self.summary(events.all)
                return seen.pins.contains(third.id) && seen.gones.contains(first.id)
            }
            let fourth = try await writer.post(lat: 52.5204, lon: 13.405, text: "fourth")
            try await eventually("the live pin arrives") { Self.summary(events.all).pins.contains(fourth.id) }
            task.cancel()
            let seen = Self.summary(events.all)
            #expect(seen.pins == [before.id, first.id, second.id, third.id, fourth.id], "\(events.all)")
            #expect(seen.gones == [first.id])
            #expect(seen.snapshots == 1 && seen.resumed >= 1)
            await watched.stop()
            await writing.stop()
        }
    }

    @Test("PostgreSQL's connections are all cut (as a restart cuts them) and the client's connection drops: every change comes once")
    func databaseAndConnectionCut() async throws {
        try await Daemon.with(proxied: true) { daemon in
            // The watcher reaches the daemon through a proxy of its own, to drop its connection.
            let front = try TCPProxy(upstreamHost: "127.0.0.1", upstreamPort: daemon.port)
            defer { front.stop() }
            let watcher = try ScavengerClient(ScavengerClient.Configuration(
                host: "127.0.0.1", port: front.port, maximumBackoff: .milliseconds(500)))
            let writer = try daemon.client(retries: 100)
            defer { Task { await watcher.close(); await writer.close() } }
            _ = try await writer.register(username: "writer", email: "w@example.org", password: "password1")
            let (events, task) = try await Self.startWatch(watcher)
            var written: [String] = []
            for round in 0 ..< 3 {
                written.append(try await writer.post(lat: 52.52, lon: 13.405 + Double(round) / 10_000, text: "round \(round) a").id)
                // The database goes away and comes back: every connection to it is cut.
                daemon.schema.proxy?.blackhole()
                daemon.schema.proxy?.cutAll()
                daemon.schema.proxy?.resume()
                // The watcher's connection drops too, while a pin is written.
                front.cutAll()
                written.append(try await writer.post(lat: 52.5201, lon: 13.405 + Double(round) / 10_000, text: "round \(round) b").id)
                try await eventually("round \(round)'s pins arrive") {
                    Set(Self.summary(events.all).pins).isSuperset(of: written)
                }
            }
            task.cancel()
            let seen = Self.summary(events.all)
            #expect(seen.pins == written, "\(events.all)")
            #expect(seen.snapshots == 1 && seen.disconnected >= 1 && seen.resumed >= 1)
            #expect(try await daemon.schema.count("SELECT count(*) AS n FROM pins") == written.count)
        }
    }

    /// A daemon, a watcher reaching it through a proxy (to cut and hold its connection), a
    /// writer, the watch started and one pin (`first`) seen: what the tests of resuming start from.
    static func watchingThroughProxy(
        _ body: (Daemon, TCPProxy, ScavengerClient, Collected<WatchEvent>, Task<Void, any Error>, Pin) async throws -> Void
    ) async throws {
        try await Daemon.with { daemon in
            let front = try TCPProxy(upstreamHost: "127.0.0.1", upstreamPort: daemon.port)
            defer { front.stop() }
            let watcher = try ScavengerClient(ScavengerClient.Configuration(
                host: "127.0.0.1", port: front.port, maximumBackoff: .milliseconds(500)))
            let writer = try daemon.client()
            defer { Task { await watcher.close(); await writer.close() } }
            _ = try await writer.register(username: "writer", email: "w@example.org", password: "password1")
            let (events, task) = try await Self.startWatch(watcher)
            let first = try await writer.post(lat: 52.52, lon: 13.405, text: "first")
            try await eventually("the first pin arrives") { Self.summary(events.all).pins == [first.id] }
            try await body(daemon, front, writer, events, task, first)
        }
    }

    @Test("when the change log no longer reaches back (resumed: false), the watch says snapshot and sends a fresh one")
    func logTrimmed() async throws {
        try await Self.watchingThroughProxy { daemon, front, writer, events, task, first in
            // Away: a pin is written, the first deleted, and the log trimmed past all of it (as
            // `scavengerd expire` trims entries older than --keep-changes).
            front.blackhole()
            let second = try await writer.post(lat: 52.5201, lon: 13.405, text: "second")
            try await writer.delete(first.id)
            _ = try await daemon.schema.pool.query("UPDATE feed_changes_trimmed SET through = (SELECT max(seq) FROM feed_changes)")
            // (The newest entry stays, as the sweep leaves it: it marks where the log ends.)
            _ = try await daemon.schema.pool.query("DELETE FROM feed_changes WHERE seq < (SELECT through FROM feed_changes_trimmed)")
            front.cutAll()
            front.resume()
            try await eventually("a fresh snapshot is complete (\(events.all))") {
                events.all.filter { if case .ready = $0 { true } else { false } }.count == 2
            }
            task.cancel()
            let all = events.all
            let again = try #require(all.lastIndex { if case .snapshot = $0 { true } else { false } })
            let fresh = Self.summary(Array(all[again...]))
            #expect(fresh.snapshots == 1 && fresh.pins == [second.id] && fresh.gones == [])
            let seen = Self.summary(all)
            #expect(seen.snapshots == 2 && seen.resumed == 0 && seen.disconnected == 1)
        }
    }

    @Test("a seq past the log's end on resuming (a database replaced meanwhile) starts over with a snapshot")
    func seqPastTheEnd() async throws {
        try await Self.watchingThroughProxy { daemon, front, writer, events, task, first in
            // The whole log goes: the seq the watch holds is now past its end.
            front.blackhole()
            _ = try await daemon.schema.pool.query("UPDATE feed_changes_trimmed SET through = (SELECT max(seq) FROM feed_changes)")
            _ = try await daemon.schema.pool.query("DELETE FROM feed_changes")
            front.cutAll()
            front.resume()
            try await eventually("a fresh snapshot is complete (\(events.all))") {
                events.all.filter { if case .ready = $0 { true } else { false } }.count == 2
            }
            task.cancel()
            let all = events.all
            let again = try #require(all.lastIndex { if case .snapshot = $0 { true } else { false } })
            #expect(Self.summary(Array(all[again...])).pins == [first.id])
            #expect(Self.summary(all).snapshots == 2)
        }
    }
}
