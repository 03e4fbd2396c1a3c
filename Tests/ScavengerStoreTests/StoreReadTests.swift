import Postgres
import ScavengerStore
import ScavengerTestSupport
import Testing

/// Every statement the store reads rows from, run against the migrated schema: each names the
/// columns its reader looks for, so a name that does not match fails here, not in production.
/// (Values are built with `.init` and read through properties: the types may move between
/// modules.)
@Suite("Store reads against PostgreSQL", .timeLimit(.minutes(2)))
struct StoreReadTests {
    /// A session token's hash (32 bytes, as the schema requires).
    static func token(_ byte: UInt8) -> [UInt8] { Array(repeating: byte, count: 32) }

    @Test("pins, replies, the change log, accounts, regions and moderation all decode their rows")
    func everyReadDecodes() async throws {
        let configuration = try TestDatabase.isolatedConfiguration()
        try await TestDatabase.migrate(configuration)
        let pool = PostgresPool(configuration: configuration, maxConnections: 4)
        let db = Database(pool: pool)

        // Accounts.
        let alice = try await db.register(
            name: "alice", email: "alice@example.com", passwordHash: "$argon2id$a", tokenHash: Self.token(1), sessionTTLSeconds: 3600)
        let bob = try await db.register(
            name: "bob", email: "bob@example.com", passwordHash: "$argon2id$b", tokenHash: Self.token(2), sessionTTLSeconds: 3600)
        _ = try await db.register(name: "mod", email: "mod@example.com", passwordHash: "$argon2id$m", tokenHash: Self.token(3), sessionTTLSeconds: 3600)
        #expect(alice.user.name == "alice" && alice.ban == nil)
        #expect(try await db.setRole(username: "mod", role: .moderator))
        #expect(try await db.registrationConflict(name: "ALICE", email: "new@example.com") == .username)
        #expect(try await db.registrationConflict(name: "new", email: "BOB@example.com") == .email)
        #expect(try await db.registrationConflict(name: "new", email: "new@example.com") == nil)
        let credentials = try #require(try await db.credentials(login: "alice@example.com"))
        #expect(credentials.account == alice && credentials.passwordHash == "$argon2id$a")
        #expect(try await db.account(sessionTokenHash: Self.token(2)) == bob)
        let moderator = try #require(try await db.account(sessionTokenHash: Self.token(3)))
        #expect(moderator.user.role == .moderator)

        // Pins, replies, photos, cells.
        let text = try await db.createPin(.init(
            authorID: alice.id, authorName: "alice", lat: 5, lon: 5, text: "hello", ttlSeconds: 3600, photo: nil, cell: 1, region: nil))
        let photo = try await db.createPin(.init(
            authorID: alice.id, authorName: "alice", lat: 6, lon: 6, text: "look", ttlSeconds: 3600,
            photo: .some(.init(mime: "image/png", data: [1, 2, 3])), cell: 2, region: nil))
        #expect(text.created.microseconds > 0 && text.expires.microseconds > text.created.microseconds)
        let read = try #require(try await db.pin(id: photo.id))
        #expect(read.text == "look" && read.author == "alice" && read.lat == 6 && read.photo?.bytes == 3 && read.replies == 0)
        #expect(try await db.photo(pinID: photo.id)?.data == [1, 2, 3])
        #expect(try await db.livePins(pages: 0 ..< db.pinTableSize().pages).map(\.pin.id).sorted() == [text.id, photo.id].sorted())
        let reply = try #require(try await db.createReply(pinID: text.id, authorID: bob.id, authorName: "bob", text: "hi"))
        let page = try #require(try await db.replies(pinID: text.id, after: nil, limit: 10))
        #expect(page.replies.map(\.id) == [reply.id] && page.replies.first?.author == "bob" && page.replies.first?.created == reply.created)
        #expect(try await db.pin(id: text.id)?.replies == 1)
        try await pool.query("UPDATE pins SET cell = NULL WHERE id = \(text.id)")
        let missing = try await db.pinsWithoutCell(limit: 10)
        #expect(missing.map(\.id) == [text.id] && missing.first?.lat == 5 && missing.first?.lon == 5)
        try await db.fillMissingCells([(id: text.id, cell: 1)])
        #expect(try await db.pinsWithoutCell(limit: 10).isEmpty)

        // The change log. Writes are numbered in the background after their commits
        // (`db/0037`); the feed numbers before it reads, and so does this test.
        try await db.numberFeedChanges()
        let latest = try await db.latestFeedPlace().seq
        #expect(latest > 0)
        let changes = try await db.feedChanges(after: 0, limit: 100)
        #expect(changes.isContinuous && changes.changes.last?.sequence == latest)
        let pinsChanged = changes.changes.compactMap { change -> String? in
            guard case .pin(_, let now?) = change.subject else { return nil }
            return now.pin.text
        }
        #expect(pinsChanged.contains("hello") && pinsChanged.contains("look"))

        // Regions.
        let set = try await db.setRegion(.parse(name: "square", geoJSON: GeoJSONFixtures.square))
        #expect(set.pinsReassigned == 2 && set.pinsInRegion == 2)
        let summaries = try await db.regionSummaries()
        #expect(summaries.map(\.name) == ["square"] && summaries.first?.pins == 2 && summaries.first?.envelope.maxX == 10)
        #expect(try await db.regions().map(\.name) == ["square"])
        let deleted = try await db.deleteRegion(named: "square")
        #expect(deleted?.pinsReassigned == 2 && deleted?.pinsInRegion == 0)
        try await db.numberFeedChanges()
        let regionChanges = try await db.feedChanges(after: latest, limit: 100).changes
        #expect(regionChanges.contains { if case .region("square") = $0.subject { true } else { false } })

        // A rate of one pin an hour: the group insert answers the second with the wait it found.
        for attempt in 0 ..< 2 {
            do {
                _ = try await db.createPin(.init(
                    authorID: bob.id, authorName: "bob", lat: 50, lon: 50, text: "rated \(attempt)", ttlSeconds: 3600, photo: nil,
                    cell: 3, region: nil, rate: .init(count: 1, seconds: 3600)))
                #expect(attempt == 0)
            } catch {
                guard case .rateLimited(let seconds) = error else { throw error }
                #expect(attempt == 1 && seconds > 0)
            }
        }

        // Moderation: reports, the queue, a claim and its release, a decision, a ban, the log.
        let aliceReply = try #require(try await db.createReply(pinID: photo.id, authorID: alice.id, authorName: "alice", text: "mine"))
        let photoReport = try await db.report(reporter: bob, item: photo.id, reason: .spam, note: "stolen", rules: .init(), rate: nil) { _ in }
        #expect(photoReport.item == photo.id && !photoReport.hidNow)
        _ = try await db.report(reporter: bob, item: text.id, reason: .other, note: nil, rules: .init(), rate: nil) { _ in }
        _ = try await db.report(reporter: alice, item: reply.id, reason: .harassment, note: nil, rules: .init(), rate: nil) { _ in }
        #expect(try await db.openModerationItemCount() == 3)
        let queue = try await db.moderationQueue(status: .open, limit: 10)
        #expect(Set(queue.map(\.item)) == [photo.id, text.id, reply.id])
        let item = try #require(try await db.moderationItem(photo.id))
        #expect(item.kind == "pin" && item.content.author == "alice" && item.content.text == "look" && item.content.lat == 6)
        #expect(item.content.photoKept && item.content.photo?.bytes == 3 && item.content.pinKind == .photo && item.content.expires != nil)
        #expect(item.reports == 1 && item.reasons.map(\.reason) == ["spam"] && item.reasons.map(\.count) == [1])
        #expect(item.status == .open && item.claimedBy == nil && !item.hidden && item.resolution == nil)
        #expect(item.firstReported == item.lastReported && item.firstReported.microseconds > 0)
        let reports = try await db.itemReports(photo.id)
        #expect(reports.map(\.reporter) == ["bob"] && reports.first?.reason == .spam && reports.first?.note == "stolen")
        #expect(reports.first?.reporterAgeSeconds ?? -1 >= 0)
        #expect(try await db.evidencePhoto(item: photo.id)?.data == [1, 2, 3])
        let claimed = try #require(try await db.claim(moderator: moderator, item: photo.id, claimSeconds: 60) { _ in })
        #expect(claimed.status == .claimed && claimed.claimedBy == "mod")
        #expect(try await db.release(moderator: moderator, item: photo.id) { _ in }.status == .open)
        #expect(try await db.claim(moderator: moderator, item: reply.id, claimSeconds: 60) { _ in }?.content.pin == text.id)
        let outcome = try await db.resolve(
            moderator: moderator, item: reply.id, resolution: .remove, ban: .permanent, note: "gone", decide: { _ in }, decideBan: { _ in })
        #expect(outcome.item.status == .resolved && outcome.item.resolution == .remove && outcome.refreshPin == text.id)
        try await db.setBan(moderator: moderator, username: "bob", ban: .seconds(600), note: "cool off") { _ in }
        let log = try await db.moderationLog(limit: 10, before: nil)
        #expect(log.entries.map(\.action) == ["ban", "remove", "claim", "release", "claim"] && log.next == nil)
        #expect(log.entries.first?.moderator == "mod" && log.entries.first?.user == "bob" && log.entries.first?.note == "cool off")
        #expect(log.entries[1].item == reply.id && log.entries[1].user == nil && log.entries[1].at.microseconds > 0)

        // The review's author history: account, pins, replies, other reported items, actions.
        let aliceHistory = try #require(try await db.authorHistory(ofItem: photo.id))
        #expect(aliceHistory.name == "alice" && aliceHistory.role == .user && aliceHistory.ban == nil)
        #expect(aliceHistory.joined.microseconds > 0)
        #expect(Set(aliceHistory.pins.map(\.id)) == [text.id, photo.id])
        #expect(aliceHistory.pins.allSatisfy { $0.pinKind != nil && $0.lat != nil && !$0.hidden && $0.created.microseconds > 0 })
        #expect(aliceHistory.replies.map(\.id) == [aliceReply.id] && aliceHistory.replies.first?.pin == photo.id)
        #expect(aliceHistory.reportedItems.map(\.item) == [text.id] && aliceHistory.actions.isEmpty)
        let bobHistory = try #require(try await db.authorHistory(ofItem: reply.id))
        #expect(bobHistory.name == "bob" && bobHistory.ban != nil && bobHistory.actions.map(\.action) == ["ban"])
        #expect(try await db.account(sessionTokenHash: Self.token(2))?.ban != nil)

        // A moderator's delete of someone else's pin, and an expiry pass with nothing to expire.
        #expect(try await db.deletePin(id: text.id, by: moderator.id) { _ in .byModerator } == true)
        #expect(try await db.expire() == .init())
        await pool.shutdown()
    }
}
