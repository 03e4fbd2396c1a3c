import Foundation
import NIOCore
import ScavengerCore
import ScavengerTestSupport
import Testing

/// Makes `names` moderators (by the database, as `scavengerd user role` does).
private func makeModerators(_ names: [String], _ environment: TestEnvironment) async throws {
    for name in names { _ = try await environment.database.setRole(username: name, role: .moderator) }
}

@Suite("A hunt's chat, and hunts, stops and their chat in the moderation queue")
struct HuntModerationTests {
    @Test("the chat of a hunt: its host and players write and read it; strangers are FORBIDDEN (public) or NOT_FOUND (private); watchers hear it")
    func chat() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "player", "stranger"], address, environment) { (users: [Conversation]) async throws in
                let (host, player, stranger) = (users[0], users[1], users[2])
                let hunt = try await host.makeHunt(stops: [StopPlan()])
                try await player.join(hunt)
                let watch = try await player.ok("WATCH HUNT \(hunt.id)")["watch"].string
                let message = try await host.ok("REPLY \(hunt.id) \(quoted("meet at the gate"))")["reply"]
                #expect(try message["pin"].string == hunt.id)
                #expect(try message["author"].string == "host")
                let event = try await player.event()
                #expect(try event["watch"].string == watch)
                #expect(try event["type"].string == "reply")
                #expect(try event["reply"]["text"].string == "meet at the gate")
                #expect(try event["reply"]["pin"].string == hunt.id)
                _ = try await player.ok("UNWATCH \(watch)")
                _ = try await player.ok("REPLY \(hunt.id) \(quoted("on my way"))")
                let page = try await player.ok("REPLIES \(hunt.id) LIMIT 1")
                #expect(try page["replies"].array.map { try $0["text"].string } == ["meet at the gate"])
                let next = try page["next"].string
                let rest = try await host.ok("REPLIES \(hunt.id) LIMIT 1 CURSOR \(quoted(next))")
                #expect(try rest["replies"].array.map { try $0["text"].string } == ["on my way"])
                expectError(try await stranger.call("REPLY \(hunt.id) hello"), "FORBIDDEN")
                expectError(try await stranger.call("REPLIES \(hunt.id)"), "FORBIDDEN")
                let secret = try await host.makeHunt("", name: "secret", stops: [StopPlan()])
                expectError(try await stranger.call("REPLY \(secret.id) hello"), "NOT_FOUND")
                expectError(try await stranger.call("REPLIES \(secret.id)"), "NOT_FOUND")
                expectError(try await converseReturning(address) { try await $0.call("REPLY \(hunt.id) hello") }, "UNAUTHORIZED")
            }
        }
    }

    @Test("a hunt hidden by reports leaves HUNTS; removed, it ends and is NOT_FOUND to all but its host and moderators; the queue shows its text and host")
    func reportedHunt() async throws {
        try await withDatabaseServer { address, environment in
            let names = ["host", "player", "rep1", "rep2", "rep3", "mod"]
            try await asUsers(names, address, environment) { (users: [Conversation]) async throws in
                let (host, player, reporters, mod) = (users[0], users[1], Array(users[2 ... 4]), users[5])
                let hunt = try await host.makeHunt(name: "Spam walk", stops: [StopPlan(title: "first gate")])
                try await player.join(hunt)
                try await ageAccounts(["rep1", "rep2", "rep3"], environment)
                try await makeModerators(["mod"], environment)
                expectError(try await host.call("REPORT \(hunt.id) spam"), "FORBIDDEN")
                for reporter in reporters { _ = try await reporter.ok("REPORT \(hunt.id) spam") }
                #expect(try await player.ok("HUNTS")["hunts"].array.isEmpty)
                // Hidden, not removed: its players still play it.
                #expect(try await player.hunt(hunt.id)["hunt"]["state"].string == "running")

                let item = try await mod.ok("CLAIM")["item"]
                #expect(try item["item"].string == hunt.id)
                #expect(try item["kind"].string == "hunt")
                #expect(try item["content"]["author"].string == "host")
                #expect(try item["content"]["text"].string.contains("Spam walk"))
                #expect(try item["content"]["text"].string.contains("first gate"))
                _ = try await mod.ok("RESOLVE \(hunt.id) remove")
                expectError(try await player.call("HUNT \(hunt.id)"), "NOT_FOUND")
                expectError(try await player.call("LEADERBOARD \(hunt.id)"), "NOT_FOUND")
                expectError(try await player.call("JOIN \(hunt.code)"), "NOT_FOUND")
                #expect(try await host.hunt(hunt.id)["hunt"]["state"].string == "ended")
                #expect(try await mod.hunt(hunt.id)["hunt"]["state"].string == "ended")
                #expect(try await host.allHunts("MINE") == [hunt.id])
                #expect(try await player.allHunts("MINE").isEmpty)
            }
        }
    }

    @Test("a reported stop: queued as kind stop under its hunt; removed, its title and clue are withheld from all but the host and moderators")
    func reportedStop() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "player", "mod"], address, environment) { (users: [Conversation]) async throws in
                let (host, player, mod) = (users[0], users[1], users[2])
                let hunt = try await host.makeHunt(stops: [StopPlan(title: "rude title", options: "CLUE \(quoted("rude clue"))"), StopPlan(north: 50)])
                try await player.join(hunt)
                try await makeModerators(["mod"], environment)
                _ = try await player.ok("REPORT \(hunt.stops[0]) hate")
                let item = try await mod.ok("CLAIM")["item"]
                #expect(try item["kind"].string == "stop")
                #expect(try item["content"]["hunt"].string == hunt.id)
                #expect(try item["content"]["text"].string.contains("rude clue"))
                _ = try await mod.ok("RESOLVE \(hunt.stops[0]) remove")
                let seen = try await player.hunt(hunt.id)["stops"][0]
                #expect(try seen["title"].string == "" && seen["clue"].string == "")
                #expect(try await host.hunt(hunt.id)["stops"][0]["title"].string == "rude title")
                #expect(try await mod.hunt(hunt.id)["stops"][0]["title"].string == "rude title")
                // The game goes on at that stop.
                _ = try await player.checkIn(hunt.stops[0], at: hunt.places[0])
            }
        }
    }

    @Test("a message in a hunt's chat is reported like a pin's reply: hidden by reports, queued with its hunt, removed for good")
    func reportedChat() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "pl1", "pl2", "pl3", "mod"], address, environment) { (users: [Conversation]) async throws in
                let (host, players, mod) = (users[0], Array(users[1 ... 3]), users[4])
                let hunt = try await host.makeHunt(stops: [StopPlan()])
                for player in players { try await player.join(hunt) }
                let message = try await host.ok("REPLY \(hunt.id) \(quoted("buy my stuff"))")["reply"]["id"].string
                try await ageAccounts(["pl1", "pl2", "pl3"], environment)
                try await makeModerators(["mod"], environment)
                for player in players { _ = try await player.ok("REPORT \(message) spam") }
                #expect(try await players[0].ok("REPLIES \(hunt.id)")["replies"].array.isEmpty)
                let item = try await mod.ok("CLAIM")["item"]
                #expect(try item["kind"].string == "reply")
                #expect(try item["content"]["hunt"].string == hunt.id)
                _ = try await mod.ok("RESOLVE \(message) dismiss")
                #expect(try await players[0].ok("REPLIES \(hunt.id)")["replies"].array.count == 1)
            }
        }
    }

    @Test("a moderator's APPROVE, REJECT and ENDHUNT of someone else's hunt are logged in MODLOG; the host's are not")
    func moderatorsLogged() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "player", "mod"], address, environment) { (users: [Conversation]) async throws in
                let (host, player, mod) = (users[0], users[1], users[2])
                let hunt = try await host.makeHunt(stops: [StopPlan(options: "PROOF photo"), StopPlan(north: 40, options: "PROOF photo")])
                try await player.join(hunt)
                try await makeModerators(["mod"], environment)
                let first = try await player.checkIn(hunt.stops[0], at: hunt.places[0], photoOption)["checkin"]["id"].string
                let second = try await player.checkIn(hunt.stops[1], at: hunt.places[1], photoOption)["checkin"]["id"].string
                _ = try await host.ok("APPROVE \(first)")
                _ = try await mod.ok("APPROVE \(second) BONUS 5")
                _ = try await mod.ok("REJECT \(first) NOTE \(quoted("blurry"))")
                _ = try await mod.ok("ENDHUNT \(hunt.id)")
                let entries = try await mod.ok("MODLOG")["entries"].array
                let actions = try entries.map { "\(try $0["action"].string) \(try $0["item"].string)" }
                #expect(actions == ["endhunt \(hunt.id)", "reject \(first)", "approve \(second)"])
                #expect(try entries.allSatisfy { try $0["moderator"].string == "mod" })
                #expect(try entries[1]["note"].string == "blurry")
                #expect(try await player.hunt(hunt.id)["me"]["points"].int == 15)
            }
        }
    }
}

