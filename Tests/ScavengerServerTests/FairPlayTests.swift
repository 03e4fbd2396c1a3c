import Foundation
import NIOCore
import ScavengerCore
import ScavengerTestSupport
import Testing

// Protocol 1.5's fair play with friends, over TCP on two daemons sharing one PostgreSQL: a LEAVE
// that cannot restart a clock or rotate a team, teams fixed while a hunt runs, a trial clock that
// stays, no code compared once time is up, and completions and badges that follow the facts in
// any order of events (each rule is a table in GameRulesTests; these prove it end to end).

/// The names a user's BADGES shows, read on `address`.
private func badges(of name: String, on address: SocketAddress) async throws -> [String] {
    try await converseReturning(address) { (reader: Conversation) async throws in try await reader.badgeIDs(name) }
}

/// `hunts_completed` of `name`'s PROFILE, read on `address`.
private func huntsCompleted(_ name: String, on address: SocketAddress) async throws -> Int? {
    try await converseReturning(address) { (reader: Conversation) async throws in try await reader.ok("PROFILE \(name)")["hunts_completed"].int }
}

@Suite("Fair play with friends over TCP on two daemons (protocol 1.5)", .timeLimit(.minutes(10)))
struct FairPlayTests {
    @Test("LEAVE of a running trial or team hunt is final on every daemon; before the start, and in an open hunt, leaving and joining again stay free")
    func leavingIsFinal() async throws {
        try await withTwoDaemons { a, b, environment in
            try await asUsers(["host", "amy", "bob"], a, environment) { (users: [Conversation]) async throws in
                let (host, amy, bob) = (users[0], users[1], users[2])
                let trial = try await host.makeHunt("PUBLIC TRIAL 600", name: "Trial", stops: [StopPlan(), StopPlan(north: 100)], start: false)
                let team = try await host.makeHunt("PUBLIC TEAMS", name: "Team", stops: [StopPlan()])
                let open = try await host.makeHunt("PUBLIC", name: "Open", stops: [StopPlan()])
                // Before the start: free.
                try await amy.join(trial)
                _ = try await amy.ok("LEAVE \(trial.id)")
                try await amy.join(trial)
                _ = try await host.ok("STARTHUNT \(trial.id)")
                _ = try await amy.checkIn(trial.stops[0], at: trial.places[0])
                _ = try await amy.ok("LEAVE \(trial.id)")
                try await asLoggedIn(["amy"], b) { (onB: [Conversation]) async throws in
                    let again = try await onB[0].call("JOIN \(trial.code)")
                    expectError(again, "CONFLICT")
                    #expect(again.contains("you left this hunt"), "\(again)")
                }
                expectError(try await amy.call("JOIN \(trial.code)"), "CONFLICT")
                // A team hunt likewise; an open hunt is left and joined again freely.
                try await bob.joinTeam(team, team: "Owls")
                _ = try await bob.ok("LEAVE \(team.id)")
                expectError(try await bob.joinTeamReply(team, team: "Owls"), "CONFLICT")
                expectError(try await bob.joinTeamReply(team, team: "Hawks"), "CONFLICT")
                try await bob.join(open)
                _ = try await bob.ok("LEAVE \(open.id)")
                try await bob.join(open)
                #expect(try await host.hunt(trial.id)["hunt"]["players"].int == 0)
            }
        }
    }

    @Test("a running team hunt: members cannot move (no spying, no rotating), newcomers join any team with room, a hunt holds at most its configured teams")
    func teamsAreFixedWhileRunning() async throws {
        try await withDatabaseServer(configure: { $0.hunts.maximumTeams = 2 }) { address, environment in
            try await asUsers(["host", "amy", "bob", "cat", "dan"], address, environment) { (users: [Conversation]) async throws in
                let (host, amy, bob, cat, dan) = (users[0], users[1], users[2], users[3], users[4])
                let hunt = try await host.makeHunt(
                    "PUBLIC TEAMS SIZE 3", stops: [StopPlan(title: "secret", options: "HIDDEN"), StopPlan(north: 100)])
                try await amy.joinTeam(hunt, team: "Owls")
                try await bob.joinTeam(hunt, team: "Hawks")
                _ = try await amy.checkIn(hunt.stops[0], at: hunt.places[0])
                // bob cannot move in to read the Owls' hidden find, nor cat make a third team.
                let spy = try await bob.joinTeamReply(hunt, team: "Owls")
                expectError(spy, "CONFLICT")
                #expect(try await bob.hunt(hunt.id)["me"]["team"].string == "Hawks")
                #expect(try await bob.hunt(hunt.id)["me"]["found"].array.isEmpty)
                let third = try await cat.joinTeamReply(hunt, team: "Cats")
                expectError(third, "CONFLICT")
                #expect(third.contains("at most 2 teams"), "\(third)")
                try await cat.joinTeam(hunt, team: "owls")
                try await dan.joinTeam(hunt, team: "Hawks")
                #expect(try await teamRows(host.leaderboard(hunt.id)) == ["1 Owls 10 1 amy,cat", "2 Hawks 0 0 bob,dan"])
            }
        }
    }

