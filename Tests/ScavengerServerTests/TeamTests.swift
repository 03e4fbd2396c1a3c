import Foundation
import NIOCore
import Postgres
@testable import ScavengerBoard
import ScavengerCore
import ScavengerTestSupport
import Testing

// Team hunts (protocol 1.4): teams made by joining, their sizes and moves, a stop once per team
// (two members at one stop at one instant: one OK, one CONFLICT, on two daemons), ordered hunts
// and trials per team, team leaderboards identical on every daemon and after a restart, winners
// as teams, `me.team`, and members' own points in RANKING and PROFILE.

extension Conversation {
    /// `JOIN code TEAM "team"` (`AS name` when given): the raw reply line.
    func joinTeamReply(_ hunt: MadeHunt, team: String, as name: String? = nil) async throws -> String {
        try await call("JOIN \(hunt.code)" + (name.map { " AS \($0)" } ?? "") + " TEAM \(quoted(team))")
    }

    /// Joins `hunt` for `team`, which must succeed.
    func joinTeam(_ hunt: MadeHunt, team: String, as name: String? = nil) async throws {
        _ = try JSONObject(okLine: try await joinTeamReply(hunt, team: team, as: name))
    }
}

/// Sends `requests[i]` as the user whose session is `tokens[i]`, each on a connection of its own to
/// `daemons[i % daemons.count]` (from one of four addresses), all released by one gate once
/// every connection is logged in; answers each reply in the same order.
func atOnce(tokens: [String], on daemons: [SocketAddress], _ requests: [String]) async throws -> [String] {
    precondition(tokens.count == requests.count && !daemons.isEmpty)
    let arrivals = Arrivals()
    let gate = Gate()
    return try await withThrowingTaskGroup(of: (Int, String).self) { group in
        for (index, token) in tokens.enumerated() {
            group.addTask {
                try await converseReturning(daemons[index % daemons.count], from: "127.0.0.\(10 + index % 4)") { (client: Conversation) async throws in
                    _ = try await client.ok("AUTH \(token)")
                    arrivals.arrive()
                    await gate.wait()
                    return (index, try await client.call(requests[index]))
                }
            }
        }
        try await eventually("every connection is logged in", timeout: .seconds(120)) { arrivals.value == tokens.count }
        gate.open()
        var replies = [String](repeating: "", count: tokens.count)
        for try await (index, reply) in group { replies[index] = reply }
        return replies
    }
}

/// A team board's rows as "rank team points found member,member".
func teamRows(_ entries: [JSONObject]) throws -> [String] {
    try entries.map { entry in
        let members = try entry["members"].array.map { try $0.string }.joined(separator: ",")
        return "\(entry["rank"].int ?? 0) \(try entry["player"].string) \(entry["points"].int ?? -1) \(entry["found"].int ?? -1) \(members)"
    }
}

@Suite("Team hunts over TCP with PostgreSQL (protocol 1.4)", .timeLimit(.minutes(10)))
struct TeamTests {
    @Test("CREATEHUNT … TEAMS [SIZE n]: the hunt's teams; SIZE out of 2–50 or without TEAMS is BAD_ARGUMENT")
    func createTeamHunts() async throws {
        try await withDatabaseServer { address, environment in
            try await asUser("host", address, environment) { (host: Conversation) async throws in
                #expect(try await host.createHunt("TEAMS")["teams"].int == 6)
                #expect(try await host.createHunt("TEAMS SIZE 2")["teams"].int == 2)
                #expect(try await host.createHunt("SIZE 50 TEAMS")["teams"].int == 50)
                #expect(try await host.createHunt("PUBLIC")["teams"].isNull)
                for bad in ["TEAMS SIZE 1", "TEAMS SIZE 51", "SIZE 4", "TEAMS SIZE many"] {
                    expectError(try await host.call("CREATEHUNT \"Bad\" \(bad)"), "BAD_ARGUMENT")
                }
                #expect(try await host.ok("HUNTS MINE")["hunts"].array.count == 4)
            }
        }
    }