@Suite("The hunts' change log and wrong codes are trimmed by expire")
struct HuntExpiryTests {
    @Test("expire trims old hunt changes and wrong codes; leaderboards stay right and keep following new check-ins")
    func trims() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "alice", "bob"], address, environment) { (users: [Conversation]) async throws in
                let (host, alice, bob) = (users[0], users[1], users[2])
                let hunt = try await host.makeHunt(stops: [StopPlan(), StopPlan(north: 40, options: "PROOF code CODE secret1")])
                try await alice.join(hunt)
                try await bob.join(hunt)
                _ = try await alice.checkIn(hunt.stops[0], at: hunt.places[0])
                expectError(try await bob.checkInReply(hunt.stops[1], at: hunt.places[1], "CODE wrong1"), "FORBIDDEN")
                try await environment.pool.query("UPDATE hunt_changes SET at = at - interval '2 days'", idempotent: false)
                try await environment.pool.query("UPDATE code_guesses SET at = at - interval '2 days'", idempotent: false)
                let report = try await environment.database.expire(keepChangesSeconds: 3600)
                #expect(report.changes > 0)
                let left = try await environment.pool.query("SELECT count(*) AS n FROM hunt_changes")
                #expect(try left[0].int("n") as Int == 1)
                let guesses = try await environment.pool.query("SELECT count(*) AS n FROM code_guesses")
                #expect(try guesses[0].int("n") as Int == 0)
                _ = try await bob.checkIn(hunt.stops[1], at: hunt.places[1], "CODE secret1")
                let board = try await host.leaderboard(hunt.id)
                // alice reached 10 first.
                #expect(try board.map { "\(try $0["player"].string) \($0["points"].int ?? -1)" } == ["alice 10", "bob 10"])
                #expect(board.compactMap { $0["points"].int }.reduce(0, +) == 20)
            }
        }
    }
}