    @Test("a team trial's clock stays the team's when the member who started it leaves; only a REJECT of the check-in that started it moves it")
    func trialClockStays() async throws {
        try await withTwoDaemons { a, b, environment in
            try await asUsers(["host", "amy", "bob", "cat"], a, environment) { (users: [Conversation]) async throws in
                let (host, amy, bob, cat) = (users[0], users[1], users[2], users[3])
                let stops = [StopPlan(), StopPlan(north: 100), StopPlan(north: 200), StopPlan(north: 300)]
                let left = try await host.makeHunt("PUBLIC TEAMS TRIAL 600", name: "Left", stops: stops)
                let rejected = try await host.makeHunt("PUBLIC TEAMS TRIAL 600", name: "Rejected", stops: stops)
                func expectBoard(_ hunt: MadeHunt, _ rows: [String], _ label: String) async throws {
                    #expect(try trialRows(try await host.leaderboard(hunt.id)) == rows, "\(label)")
                    try await eventually("\(label): the second daemon agrees") {
                        try trialRows(try await converseReturning(b) { (reader: Conversation) async throws in try await reader.leaderboard(hunt.id) })
                            == rows
                    }
                }
                for player in [amy, bob, cat] {
                    try await player.joinTeam(left, team: "Duo")
                    try await player.joinTeam(rejected, team: "Trio")
                }
                // amy starts the team's clock, 550 s ago; bob finds one now.
                _ = try await amy.checkIn(left.stops[0], at: left.places[0])
                try await moveCheckIns(of: "amy", back: 550, environment)
                _ = try await bob.checkIn(left.stops[1], at: left.places[1])
                try await expectBoard(left, ["1 Duo 2 550+"], "two finds")
                // amy leaves with her find: the team's clock stays where she started it.
                _ = try await amy.ok("LEAVE \(left.id)")
                try await expectBoard(left, ["1 Duo 1 550+"], "the starter left")
                // In the other hunt, the check-in that started the clock is rejected: it moves to
                // the team's earliest remaining one (a rejection of another would not move it).
                let starter = try await amy.checkIn(rejected.stops[0], at: rejected.places[0])["checkin"]["id"].string
                try await moveCheckIns(of: "amy", back: 300, environment, stop: rejected.stops[0])
                let other = try await bob.checkIn(rejected.stops[1], at: rejected.places[1])["checkin"]["id"].string
                _ = try await cat.checkIn(rejected.stops[2], at: rejected.places[2])
                try await expectBoard(rejected, ["1 Trio 3 300+"], "three finds")
                _ = try await host.ok("REJECT \(other)")
                try await expectBoard(rejected, ["1 Trio 2 300+"], "another rejected: the clock stays")
                _ = try await host.ok("REJECT \(starter)")
                try await expectBoard(rejected, ["1 Trio 1 0"], "the starter rejected: cat's find starts it")
            }
        }
    }

