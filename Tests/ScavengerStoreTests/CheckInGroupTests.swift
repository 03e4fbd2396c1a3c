import Foundation
import Postgres
import ScavengerCore
@testable import ScavengerStore
import ScavengerTestSupport
import Synchronization
import Testing

/// Check-ins committed in groups (``CheckInGroups``): several players' check-ins in one
/// transaction, each judged on its own facts and answered with its own outcome.
@Suite("Check-ins in groups: one transaction, each judged alone", .timeLimit(.minutes(2)))
struct CheckInGroupTests {
    /// A hunt of `stops` place stops and `players` players, on a migrated schema of its own, with
    /// a store that writes check-ins in groups, one group at a time.
    struct Fixture {
        let pool: PostgresPool
        let database: Database
        let hunt: HuntRecord
        let stops: [StopRecord]
        let players: [Account]

        init(stops stopCount: Int, players playerCount: Int) async throws {
            let configuration = try TestDatabase.isolatedConfiguration()
            try await TestDatabase.migrate(configuration)
            pool = PostgresPool(configuration: configuration, maxConnections: 4)
            database = Database(pool: pool, checkInWriters: 1)
            let (_, hunt) = try await database.hostAndHunt()
            var stops: [StopRecord] = []
            for n in 1 ... stopCount {
                let stop = try await database.addStop(huntID: hunt.id, NewStop(
                    lat: 48 + Double(n) / 1000, lon: 2, radiusMeters: 50, points: 10 * n, title: "Stop \(n)", clue: "",
                    proof: .place, codeHash: nil, hidden: false)) { _, _ in }
                stops.append(try #require(stop))
            }
            var players: [Account] = []
            for n in 1 ... playerCount {
                let player = try await database.register(
                    name: "player\(n)", email: "p\(n)@example.com", passwordHash: "$argon2id$h",
                    tokenHash: Array(repeating: UInt8(n + 10), count: 32), sessionTTLSeconds: 3600)
                _ = try await database.join(huntID: hunt.id, userID: player.id, name: "player\(n)") { _, _, _ in }
                players.append(player)
            }
            self.hunt = hunt
            self.stops = stops
            self.players = players
        }

        /// A check-in of `player` at `stop`, at the stop.
        func checkIn(_ player: Account, at stop: StopRecord) -> NewCheckIn {
            NewCheckIn(stopID: stop.stop.id, userID: player.id, lat: stop.stop.lat, lon: stop.stop.lon, accuracyMeters: 5, photo: nil)
        }

        /// Each stop's `found_by` and each player's points, as stored and as recounted from the
        /// accepted check-ins: equal when every credit was written once.
        func storedAndRecounted() async throws -> (stored: [String], recounted: [String]) {
            let stored = try await pool.query("""
                SELECT 's ' || id || ' ' || found_by AS line FROM hunt_stops WHERE hunt_id = \(hunt.id)
                UNION ALL SELECT 'p ' || user_id || ' ' || points || ' ' || found FROM hunt_players WHERE hunt_id = \(hunt.id)
                ORDER BY 1
                """).map { try $0.string("line") as String }
            let recounted = try await pool.query("""
                SELECT 's ' || s.id || ' ' || count(c.id) AS line FROM hunt_stops s
                LEFT JOIN checkins c ON c.stop_id = s.id AND c.status = 'accepted' WHERE s.hunt_id = \(hunt.id) GROUP BY s.id
                UNION ALL SELECT 'p ' || p.user_id || ' ' || coalesce(sum(c.points), 0) || ' ' || count(c.id) FROM hunt_players p
                LEFT JOIN checkins c ON c.hunt_id = p.hunt_id AND c.user_id = p.user_id AND c.status = 'accepted'
                WHERE p.hunt_id = \(hunt.id) GROUP BY p.user_id
                ORDER BY 1
                """).map { try $0.string("line") as String }
            return (stored, recounted)
        }
    }