@Suite("Guessing join codes")
struct JoinCodeGuessingTests {
    @Test("JOINs by codes that find nothing are limited per address: past the limit even the right code waits; JOIN by id and hosts are not")
    func guessing() async throws {
        try await withDatabaseServer(configure: { $0.joinFailureRate = RateLimit(count: 3, seconds: 600) }) { address, environment in
            try await asUsers(["host", "guesser"], address, environment) { (users: [Conversation]) async throws in
                let (host, guesser) = (users[0], users[1])
                let secret = try await host.makeHunt("", name: "secret", stops: [StopPlan()])
                let open = try await host.makeHunt("PUBLIC", name: "open", stops: [StopPlan()])
                for guess in ["AAAAAA", "BBBBBB", "not-a-code"] { expectError(try await guesser.call("JOIN \(guess)"), "NOT_FOUND") }
                let refused = try await guesser.call("JOIN \(secret.code)")
                #expect(refused.hasPrefix("ERR RATE_LIMITED "), "\(refused)")
                if let seconds = Int(refused.split(separator: " ")[2]) { #expect((1 ... 600).contains(seconds)) }
                // Joining a public hunt by its id is no guess.
                _ = try await guesser.ok("JOIN \(open.id)")
                #expect(try await host.hunt(secret.id)["hunt"]["players"].int == 0)
            }
        }
    }
}