    @Test("JOIN … TEAM: made by the first, joined case-insensitively, full is CONFLICT, moves only before the start, TEAM where it does not belong is BAD_ARGUMENT")
    func joining() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "amy", "bob", "cat", "dan"], address, environment) { (users: [Conversation]) async throws in
                let (host, amy, bob, cat, dan) = (users[0], users[1], users[2], users[3], users[4])
                let hunt = try await host.makeHunt(
                    "PUBLIC TEAMS SIZE 2", stops: [StopPlan(points: 10), StopPlan(north: 100, points: 20)], start: false)
                // A team hunt needs TEAM; a hunt of single players refuses it; bad names are refused.
                expectError(try await amy.call("JOIN \(hunt.code)"), "BAD_ARGUMENT")
                let single = try await host.makeHunt("PUBLIC", name: "Solo", stops: [StopPlan()])
                expectError(try await amy.joinTeamReply(single, team: "Red"), "BAD_ARGUMENT")
                for bad in ["", " Red", "Red ", String(repeating: "r", count: 41), "Red,Foxes", "Rød"] {
                    expectError(try await amy.joinTeamReply(hunt, team: bad), "BAD_ARGUMENT")
                }
                #expect(try await host.leaderboard(hunt.id).isEmpty, "nothing was joined")

                try await amy.joinTeam(hunt, team: "Red Foxes")
                try await bob.joinTeam(hunt, team: "red FOXES")
                // Full: nothing changes.
                let full = try await cat.joinTeamReply(hunt, team: "RED FOXES")
                expectError(full, "CONFLICT")
                #expect(full.contains("full"), "\(full)")
                try await cat.joinTeam(hunt, team: "Blue")
                #expect(try await teamRows(host.leaderboard(hunt.id)) == ["1 Blue 0 0 cat", "1 Red Foxes 0 0 amy,bob"])
                #expect(try await amy.hunt(hunt.id)["me"]["team"].string == "Red Foxes")
                #expect(try await host.hunt(hunt.id)["hunt"]["players"].int == 3)
                // Joining again as one is changes nothing; a member may rename within a full team.
                try await bob.joinTeam(hunt, team: "Red Foxes")
                try await bob.joinTeam(hunt, team: "Red Foxes", as: "bobby")
                #expect(try await teamRows(host.leaderboard(hunt.id)) == ["1 Blue 0 0 cat", "1 Red Foxes 0 0 amy,bobby"])

                // Before the start, moves are free: amy moves to Blue and back; a team left with no
                // members and nothing found leaves the board.
                try await amy.joinTeam(hunt, team: "blue")
                #expect(try await teamRows(host.leaderboard(hunt.id)) == ["1 Blue 0 0 amy,cat", "1 Red Foxes 0 0 bobby"])
                try await amy.joinTeam(hunt, team: "Red Foxes")
                try await dan.joinTeam(hunt, team: "Ghosts")
                try await dan.joinTeam(hunt, team: "Blue")
                #expect(try await teamRows(host.leaderboard(hunt.id)) == ["1 Blue 0 0 cat,dan", "1 Red Foxes 0 0 amy,bobby"])
                _ = try await host.ok("STARTHUNT \(hunt.id)")
                // Once it runs a member's team is fixed (a rival cannot move in to read a team's
                // finds), a rename within it stays free, and nothing changes on a refusal.
                #expect(try await amy.checkIn(hunt.stops[0], at: hunt.places[0])["score"]["points"].int == 10)
                let move = try await amy.joinTeamReply(hunt, team: "Blue")
                expectError(move, "CONFLICT")
                #expect(move.contains("you play for Red Foxes"), "\(move)")
                try await amy.joinTeam(hunt, team: "RED FOXES", as: "amelia")
                #expect(try await teamRows(host.leaderboard(hunt.id)) == ["1 Red Foxes 10 1 amelia,bobby", "2 Blue 0 0 cat,dan"])
                #expect(try await amy.hunt(hunt.id)["me"]["team"].string == "Red Foxes")
                #expect(try await amy.ok("PROFILE")["points"].int == 10)
                // The host cannot join; an ended hunt cannot be joined.
                expectError(try await host.joinTeamReply(hunt, team: "Hosts"), "FORBIDDEN")
            }
        }
    }

    @Test("a stop counts once per team: a member's check-in where the team has a live one is CONFLICT; scores, RANKING, winners are the team's and the members'")
    func oncePerTeam() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "amy", "bob", "cat"], address, environment) { (users: [Conversation]) async throws in
                let (host, amy, bob, cat) = (users[0], users[1], users[2], users[3])
                let hunt = try await host.makeHunt(
                    "PUBLIC TEAMS", stops: [StopPlan(points: 10), StopPlan(north: 100, points: 20), StopPlan(north: 200, points: 5, options: "PROOF photo")])
                try await amy.joinTeam(hunt, team: "Owls")
                try await bob.joinTeam(hunt, team: "Owls")
                try await cat.joinTeam(hunt, team: "Cats")
                let first = try await amy.checkIn(hunt.stops[0], at: hunt.places[0])
                #expect(first["score"]["points"].int == 10 && first["score"]["rank"].int == 1)
                let again = try await bob.checkInReply(hunt.stops[0], at: hunt.places[0])
                expectError(again, "CONFLICT")
                #expect(again.contains("your team already has a check-in at this stop"), "\(again)")
                // The team's score in the reply: both members' finds.
                let second = try await bob.checkIn(hunt.stops[1], at: hunt.places[1])
                #expect(second["score"]["points"].int == 30 && second["score"]["found"].int == 2 && second["score"]["rank"].int == 1)
                // A pending check-in holds the stop for the team too; a rejection frees it.
                let pending = try await amy.checkIn(hunt.stops[2], at: hunt.places[2], photoOption)["checkin"]["id"].string
                expectError(try await bob.checkInReply(hunt.stops[2], at: hunt.places[2], photoOption), "CONFLICT")
                _ = try await host.ok("REJECT \(pending)")
                let bobs = try await bob.checkIn(hunt.stops[2], at: hunt.places[2], photoOption)["checkin"]["id"].string
                _ = try await host.ok("APPROVE \(bobs)")
                // Another team scores on its own.
                #expect(try await cat.checkIn(hunt.stops[0], at: hunt.places[0])["score"]["rank"].int == 2)
                #expect(try await teamRows(host.leaderboard(hunt.id)) == ["1 Owls 35 3 amy,bob", "2 Cats 10 1 cat"])
                #expect(try await host.hunt(hunt.id)["stops"][0]["found_by"].int == 2)
                let me = try await bob.hunt(hunt.id)["me"]
                #expect(try me["team"].string == "Owls")
                #expect(me["points"].int == 35 && me["rank"].int == 1)
                #expect(try me["found"].array.map { try $0.string } == hunt.stops)
                // Members' own points: RANKING and PROFILE.
                #expect(try await amy.ok("PROFILE")["points"].int == 10)
                #expect(try await bob.ok("PROFILE")["points"].int == 25)
                let ranking = try await host.ok("RANKING")["entries"].array
                #expect(try ranking.map { "\(try $0["player"].string) \($0["points"].int ?? -1)" } == ["bob 25", "amy 10", "cat 10"])
                // A REJECT of an accepted check-in takes the team's points back.
                _ = try await host.ok("REJECT \(try second["checkin"]["id"].string)")
                #expect(try await teamRows(host.leaderboard(hunt.id)) == ["1 Owls 15 2 amy,bob", "2 Cats 10 1 cat"])
                _ = try await cat.checkIn(hunt.stops[1], at: hunt.places[1])
                _ = try await cat.checkIn(hunt.stops[2], at: hunt.places[2], photoOption)
                _ = try await amy.checkIn(hunt.stops[1], at: hunt.places[1])
                // Winners are the teams that found every stop.
                _ = try await host.ok("ENDHUNT \(hunt.id)")
                #expect(try await host.hunt(hunt.id)["winners"].array.map { try $0.string } == ["Owls"])
            }
        }
    }

    @Test("an ordered team hunt orders per team: a member's next stop is the team's next")
    func orderedPerTeam() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "amy", "bob"], address, environment) { (users: [Conversation]) async throws in
                let (host, amy, bob) = (users[0], users[1], users[2])
                let hunt = try await host.makeHunt(
                    "PUBLIC ORDERED TEAMS", stops: [StopPlan(points: 1), StopPlan(north: 100, points: 2), StopPlan(north: 200, points: 3)])
                try await amy.joinTeam(hunt, team: "Pair")
                try await bob.joinTeam(hunt, team: "Pair")
                _ = try await amy.checkIn(hunt.stops[0], at: hunt.places[0])
                let skip = try await bob.checkInReply(hunt.stops[2], at: hunt.places[2])
                expectError(skip, "CONFLICT")
                #expect(skip.contains("your team's next stop is number 2"), "\(skip)")
                // bob sees the team's found stop and its next one.
                #expect(try await bob.hunt(hunt.id)["stops"].array.map { try $0["id"].string } == Array(hunt.stops.prefix(2)))
                _ = try await bob.checkIn(hunt.stops[1], at: hunt.places[1])
                _ = try await amy.checkIn(hunt.stops[2], at: hunt.places[2])
                #expect(try await teamRows(host.leaderboard(hunt.id)) == ["1 Pair 6 3 amy,bob"])
            }
        }
    }

    @Test("members of one team at one stop at one instant, on two daemons: one OK per team, the rest CONFLICT, never another answer; the boards agree and survive a restart")
    func sameInstantTwoDaemons() async throws {
        try await withTwoDaemons { a, b, environment in
            try await asUser("host", a, environment) { (host: Conversation) async throws in
                let hunt = try await host.makeHunt("PUBLIC TEAMS SIZE 3", stops: [StopPlan(points: 10), StopPlan(north: 100, points: 20)])
                let teams = 8
                let names = (0 ..< teams * 3).map { "m\($0 / 3)x\($0 % 3)" }
                var tokens: [String] = []
                for (index, name) in names.enumerated() {
                    tokens.append(try await converseReturning(a) { (client: Conversation) async throws in
                        let token = try await client.register(name)
                        try await client.joinTeam(hunt, team: "Team \(index / 3)")
                        return token
                    })
                }
                // Members of one team on both daemons.
                let line = "CHECKIN \(hunt.stops[0]) \(hunt.places[0])"
                let replies = Array(try await atOnce(tokens: tokens, on: [a, b], Array(repeating: line, count: tokens.count)).enumerated())
                #expect(replies.count == names.count)
                var scored: [Int: Int] = [:]
                for (index, line) in replies {
                    if line.hasPrefix("OK ") {
                        scored[index / 3, default: 0] += 1
                        let score = try JSONObject(okLine: line)["score"]
                        #expect(score["points"].int == 10 && score["found"].int == 1, "\(names[index]): \(line)")
                    } else {
                        #expect(line.hasPrefix("ERR CONFLICT ") && line.contains("your team already has"), "\(names[index]): \(line)")
                    }
                }
                #expect((0 ..< teams).allSatisfy { scored[$0] == 1 }, "one check-in scored per team: \(scored)")
                #expect(try await host.hunt(hunt.id)["stops"][0]["found_by"].int == teams)
                let rows = try teamRows(try await host.leaderboard(hunt.id))
                #expect(rows.count == teams)
                // Each team 10 points from one find, ranked by when it scored.
                #expect(rows.allSatisfy { $0.contains(" Team ") && $0.contains(" 10 1 m") }, "\(rows)")
                let players = try await environment.pool.query("SELECT count(*) AS n FROM checkins WHERE status <> 'rejected'")
                #expect(try players[0].int("n") as Int == teams)
                try await eventually("the second daemon shows the same board") {
                    let there = try await converseReturning(b) { (reader: Conversation) async throws in try await reader.leaderboard(hunt.id) }
                    return try teamRows(there) == rows
                }
                // A daemon that loads the board afresh (a restart) shows the same teams and members.
                let fresh = environment.secondDaemon()
                let loaded = try await fresh.feed.hunts.leaderboard(of: hunt.id)
                let freshRows = loaded.page(after: nil, limit: 100).entries.map {
                    "\($0.rank) \($0.player) \($0.points) \($0.found) \(($0.members ?? []).joined(separator: ","))"
                }
                #expect(freshRows == rows)
                await fresh.passwords.shutdown()
            }
        }
    }

    @Test("a crowd joining one new team at one instant, on two daemons: the team is made once, SIZE get OK, the rest CONFLICT full, never another answer")
    func crowdJoinsOneTeam() async throws {
        try await withTwoDaemons { a, b, environment in
            try await asUser("host", a, environment) { (host: Conversation) async throws in
                let hunt = try await host.makeHunt("PUBLIC TEAMS SIZE 4", stops: [StopPlan()])
                let names = (0 ..< 12).map { "joiner\($0)" }
                var tokens: [String] = []
                for name in names {
                    tokens.append(try await converseReturning(a) { (client: Conversation) async throws in try await client.register(name) })
                }
                // Spelled differently by half: one team, matched in any case.
                let requests = tokens.indices.map { "JOIN \(hunt.code) TEAM \(quoted($0 % 2 == 0 ? "The Mob" : "the MOB"))" }
                let replies = try await atOnce(tokens: tokens, on: [a, b], requests)
                #expect(replies.filter { $0.hasPrefix("OK ") }.count == 4, "\(replies)")
                #expect(replies.filter { $0.hasPrefix("ERR CONFLICT ") && $0.contains("full") }.count == 8, "\(replies)")
                let teams = try await environment.pool.query("SELECT count(*) AS n FROM hunt_teams")
                #expect(try teams[0].int("n") as Int == 1)
                let rows = try teamRows(try await host.leaderboard(hunt.id))
                #expect(rows.count == 1 && rows[0].hasPrefix("1 "), "\(rows)")
                #expect(try await host.hunt(hunt.id)["hunt"]["players"].int == 4)
            }
        }
    }

    @Test("REJECT, APPROVE and LEAVE change a team's entry (members, points) on both daemons, a move while it runs does not; a watcher hears team entries")
    func teamBoardFollowsTheLog() async throws {
        try await withTwoDaemons { a, b, environment in
            try await asUsers(["host", "amy", "bob", "cat"], a, environment) { (users: [Conversation]) async throws in
                let (host, amy, bob, cat) = (users[0], users[1], users[2], users[3])
                let hunt = try await host.makeHunt("PUBLIC TEAMS", stops: [StopPlan(points: 10), StopPlan(north: 100, points: 20)])
                func expect(_ rows: [String], _ label: String) async throws {
                    #expect(try await teamRows(host.leaderboard(hunt.id)) == rows, "\(label)")
                    try await eventually("\(label): the second daemon agrees") {
                        let there = try await converseReturning(b) { (reader: Conversation) async throws in try await reader.leaderboard(hunt.id) }
                        return try teamRows(there) == rows
                    }
                }
                // The second daemon loads the board before anyone joins, then follows the log.
                #expect(try await converseReturning(b) { (reader: Conversation) async throws in try await reader.leaderboard(hunt.id) }.isEmpty)
                try await amy.joinTeam(hunt, team: "Owls")
                try await bob.joinTeam(hunt, team: "Owls")
                try await cat.joinTeam(hunt, team: "Cats")
                try await expect(["1 Cats 0 0 cat", "1 Owls 0 0 amy,bob"], "joined")
                try await asLoggedIn(["cat"], b) { (onB: [Conversation]) async throws in
                    let watcher = onB[0]
                    _ = try await watcher.watchHunt(hunt.id)
                    _ = try await amy.checkIn(hunt.stops[0], at: hunt.places[0])
                    let events = try await watcher.huntEvents(before: try await host.mark(hunt.id))
                    let scores = events.filter { eventType($0) == "score" }
                    #expect(try scores.map { try $0["entry"]["player"].string } == ["Owls", "Cats"], "\(events)")
                    #expect(try scores.first?["entry"]["members"].array.map { try $0.string } == ["amy", "bob"])
                    #expect(try events.filter { eventType($0) == "found" }.map { try $0["player"].string } == ["amy"])
                }
                _ = try await bob.checkIn(hunt.stops[1], at: hunt.places[1])
                try await expect(["1 Owls 30 2 amy,bob", "2 Cats 0 0 cat"], "two finds")
                // The hunt runs: bob cannot move to Cats, and nothing changes.
                expectError(try await bob.joinTeamReply(hunt, team: "Cats"), "CONFLICT")
                try await expect(["1 Owls 30 2 amy,bob", "2 Cats 0 0 cat"], "bob stayed")
                // amy leaves: her check-ins leave the hunt (LEAVE's rule), Owls keeps bob's; her
                // LEAVE of a running team hunt is final.
                _ = try await amy.ok("LEAVE \(hunt.id)")
                try await expect(["1 Owls 20 1 bob", "2 Cats 0 0 cat"], "amy left")
                expectError(try await amy.joinTeamReply(hunt, team: "Owls"), "CONFLICT")
                let checkIn = try await environment.pool.query("SELECT id FROM checkins WHERE stop_id = \(hunt.stops[1])")
                _ = try await host.ok("REJECT \(try checkIn[0].string("id") as String)")
                try await expect(["1 Cats 0 0 cat", "1 Owls 0 0 bob"], "Owls' last find rejected")
            }
        }
    }

    @Test("a team time trial: the clock runs from the team's first check-in, for every member; its board orders by found then time")
    func teamTrial() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "amy", "bob", "cat"], address, environment) { (users: [Conversation]) async throws in
                let (host, amy, bob, cat) = (users[0], users[1], users[2], users[3])
                let hunt = try await host.makeHunt(
                    "PUBLIC TEAMS TRIAL 600", stops: [StopPlan(points: 10), StopPlan(north: 100, points: 20), StopPlan(north: 200, points: 30)])
                try await amy.joinTeam(hunt, team: "Fast")
                try await bob.joinTeam(hunt, team: "Fast")
                try await cat.joinTeam(hunt, team: "Slow")
                _ = try await amy.checkIn(hunt.stops[0], at: hunt.places[0])
                try await moveCheckIns(of: "amy", back: 100, environment)
                // bob's check-in counts on the team's clock, started by amy 100 s ago.
                _ = try await bob.checkIn(hunt.stops[1], at: hunt.places[1])
                _ = try await cat.checkIn(hunt.stops[0], at: hunt.places[0])
                let entries = try await host.leaderboard(hunt.id)
                #expect(try trialRows(entries) == ["1 Fast 2 100+", "2 Slow 1 0"])
                #expect(entries[0].keys.contains("members"))
                // 601 s after amy's first: time is up for bob too.
                try await moveCheckIns(of: "amy", back: 501, environment)
                let late = try await bob.checkInReply(hunt.stops[2], at: hunt.places[2])
                expectError(late, "CONFLICT")
                #expect(late.contains("time is up"), "\(late)")
            }
        }
    }

    @Test("completing a team hunt earns every member its completion badges, the one who found nothing too; a REJECT that undoes it takes them back")
    func teamBadges() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "amy", "bob", "cat"], address, environment) { (users: [Conversation]) async throws in
                let (host, amy, bob, cat) = (users[0], users[1], users[2], users[3])
                let hunt = try await host.makeHunt(
                    "PUBLIC TEAMS BADGE \"Bridge walker\"", stops: [StopPlan(points: 10), StopPlan(north: 100, points: 20)])
                for player in [amy, bob, cat] { try await player.joinTeam(hunt, team: "Trio") }
                _ = try await amy.checkIn(hunt.stops[0], at: hunt.places[0])
                let last = try await bob.checkIn(hunt.stops[1], at: hunt.places[1])["checkin"]["id"].string
                let badge = "hunt:\(hunt.id)"
                #expect(try await badgeHolders(badge, environment) == ["amy", "bob", "cat"])
                #expect(try await badgeHolders("finisher", environment) == ["amy", "bob", "cat"])
                #expect(try await cat.badgeIDs() == ["finisher", badge])
                // The hunt counts as completed in every member's PROFILE (and the ranking's totals).
                for name in ["amy", "bob", "cat"] { #expect(try await host.ok("PROFILE \(name)")["hunts_completed"].int == 1, "\(name)") }
                _ = try await host.ok("REJECT \(last)")
                #expect(try await badgeHolders(badge, environment) == [])
                #expect(try await badgeHolders("finisher", environment) == [])
                #expect(try await amy.badgeIDs() == ["first-find"])
                for name in ["amy", "bob", "cat"] { #expect(try await host.ok("PROFILE \(name)")["hunts_completed"].int == 0, "\(name)") }
                // Found again (bob's stop, by cat this time): completed again, once per member;
                // one who leaves takes their completion with them.
                _ = try await cat.checkIn(hunt.stops[1], at: hunt.places[1])
                for name in ["amy", "bob", "cat"] { #expect(try await host.ok("PROFILE \(name)")["hunts_completed"].int == 1, "\(name)") }
                _ = try await bob.ok("LEAVE \(hunt.id)")
                #expect(try await host.ok("PROFILE bob")["hunts_completed"].int == 0)
                #expect(try await host.ok("PROFILE cat")["hunts_completed"].int == 1)
            }
        }
    }
}