    /// A judge that writes an accepted check-in worth the stop's points, whatever the facts say.
    static func accept(_ facts: CheckInFacts) -> CheckInJudgement {
        .write(CheckInVerdict(status: .accepted, points: facts.stop.points, distanceMeters: 0, travel: nil))
    }

    struct Refusal: Error, Equatable {
        let reason: String
    }

    /// Holds a group's transaction open (its judge waits on the pool's thread) until the test
    /// opens it, so that the check-ins arriving meanwhile wait for the next group.
    final class Gate: Sendable {
        private let entered = Atomic<Bool>(false)
        private let opened = Atomic<Bool>(false)

        func judge(_ facts: CheckInFacts) -> CheckInJudgement {
            entered.store(true, ordering: .releasing)
            while !opened.load(ordering: .acquiring) { usleep(1_000) }
            return CheckInGroupTests.accept(facts)
        }

        /// Returns once the held group's transaction is judging.
        func untilEntered() async throws {
            while !entered.load(ordering: .acquiring) { try await Task.sleep(for: .milliseconds(2)) }
        }

        func open() { opened.store(true, ordering: .releasing) }
    }

    /// What a check-in came to, in a form tests compare.
    static func summary(_ result: Result<CheckInOutcome?, StoreError>) -> String {
        switch result {
        case .success(.written(let write)?): "written \(write.checkIn.status.rawValue) \(write.standing.points) rank \(write.rank)"
        case .success(.refused(let refusal)?): "refused \(refusal)"
        case .success(nil): "no such stop"
        case .failure(.refused(let refusal)): "refused \(refusal)"
        case .failure(let error): "failed \(error)"
        }
    }

    typealias Attempt = Task<Result<CheckInOutcome?, StoreError>, Never>

    /// A board as the daemon would hold it, of `players` at points reached at the epoch's first
    /// microseconds (before any check-in of a test), in order.
    static func board(_ players: [(Account, Int)]) -> Leaderboard {
        var board = Leaderboard()
        for (n, (player, points)) in players.enumerated() {
            board.update(player.user.name, points: points, found: points > 0 ? 1 : 0, at: Timestamp(microseconds: Int64(n + 1)))
        }
        return board
    }

    /// Sends a check-in and returns once it waits for a group (the `waiting`-th to wait), so
    /// that check-ins join the queue in the order they are sent.
    static func send(
        _ database: Database, _ new: NewCheckIn, waiting: Int, request: KeyedWrite<CheckInOutcome?>? = nil,
        photoRate: RateLimit? = nil, board: Leaderboard = Leaderboard(), judge: @escaping @Sendable (CheckInFacts) throws -> CheckInJudgement
    ) async throws -> Attempt {
        let groups = try #require(database.checkInGroups)
        let attempt = Attempt {
            do throws(StoreError) {
                return .success(try await database.checkIn(new, board: { board }, photoRate: photoRate, request: request, judge: judge))
            } catch {
                return .failure(error)
            }
        }
        while groups.waiting < waiting { try await Task.sleep(for: .milliseconds(2)) }
        return attempt
    }

