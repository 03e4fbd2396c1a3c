import Foundation
@testable import Postgres
import ScavengerCore
@testable import ScavengerFeed
import ScavengerGeography
@testable import ScavengerStore
import ScavengerTestSupport
import Synchronization
import Testing

/// A point `metres` north of (lat, lon), on the sphere.
func north(of lat: Double, _ lon: Double, metres: Double) -> (Double, Double) {
    (lat + metres / Geodesy.earthRadius * 180 / .pi, lon)
}

@Suite("NEARBY and regions over TCP with PostgreSQL")
struct FeedTests {
    @Test("NEARBY: within the radius, nearest first, distance_m, filters before the limit")
    func nearby() async throws {
        try await withDatabaseServer { address, _ in
            try await converse(address) { client in
                try await client.register("alice")
                var ids: [Int: String] = [:]
                for metres in [900, 100, 500, 1500, 300] {
                    let (lat, lon) = north(of: 52.5, 13.4, metres: Double(metres))
                    ids[metres] = try await client.ok("POST \(lat) \(lon) \(quoted("at \(metres) m"))")["pin"]["id"].string
                }
                let photo = try await client.ok("POSTPHOTO 52.5 13.4 \(Data(PhotoFixtures.jpeg()).base64EncodedString())")["pin"]["id"].string
                let page = try await client.ok("NEARBY 52.5 13.4 1000")
                let pins = page["pins"].array
                #expect(try pins.map { try $0["id"].string } == [photo, ids[100]!, ids[300]!, ids[500]!, ids[900]!])
                #expect(page["next"].isNull)
                let distances = pins.compactMap { $0["distance_m"].double }
                #expect(distances.count == 5)
                #expect(abs(distances[1] - 100) < 0.01 && abs(distances[4] - 900) < 0.01)
                #expect(pins[1].keys.contains("distance_m"))

                let texts = try await client.ok("NEARBY 52.5 13.4 1000 KIND text LIMIT 2")
                #expect(try texts["pins"].array.map { try $0["id"].string } == [ids[100]!, ids[300]!])
                let rest = try await client.ok("NEARBY 52.5 13.4 1000 KIND text LIMIT 2 CURSOR \(try texts["next"].string)")
                #expect(try rest["pins"].array.map { try $0["id"].string } == [ids[500]!, ids[900]!])
                let photos = try await client.ok("NEARBY 52.5 13.4 1000 kind PHOTO")
                #expect(try photos["pins"].array.map { try $0["id"].string } == [photo])
                #expect(try await client.ok("NEARBY 52.5 13.4 50 LIMIT 1")["pins"].array.count == 1)
            }
        }
    }

    @Test("NEARBY rejects bad arguments", arguments: [
        ("NEARBY 52.5 13.4 0", "ERR BAD_ARGUMENT radius_m must be greater than 0 and at most 50000"),
        ("NEARBY 52.5 13.4 50000.5", "ERR BAD_ARGUMENT radius_m must be greater than 0 and at most 50000"),
        ("NEARBY 52.5 13.4 -5", "ERR BAD_ARGUMENT radius_m must be greater than 0 and at most 50000"),
        ("NEARBY 52.5 13.4 inf", "ERR BAD_ARGUMENT radius_m must be a plain decimal number, got 'inf'"),
        ("NEARBY 95 13.4 10", "ERR BAD_ARGUMENT latitude must be within [-90, 90]"),
        ("NEARBY 52.5 13.4 10 LIMIT 0", "ERR BAD_ARGUMENT LIMIT must be between 1 and 200, got 0"),
        ("NEARBY 52.5 13.4 10 KIND video", "ERR BAD_ARGUMENT KIND must be text or photo"),
        ("NEARBY 52.5 13.4 10 CURSOR nonsense", "ERR BAD_ARGUMENT CURSOR is not a cursor NEARBY returned"),
        ("NEARBY 52.5 13.4", "ERR BAD_ARGUMENT wrong number of arguments for NEARBY; usage: NEARBY lat lon radius_m [LIMIT n] [CURSOR c] [KIND text|photo]"),
    ])
    func nearbyRejects(line: String, expected: String) async throws {
        try await withDatabaseServer { address, _ in
            let reply = try await converseReturning(address) { try await $0.call(line) }
            #expect(reply == expected)
        }
    }

