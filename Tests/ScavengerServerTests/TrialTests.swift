import Foundation
import Postgres
@testable import ScavengerBoard
import ScavengerCore
import ScavengerTestSupport
import Testing

// Time trials (protocol 1.4): the clock from a player's first live check-in, CONFLICT once time
// is up, and the trial's leaderboard order on every daemon. Time moves by moving check-ins back
// in the database (the rule reads PostgreSQL's clock); nothing here waits for a trial to run out.

/// Moves every check-in of `player` in the database `seconds` into the past (their clock with them).
func moveCheckIns(of player: String, back seconds: Double, _ environment: TestEnvironment, stop: String? = nil) async throws {
    var sql: SQL = """
        UPDATE checkins SET created_at = created_at - \(seconds)::double precision * interval '1 second'
        WHERE user_id = (SELECT id FROM users WHERE name = \(player))
        """
    if let stop { sql.append(" AND stop_id = \(stop)") }
    // A team's clock (its row, from the check-in that started it) moves with that check-in.
    sql.append(" RETURNING id")
    let moved = try await environment.pool.query(sql, idempotent: false)
    for row in moved {
        let id: String = try row.string("id")
        try await environment.pool.query("""
            UPDATE hunt_teams SET trial_started_at = trial_started_at - \(seconds)::double precision * interval '1 second'
            WHERE trial_started_by = \(id)
            """, idempotent: false)
    }
}

/// A leaderboard's rows as "rank player found time": time_s exactly 0 as "0" (one find: the first
/// check-in is the last), else rounded down to tens of seconds with a "+" ("50+" for 50 s and the
/// moments the test took since it moved the clock), so a slow machine reads the same.
func trialRows(_ entries: [JSONObject]) throws -> [String] {
    try entries.map { entry in
        let time = entry["time_s"].isNull ? "null" : entry["time_s"].double.map(trialTime) ?? "?"
        return "\(entry["rank"].int ?? 0) \(try entry["player"].string) \(entry["found"].int ?? -1) \(time)"
    }
}

/// A trial time as ``trialRows(_:)`` shows it.
func trialTime(_ seconds: Double) -> String {
    seconds == 0 ? "0" : "\(Int(seconds) / 10 * 10)+"
}