    @Test("check-ins that arrive while a group is written go in the next group, at most one per player; each answered with its own outcome")
    func nextGroupTakesTheWaiting() async throws {
        let fixture = try await Fixture(stops: 3, players: 6)
        let (database, stops, players) = (fixture.database, fixture.stops, fixture.players)
        let groups = try #require(database.checkInGroups)
        let gate = Gate()
        let secondFacts = Mutex<CheckInFacts?>(nil)

        // The first check-in holds its group open while six more arrive: player 2 twice.
        let first = try await Self.send(database, fixture.checkIn(players[0], at: stops[0]), waiting: 0, judge: gate.judge)
        try await gate.untilEntered()
        var others: [Attempt] = []
        for (index, player) in players.enumerated().dropFirst() {
            let judge: @Sendable (CheckInFacts) throws -> CheckInJudgement =
                index == 5 ? { _ in throw StoreError.refused(Refusal(reason: "not today")) } : Self.accept
            // Ranked on the board as the daemon holds it once player 1's group committed.
            others.append(try await Self.send(
                database, fixture.checkIn(player, at: stops[0]), waiting: index, board: Self.board([(players[0], 10)]), judge: judge))
        }
        let second = try await Self.send(
            database, fixture.checkIn(players[1], at: stops[1]), waiting: 6, board: Self.board([(players[0], 10), (players[1], 10)])
        ) { facts in
            secondFacts.withLock { $0 = facts }
            return Self.accept(facts)
        }
        gate.open()

        #expect(Self.summary(await first.value) == "written accepted 10 rank 1")
        var replies: [String] = []
        for other in others { replies.append(Self.summary(await other.value)) }
        // Ties go to who reached the points first: each check-in of the group after the last.
        #expect(replies == [
            "written accepted 10 rank 2", "written accepted 10 rank 3", "written accepted 10 rank 4", "written accepted 10 rank 5",
            "refused Refusal(reason: \"not today\")",
        ])
        #expect(Self.summary(await second.value) == "written accepted 30 rank 1")
        // The first alone, then the five players, then player 2's second: judged after their first.
        #expect(groups.groupsWritten == 3)
        let facts = try #require(secondFacts.withLock { $0 })
        #expect(facts.player?.points == 10)
        #expect(facts.nextStop == 2)
        let (stored, recounted) = try await fixture.storedAndRecounted()
        #expect(stored == recounted)
        await fixture.pool.shutdown()
    }

    /// A key of `player`'s that stores a written check-in's status and points.
    static func key(_ player: Account, _ key: String) -> KeyedWrite<CheckInOutcome?> {
        KeyedWrite(userID: player.id, key: key, digest: Array(key.utf8), retentionSeconds: 3600) { outcome in
            guard case .written(let write)? = outcome else { return nil }
            return "\(write.checkIn.status.rawValue) \(write.standing.points)"
        }
    }

    @Test("keyed check-ins are written in groups, each key stored with its own outcome in the group's transaction; a refusal stores none; a retry of a stored key meets it")
    func keyedCheckInsInGroups() async throws {
        let fixture = try await Fixture(stops: 2, players: 5)
        let (database, stops, players) = (fixture.database, fixture.stops, fixture.players)
        let gate = Gate()
        let first = try await Self.send(
            database, fixture.checkIn(players[0], at: stops[0]), waiting: 0, request: Self.key(players[0], "key-first"), judge: gate.judge)
        try await gate.untilEntered()
        var others: [Attempt] = []
        for (index, player) in players.enumerated().dropFirst() {
            let judge: @Sendable (CheckInFacts) throws -> CheckInJudgement =
                index == 4 ? { _ in throw StoreError.refused(Refusal(reason: "not today")) } : Self.accept
            others.append(try await Self.send(
                database, fixture.checkIn(player, at: stops[1]), waiting: index, request: Self.key(player, "key-\(index)"), judge: judge))
        }
        gate.open()
        #expect(Self.summary(await first.value).hasPrefix("written accepted"))
        var replies: [String] = []
        for other in others { replies.append(Self.summary(await other.value)) }
        #expect(replies.filter { $0.hasPrefix("written accepted") }.count == 3)
        // The first alone, the four keyed ones in one group.
        #expect(try #require(database.checkInGroups).groupsWritten == 2)
        let stored = try await fixture.pool.query("SELECT key, result FROM request_keys ORDER BY key").map {
            "\(try $0.string("key") as String) \(try $0.string("result") as String)"
        }
        #expect(stored == ["key-1 accepted 20", "key-2 accepted 20", "key-3 accepted 20", "key-first accepted 10"])
        // A retry of a stored key is not written again: its caller answers from the stored reply.
        let retry = try await Self.send(
            database, fixture.checkIn(players[1], at: stops[0]), waiting: 0, request: Self.key(players[1], "key-1"), judge: Self.accept
        ).value
        #expect(Self.summary(retry) == "failed \(StoreError.conflict(constraint: requestKeyConstraint))")
        let (storedCounts, recounted) = try await fixture.storedAndRecounted()
        #expect(storedCounts == recounted)
        await fixture.pool.shutdown()
    }

    /// A photo check-in's verdict: pending, for the host to review.
    static func pending(_ facts: CheckInFacts) -> CheckInJudgement {
        .write(CheckInVerdict(status: .pending, points: 0, distanceMeters: 0, travel: nil))
    }

    @Test("photo check-ins are written in groups, keyed: each photo's bytes kept with its check-in, each key stored; a player out of photo tokens is refused alone")
    func photoCheckInsInGroups() async throws {
        let fixture = try await Fixture(stops: 2, players: 5)
        let (database, stops, players) = (fixture.database, fixture.stops, fixture.players)
        let rate = RateLimit(count: 1, seconds: 3600)
        func photo(_ n: Int) -> Photo { Photo(mime: "image/jpeg", data: [0xFF, 0xD8] + Array(repeating: UInt8(n), count: 1000 + n) + [0xFF, 0xD9]) }
        func withPhoto(_ player: Account, at stop: StopRecord, _ n: Int) -> NewCheckIn {
            var new = fixture.checkIn(player, at: stop)
            new.photo = photo(n)
            return new
        }
        // Player 5 spends their one photo token first.
        let spent = try await Self.send(database, withPhoto(players[4], at: stops[0], 5), waiting: 0, photoRate: rate, judge: Self.pending)
        #expect(Self.summary(await spent.value) == "written pending 0 rank 1")
        let gate = Gate()
        let first = try await Self.send(database, fixture.checkIn(players[0], at: stops[0]), waiting: 0, judge: gate.judge)
        try await gate.untilEntered()
        var others: [Attempt] = []
        for (index, player) in players.enumerated().dropFirst() {
            others.append(try await Self.send(
                database, withPhoto(player, at: stops[1], index), waiting: index - 1, request: Self.key(player, "photo-\(index)"),
                photoRate: rate, judge: Self.pending))
        }
        gate.open()
        #expect(Self.summary(await first.value).hasPrefix("written accepted"))
        var results: [Result<CheckInOutcome?, StoreError>] = []
        for other in others { results.append(await other.value) }
        let replies = results.map(Self.summary)
        #expect(replies.prefix(3).allSatisfy { $0.hasPrefix("written pending") }, "\(replies)")
        guard case .failure(.rateLimited) = results[3] else {
            Issue.record("player 5's second photo: \(replies[3]), not rate limited")
            return
        }
        // Player 5's alone, the gate's alone, the four photos in one group.
        #expect(try #require(database.checkInGroups).groupsWritten == 3)
        let kept = try await fixture.pool.query("""
            SELECT c.user_id, c.photo_bytes, octet_length(p.data) AS n FROM checkins c JOIN checkin_photos p ON p.checkin_id = c.id
            WHERE c.stop_id = \(stops[1].stop.id) ORDER BY c.user_id
            """).map { "\(try $0.int("user_id") as Int) \(try $0.int("photo_bytes") as Int) \(try $0.int("n") as Int)" }
        #expect(kept == (1 ... 3).map { "\(players[$0].id) \(photo($0).data.count) \(photo($0).data.count)" })
        for index in 1 ... 3 {
            let id = try await fixture.pool.query("SELECT id FROM checkins WHERE user_id = \(players[index].id)")[0].string("id") as String
            #expect(try await database.checkInPhoto(id: id) == photo(index))
        }
        let stored = try await fixture.pool.query("SELECT key, result FROM request_keys ORDER BY key").map {
            "\(try $0.string("key") as String) \(try $0.string("result") as String)"
        }
        #expect(stored == ["photo-1 pending 0", "photo-2 pending 0", "photo-3 pending 0"])
        await fixture.pool.shutdown()
    }

    @Test("badges of a group in its transaction: first-find for each, pathfinder for the first at each stop in group order (6 players), logged")
    func groupBadges() async throws {
        let fixture = try await Fixture(stops: 2, players: 6)
        let (database, stops, players) = (fixture.database, fixture.stops, fixture.players)
        let gate = Gate()
        let first = try await Self.send(database, fixture.checkIn(players[0], at: stops[1]), waiting: 0, judge: gate.judge)
        try await gate.untilEntered()
        // Five at the first stop, in one group: the first of them is its pathfinder.
        var others: [Attempt] = []
        for (index, player) in players.enumerated().dropFirst() {
            others.append(try await Self.send(database, fixture.checkIn(player, at: stops[0]), waiting: index, judge: Self.accept))
        }
        gate.open()
        #expect(Self.summary(await first.value).hasPrefix("written accepted"))
        for other in others { #expect(Self.summary(await other.value).hasPrefix("written accepted")) }
        #expect(try #require(database.checkInGroups).groupsWritten == 2)
        let held = try await fixture.pool.query("""
            SELECT u.name, b.badge, b.hunt_id, c.stop_id FROM user_badges b JOIN users u ON u.id = b.user_id
            LEFT JOIN checkins c ON c.id = b.checkin_id ORDER BY b.badge, u.name
            """).map { "\(try $0.string("badge") as String) \(try $0.string("name") as String) \(try $0.string("stop_id") as String)" }
        #expect(held == players.indices.map { "first-find player\($0 + 1) \(stops[$0 == 0 ? 1 : 0].stop.id)" }
            + ["pathfinder player1 \(stops[1].stop.id)", "pathfinder player2 \(stops[0].stop.id)"])
        let logged = try await fixture.pool.query("SELECT count(*) AS n FROM hunt_changes WHERE kind = 'badge'")[0].int("n") as Int
        #expect(logged == held.count)
        await fixture.pool.shutdown()
    }

    @Test("a group whose transaction fails is written again one by one: the check-in that broke it fails alone, the others are written once")
    func failedGroupIsWrittenOneByOne() async throws {
        let fixture = try await Fixture(stops: 2, players: 4)
        let (database, stops, players) = (fixture.database, fixture.stops, fixture.players)
        // Player 4 has checked in at the first stop already.
        let early = try await Self.send(database, fixture.checkIn(players[3], at: stops[0]), waiting: 0, judge: Self.accept)
        #expect(Self.summary(await early.value) == "written accepted 10 rank 1")

        let gate = Gate()
        let first = try await Self.send(database, fixture.checkIn(players[0], at: stops[1]), waiting: 0, judge: gate.judge)
        try await gate.untilEntered()
        // A judge that errs (writes where player 4 already has a live check-in) breaks the
        // group's transaction on `checkins_one_live`.
        var others: [Attempt] = []
        // Ranked on the board as the daemon holds it with players 4 and 1's check-ins.
        let held = Self.board([(players[3], 10), (players[0], 20)])
        for (index, player) in players.enumerated().dropFirst() {
            others.append(try await Self.send(database, fixture.checkIn(player, at: stops[0]), waiting: index, board: held, judge: Self.accept))
        }
        gate.open()
        #expect(Self.summary(await first.value) == "written accepted 20 rank 1")
        var replies: [String] = []
        for other in others { replies.append(Self.summary(await other.value)) }
        // Written one by one, each on the board it was given (player 2's write is not on player 3's).
        #expect(replies == ["written accepted 10 rank 3", "written accepted 10 rank 3", "failed conflict on checkins_one_live"])
        let (stored, recounted) = try await fixture.storedAndRecounted()
        #expect(stored == recounted)
        let checkIns: Int = try await fixture.pool.query("SELECT count(*) AS n FROM checkins")[0].int("n")
        #expect(checkIns == 4)
        #expect(try #require(database.checkInGroups).groupsWritten == 3)
        await fixture.pool.shutdown()
    }
}
