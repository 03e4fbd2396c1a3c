import Logging
import Postgres
import ScavengerCore
@testable import ScavengerFeed
import ScavengerStore
import ScavengerTestSupport
import Testing

/// The feeds against PostgreSQL, without a server: catching up with the change logs, and what
/// they do when a log is rewritten under their place or has gaps.
// The time limit only guards against a hang, and it counts the wait for a TestEnvironment.
@Suite("The feeds and their change logs, with PostgreSQL", .timeLimit(.minutes(10)))
struct FeedLogTests {
    @Test("this daemon's new pin goes in directly, unless the log or a reload has reached it first")
    func ownPinsGoInDirectly() async throws {
        try await TestEnvironment.make().use { environment in
            let feed = environment.feed
            let store = environment.otherProcess()
            let author = try await registerAlice(in: store)
            // Directly: in the feed on return, with no read of the log.
            let place = try #require(feed.appliedChange)
            let direct = textPin("direct", by: author.id)
            _ = try await feed.writeOwnPin(id: direct.id) { try await store.createPin(direct) }
            #expect(feed.count == 1 && feed.appliedChange == place)
            /// Writes a pin someone else deletes before the writer's commit comes back, after
            /// which `meanwhile` runs, still before it comes back.
            func writeDeleted(_ text: String, meanwhile: () async throws -> Void) async throws {
                let deleted = textPin(text, by: author.id)
                _ = try await feed.writeOwnPin(id: deleted.id) {
                    let pin = try await store.createPin(deleted)
                    _ = try await store.deletePin(id: deleted.id, by: author.id) { _ in .byAuthor }
                    try await meanwhile()
                    return pin
                }
            }
            // Deleted, and that applied from the log, before the writer's commit came back: the
            // deletion stands.
            try await writeDeleted("deleted") { try await feed.catchUp() }
            #expect(feed.count == 1)
            // A reload that read the database before the commit: the feed catches up to it.
            let early = textPin("after a reload", by: author.id)
            _ = try await feed.writeOwnPin(id: early.id) {
                try await feed.load()
                return try await store.createPin(early)
            }
            #expect(feed.count == 2)
            // A reload after the pin was written and deleted: the deletion stands.
            try await writeDeleted("deleted before a reload") { try await feed.load() }
            #expect(feed.count == 2)
            // A write that fails leaves nothing behind.
            await #expect(throws: CancellationError.self) {
                try await feed.writeOwnPin(id: Identifier.newPin()) { throw CancellationError() }
            }
            try await feed.catchUp()
            #expect(feed.count == 2)
        }
    }

    @Test("a log rewritten under the feed's place (a standby promoted without the last changes): the feed reloads and holds what the database holds")
    func rewrittenLogReloads() async throws {
        try await TestEnvironment.make().use { environment in
            let other = environment.otherProcess()
            let author = try await registerAlice(in: other)
            let kept = try await other.createPin(textPin("kept", by: author.id))
            let lost = try await other.createPin(textPin("lost", by: author.id, lon: 0.0001))
            try await environment.feed.catchUp()
            #expect(environment.feed.count == 2 && environment.feed.logRewrites == 0)
            let newID = try Self.failOver(environment, losing: lost, author: author)
            try await environment.feed.catchUp()
            #expect(environment.feed.logRewrites == 1)
            let ids = try environment.feed.withNearby(NearbyQuery(lat: 0, lon: 0, radius: 1000)) { page in page.pins.map { Pin($0.record).id } }
            #expect(Set(ids) == [kept.id, newID])
            // Going on from the new place, nothing more is found rewritten.
            _ = try await other.createPin(textPin("after", by: author.id, lon: 0.0003))
            try await environment.feed.catchUp()
            #expect(environment.feed.count == 3 && environment.feed.logRewrites == 1)
        }
    }

    @Test("a feed loaded while a committed change waits to be numbered takes its place from the numbered log, and finds nothing rewritten")
    func loadBesideUnnumberedChanges() async throws {
        try await TestEnvironment.make().use { environment in
            let other = environment.otherProcess()
            let author = try await registerAlice(in: other)
            _ = try await other.createPin(textPin("numbered", by: author.id))
            try await other.numberFeedChanges()
            // Committed by hand: no store numbers it (an unnumbered row sorts first in a
            // descending order of positions, and its stamp is not the last position's).
            try await environment.pool.query("""
                INSERT INTO pins (id, author_id, lat, lon, kind, body, expires_at)
                VALUES ('p' || repeat('w', 24), \(author.id), 0, 0.0001, 'text', 'waiting', now() + interval '1 hour')
                """, idempotent: false)
            let later = Feed(database: other, logger: Logger(label: "test-loads-beside-unnumbered"))
            try await later.load()
            #expect(later.count == 2)
            try await later.catchUp()
            #expect(later.logRewrites == 0 && later.count == 2)
        }
    }

    /// A failover written by hand: the primary that took over never had `lost`, the last pin
    /// logged (its row and its log entry are gone), and writes WAL on a timeline the log was not
    /// written on (the epoch recorded so far is made another timeline's, `db/0033`); then it takes
    /// another pin, whose id this returns.
    static func failOver(_ environment: TestEnvironment, losing lost: Pin, author: Account) throws -> String {
        let connection = try PostgresConnection.connect(environment.configuration)
        let newID = "p" + String(repeating: "n", count: 24)
        try connection.transaction { connection in
            try connection.query("SET LOCAL session_replication_role = replica")
            try connection.query("DELETE FROM pins WHERE id = \(lost.id)")
            try connection.query("DELETE FROM feed_changes WHERE seq = (SELECT max(seq) FROM feed_changes)")
            try connection.query("UPDATE feed_changes_epochs SET timeline = -timeline")
        }
        try connection.query("""
            INSERT INTO pins (id, author_id, lat, lon, kind, body, expires_at)
            VALUES (\(newID), \(author.id), 0, 0.0002, 'text', 'new', now() + interval '1 hour')
            """)
        return newID
    }

    /// Where a new epoch's positions begin (`db/0033`) when the log is short and the test
    /// cluster on timeline 1: 2^40.
    static let block: Int64 = 1 << 40

    @Test("after a failover, WATCH … SINCE a position of the lost history reads everything again, on this daemon and on one started after; SINCE before the histories part resumes")
    func resumeAfterFailover() async throws {
        try await TestEnvironment.make().use { environment in
            let other = environment.otherProcess()
            let author = try await registerAlice(in: other)
            _ = try await other.createPin(textPin("kept", by: author.id))
            try await environment.feed.catchUp()
            let shared = try #require(environment.feed.appliedChange)
            let lost = try await other.createPin(textPin("lost", by: author.id, lon: 0.0001))
            try await environment.feed.catchUp()
            let lostPlace = try #require(environment.feed.appliedChange)
            _ = try Self.failOver(environment, losing: lost, author: author)
            try await other.numberFeedChanges()
            // The new primary numbered its change past every position the lost history can have used.
            let end = try await other.pinChanges(after: 0, latitudes: -90 ... 90).latest
            #expect(end >= Self.block)
            // A client that saw `lost` comes back before this daemon has read the log again.
            let area = WatchArea(lat: 0, lon: 0, radius: 1000)
            let reread = try #require(try await environment.feed.resumeWatch(area, sink: RecordingSink(), since: lostPlace))
            #expect(!reread.resumed)
            #expect(environment.feed.logRewrites == 1)
            #expect(try #require(try await environment.feed.resumeWatch(area, sink: RecordingSink(), since: shared)).resumed)
            // A daemon started after the failover never applied the lost history, and knows all the same.
            let later = Feed(database: other, logger: Logger(label: "test-later-daemon"))
            try await later.load()
            for since in [lostPlace, lostPlace + 1, end - 1] {
                let started = try #require(try await later.resumeWatch(area, sink: RecordingSink(), since: since))
                #expect(!started.resumed, "SINCE \(since)")
            }
            // (The loads filled the new pin's cell: the log may have grown since.)
            let latest = try await other.pinChanges(after: 0, latitudes: -90 ... 90).latest
            for since in [shared, end, latest] {
                #expect(try #require(try await later.resumeWatch(area, sink: RecordingSink(), since: since)).resumed, "SINCE \(since)")
            }
            #expect(try await later.resumeWatch(area, sink: RecordingSink(), since: latest + 1) == nil, "past the log's end")
        }
    }

    @Test("after a failover and before the new primary's first change, every SINCE past the log's end is of the lost history")
    func lostBeforeTheFirstWrite() async throws {
        try await TestEnvironment.make().use { environment in
            let other = environment.otherProcess()
            let author = try await registerAlice(in: other)
            _ = try await other.createPin(textPin("kept", by: author.id))
            try await other.numberFeedChanges()
            let end = try await other.pinChanges(after: 0, latitudes: -90 ... 90).latest
            #expect(try await other.pinChanges(after: end + 5, latitudes: -90 ... 90).lost == false, "the server's epoch: only past the end")
            let connection = try PostgresConnection.connect(environment.configuration)
            try connection.query("UPDATE feed_changes_epochs SET timeline = -timeline")
            for (since, lost) in [(end, false), (end + 1, true), (end + 5, true), (Self.block, true)] {
                #expect(try await other.pinChanges(after: since, latitudes: -90 ... 90).lost == lost, "SINCE \(since)")
            }
            // The first change of the new epoch records it; the positions skipped stay lost.
            _ = try await other.createPin(textPin("first of the epoch", by: author.id, lon: 0.0001))
            try await other.numberFeedChanges()
            let first = try await other.pinChanges(after: 0, latitudes: -90 ... 90).latest
            #expect(first == Self.block)
            for (since, lost) in [(end, false), (end + 1, true), (first - 1, true), (first, false), (first + 1, false)] {
                #expect(try await other.pinChanges(after: since, latitudes: -90 ... 90).lost == lost, "SINCE \(since)")
            }
        }
    }

    @Test("the hunts' feed: a log rewritten under its place is found out, and the rankings are loaded afresh")
    func huntFeedFindsRewrittenLog() async throws {
        try await TestEnvironment.make().use { environment in
            let hunts = environment.feed.hunts
            let entry = #"[{"hunt":"h1","kind":"hunt","payload":{}}]"#
            try await hunts.catchUp()
            try await environment.pool.query("SELECT log_hunt_changes(\(entry)::jsonb)")
            try await hunts.catchUp()
            #expect(hunts.isLoaded && hunts.logRewrites == 0)
            try await environment.pool.query("""
                UPDATE hunt_changes SET stamp = stamp + 1 WHERE seq = (SELECT max(seq) FROM hunt_changes)
                """)
            try await hunts.catchUp()
            #expect(hunts.isLoaded && hunts.logRewrites == 1)
            try await environment.pool.query("SELECT log_hunt_changes(\(entry)::jsonb)")
            try await hunts.catchUp()
            #expect(hunts.logRewrites == 1)
        }
    }

    @Test("catch-ups from several tasks while the hunts' log grows: a watcher hears every entry once, in log order")
    func concurrentHuntCatchUps() async throws {
        try await TestEnvironment.make().use { environment in
            let hunts = environment.feed.hunts
            try await hunts.catchUp()
            let sink = RecordingSink()
            let watch = hunts.addWatch(.fixture(), player: nil, sink: sink)
            let entries = 40
            let pool = environment.pool
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for number in 1 ... entries {
                        let entry = #"[{"hunt":"h1","kind":"hint","payload":{"text":"\#(number)","at":0}}]"#
                        try await pool.query("SELECT log_hunt_changes(\(entry)::jsonb)")
                    }
                }
                for _ in 0 ..< 3 {
                    group.addTask { for _ in 0 ..< 15 { try await hunts.catchUp() } }
                }
                try await group.waitForAll()
            }
            try await hunts.catchUp()
            #expect(sink.events.compactMap(\.hintText) == (1 ... entries).map(String.init))
            #expect(sink.events.allSatisfy { $0.watch == watch })
        }
    }

    @Test("a change log entry rolled back leaves a gap that catching up steps over")
    func rolledBackChangesLeaveGaps() async throws {
        try await TestEnvironment.make().use { environment in
            let other = environment.otherProcess()
            let author = try await registerAlice(in: other)
            let connection = try PostgresConnection.connect(environment.configuration)
            _ = try? connection.transaction { connection in
                try connection.query("""
                    INSERT INTO pins (id, author_id, lat, lon, kind, body, expires_at)
                    VALUES ('p999999999999999999999999', \(author.id), 0, 0, 'text', 'never', now() + interval '1 hour')
                    """)
                throw CancellationError()
            }
            let kept = try await other.createPin(textPin("kept", by: author.id))
            try await environment.feed.catchUp()
            #expect(environment.feed.count == 1)
            let sequences = try await environment.pool.query("SELECT seq FROM feed_changes")
            #expect(sequences.count == 1)
            #expect(kept.text == "kept")
        }
    }
}