@Suite("Time trials over TCP with PostgreSQL (protocol 1.4)", .timeLimit(.minutes(10)))
struct TrialTests {
    @Test("the clock runs from the first live check-in; after the trial's seconds a check-in is CONFLICT, time is up")
    func timeIsUp() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "walker", "late"], address, environment) { (users: [Conversation]) async throws in
                let (host, walker, late) = (users[0], users[1], users[2])
                let hunt = try await host.makeHunt(
                    "PUBLIC TRIAL 600", stops: [StopPlan(points: 10), StopPlan(north: 100, points: 20), StopPlan(north: 200, points: 30)])
                #expect(try await host.hunt(hunt.id)["hunt"]["trial"].int == 600)
                for player in [walker, late] { try await player.join(hunt) }
                let first = try await walker.checkIn(hunt.stops[0], at: hunt.places[0])["checkin"]["id"].string
                // 500 s later: still in time.
                try await moveCheckIns(of: "walker", back: 500, environment)
                _ = try await walker.checkIn(hunt.stops[1], at: hunt.places[1])
                // The first check-in 601 s ago: time is up, and nothing changes.
                try await moveCheckIns(of: "walker", back: 101, environment)
                let reply = try await walker.checkInReply(hunt.stops[2], at: hunt.places[2])
                expectError(reply, "CONFLICT")
                #expect(reply.contains("time is up"), "\(reply)")
                // A keyed check-in (written in a group too, its key with it): the same fact, the same answer.
                let keyed = try await walker.checkInReply(hunt.stops[2], at: hunt.places[2], "REQUEST trial-key-1")
                expectError(keyed, "CONFLICT")
                #expect(keyed.contains("time is up"), "\(keyed)")
                #expect(try await walker.hunt(hunt.id)["me"]["points"].int == 30)
                // Another player's clock has not started.
                #expect(try await late.checkIn(hunt.stops[2], at: hunt.places[2])["checkin"]["status"].string == "accepted")

                // A rejected check-in no longer starts the clock: the next live one does (101 s ago).
                _ = try await host.ok("REJECT \(first)")
                #expect(try await walker.checkIn(hunt.stops[2], at: hunt.places[2])["checkin"]["status"].string == "accepted")
                let entries = try await host.leaderboard(hunt.id)
                // walker's time runs from the check-in moved 101 s back to the one just made (how
                // long the test itself took in between is the machine's, so no tens are asserted).
                #expect(try trialRows(entries).map { $0.split(separator: " ").prefix(3).joined(separator: " ") } == ["1 walker 2", "2 late 1"])
                let walkerTime = try #require(entries.first?["time_s"].double)
                #expect(walkerTime >= 101 && walkerTime < 600, "\(walkerTime)")
                #expect(entries.last?["time_s"].double == 0)
            }
        }
    }

    @Test("a photo check-in, pending, starts the clock as an accepted one does; a flagged one too")
    func pendingStartsTheClock() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "snapper"], address, environment) { (users: [Conversation]) async throws in
                let (host, snapper) = (users[0], users[1])
                let hunt = try await host.makeHunt(
                    "TRIAL 60", stops: [StopPlan(points: 10, options: "PROOF photo"), StopPlan(north: 100, points: 20)])
                try await snapper.join(hunt)
                #expect(try await snapper.checkIn(hunt.stops[0], at: hunt.places[0], photoOption)["checkin"]["status"].string == "pending")
                try await moveCheckIns(of: "snapper", back: 60, environment)
                let reply = try await snapper.checkInReply(hunt.stops[1], at: hunt.places[1])
                expectError(reply, "CONFLICT")
                #expect(reply.contains("time is up"))

                // A flagged check-in (50 km from the player's last one in moments) starts it too.
                let far = try await host.makeHunt("TRIAL 60", name: "Far", stops: [StopPlan(north: 50_000), StopPlan(north: 50_100)])
                try await snapper.join(far)
                #expect(try await snapper.checkIn(far.stops[0], at: far.places[0])["checkin"]["status"].string == "flagged")
                try await moveCheckIns(of: "snapper", back: 60, environment)
                expectError(try await snapper.checkInReply(far.stops[1], at: far.places[1]), "CONFLICT")
            }
        }
    }

    @Test("LEADERBOARD of a trial: stops found, then time from first check-in to last accepted, then name, with time_s; the same on a second daemon, page by page and AROUND")
    func order() async throws {
        try await withTwoDaemons { a, b, environment in
            try await asUsers(["host", "amy", "bob", "cat", "dan"], a, environment) { (users: [Conversation]) async throws in
                let (host, amy, bob, cat, dan) = (users[0], users[1], users[2], users[3], users[4])
                let hunt = try await host.makeHunt(
                    "PUBLIC TRIAL 3600", stops: [StopPlan(points: 10), StopPlan(north: 100, points: 10), StopPlan(north: 200, points: 100)])
                for player in [amy, bob, cat, dan] { try await player.join(hunt) }
                // The second daemon reads the board before anything is found, then follows the log.
                let early = try await converseReturning(b) { (reader: Conversation) async throws in try await reader.leaderboard(hunt.id) }
                #expect(try trialRows(early) == ["1 amy 0 null", "1 bob 0 null", "1 cat 0 null", "1 dan 0 null"])
                for (player, name, seconds) in [(amy, "amy", 100.0), (bob, "bob", 50.0)] {
                    _ = try await player.checkIn(hunt.stops[0], at: hunt.places[0])
                    try await moveCheckIns(of: name, back: seconds, environment)
                    let rank = try await player.checkIn(hunt.stops[1], at: hunt.places[1])["score"]["rank"].int
                    #expect(rank == 1, "\(name)'s reply: the fastest with two stops so far")
                }
                // cat has the most points and one stop: behind both, as the check-in's reply says.
                #expect(try await cat.checkIn(hunt.stops[2], at: hunt.places[2])["score"]["rank"].int == 3)
                // HUNT's me ranks in the trial's order too.
                let amyStanding = try await amy.hunt(hunt.id)["me"]
                #expect(amyStanding["rank"].int == 2)
                let expected = ["1 bob 2 50+", "2 amy 2 100+", "3 cat 1 0", "4 dan 0 null"]
                let entries = try await host.leaderboard(hunt.id)
                #expect(try trialRows(entries) == expected)
                #expect(entries.map { $0["points"].int } == [20, 20, 100, 0])
                #expect(try await trialRows(host.leaderboard(hunt.id, limit: 1)) == expected)
                #expect(try await trialRows(amy.ok("LEADERBOARD \(hunt.id) AROUND LIMIT 2")["entries"].array) == ["1 bob 2 50+", "2 amy 2 100+"])
                try await eventually("the second daemon shows the same board") {
                    let there = try await converseReturning(b) { (reader: Conversation) async throws in try await reader.leaderboard(hunt.id) }
                    return try trialRows(there) == expected
                }
                // A daemon that loads the board afresh (a restart) shows the same board.
                let fresh = environment.secondDaemon()
                let loaded = try await fresh.feed.hunts.leaderboard(of: hunt.id)
                #expect(loaded.page(after: nil, limit: 10).entries.map { "\($0.rank) \($0.player) \($0.found) \($0.trialSeconds.map(trialTime) ?? "null")" } == expected)
                await fresh.passwords.shutdown()
                // A non-trial hunt's entries have no time_s.
                let plain = try await host.makeHunt("PUBLIC", stops: [StopPlan()])
                try await amy.join(plain)
                #expect(try await host.leaderboard(plain.id).allSatisfy { !$0.keys.contains("time_s") })
            }
        }
    }

    @Test("a trial's winners come in its leaderboard's order: the shortest time first, not the first to finish")
    func winners() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "amy", "bob", "cat"], address, environment) { (users: [Conversation]) async throws in
                let (host, amy, bob, cat) = (users[0], users[1], users[2], users[3])
                let hunt = try await host.makeHunt("PUBLIC TRIAL 3600", stops: [StopPlan(points: 10), StopPlan(north: 100, points: 10)])
                for player in [amy, bob, cat] { try await player.join(hunt) }
                for (player, name, seconds) in [(amy, "amy", 100.0), (bob, "bob", 10.0)] {
                    _ = try await player.checkIn(hunt.stops[0], at: hunt.places[0])
                    try await moveCheckIns(of: name, back: seconds, environment)
                    _ = try await player.checkIn(hunt.stops[1], at: hunt.places[1])
                }
                _ = try await cat.checkIn(hunt.stops[0], at: hunt.places[0])
                _ = try await host.ok("ENDHUNT \(hunt.id)")
                #expect(try await host.hunt(hunt.id)["winners"].array.map { try $0.string } == ["bob", "amy"])
                #expect(try await players(host.leaderboard(hunt.id)) == ["bob", "amy", "cat"])
            }
        }
    }

    @Test("REJECT, APPROVE and LEAVE move a trial player's times as they move points, a rename keeps them, on both daemons")
    func reviewsMoveTimes() async throws {
        try await withTwoDaemons { a, b, environment in
            try await asUsers(["host", "amy", "bob", "eve"], a, environment) { (users: [Conversation]) async throws in
                let (host, amy, bob, eve) = (users[0], users[1], users[2], users[3])
                let hunt = try await host.makeHunt(
                    "PUBLIC TRIAL 3600",
                    stops: [StopPlan(points: 10), StopPlan(north: 100, points: 10), StopPlan(north: 200, points: 10, options: "PROOF photo")])
                for player in [amy, bob, eve] { try await player.join(hunt) }
                let amyFirst = try await amy.checkIn(hunt.stops[0], at: hunt.places[0])["checkin"]["id"].string
                try await moveCheckIns(of: "amy", back: 100, environment)
                _ = try await amy.checkIn(hunt.stops[1], at: hunt.places[1])
                _ = try await bob.checkIn(hunt.stops[0], at: hunt.places[0])
                try await moveCheckIns(of: "bob", back: 40, environment)
                let bobSecond = try await bob.checkIn(hunt.stops[1], at: hunt.places[1])["checkin"]["id"].string
                // eve's first is a photo, pending: it starts her clock, and her time runs from it.
                let evePending = try await eve.checkIn(hunt.stops[2], at: hunt.places[2], photoOption)["checkin"]["id"].string
                try await moveCheckIns(of: "eve", back: 30, environment)
                _ = try await eve.checkIn(hunt.stops[0], at: hunt.places[0])
                func expect(_ rows: [String], _ label: String) async throws {
                    #expect(try await trialRows(host.leaderboard(hunt.id)) == rows, "\(label)")
                    try await eventually("\(label): the second daemon agrees") {
                        let there = try await converseReturning(b) { (reader: Conversation) async throws in try await reader.leaderboard(hunt.id) }
                        return try trialRows(there) == rows
                    }
                }
                try await expect(["1 bob 2 40+", "2 amy 2 100+", "3 eve 1 30+"], "to begin with")
                // APPROVE: eve finds the photo stop; her last accepted check-in is still the later one.
                _ = try await host.ok("APPROVE \(evePending)")
                try await expect(["1 eve 2 30+", "2 bob 2 40+", "3 amy 2 100+"], "approved")
                // REJECT of a last check-in: bob has one stop, at time 0.
                _ = try await host.ok("REJECT \(bobSecond)")
                try await expect(["1 eve 2 30+", "2 amy 2 100+", "3 bob 1 0"], "bob's last rejected")
                // REJECT of a first check-in: amy's clock starts at her second.
                _ = try await host.ok("REJECT \(amyFirst)")
                try await expect(["1 eve 2 30+", "2 amy 1 0", "2 bob 1 0"], "amy's first rejected")
                // A rename keeps the player's times.
                try await eve.join(hunt, as: "ava")
                try await expect(["1 ava 2 30+", "2 amy 1 0", "2 bob 1 0"], "eve renamed")
                // LEAVE takes the player out.
                _ = try await eve.ok("LEAVE \(hunt.id)")
                try await expect(["1 amy 1 0", "1 bob 1 0"], "eve left")
            }
        }
    }

    @Test("WATCH HUNT on a trial: score events carry time_s and follow the trial's order, on both daemons")
    func watched() async throws {
        try await withTwoDaemons { a, b, environment in
            try await asUsers(["host", "amy", "bob", "cat"], a, environment) { (users: [Conversation]) async throws in
                let host = users[0]
                let hunt = try await host.makeHunt("PUBLIC TRIAL 3600", stops: [
                    StopPlan(points: 10), StopPlan(north: 150, points: 20), StopPlan(north: 300, points: 30, options: "PROOF photo"),
                ])
                let (s, p) = (hunt.stops, hunt.places)
                for player in users.dropFirst() { try await player.join(hunt) }
                try await asLoggedIn(["host"], a) { (onA: [Conversation]) async throws in
                    try await asLoggedIn(["host", "host", "amy", "bob"], b) { (onB: [Conversation]) async throws in
                        let (watcherOnB, hostB, amyB, bobB) = (onB[0], onB[1], onB[2], onB[3])
                        var watchers: [HuntWatcher] = []
                        for connection in onA + [watcherOnB] {
                            watchers.append(HuntWatcher(connection: connection, watch: try await connection.watchHunt(hunt.id)))
                        }
                        func step(_ label: String, found: [String], changed: Set<String>, _ action: () async throws -> Void) async throws {
                            let heard = try await expectHuntEvents(
                                label, hunt: hunt.id, host: hostB, reader: hostB, watchers: watchers, found: found, changed: changed, action)
                            for event in heard where eventType(event) == "score" {
                                #expect(event["entry"].keys.contains("time_s"), "\(label): a trial's score event without time_s")
                            }
                            #expect(try await host.leaderboardLines(hunt.id, limit: 2) == hostB.leaderboardLines(hunt.id, limit: 2), "\(label)")
                        }
                        var amyFirst = ""
                        try await step("amy's first find", found: ["amy \(s[0]) 10"], changed: ["amy", "bob", "cat"]) {
                            amyFirst = try await amyB.checkIn(s[0], at: p[0])["checkin"]["id"].string
                        }
                        try await step("bob ties amy: one stop in no time", found: ["bob \(s[0]) 10"], changed: ["bob", "cat"]) {
                            _ = try await bobB.checkIn(s[0], at: p[0])
                        }
                        var pending = ""
                        try await step("amy's photo, pending", found: [], changed: []) {
                            pending = try await amyB.checkIn(s[2], at: p[2], photoOption)["checkin"]["id"].string
                        }
                        try await step("approved: amy has two stops", found: ["amy \(s[2]) 30"], changed: ["amy", "bob"]) {
                            _ = try await hostB.ok("APPROVE \(pending)")
                        }
                        try await step("amy's first rejected: one stop in no time again", found: [], changed: ["amy", "bob"]) {
                            _ = try await hostB.ok("REJECT \(amyFirst)")
                        }
                        #expect(try await trialRows(hostB.leaderboard(hunt.id)) == ["1 amy 1 0", "1 bob 1 0", "3 cat 0 null"])
                    }
                }
            }
        }
    }

    @Test("a crowd checking in as time runs out: each OK before or CONFLICT after, never another answer; the board agrees")
    func crowdAtTheDeadline() async throws {
        try await withDatabaseServer { address, environment in
            try await asUser("host", address, environment) { (host: Conversation) async throws in
                // 10 minutes: those with time keep it however slow the set-up.
                let hunt = try await host.makeHunt("PUBLIC TRIAL 600", stops: [StopPlan(points: 10), StopPlan(north: 100, points: 10)])
                let names = (0 ..< 24).map { "runner" + ($0 < 10 ? "0" : "") + String($0) }
                var tokens: [String] = []
                for name in names {
                    tokens.append(try await converseReturning(address) { (client: Conversation) async throws in
                        let token = try await client.register(name)
                        try await client.join(hunt)
                        _ = try await client.checkIn(hunt.stops[0], at: hunt.places[0])
                        return token
                    })
                }
                // A third of the clocks have run out, a third run out about now, a third have time.
                for (index, name) in names.enumerated() {
                    try await moveCheckIns(of: name, back: [601, 599.95, 0][index % 3], environment)
                }
                let arrivals = Arrivals()
                let gate = Gate()
                let replies = try await withThrowingTaskGroup(of: (Int, String).self) { group in
                    for (index, token) in tokens.enumerated() {
                        group.addTask {
                            try await converseReturning(address, from: "127.0.0.\(10 + index % 4)") { (client: Conversation) async throws in
                                _ = try await client.ok("AUTH \(token)")
                                arrivals.arrive()
                                await gate.wait()
                                return (index, try await client.checkInReply(hunt.stops[1], at: hunt.places[1]))
                            }
                        }
                    }
                    try await eventually("every runner is connected", timeout: .seconds(120)) { arrivals.value == names.count }
                    gate.open()
                    var replies: [(Int, String)] = []
                    for try await reply in group { replies.append(reply) }
                    return replies
                }
                #expect(replies.count == names.count)
                var inTime: Set<String> = []
                for (index, line) in replies {
                    if line.hasPrefix("OK ") {
                        inTime.insert(names[index])
                        #expect(index % 3 != 0, "\(names[index]) was out of time: \(line)")
                    } else {
                        #expect(line.hasPrefix("ERR CONFLICT ") && line.contains("time is up"), "\(names[index]): \(line)")
                        #expect(index % 3 != 2, "\(names[index]) had time: \(line)")
                    }
                }
                let entries = try await host.leaderboard(hunt.id)
                #expect(entries.count == names.count)
                for entry in entries {
                    let name = try entry["player"].string
                    #expect(entry["found"].int == (inTime.contains(name) ? 2 : 1), "\(name)")
                }
                #expect(try await host.hunt(hunt.id)["stops"][1]["found_by"].int == inTime.count)
            }
        }
    }

    @Test("a player's two check-ins at once are judged against the same start: both in time, or both after it")
    func twoAtOnce() async throws {
        try await withDatabaseServer { address, environment in
            try await asUser("host", address, environment) { (host: Conversation) async throws in
                let hunt = try await host.makeHunt(
                    "PUBLIC TRIAL 600", stops: [StopPlan(points: 10), StopPlan(north: 100, points: 10), StopPlan(north: 200, points: 10)])
                for (name, back) in [("fresh", 0.0), ("spent", 601.0)] {
                    let token = try await converseReturning(address) { (client: Conversation) async throws in
                        let token = try await client.register(name)
                        try await client.join(hunt)
                        _ = try await client.checkIn(hunt.stops[0], at: hunt.places[0])
                        return token
                    }
                    try await moveCheckIns(of: name, back: back, environment)
                    let gate = Gate()
                    let arrivals = Arrivals()
                    let replies = try await withThrowingTaskGroup(of: String.self) { group in
                        for stop in 1 ... 2 {
                            group.addTask {
                                try await converseReturning(address) { (client: Conversation) async throws in
                                    _ = try await client.ok("AUTH \(token)")
                                    arrivals.arrive()
                                    await gate.wait()
                                    return try await client.checkInReply(hunt.stops[stop], at: hunt.places[stop])
                                }
                            }
                        }
                        try await eventually("both connections are in") { arrivals.value == 2 }
                        gate.open()
                        var replies: [String] = []
                        for try await reply in group { replies.append(reply) }
                        return replies
                    }
                    if back == 0 {
                        #expect(replies.allSatisfy { $0.hasPrefix("OK ") }, "\(replies)")
                    } else {
                        #expect(replies.allSatisfy { $0.hasPrefix("ERR CONFLICT ") && $0.contains("time is up") }, "\(replies)")
                    }
                }
                let entries = try await host.leaderboard(hunt.id)
                #expect(try trialRows(entries) == ["1 fresh 3 0+", "2 spent 1 0"])
            }
        }
    }
}
