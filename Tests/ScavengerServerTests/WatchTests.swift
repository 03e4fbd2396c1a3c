import Foundation
import Logging
import Postgres
@testable import ScavengerBoard
import ScavengerCore
import ScavengerFeed
import ScavengerServer
import ScavengerStore
import ScavengerTestSupport
import Sodium
import Testing

extension Conversation {
    /// The next line, which must be an `EVENT`, as JSON.
    func event() async throws -> JSONObject {
        guard let line = try await reader.next() else { throw ConnectionClosed(request: "(waiting for an event)") }
        return try eventJSON(line)
    }

    /// Starts a watch and returns its id.
    func watch(_ arguments: String) async throws -> String {
        try await ok("WATCH \(arguments)")["watch"].string
    }
}

/// The JSON of an `EVENT` line.
func eventJSON(_ line: String) throws -> JSONObject {
    guard line.hasPrefix("EVENT ") else { throw UnexpectedReply(line: line) }
    return JSONObject(value: try JSONSerialization.jsonObject(with: Data(line.dropFirst(6).utf8)))
}

// The time limit only guards against a hang, and it counts the wait for a TestEnvironment.
@Suite("WATCH: live events over TCP with PostgreSQL", .timeLimit(.minutes(10)))
struct WatchTests {
    @Test("pins written inside the circle by this daemon and by another one arrive as NEARBY shows them; DELETE says gone")
    func eventsFromBothDaemons() async throws {
        try await withDatabaseServer(listening: true) { address, environment in
            // A second daemon: its own feed, listener, board and server on the same database.
            let other = environment.secondDaemon()
            var logger = Logger(label: "second-daemon")
            logger.logLevel = .warning
            let otherListener = FeedListener(feed: other.feed, logger: logger, listening: try await other.feed.startListening())
            try await withServer(board: other, alongside: [otherListener]) { otherAddress, _ in
                try await eventually("the second daemon's feed is loaded") { other.feed.isLoaded }
                try await converse(address) { watcher in
                    let watch = try await watcher.watch("10 20 1000")
                    try await converse(address) { writer in
                        try await writer.register("alice")
                        let (farLat, farLon) = north(of: 10, 20, metres: 1500)
                        _ = try await writer.ok("POST \(farLat) \(farLon) far")
                        let (lat, lon) = north(of: 10, 20, metres: 300)
                        let id = try await writer.ok("POST \(lat) \(lon) near")["pin"]["id"].string

                        let event = try await watcher.event()
                        #expect(try event["watch"].string == watch)
                        #expect(try event["type"].string == "pin")
                        #expect(try event["pin"]["id"].string == id)
                        #expect(abs((event["pin"]["distance_m"].double ?? 0) - 300) < 0.01)
                        let listed = try await writer.ok("NEARBY 10 20 1000")["pins"][0]
                        #expect(NSDictionary(dictionary: event["pin"].value as? [String: Any] ?? [:])
                            == NSDictionary(dictionary: listed.value as? [String: Any] ?? [:]))

                        // From the other daemon.
                        let fromOther = try await converseReturning(otherAddress) { client in
                            _ = try await client.ok("LOGIN alice password1")
                            return try await client.ok("POST 10 20 elsewhere")["pin"]["id"].string
                        }
                        let second = try await watcher.event()
                        #expect(try second["type"].string == "pin" && second["pin"]["id"].string == fromOther)
                        #expect(second["pin"]["distance_m"].double == 0)

                        #expect(try await writer.call("DELETE \(id)") == "OK true")
                        let gone = try await watcher.event()
                        #expect(try gone["watch"].string == watch && gone["type"].string == "gone" && gone["id"].string == id)
                        // A delete through the other daemon.
                        _ = try await converseReturning(otherAddress) { client in
                            _ = try await client.ok("LOGIN alice password1")
                            return try await client.call("DELETE \(fromOther)")
                        }
                        let goneOther = try await watcher.event()
                        #expect(try goneOther["type"].string == "gone" && goneOther["id"].string == fromOther)
                        #expect(try await watcher.call("PING").hasPrefix("OK "))
                    }
                }
            }
            await other.passwords.shutdown()
        }
    }

    @Test("KIND photo: text pins are not reported")
    func kindFilter() async throws {
        try await withDatabaseServer { address, _ in
            try await converse(address) { watcher in
                let watch = try await watcher.watch("10 20 500 KIND photo")
                try await converse(address) { writer in
                    try await writer.register("alice")
                    _ = try await writer.ok("POST 10 20 words")
                    let photo = try await writer.ok("POSTPHOTO 10 20 \(Data(PhotoFixtures.jpeg()).base64EncodedString())")["pin"]["id"].string
                    let event = try await watcher.event()
                    #expect(try event["watch"].string == watch && event["pin"]["id"].string == photo)
                    #expect(try event["pin"]["kind"].string == "photo")
                }
            }
        }
    }

    @Test("a pin hidden by a report is gone")
    func goneOnHide() async throws {
        try await withDatabaseServer(moderationRules: ModerationRules(hideThreshold: 1, minimumReporterAgeSeconds: 0)) { address, _ in
            try await converse(address) { watcher in
                let watch = try await watcher.watch("10 20 500")
                try await converse(address) { writer in
                    try await writer.register("alice")
                    let id = try await writer.ok("POST 10 20 spam")["pin"]["id"].string
                    #expect(try await watcher.event()["pin"]["id"].string == id)
                    try await converse(address) { reporter in
                        try await reporter.register("bob")
                        _ = try await reporter.ok("REPORT \(id) spam")
                    }
                    let gone = try await watcher.event()
                    #expect(try gone["watch"].string == watch && gone["type"].string == "gone" && gone["id"].string == id)
                }
            }
        }
    }

    @Test("a pin that expires is gone once it has expired, told by the expiry announcements")
    func goneOnExpiry() async throws {
        // The contract's bound (gone within 5 s of the expiry) is kept by construction: expiries
        // are announced every second on a thread of their own. The feed's clock is held here, so
        // what is checked is exact: nothing a microsecond before the expiry, `gone` at it.
        let clock = HeldClock()
        try await withDatabaseServer(listening: true, clock: clock) { address, environment in
            try await converse(address) { watcher in
                let watch = try await watcher.watch("10 20 500")
                try await converse(address) { writer in
                    try await writer.register("alice")
                    let id = try await writer.ok("POST 10 20 brief")["pin"]["id"].string
                    #expect(try await watcher.event()["pin"]["id"].string == id)
                    // Another process sets its expiry an hour on (live to the database meanwhile);
                    // the feed reads the change (a change inside the watch: no event).
                    let expires = Timestamp(microseconds: clock.now.microseconds + 3_600_000_000)
                    try await environment.pool.query(
                        "UPDATE pins SET expires_at = 'epoch'::timestamptz + \(expires.microseconds)::bigint * interval '1 microsecond' WHERE id = \(id)",
                        idempotent: false)
                    try await environment.feed.catchUp()
                    clock.set(to: Timestamp(microseconds: expires.microseconds - 1))
                    #expect(environment.feed.announceExpiries() == 0)
                    #expect(try await writer.ok("NEARBY 10 20 500")["pins"].array.count == 1)
                    clock.set(to: expires)
                    // Announced by this call or by the announcer's thread, whichever looks first.
                    environment.feed.announceExpiries()
                    let gone = try await watcher.event()
                    #expect(try gone["watch"].string == watch && gone["type"].string == "gone" && gone["id"].string == id)
                    #expect(try await writer.ok("NEARBY 10 20 500")["pins"].array.isEmpty)
                }
            }
        }
    }

    @Test("UNWATCH ends a watch; only its connection can; the limit per connection; a closed connection's watches end")
    func unwatchAndLimits() async throws {
        try await withDatabaseServer(feedRules: FeedRules(maximumWatchesPerConnection: 2)) { address, environment in
            try await converse(address) { watcher in
                let first = try await watcher.watch("10 20 500")
                let second = try await watcher.watch("10 20 500")
                #expect(try await watcher.call("WATCH 10 20 500").hasPrefix("ERR BAD_ARGUMENT "))
                #expect(try await converseReturning(address) { try await $0.call("UNWATCH \(first)") }.hasPrefix("ERR NOT_FOUND "))
                #expect(try await watcher.call("UNWATCH \(first)") == "OK true")
                #expect(try await watcher.call("UNWATCH \(first)").hasPrefix("ERR NOT_FOUND "))
                #expect(try await watcher.call("UNWATCH nonsense").hasPrefix("ERR NOT_FOUND "))
                try await converse(address) { writer in
                    try await writer.register("alice")
                    let one = try await writer.ok("POST 10 20 one")["pin"]["id"].string
                    let two = try await writer.ok("POST 10 20 two")["pin"]["id"].string
                    let events = [try await watcher.event(), try await watcher.event()]
                    #expect(try events.map { try $0["watch"].string } == [second, second])
                    #expect(try events.map { try $0["pin"]["id"].string } == [one, two])
                    #expect(try await watcher.call("PING") == "OK \"PONG\"")
                }
                // Room again for one.
                _ = try await watcher.watch("0 0 10")
                #expect(environment.feed.watches.count == 2)
            }
            try await eventually("the closed connection's watches end") { environment.feed.watches.count == 0 }
        }
    }

    @Test("WATCH takes NEARBY's argument rules", arguments: [
        ("WATCH 52.5 13.4 0", "ERR BAD_ARGUMENT radius_m must be greater than 0 and at most 50000"),
        ("WATCH 52.5 13.4 50000.5", "ERR BAD_ARGUMENT radius_m must be greater than 0 and at most 50000"),
        ("WATCH 95 13.4 10", "ERR BAD_ARGUMENT latitude must be within [-90, 90]"),
        ("WATCH 52.5 13.4 10 KIND video", "ERR BAD_ARGUMENT KIND must be text or photo"),
        ("WATCH 52.5 13.4 10 LIMIT 5", nil),
        ("WATCH 52.5 13.4", "ERR BAD_ARGUMENT wrong number of arguments for WATCH; usage: WATCH lat lon radius_m [KIND text|photo] [SNAPSHOT] [SINCE seq] | WATCH HUNT id | WATCH MAP south west north east ZOOM z"),
    ])
    func watchRejects(line: String, expected: String?) async throws {
        try await withDatabaseServer { address, _ in
            let reply = try await converseReturning(address) { try await $0.call(line) }
            if let expected { #expect(reply == expected) } else { #expect(reply.hasPrefix("ERR BAD_ARGUMENT ")) }
        }
    }

    @Test("events never split replies: pipelined requests with events between them")
    func eventsBetweenReplies() async throws {
        try await withDatabaseServer { address, _ in
            try await converse(address) { writer in
                try await writer.register("alice")
                for index in 0 ..< 20 { _ = try await writer.ok("POST 10 20 \(quoted("seed \(index) " + String(repeating: "x", count: 400)))") }
                try await TestConnection.talk(address) { watcherWriter, reader in
                    try await watcherWriter.send("WATCH 10 20 500\n")
                    let watchLine = try #require(try await reader.next())
                    #expect(watchLine.hasPrefix("OK "))
                    let requests = 300
                    let posted = Task {
                        try await converseReturning(address) { poster in
                            try await poster.register("bob")
                            var ids: [String] = []
                            for index in 0 ..< 30 { ids.append(try await poster.ok("POST 10 20 \(quoted("live \(index)"))")["pin"]["id"].string) }
                            return ids
                        }
                    }
                    try await watcherWriter.send(String(repeating: "NEARBY 10 20 500 LIMIT 200\n", count: requests))
                    var replies = 0
                    var seen: Set<String> = []
                    let ids = try await posted.value
                    while replies < requests || !Set(ids).isSubset(of: seen) {
                        let line = try #require(try await reader.next())
                        if line.hasPrefix("OK ") {
                            replies += 1
                            _ = try JSONObject(okLine: line)
                        } else {
                            let event = try eventJSON(line)
                            seen.insert(try event["pin"]["id"].string)
                        }
                    }
                    #expect(replies == requests)
                }
            }
        }
    }

    @Test("a client that does not read its events gets overflow, and that watch ends")
    func overflow() async throws {
        try await TestEnvironment.make().use { environment in
            let configuration = ServerConfiguration(host: "127.0.0.1", port: 0, outputHighWaterBytes: 16 * 1024, maxEventBytes: 64 * 1024)
            try await withServer(configuration, board: environment.board, alongside: [try await environment.listener()]) { address, _ in
                try await converse(address) { writer in
                    try await writer.register("alice")
                    try await TestConnection.talk(address) { watcherWriter, reader in
                        try await watcherWriter.send("WATCH 10 20 500\n")
                        let watch = try JSONObject(okLine: try #require(try await reader.next()))["watch"].string
                        // Far more events than the socket buffers, the mark and the bound hold, while nothing is read.
                        let cell = Grid.cell(lat: 10, lon: 20, level: 0).int64Value
                        try await environment.pool.query("""
                            INSERT INTO pins (id, author_id, lat, lon, kind, body, expires_at, cell)
                            SELECT 'p' || translate(lpad(g::text, 24, '0'), '0123456789', 'abcdefghij'),
                                   (SELECT id FROM users LIMIT 1), 10, 20, 'text', repeat('x', 500), now() + interval '1 hour', \(unescaped: String(cell))
                            FROM generate_series(1, 40000) AS g
                            """, idempotent: false)
                        try await eventually("the feed has the pins") { environment.feed.count >= 40000 }
                        try await eventually("the watch ended") { environment.feed.watches.count == 0 }
                        // Now read: the pins' events, then overflow, then nothing more of that watch.
                        var sawOverflow = false
                        try await watcherWriter.send("PING\n")
                        while true {
                            let line = try #require(try await reader.next())
                            if line.hasPrefix("OK ") {
                                #expect(line == "OK \"PONG\"")
                                break
                            }
                            let event = try eventJSON(line)
                            #expect(try event["watch"].string == watch)
                            #expect(!sawOverflow, "no event after overflow")
                            if try event["type"].string == "overflow" { sawOverflow = true }
                        }
                        #expect(sawOverflow)
                        #expect(try await writer.call("PING") == "OK \"PONG\"")
                    }
                }
            }
        }
    }
}