    @Test("once time is up, a CHECKIN with a code is CONFLICT before the code is compared or counted")
    func noCodeAfterTime() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "amy"], address, environment) { (users: [Conversation]) async throws in
                let (host, amy) = (users[0], users[1])
                let hunt = try await host.makeHunt("PUBLIC TRIAL 60", stops: [StopPlan(), StopPlan(north: 100, options: "PROOF code CODE tulip")])
                try await amy.join(hunt)
                _ = try await amy.checkIn(hunt.stops[0], at: hunt.places[0])
                try await moveCheckIns(of: "amy", back: 61, environment)
                for code in ["tulip", "wrong"] {
                    let reply = try await amy.checkInReply(hunt.stops[1], at: hunt.places[1], "CODE \(code)")
                    expectError(reply, "CONFLICT")
                    #expect(reply.contains("time is up"), "\(code): \(reply)")
                }
                let guesses = try await environment.pool.query("SELECT count(*) AS n FROM code_guesses")
                #expect(try guesses[0].int("n") as Int == 0)
            }
        }
    }

    @Test("a team's completion follows the facts in either order of a teammate's LEAVE and a REJECT, on both daemons")
    func completionFollowsTheFacts() async throws {
        for leaveFirst in [true, false] {
            try await withTwoDaemons { a, b, environment in
                try await asUsers(["host", "amy", "bob", "cat"], a, environment) { (users: [Conversation]) async throws in
                    let (host, amy, bob, cat) = (users[0], users[1], users[2], users[3])
                    let hunt = try await host.makeHunt(
                        "PUBLIC TEAMS BADGE \"Bridge walker\"", stops: [StopPlan(), StopPlan(north: 100), StopPlan(north: 200)])
                    for player in [amy, bob, cat] { try await player.joinTeam(hunt, team: "Trio") }
                    _ = try await amy.checkIn(hunt.stops[0], at: hunt.places[0])
                    let spoofed = try await bob.checkIn(hunt.stops[1], at: hunt.places[1])["checkin"]["id"].string
                    _ = try await cat.checkIn(hunt.stops[2], at: hunt.places[2])
                    let badge = "hunt:\(hunt.id)"
                    #expect(try await badgeHolders(badge, environment) == ["amy", "bob", "cat"])
                    if leaveFirst {
                        _ = try await amy.ok("LEAVE \(hunt.id)")
                        _ = try await host.ok("REJECT \(spoofed)")
                    } else {
                        _ = try await host.ok("REJECT \(spoofed)")
                        _ = try await amy.ok("LEAVE \(hunt.id)")
                    }
                    // One stop of three stands: no one completes; the firsts stay with who made them.
                    #expect(try await badgeHolders(badge, environment) == [], "leave first: \(leaveFirst)")
                    #expect(try await badgeHolders("finisher", environment) == [], "leave first: \(leaveFirst)")
                    for name in ["amy", "bob", "cat"] {
                        #expect(try await huntsCompleted(name, on: a) == 0, "\(name), leave first: \(leaveFirst)")
                        try await eventually("\(name)'s profile on the second daemon") { try await huntsCompleted(name, on: b) == 0 }
                    }
                    #expect(try await badges(of: "cat", on: b) == ["first-find"])
                    #expect(try await badges(of: "amy", on: b) == ["first-find"])
                    #expect(try await teamRows(host.leaderboard(hunt.id)) == ["1 Trio 10 1 bob,cat"])
                    #expect(try await host.hunt(hunt.id)["winners"].array.isEmpty)
                }
            }
        }
    }

    @Test("a removed hunt takes back its completions and badges; a stop's pathfinder is one ever, even after its finder leaves")
    func removalAndPathfinder() async throws {
        try await withDatabaseServer { address, environment in
            let names = ["host", "ann", "ben", "cat", "dan", "eve", "rep1", "rep2", "rep3", "mod"]
            try await asUsers(names, address, environment) { (users: [Conversation]) async throws in
                let host = users[0], players = Array(users[1 ... 5]), reporters = Array(users[6 ... 8]), mod = users[9]
                let hunt = try await host.makeHunt("PUBLIC BADGE \"Spire\"", stops: [StopPlan()])
                for player in players { try await player.join(hunt) }
                _ = try await players[0].checkIn(hunt.stops[0], at: hunt.places[0])
                #expect(try await players[0].badgeIDs() == ["first-find", "pathfinder", "finisher", "hunt:\(hunt.id)"])
                // The first finder leaves: the next finder is not a pathfinder.
                _ = try await players[0].ok("LEAVE \(hunt.id)")
                #expect(try await players[0].badgeIDs() == ["first-find", "pathfinder"])
                _ = try await players[1].checkIn(hunt.stops[0], at: hunt.places[0])
                #expect(try await players[1].badgeIDs() == ["first-find", "finisher", "hunt:\(hunt.id)"])
                // A moderator removes the hunt: its completions and their badges go.
                try await ageAccounts(["rep1", "rep2", "rep3"], environment)
                _ = try await environment.database.setRole(username: "mod", role: .moderator)
                for reporter in reporters { _ = try await reporter.ok("REPORT \(hunt.id) spam") }
                _ = try await mod.ok("CLAIM")
                _ = try await mod.ok("RESOLVE \(hunt.id) remove")
                #expect(try await players[1].badgeIDs() == ["first-find"])
                #expect(try await players[1].ok("PROFILE")["hunts_completed"].int == 0)
            }
        }
    }
}
