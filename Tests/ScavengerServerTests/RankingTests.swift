import Foundation
import NIOCore
import Postgres
@testable import ScavengerBoard
import ScavengerCore
import ScavengerTestSupport
import Testing

// RANKING and PROFILE (protocol 1.2): the rankings of all users across hunts, in memory on every
// daemon, against a brute force over the check-ins in the database.

/// One user's totals as the brute force computes them from the check-ins.
struct ComputedTotals {
    var name: String
    var points: Int
    var found: Int
    var at: Int64?
}

/// The ranking as a brute force computes it from the accepted check-ins (this week's, as the
/// database's clock has it, when `week`): every user with points, "rank name points found at"
/// (`at` in seconds, as replies show it), in the contract's order.
func databaseRanking(week: Bool, _ environment: TestEnvironment) async throws -> [String] {
    ranked(try await computedTotals(week: week, environment))
}

/// Each user's totals from the accepted check-ins, by name (users with none left out).
func computedTotals(week: Bool, _ environment: TestEnvironment) async throws -> [String: ComputedTotals] {
    let rows = try await environment.pool.query("""
        SELECT u.name, sum(c.points)::integer AS points, count(*)::integer AS found,
               (extract(epoch FROM max(c.accepted_at) FILTER (WHERE c.points > 0)) * 1000000)::bigint AS at_us
        FROM checkins c JOIN users u ON u.id = c.user_id
        WHERE c.status = 'accepted' AND (NOT \(week) OR score_week(c.accepted_at) = score_week(now()))
        GROUP BY u.name
        """)
    var totals: [String: ComputedTotals] = [:]
    for row in rows {
        let name: String = try row.string("name")
        let at: Int? = try row.int("at_us")
        totals[name] = ComputedTotals(name: name, points: try row.int("points"), found: try row.int("found"), at: at.map(Int64.init))
    }
    return totals
}

/// Whether `a` is strictly ahead of `b`: more points, or as many reached earlier.
private func ahead(_ a: ComputedTotals, of b: ComputedTotals) -> Bool {
    if a.points != b.points { return a.points > b.points }
    return (a.at ?? .max) < (b.at ?? .max)
}

/// The brute-force rank of `user` among `all`: one more than those strictly ahead; nil without points.
func bruteRank(_ user: ComputedTotals?, among all: [String: ComputedTotals]) -> Int? {
    guard let user, user.points > 0 else { return nil }
    return 1 + all.values.filter { $0.points > 0 && $0.name != user.name && ahead($0, of: user) }.count
}

/// The users with points in the contract's order, as lines.
func ranked(_ totals: [String: ComputedTotals]) -> [String] {
    let sorted = totals.values.filter { $0.points > 0 }.sorted { a, b in
        if ahead(a, of: b) { return true }
        if ahead(b, of: a) { return false }
        return (a.name.lowercased(), a.name) < (b.name.lowercased(), b.name)
    }
    return sorted.map { user in
        let at = user.at.map { rfc3339(Date(timeIntervalSince1970: Double($0 / 1_000_000))) } ?? "null"
        return "\(bruteRank(user, among: totals) ?? 0) \(user.name) \(user.points) \(user.found) \(at)"
    }
}

extension Conversation {
    /// Every page of `RANKING options LIMIT limit`, following `next`, as entry summaries.
    func ranking(_ options: String = "", limit: Int, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String] {
        var entries: [String] = []
        var cursor: String?
        for _ in 0 ..< 10000 {
            let page = try await ok(request("RANKING", options, "LIMIT \(limit)") + (cursor.map { " CURSOR \(quoted($0))" } ?? ""))
            let rows = page["entries"].array
            #expect(rows.count <= limit, "a page of \(rows.count) entries for LIMIT \(limit)", sourceLocation: sourceLocation)
            #expect(!rows.isEmpty || entries.isEmpty, "an empty page after others", sourceLocation: sourceLocation)
            entries += rows.map(entrySummary)
            if page["next"].isNull { return entries }
            cursor = try page["next"].string
        }
        Issue.record("RANKING's pages did not end", sourceLocation: sourceLocation)
        return entries
    }
}

/// The users of the property test.
private let rankingPlayers = (1 ... 10).map { "rk\($0 < 10 ? "0" : "")\($0)" }

@Suite("RANKING and PROFILE: the rankings of all users (protocol 1.2)", .timeLimit(.minutes(10)))
struct RankingTests {
    /// What the property test does next.
    enum Step: CaseIterable {
        case checkIn, approve, reject, leave, join
    }