    @Test("a cursor from another NEARBY query is refused")
    func foreignCursor() async throws {
        try await withDatabaseServer { address, _ in
            try await converse(address) { client in
                try await client.register("alice")
                for _ in 0 ..< 3 { _ = try await client.ok("POST 10 10 hi") }
                let next = try await client.ok("NEARBY 10 10 100 LIMIT 1")["next"].string
                #expect(try await client.call("NEARBY 10 10 200 LIMIT 1 CURSOR \(next)")
                    == "ERR BAD_ARGUMENT CURSOR belongs to a different NEARBY query")
            }
        }
    }

    @Test("expired, deleted and other processes' pins: the feed stays in step")
    func inStep() async throws {
        // The feed's clock is held: the short pin expires when the test moves it past its expiry.
        let clock = HeldClock()
        try await withDatabaseServer(listening: true, clock: clock) { address, environment in
            try await converse(address) { client in
                try await client.register("alice")
                let shortPin = try await client.ok("POST 0 0 short TTL 1")["pin"]
                let short = try shortPin["id"].string
                let gone = try await client.ok("POST 0 0 gone")["pin"]["id"].string
                _ = try await client.ok("REPLY \(gone) hi")
                // (Whether the short pin is still live here depends on how busy the host is: the
                // feed's clock is held, but when it reads the pin's entry in the change log the
                // database, by its own clock, may already leave it out as expired.)
                let before = try await client.ok("NEARBY 0 0 10")["pins"].array
                #expect(try before.contains { try $0["id"].string == gone })
                #expect(try await client.call("DELETE \(gone)") == "OK true")
                // `expires` is shown to the second: a second after it, the pin has expired.
                let expires = try #require(Timestamp(rfc3339: try shortPin["expires"].string))
                clock.set(to: Timestamp(microseconds: expires.microseconds + 1_000_000))
                #expect(try await client.ok("NEARBY 0 0 10")["pins"].array.isEmpty, "\(short) expired")

                // Another process writes: the daemon hears of it.
                let other = environment.otherProcess()
                let author = try #require(try await other.credentials(login: "alice")).account
                let pin = try await other.createPin(textPin("from elsewhere", by: author.id, lon: 0.0001))
                try await eventually("the other process's pin is in the feed") {
                    try await client.ok("NEARBY 0 0 100")["pins"].array.count == 1
                }
                _ = try await other.createReply(pinID: pin.id, authorID: author.id, authorName: "alice", text: "x")
                try await eventually("the reply count follows") {
                    try await client.ok("NEARBY 0 0 100")["pins"][0]["replies"].int == 1
                }
                _ = try await other.deletePin(id: pin.id, by: author.id) { _ in .byAuthor }
                try await eventually("the deleted pin leaves the feed") {
                    try await client.ok("NEARBY 0 0 100")["pins"].array.isEmpty
                }
            }
        }
    }

    @Test("pins without a grid cell (written before db/0003) get theirs when the feed loads")
    func cellBackfill() async throws {
        try await withDatabaseServer { address, environment in
            try await converse(address) { client in
                try await client.register("alice")
                for (lat, lon) in [(48.85, 2.35), (-33.87, 151.21), (0.0, 0.0)] {
                    _ = try await client.ok("POST \(lat) \(lon) old")
                }
                try await environment.pool.query("UPDATE pins SET cell = NULL", idempotent: false)
                #expect(try await environment.feed.load() == 3)
                let cells = try await environment.pool.query("SELECT lat, lon, cell FROM pins ORDER BY lat")
                #expect(cells.count == 3)
                for row in cells {
                    let (lat, lon, cell): (Double, Double, Int) = (try row.double(0), try row.double(1), try row.int(2))
                    #expect(cell == Int(Grid.cell(lat: lat, lon: lon, level: 0).rawValue))
                }
                #expect(try await client.ok("NEARBY 48.85 2.35 100")["pins"].array.count == 1)
            }
        }
    }

    @Test("the load reads the table in ranges of pages: every live pin once, whatever the ranges' size", arguments: [1, 2, 1000])
    func loadByPages(pagesPerBatch: Int) async throws {
        try await withDatabaseServer { address, environment in
            try await converse(address) { client in
                try await client.register("alice")
                for number in 0 ..< 120 {
                    _ = try await client.ok("POST \(Double(number) / 1000) 0.5 \(quoted("pin number \(number), with words so that rows fill pages"))")
                }
                // Rows moved by updates, dead rows and an expired pin, as a long-lived table has.
                try await environment.pool.query("UPDATE pins SET reply_count = 1 WHERE lat < 0.03", idempotent: false)
                try await environment.pool.query("UPDATE pins SET expires_at = created_at + interval '1 microsecond' WHERE lat = 0.1", idempotent: false)
                try await environment.pool.query("DELETE FROM pins WHERE lat = 0.11", idempotent: false)
                let pages = try await environment.feed.database.pinTableSize().pages
                #expect(pages > 2, "the pins take several pages")
                #expect(try await environment.feed.load(pagesPerBatch: pagesPerBatch) == 118)
                let page = try await client.ok("NEARBY 0.06 0.5 10000 LIMIT 200")["pins"].array
                #expect(page.count == 118)
                #expect(Set(try page.map { try $0["id"].string }).count == 118)
                let replied = page.filter { $0["replies"].int == 1 }
                #expect(replied.count == 30)
            }
        }
    }

    @Test("a rewrite of the pins table (CLUSTER) while the feed loads: the load reads it again")
    func loadDuringRewrite() async throws {
        try await withDatabaseServer { address, environment in
            try await converse(address) { client in
                try await client.register("alice")
                for number in 0 ..< 120 {
                    _ = try await client.ok("POST \(Double(number) / 1000) 0.5 \(quoted("pin number \(number), with words so that rows fill pages"))")
                }
                // CLUSTER by the id index rewrites the rows in the ids' (random) order, so nearly
                // every row moves to another page, whatever other sessions' snapshots keep alive
                // (a VACUUM FULL keeps recently deleted rows where they are while any may see them).
                let before = try await environment.feed.database.pinTableSize()
                #expect(before.pages > 2)
                let rewritten = Mutex(false)
                let pool = environment.pool
                let loaded = try await environment.feed.load(pagesPerBatch: 1) {
                    guard rewritten.withLock({ done in defer { done = true }; return !done }) else { return }
                    _ = try? await pool.query("CLUSTER pins USING pins_pkey", idempotent: false)
                }
                let after = try await environment.feed.database.pinTableSize()
                #expect(rewritten.withLock { $0 })
                #expect(after.file != before.file, "the table was rewritten during the load")
                #expect(loaded == 120)
                let page = try await client.ok("NEARBY 0.06 0.5 10000 LIMIT 200")["pins"].array
                #expect(Set(try page.map { try $0["id"].string }).count == 120)
            }
        }
    }

    @Test("the change log: every change to pins and regions is numbered in commit order, and a feed catches up from its place")
    func changeLog() async throws {
        try await withDatabaseServer { address, environment in
            let feed = environment.feed
            let start = try #require(feed.appliedChange)
            // A listener is woken by a commit that changes pins.
            let listening = try await feed.startListening()
            let other = environment.otherProcess()
            let author = try await registerAlice(in: other)
            func post(_ text: String, lat: Double = 0) async throws -> String {
                try await other.createPin(textPin(text, by: author.id, lat: lat)).id
            }
            let first = try await post("one")
            try await eventually("the listener is woken") { try listening.waitForChanges(timeoutMilliseconds: 250) != .none }
            // Nobody told this feed: it holds nothing until it catches up, then all of it.
            #expect(feed.count == 0)
            let second = try await post("two", lat: 1)
            try await environment.pool.query("UPDATE pins SET hidden = true WHERE id = \(second)", idempotent: false)
            try await environment.pool.query("UPDATE pins SET body = 'edited' WHERE id = \(first)", idempotent: false)
            try await feed.catchUp()
            let after = try #require(feed.appliedChange)
            #expect(after >= start + 4)
            try await converse(address) { (client: Conversation) async throws in
                let pins = try await client.ok("NEARBY 0 0 1000")["pins"].array
                #expect(try pins.map { try $0["text"].string } == ["edited"])
            }
            let numbers = try await environment.pool.query("SELECT seq FROM feed_changes ORDER BY seq")
            let sequence = try numbers.map { Int64(try $0.int(0) as Int) }
            #expect(sequence == sequence.sorted() && sequence.last == after)
            // A region defined in the database reaches the feed through the same log.
            _ = try await other.setRegion(try RegionDefinition.parse(name: "middle", geoJSON: GeoJSONFixtures.square(west: -1, south: -1, size: 3)))
            try await feed.catchUp()
            #expect(feed.regionNames == ["middle"])
            try await converse(address) { (client: Conversation) async throws in
                #expect(try await client.ok("REGION middle")["pins"].array.count == 1)
            }
            // Deleting, and expiry's trimming: a feed whose place was trimmed away reloads, and
            // its watches, whose events in between are lost, hear `overflow` and end.
            try await converse(address) { (watcher: Conversation) async throws in
                let watch = try await watcher.watch("0 0 1000")
                _ = try await other.deletePin(id: first, by: author.id) { _ in .byAuthor }
                // Far away; the trim keeps the newest entry, so this one, and the delete is lost.
                _ = try await post("three", lat: 2)
                // Numbered (by the other process), not yet read by this feed.
                try await other.numberFeedChanges()
                try await environment.pool.query("UPDATE feed_changes SET at = now() - interval '2 days'", idempotent: false)
                let report = try await other.expire(keepChangesSeconds: 3600)
                #expect(report.changes >= 6)
                let kept = try await environment.pool.query("SELECT count(*) FROM feed_changes")
                #expect(try kept[0].int(0) as Int == 1)
                try await feed.catchUp()
                #expect(feed.count == 2)  // "three", and the hidden pin, kept out of every read
                var event = try await watcher.event()
                // A catch-up may have seen the delete before the trim.
                if try event["type"].string == "gone" { event = try await watcher.event() }
                #expect(try event["watch"].string == watch && event["type"].string == "overflow")
                #expect(try await watcher.call("UNWATCH \(watch)").hasPrefix("ERR NOT_FOUND"))
            }
            try await converse(address) { (client: Conversation) async throws in
                #expect(try await client.ok("NEARBY 0 0 1000")["pins"].array.isEmpty)
            }
        }
    }

    @Test("a numbering wakes listeners naming its store, which its own listener sleeps through; a store's writes are numbered soon after they commit")
    func wakeUpsNameTheirWriter() async throws {
        try await withDatabaseServer { _, environment in
            let own = environment.feed.database
            let other = environment.otherProcess()
            #expect(own.writerID != other.writerID)
            // Other tests' schemas share the channel: look for the payload expected, among any.
            let listening = try PostgresConnection.connect(environment.configuration)
            try listening.query("LISTEN \(unescaped: ChangeListener.channel)")
            // Waits for the notification (the deadline only guards against a hang).
            func heard(_ payload: String) throws -> Bool {
                let deadline = ContinuousClock.now + .seconds(60)
                while ContinuousClock.now < deadline {
                    if try listening.waitForNotifications(timeoutMilliseconds: 100).contains(where: { $0.payload == payload }) {
                        return true
                    }
                }
                return false
            }
            let author = try await registerAlice(in: own)
            func post(_ text: String, by store: Database) async throws -> String {
                try await store.createPin(textPin(text, by: author.id)).id
            }
            let mine = try await post("mine", by: own)
            #expect(try heard(own.writerID))
            _ = try await post("theirs", by: other)
            #expect(try heard(other.writerID))
            _ = try await other.deletePin(id: mine, by: author.id) { _ in .byAuthor }
            #expect(try heard(other.writerID))
            // A change no store numbers (psql's) is numbered by the next catch-up, which names its store.
            _ = try await post("kept", by: other)
            #expect(try heard(other.writerID))
            try await environment.pool.query("UPDATE pins SET body = 'edited by hand' WHERE body = 'kept'", idempotent: false)
            try await environment.feed.catchUp()
            #expect(try heard(own.writerID))
            // What a listener slept through is still read from the log by the next catch-up.
            #expect(environment.feed.count == 2)
        }
    }

    /// A payload `hunts:` stands for a notification on the hunts' channel (its payload is empty).
    @Test("what wakes a listener", arguments: [
        ([], ChangeListener.WakeUp.none), ([""], .changes), (["w1"], .ownNewPins), (["w1", "w1"], .ownNewPins),
        (["w1", "w2"], .changes), (["w2"], .changes), (["w1", ""], .changes),
        (["hunts:"], .hunts), (["hunts:", "hunts:"], .hunts), (["hunts:", "w1"], .changes), (["hunts:", ""], .changes),
    ])
    func wakeUps(payloads: [String], wakeUp: ChangeListener.WakeUp) {
        let notifications = payloads.map { payload in
            payload == "hunts:"
                ? PostgresNotification(channel: ChangeListener.huntsChannel, payload: "")
                : PostgresNotification(channel: ChangeListener.channel, payload: payload)
        }
        #expect(ChangeListener.wakeUp(notifications, ownWriter: "w1") == wakeUp)
    }

    /// Each step: milliseconds since the wait began, what one look heard; then the outcome
    /// (nil: still waiting). Timeout 500 ms; own pins alone end it 250 ms after the first.
    @Test("a wait ends at once on others' changes, 250 ms after its own new pins, or at its timeout", arguments: [
        ([(0, ChangeListener.WakeUp.none), (500, .none)], [nil, ChangeListener.WakeUp.none]),
        ([(10, .changes)], [.changes]),
        ([(10, .ownNewPins), (100, .ownNewPins), (200, .none), (260, .none)], [nil, nil, nil, .ownNewPins]),
        ([(10, .ownNewPins), (100, .changes)], [nil, .changes]),
        ([(10, .hunts)], [.hunts]),
        ([(10, .ownNewPins), (100, .hunts)], [nil, .changes]),
        ([(400, .ownNewPins), (500, .none)], [nil, .ownNewPins]),
        ([(100, .none), (300, .ownNewPins), (520, .ownNewPins)], [nil, nil, .ownNewPins]),
    ])
    func waitEnds(steps: [(Int, ChangeListener.WakeUp)], outcomes: [ChangeListener.WakeUp?]) {
        let start = ContinuousClock.now
        var wait = ChangeListener.Wait(until: start + .milliseconds(500), ownPinsWait: .milliseconds(250))
        let heard = steps.map { milliseconds, wakeUp in wait.heard(wakeUp, at: start + .milliseconds(milliseconds)) }
        #expect(heard == outcomes)
    }

    @Test("reading the change log is planned once per connection, not at every call")
    func changeLogReadKeepsItsPlan() async throws {
        try await withDatabaseServer { _, environment in
            // One connection, so every call below runs in the session asked afterwards.
            let pool = PostgresPool(configuration: environment.configuration, maxConnections: 1)
            let store = Database(pool: pool)
            let author = try await registerAlice(in: store)
            var place: Int64 = 0
            for index in 0 ..< 8 {
                _ = try await store.createPin(textPin("pin \(index)", by: author.id))
                try await store.numberFeedChanges()
                let page = try await store.feedChanges(after: place, limit: 1000)
                #expect(page.changes.count == 1)
                place = page.changes.last?.sequence ?? place
            }
            // PostgreSQL plans a prepared statement afresh for its first five calls, then keeps
            // its generic plan only if that costs no more than the fresh ones did.
            let plans = try await pool.query("""
                SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement LIKE '%FROM feed_changes WHERE seq >%'
                """)
            #expect(plans.count == 1)
            #expect(try plans.first?.int(0) as Int? == 3)
            await pool.shutdown()
        }
    }

    @Test("regions: set after pins exist, seen by a running daemon; REGIONS and REGION page newest first")
    func regions() async throws {
        try await withDatabaseServer(listening: true) { address, environment in
            try await converse(address) { client in
                try await client.register("alice")
                var inside: [String] = []
                for index in 0 ..< 5 {
                    inside.append(try await client.ok("POST 52.5\(index) 13.5 \(quoted("in \(index)"))")["pin"]["id"].string)
                }
                _ = try await client.ok("POST 40 13.5 outside")
                #expect(try await client.call("REGIONS") == "OK []")
                #expect(try await client.call("REGION berlin") == "ERR NOT_FOUND no region named 'berlin'")

                // The CLI (another process) defines the region.
                let update = try await environment.otherProcess().setRegion(
                    try RegionDefinition.parse(name: "berlin", geoJSON: GeoJSONFixtures.square(west: 13, south: 52, size: 1)))
                #expect(update.pinsInRegion == 5)
                try await eventually("the daemon sees the region") {
                    try await client.call("REGIONS") == #"OK [{"name":"berlin","pins":5}]"#
                }
                #expect(try await client.ok("GET \(inside[0])")["pin"]["region"].string == "berlin")
                #expect(try await client.ok("NEARBY 52.5 13.5 100")["pins"][0]["region"].string == "berlin")

                var seen: [String] = []
                var cursor: String?
                repeat {
                    let page = try await client.ok("REGION berlin LIMIT 2" + (cursor.map { " CURSOR \($0)" } ?? ""))
                    seen += try page["pins"].array.map { try $0["id"].string }
                    cursor = page["next"].isNull ? nil : try page["next"].string
                } while cursor != nil
                #expect(seen == inside.reversed())

                // A new pin inside belongs to it at once.
                let fresh = try await client.ok("POST 52.9 13.9 new")["pin"]
                #expect(try fresh["region"].string == "berlin")
                #expect(try await client.ok("REGION berlin LIMIT 1")["pins"][0]["id"].string == fresh["id"].string)
                #expect(try await client.ok("REGION berlin KIND photo")["pins"].array.isEmpty)

                _ = try await environment.otherProcess().deleteRegion(named: "berlin")
                try await eventually("the daemon sees the deletion") {
                    try await client.call("REGIONS") == "OK []"
                }
                #expect(try await client.ok("GET \(inside[0])")["pin"]["region"].isNull)
                #expect(try await client.ok("NEARBY 52.5 13.5 100")["pins"][0]["region"].isNull)
            }
        }
    }
}