@Suite("Team hunts across a daemon's restart (protocol 1.4)", .timeLimit(.minutes(10)))
struct TeamRestartTests {
    @Test("a daemon restarted mid-hunt shows the same team board (AROUND too), HUNT, BADGES and PROFILE, and the game goes on", arguments: DaemonRestart.allCases)
    func restartKeepsTeams(restart: DaemonRestart) async throws {
        try await TestEnvironment.make(prefix: "teamrestart").use { environment in
            let names = ["host", "amy", "bob", "cat"]
            let (hunt, tokens, before) = try await HuntRecoveryTests.withDaemon(restart, environment, fresh: false) { address in
                var tokens: [String: String] = [:]
                for name in names {
                    tokens[name] = try await converseReturning(address) { (client: Conversation) async throws in try await client.register(name) }
                }
                func on(_ name: String, _ body: @escaping @Sendable (Conversation) async throws -> Void) async throws {
                    let token = try #require(tokens[name])
                    try await converse(address) { (client: Conversation) async throws in
                        _ = try await client.ok("AUTH \(token)")
                        try await body(client)
                    }
                }
                let hunt = try await converseReturning(address) { (host: Conversation) async throws -> MadeHunt in
                    _ = try await host.ok("AUTH \(try #require(tokens["host"]))")
                    return try await host.makeHunt(
                        "PUBLIC TEAMS SIZE 3 TRIAL 3600 BADGE Relay",
                        stops: [StopPlan(points: 10), StopPlan(north: 100, points: 20), StopPlan(north: 200, points: 30)])
                }
                try await on("amy") { try await $0.joinTeam(hunt, team: "Fast Feet") }
                try await on("bob") { try await $0.joinTeam(hunt, team: "fast feet") }
                try await on("cat") { try await $0.joinTeam(hunt, team: "Cats") }
                try await on("amy") { _ = try await $0.checkIn(hunt.stops[0], at: hunt.places[0]) }
                try await on("bob") { _ = try await $0.checkIn(hunt.stops[1], at: hunt.places[1]) }
                try await on("cat") { _ = try await $0.checkIn(hunt.stops[0], at: hunt.places[0]) }
                return (hunt, tokens, try await Self.views(address, hunt: hunt.id, tokens: tokens))
            }
            let after = try await HuntRecoveryTests.withDaemon(restart, environment, fresh: true) { address in
                let seen = try await Self.views(address, hunt: hunt.id, tokens: tokens)
                // The game goes on: bob finds the last stop; the team completes the hunt.
                try await converse(address) { (bob: Conversation) async throws in
                    _ = try await bob.ok("AUTH \(try #require(tokens["bob"]))")
                    let score = try await bob.checkIn(hunt.stops[2], at: hunt.places[2])["score"]
                    #expect(score["points"].int == 60 && score["found"].int == 3 && score["rank"].int == 1)
                    let entries = try await bob.leaderboard(hunt.id)
                    #expect(try entries.first?["player"].string == "Fast Feet" && entries.first?["found"].int == 3, "\(entries)")
                    #expect(try await bob.badgeIDs("amy").contains("hunt:\(hunt.id)"))
                }
                return seen
            }
            #expect(after.count == before.count)
            for (was, now) in zip(before, after) { #expect(now == was) }
        }
    }

    /// What viewers see of a team hunt: each request's label and reply line.
    static func views(_ address: SocketAddress, hunt: String, tokens: [String: String]) async throws -> [String] {
        let requests: [(viewer: String?, line: String)] = [
            (nil, "LEADERBOARD \(hunt)"), ("cat", "LEADERBOARD \(hunt) AROUND LIMIT 1"), ("amy", "HUNT \(hunt)"),
            ("bob", "HUNT \(hunt)"), ("cat", "HUNT \(hunt)"), (nil, "BADGES amy"), (nil, "PROFILE bob"), (nil, "RANKING"),
        ]
        let replies = try await HuntRecoveryTests.viewReplies(requests, at: address, tokens: tokens)
        let seen = zip(requests, replies).map { "\($0.0.viewer ?? "anyone"): \($0.0.line): \($0.1)" }
        #expect(seen.contains { $0.contains(#""members":["amy","bob"]"#) }, "\(seen)")
        #expect(seen.contains { $0.contains(#""team":"Fast Feet""#) }, "\(seen)")
        return seen
    }
}