    @Test(
        "after seeded random check-ins, approvals, rejections, leaves and joins on two daemons, both daemons' RANKING (all-time and this week, every page) and PROFILE equal a brute force over the check-ins",
        arguments: [11, 2026])
    func rankingsMatchBruteForce(seed: UInt64) async throws {
        try await withTwoDaemons { a, b, environment in
            try await asUsers(["rkhost"] + rankingPlayers, a, environment) { (onA: [Conversation]) async throws in
                try await asLoggedIn(["rkhost"] + rankingPlayers, b) { (onB: [Conversation]) async throws in
                    var random = SplitMix64(seed: seed)
                    // Small points that repeat, so users tie on points and the time decides;
                    // 0-point stops count as found without points.
                    let places = try await onA[0].makeHunt(
                        name: "places", stops: [5, 5, 10, 0, 20, 5, 10, 15].enumerated().map { StopPlan(north: Double($0.offset) * 15, points: $0.element) })
                    let photos = try await onA[0].makeHunt(
                        name: "photos", stops: [10, 0, 5, 20].enumerated().map { StopPlan(north: Double($0.offset) * 15, points: $0.element, options: "PROOF photo") })
                    let hunts = [places, photos]
                    var joined = Array(repeating: Set<String>(), count: rankingPlayers.count)
                    var pending: [String] = []
                    var accepted: [String] = []
                    var counts: [Step: Int] = [:]
                    for step in 0 ..< 1500 {
                        let index = Int(random.next() % UInt64(rankingPlayers.count))
                        // Each write goes to one daemon or the other.
                        let side = random.next() % 2 == 0 ? onA : onB
                        let player = side[index + 1], host = side[0]
                        let hunt = hunts[Int(random.next() % 2)]
                        let roll = random.next() % 10
                        let action: Step = roll < 5 ? .checkIn : roll < 6 ? .approve : roll < 7 ? .reject : roll < 8 ? .leave : .join
                        switch action {
                        case .checkIn where joined[index].contains(hunt.id):
                            let stop = Int(random.next() % UInt64(hunt.stops.count))
                            let reply = try await player.checkInReply(hunt.stops[stop], at: hunt.places[stop], hunt.id == photos.id ? photoOption : "")
                            if reply.hasPrefix("OK ") {
                                let checkIn = try JSONObject(okLine: reply)["checkin"]
                                if try checkIn["status"].string == "accepted" { accepted.append(try checkIn["id"].string) } else { pending.append(try checkIn["id"].string) }
                                counts[.checkIn, default: 0] += 1
                            } else {
                                #expect(reply.hasPrefix("ERR CONFLICT "), "step \(step): \(reply)")
                            }
                        case .checkIn, .join:
                            if !joined[index].contains(hunt.id) {
                                try await player.join(hunt)
                                joined[index].insert(hunt.id)
                                counts[.join, default: 0] += 1
                            }
                        case .approve:
                            if !pending.isEmpty {
                                let id = pending.remove(at: Int(random.next() % UInt64(pending.count)))
                                let reply = try await host.call("APPROVE \(id) BONUS \(random.next() % 4)")
                                #expect(reply.hasPrefix("OK ") || reply.hasPrefix("ERR NOT_FOUND "), "step \(step): \(reply)")
                                if reply.hasPrefix("OK ") {
                                    accepted.append(id)
                                    counts[.approve, default: 0] += 1
                                }
                            }
                        case .reject:
                            if !accepted.isEmpty {
                                let id = accepted.remove(at: Int(random.next() % UInt64(accepted.count)))
                                let reply = try await host.call("REJECT \(id)")
                                #expect(reply.hasPrefix("OK ") || reply.hasPrefix("ERR NOT_FOUND "), "step \(step): \(reply)")
                                if reply.hasPrefix("OK ") { counts[.reject, default: 0] += 1 }
                            }
                        case .leave:
                            if joined[index].contains(hunt.id) {
                                _ = try await player.ok("LEAVE \(hunt.id)")
                                joined[index].remove(hunt.id)
                                counts[.leave, default: 0] += 1
                            }
                        }
                        if step % 150 == 149 {
                            try await Self.expectRankings(onA[0], onB[0], environment, "after step \(step)")
                        }
                    }
                    // Every kind of step happened (the test is not vacuous).
                    for kind in Step.allCases { #expect(counts[kind, default: 0] > 0, "no \(kind) happened: \(counts)") }
                    try await Self.expectRankings(onA[0], onB[0], environment, "at the end")
                    try await Self.expectProfiles(onA[1], environment)
                    try await Self.expectAround(onB[2], environment)
                }
            }
        }
    }

    /// Both daemons' RANKING, all-time and this week, every page of two sizes, equal the brute
    /// force (each daemon catches up on its own: the other's writes reach it by the change log).
    static func expectRankings(_ onA: Conversation, _ onB: Conversation, _ environment: TestEnvironment, _ label: String) async throws {
        for week in [false, true] {
            let expected = try await databaseRanking(week: week, environment)
            #expect(!expected.isEmpty, "\(label): nobody has points")
            for (daemon, client) in [("A", onA), ("B", onB)] {
                var shown: [String] = []
                try await eventually("\(label): daemon \(daemon)'s RANKING\(week ? " WEEK" : "") is the brute force") {
                    shown = try await client.ranking(week ? "WEEK" : "", limit: 200)
                    return shown == expected
                }
                #expect(shown == expected, "\(label): daemon \(daemon)\(week ? ", WEEK" : "")")
                #expect(try await client.ranking(week ? "WEEK" : "", limit: 3) == expected, "\(label): daemon \(daemon), pages of 3")
            }
        }
    }

    /// Every player's PROFILE equals the brute force over their check-ins and hunts.
    static func expectProfiles(_ client: Conversation, _ environment: TestEnvironment) async throws {
        let totals = try await computedTotals(week: false, environment)
        let played = try await environment.pool.query("""
            SELECT u.name, count(*)::integer AS played,
                   count(*) FILTER (WHERE h.stop_count > 0 AND p.found = h.stop_count)::integer AS completed
            FROM hunt_players p JOIN users u ON u.id = p.user_id JOIN hunts h ON h.id = p.hunt_id GROUP BY u.name
            """)
        var hunts: [String: (played: Int, completed: Int)] = [:]
        for row in played { hunts[try row.string("name")] = (try row.int("played"), try row.int("completed")) }
        for name in rankingPlayers {
            let profile = try await client.ok("PROFILE \(name)")
            #expect(try profile["user"]["name"].string == name)
            #expect(profile["points"].int == totals[name]?.points ?? 0, "\(name)")
            #expect(profile["stops_found"].int == totals[name]?.found ?? 0, "\(name)")
            #expect(profile["hunts_played"].int == hunts[name]?.played ?? 0, "\(name)")
            #expect(profile["hunts_completed"].int == hunts[name]?.completed ?? 0, "\(name)")
            #expect(profile["rank"].int == bruteRank(totals[name], among: totals), "\(name): \(canonicalJSON(profile))")
        }
    }

    /// RANKING AROUND is the page of the caller's place with up to LIMIT/2 entries above.
    static func expectAround(_ client: Conversation, _ environment: TestEnvironment) async throws {
        let me = try await client.ok("WHOAMI")["user"]["name"].string
        let expected = try await databaseRanking(week: false, environment)
        for limit in [1, 4, 5] {
            let page = try await client.ok("RANKING AROUND LIMIT \(limit)")["entries"].array.map(entrySummary)
            if let index = expected.firstIndex(where: { $0.split(separator: " ")[1] == me }) {
                let start = max(0, index - limit / 2)
                #expect(page == Array(expected[start ..< min(expected.count, start + limit)]), "AROUND LIMIT \(limit)")
            } else {
                #expect(page == Array(expected.prefix(limit)), "AROUND LIMIT \(limit), without points: the first page")
            }
        }
    }

    @Test("RANKING and PROFILE refuse what they cannot answer, with the right code", arguments: [
        ("RANKING WEEK LASTWEEK", "BAD_ARGUMENT"),
        ("RANKING AROUND CURSOR x", "BAD_ARGUMENT"),
        ("RANKING LIMIT 0", "BAD_ARGUMENT"),
        ("RANKING LIMIT 201", "BAD_ARGUMENT"),
        ("RANKING CURSOR nonsense", "BAD_ARGUMENT"),
        ("RANKING SOON", "BAD_ARGUMENT"),
        ("PROFILE", "UNAUTHORIZED"),
        ("PROFILE nobody_here", "NOT_FOUND"),
        ("PROFILE x", "BAD_ARGUMENT"),
        ("PROFILE a b", "BAD_ARGUMENT"),
    ])
    func refusals(line: String, code: String) async throws {
        try await withDatabaseServer { address, _ in
            try await converse(address) { (client: Conversation) async throws in
                expectError(try await client.call(line), code)
            }
        }
    }

    @Test("a cursor pages only the ranking it came from: all-time's is refused by WEEK and the other way round")
    func cursorsStayOnTheirBoard() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["cuhost", "cu1", "cu2", "cu3"], address, environment) { (users: [Conversation]) async throws in
                let hunt = try await users[0].makeHunt(stops: [StopPlan(points: 7)])
                for player in users.dropFirst() {
                    try await player.join(hunt)
                    try await player.checkIn(hunt.stops[0], at: hunt.places[0])
                }
                let allTime = try await users[0].ok("RANKING LIMIT 1")["next"].string
                let week = try await users[0].ok("RANKING WEEK LIMIT 1")["next"].string
                #expect(try await users[0].ok("RANKING LIMIT 1 CURSOR \(quoted(allTime))")["entries"].array.map(entrySummary).count == 1)
                expectError(try await users[0].call("RANKING WEEK CURSOR \(quoted(allTime))"), "BAD_ARGUMENT")
                expectError(try await users[0].call("RANKING CURSOR \(quoted(week))"), "BAD_ARGUMENT")
                expectError(try await users[0].call("RANKING LASTWEEK CURSOR \(quoted(week))"), "BAD_ARGUMENT")
                // Nothing was accepted last week.
                #expect(try await users[0].ok("RANKING LASTWEEK")["entries"].array.isEmpty)
                // Everyone reached 7 points at a moment of their own: ranks 1, 2, 3 in that order.
                #expect(try await users[0].ranking(limit: 200).map { $0.split(separator: " ").prefix(3).joined(separator: " ") }
                    == ["1 cu1 7", "2 cu2 7", "3 cu3 7"])
                // The host, without points: no rank, and AROUND is the first page.
                let profile = try await users[0].ok("PROFILE")
                #expect(profile["rank"].isNull && profile["points"].int == 0 && profile["hunts_played"].int == 0)
                #expect(try await users[0].ok("RANKING AROUND LIMIT 2")["entries"].array.map { try $0["player"].string } == ["cu1", "cu2"])
                // A name in any case finds the user, shown as registered.
                #expect(try await users[0].ok("PROFILE CU2")["user"]["name"].string == "cu2")
                #expect(try await users[0].ok("PROFILE CU2")["rank"].int == 2)
                // What /metrics shows of them.
                let statistics = environment.board.statistics()
                #expect(statistics.rankedUsers == 3 && statistics.rankedUsersThisWeek == 3)
            }
        }
    }

    @Test("while the rankings load, RANKING answers UNAVAILABLE saying so (not that the database is away); once loaded, OK")
    func rankingWhileLoading() async throws {
        try await TestEnvironment.make().use { environment in
            let board = environment.secondDaemon()
            // The load reads the users' totals: a side transaction holding their table holds it.
            let side = try PostgresConnection.connect(environment.configuration)
            try side.query("BEGIN")
            try side.query("LOCK TABLE user_scores IN ACCESS EXCLUSIVE MODE")
            let load = Task { try await board.feed.hunts.loadIfNeeded() }
            try await eventually("the load is under way") { board.feed.hunts.isLoading }
            let session = Session(connectionID: 1)
            let refusal = await #expect(throws: BoardError.self) {
                _ = try await board.ranking(.allTime, limit: 10, cursor: nil, around: false, viewer: session)
            }
            #expect(refusal?.code == .unavailable)
            #expect(refusal?.message == "the rankings are still loading; retry")
            try side.query("COMMIT")
            _ = try await load.value
            let page = try await board.ranking(.allTime, limit: 10, cursor: nil, around: false, viewer: session)
            #expect(page.entries.isEmpty && page.next == nil)
            await board.passwords.shutdown()
        }
    }

    @Test("PROFILE is answered from memory on every daemon: a join, a leave and a role set by an operator reach it through the change log")
    func profilesFollowTheLog() async throws {
        try await withTwoDaemons { a, b, environment in
            try await asUsers(["prhost", "pr1"], a, environment) { (users: [Conversation]) async throws in
                let hunt = try await users[0].makeHunt(stops: [StopPlan(points: 5)])
                try await converse(b) { (reader: Conversation) async throws in
                    func profile() async throws -> JSONObject { try await reader.ok("PROFILE pr1") }
                    #expect(try await profile()["hunts_played"].int == 0)
                    try await users[1].join(hunt)
                    try await eventually("B's PROFILE counts the hunt joined on A") { try await profile()["hunts_played"].int == 1 }
                    try await users[1].checkIn(hunt.stops[0], at: hunt.places[0])
                    try await eventually("B's PROFILE counts the hunt completed on A") {
                        let shown = try await profile()
                        return shown["hunts_completed"].int == 1 && shown["points"].int == 5 && shown["rank"].int == 1
                    }
                    #expect(try await environment.database.setRole(username: "PR1", role: .moderator))
                    try await eventually("B's PROFILE shows the role an operator set") {
                        try await profile()["user"]["role"].string == "moderator"
                    }
                    _ = try await users[1].ok("LEAVE \(hunt.id)")
                    try await eventually("B's PROFILE drops the hunt left on A") {
                        let shown = try await profile()
                        return shown["hunts_played"].int == 0 && shown["hunts_completed"].int == 0 && shown["points"].int == 0
                            && shown["rank"].isNull
                    }
                }
            }
        }
    }
}
