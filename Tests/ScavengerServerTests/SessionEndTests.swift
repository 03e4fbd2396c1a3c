import Foundation
import Logging
import NIOCore
import Postgres
@testable import ScavengerBoard
import ScavengerCore
import ScavengerFeed
import ScavengerStore
import ScavengerTestSupport
import Testing

// Issue 52 (protocol 1.5 revisions): sessions that end everywhere (LOGOUT, RESET) on two daemons
// over TCP against PostgreSQL; BADGES of another user lists only badges of hunts the caller may
// read; a hunt's badge name is not a built-in badge's and moderators see it with a report of the
// hunt; REGISTER and FORGOT draw from one address bucket on every daemon; a moderator reads a
// removed private hunt. Nothing here is timed: waits only guard against hangs.

/// Two daemons on one database with the board's rules as `configure` sets them (both share them).
func withTwoConfiguredDaemons(
    configure: (inout BoardRules) -> Void, _ body: (SocketAddress, SocketAddress, TestEnvironment) async throws -> Void
) async throws {
    try await withTwoDaemons(configure: configure, body)
}

extension Conversation {
    /// Sends one request line and returns its reply line; the `EVENT` lines that come before the
    /// reply go to `events`.
    func call(_ line: String, events: inout [JSONObject]) async throws -> String {
        try await writer.send(line + "\n")
        while true {
            guard let next = try await reader.next() else { throw ConnectionClosed(request: line) }
            guard next.hasPrefix("EVENT ") else { return next }
            events.append(try eventJSON(next))
        }
    }
}

/// Checks that `connection`, whose session has ended, is answered as one with no login: the
/// private hunt, its leaderboard and the check-in's photo are `NOT_FOUND`, `WHOAMI` shows no user,
/// and its `WATCH HUNT` (`watch`) got one `closed` event, the last of it.
func expectSessionEnded(
    _ connection: Conversation, hunt: MadeHunt, checkIn: String?, watch: String, sourceLocation: SourceLocation = #_sourceLocation
) async throws {
    var events: [JSONObject] = []
    expectError(try await connection.call("HUNT \(hunt.id)", events: &events), "NOT_FOUND", sourceLocation: sourceLocation)
    expectError(try await connection.call("LEADERBOARD \(hunt.id)", events: &events), "NOT_FOUND", sourceLocation: sourceLocation)
    if let checkIn {
        expectError(try await connection.call("PHOTO \(checkIn)", events: &events), "NOT_FOUND", sourceLocation: sourceLocation)
    }
    let whoami = try JSONObject(okLine: try await connection.call("WHOAMI", events: &events))
    #expect(whoami["user"].isNull, "WHOAMI after the session ended: \(canonicalJSON(whoami))", sourceLocation: sourceLocation)
    expectError(try await connection.call("HUNTS MINE", events: &events), "UNAUTHORIZED", sourceLocation: sourceLocation)
    expectError(try await connection.call("WATCH HUNT \(hunt.id)", events: &events), "UNAUTHORIZED", sourceLocation: sourceLocation)
    while !events.contains(where: { eventType($0) == "closed" }) { events.append(try await connection.event()) }
    let closed = events.filter { eventType($0) == "closed" }
    #expect(closed.count == 1, sourceLocation: sourceLocation)
    #expect(try closed.first?["watch"].string == watch, sourceLocation: sourceLocation)
    #expect(try closed.first?["reason"].string == "session-ended", sourceLocation: sourceLocation)
    #expect(eventType(events[events.count - 1]) == "closed", "nothing after closed", sourceLocation: sourceLocation)
}

/// The reset code of the newest reset mail in the outbox (no sender runs: it stays queued).
func queuedResetCode(_ environment: TestEnvironment) async throws -> String {
    let rows = try await environment.pool.query("SELECT body FROM mail_outbox WHERE purpose = 'reset' AND NOT decoy ORDER BY id DESC LIMIT 1")
    let body: String = try #require(rows.first).string("body")
    return try #require(mailedCode(body))
}

@Suite("Sessions that end everywhere, BADGES privacy, hunt badge names, the address bucket (issue 52)", .timeLimit(.minutes(10)))
struct SessionEndTests {
    @Test("LOGOUT on one daemon: a connection that resumed the session on another reads as one with no login from its next command; its WATCH HUNT is closed")
    func logoutEndsEverywhere() async throws {
        try await withTwoDaemons { first, second, environment in
            try await asUser("host", first, environment) { (host: Conversation) async throws in
                let hunt = try await host.makeHunt("", name: "Secret walk", stops: [StopPlan(options: "PROOF photo"), StopPlan(north: 50)])
                try await converse(first) { (alice: Conversation) async throws in
                    let token = try await alice.register("alice")
                    try await alice.join(hunt)
                    let checkIn = try await alice.checkIn(hunt.stops[0], at: hunt.places[0], photoOption)["checkin"]["id"].string
                    try await converse(second) { (resumed: Conversation) async throws in
                        _ = try await resumed.ok("AUTH \(token)")
                        #expect(try await resumed.hunt(hunt.id)["hunt"]["id"].string == hunt.id)
                        #expect(try await resumed.ok("LEADERBOARD \(hunt.id)")["entries"].array.count == 1)
                        #expect(try await resumed.ok("PHOTO \(checkIn)")["id"].string == checkIn)
                        let watch = try await resumed.ok("WATCH HUNT \(hunt.id)")["watch"].string
                        #expect(try await alice.call("LOGOUT") == "OK true")
                        try await expectSessionEnded(resumed, hunt: hunt, checkIn: checkIn, watch: watch)
                        // The host's session stands.
                        #expect(try await host.hunt(hunt.id)["hunt"]["code"].string == hunt.code)
                    }
                }
            }
        }
    }

    @Test("a WATCH HUNT on another daemon is closed when the session ends, before the connection sends anything")
    func watchClosedWithoutACommand() async throws {
        try await withTwoDaemons { first, second, environment in
            try await converse(first) { (host: Conversation) async throws in
                let token = try await host.register("host")
                let hunt = try await host.makeHunt("", name: "Secret walk", stops: [StopPlan()])
                try await converse(second) { (resumed: Conversation) async throws in
                    _ = try await resumed.ok("AUTH \(token)")
                    let watch = try await resumed.ok("WATCH HUNT \(hunt.id)")["watch"].string
                    #expect(try await host.call("LOGOUT") == "OK true")
                    let closed = try await resumed.event()
                    #expect(try closed["watch"].string == watch)
                    #expect(eventType(closed) == "closed")
                    #expect(try JSONObject(okLine: try await resumed.call("WHOAMI"))["user"].isNull)
                }
            }
        }
    }

    @Test("RESET ends every session of the user, on both daemons: the host's private hunt (with its code) is NOT_FOUND to each, each WATCH HUNT closed")
    func resetEndsEverySession() async throws {
        try await withTwoConfiguredDaemons(configure: { $0.recovery = RecoveryRules(mailEnabled: true) }) { first, second, environment in
            try await converse(first) { (host: Conversation) async throws in
                let token = try await host.register("hostess")
                let hunt = try await host.makeHunt("", name: "Secret walk", stops: [StopPlan()])
                try await converse(second) { (onSecond: Conversation) async throws in
                    _ = try await onSecond.ok("AUTH \(token)")
                    #expect(try await onSecond.hunt(hunt.id)["hunt"]["code"].string == hunt.code)
                    let secondWatch = try await onSecond.ok("WATCH HUNT \(hunt.id)")["watch"].string
                    try await converse(first) { (onFirst: Conversation) async throws in
                        _ = try await onFirst.ok("AUTH \(token)")
                        let firstWatch = try await onFirst.ok("WATCH HUNT \(hunt.id)")["watch"].string
                        try await converse(second) { (resetter: Conversation) async throws in
                            #expect(try await resetter.call("FORGOT hostess") == "OK true")
                            let code = try await queuedResetCode(environment)
                            let reset = try await resetter.ok("RESET hostess \(code) newpassword2")
                            #expect(try reset["user"]["name"].string == "hostess")
                            // The new session reads the hunt, with its code.
                            #expect(try await resetter.hunt(hunt.id)["hunt"]["code"].string == hunt.code)
                        }
                        try await expectSessionEnded(onSecond, hunt: hunt, checkIn: nil, watch: secondWatch)
                        try await expectSessionEnded(onFirst, hunt: hunt, checkIn: nil, watch: firstWatch)
                    }
                }
                expectError(try await host.call("HUNT \(hunt.id)"), "NOT_FOUND")
                expectError(try await converseReturning(second) { try await $0.call("AUTH \(token)") }, "UNAUTHORIZED")
            }
        }
    }

    @Test("BADGES of another user lists badges of private hunts only to the holder, the host and moderators; PROFILE counts them all")
    func badgesPrivacy() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "bob", "carol", "mod"], address, environment) { (users: [Conversation]) async throws in
                let (host, bob, carol, mod) = (users[0], users[1], users[2], users[3])
                _ = try await environment.database.setRole(username: "mod", role: .moderator)
                let secret = try await host.makeHunt("BADGE \(quoted("Night owl"))", name: "Secret", stops: [StopPlan()])
                let open = try await host.makeHunt("PUBLIC BADGE \(quoted("Day walker"))", name: "Open", stops: [StopPlan()])
                try await bob.join(secret)
                try await bob.checkIn(secret.stops[0], at: secret.places[0])
                try await bob.join(open)
                try await bob.checkIn(open.stops[0], at: open.places[0])
                let all: Set<String> = ["first-find", "finisher", "hunt:\(secret.id)", "hunt:\(open.id)"]
                #expect(Set(try await bob.badgeIDs()) == all)
                #expect(Set(try await bob.badgeIDs("bob")) == all)
                #expect(Set(try await host.badgeIDs("bob")) == all)
                #expect(Set(try await mod.badgeIDs("bob")) == all)
                // first-find and finisher were earned in the private hunt: theirs too.
                #expect(try await carol.badgeIDs("bob") == ["hunt:\(open.id)"])
                #expect(try await converseReturning(address) { try await $0.badgeIDs("bob") } == ["hunt:\(open.id)"])
                let listed = try await carol.ok("BADGES bob")["badges"].array
                #expect(!listed.contains { (try? $0["hunt"].string) == secret.id })
                #expect(try await carol.ok("PROFILE bob")["badges"].int == 4)
                #expect(try await converseReturning(address) { try await $0.ok("PROFILE bob") }["badges"].int == 4)
            }
        }
    }

    @Test("CREATEHUNT … BADGE with a built-in badge's name or id, in any case, is BAD_ARGUMENT",
          arguments: ["finisher", "First find", "FIRST-FIND", " Pathfinder ", "explorer-10", "Seasoned Explorer", "against the clock", "Trial"])
    func builtInBadgeNames(name: String) async throws {
        try await withDatabaseServer { address, environment in
            try await asUser("host", address, environment) { (host: Conversation) async throws in
                expectError(try await host.call("CREATEHUNT Walk BADGE \(quoted(name))"), "BAD_ARGUMENT")
                #expect(try await host.createHunt("BADGE \(quoted(name + " club"))")["id"].string.hasPrefix("h"))
            }
        }
    }

    @Test("moderators see a reported hunt's badge name and its teams' names in its queue item")
    func badgeNameInReport() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "reporter", "mod"], address, environment) { (users: [Conversation]) async throws in
                let (host, reporter, mod) = (users[0], users[1], users[2])
                _ = try await environment.database.setRole(username: "mod", role: .moderator)
                let hunt = try await host.makeHunt("PUBLIC TEAMS BADGE \(quoted("Staff of the city"))", name: "Walk", stops: [StopPlan()])
                try await reporter.joinTeam(hunt, team: "Official Moderators")
                _ = try await reporter.ok("REPORT \(hunt.id) other")
                let item = try await mod.ok("CLAIM")["item"]
                #expect(try item["item"].string == hunt.id)
                #expect(try item["content"]["text"].string.contains("Staff of the city"))
                #expect(try item["content"]["text"].string.contains("Teams: Official Moderators"))
            }
        }
    }

    @Test("a hunt hidden by reports awards no hunt badge, and a removal takes it back (the check-in path: known issue for the lead)")
    func hiddenOrRemovedHuntAwardsNoBadge() async throws {
        try await withDatabaseServer { address, environment in
            let names = ["host", "bob", "rep1", "rep2", "rep3", "mod"]
            try await asUsers(names, address, environment) { (users: [Conversation]) async throws in
                let (host, bob, reporters, mod) = (users[0], users[1], Array(users[2 ... 4]), users[5])
                _ = try await environment.database.setRole(username: "mod", role: .moderator)
                let hunt = try await host.makeHunt("PUBLIC BADGE \(quoted("Night owl"))", name: "Walk", stops: [StopPlan(), StopPlan(north: 40)])
                try await bob.join(hunt)
                try await bob.checkIn(hunt.stops[0], at: hunt.places[0])
                try await ageAccounts(["rep1", "rep2", "rep3"], environment)
                for reporter in reporters { _ = try await reporter.ok("REPORT \(hunt.id) spam") }
                #expect(try await bob.ok("HUNTS")["hunts"].array.isEmpty)
                try await bob.checkIn(hunt.stops[1], at: hunt.places[1])
                let whileHidden = try await badgeHolders("hunt:\(hunt.id)", environment)
                #expect(whileHidden == [])
                _ = try await mod.ok("CLAIM \(hunt.id)")
                _ = try await mod.ok("RESOLVE \(hunt.id) remove")
                let afterRemoval = try await badgeHolders("hunt:\(hunt.id)", environment)
                #expect(afterRemoval == [])
            }
        }
    }

    @Test("REGISTER and FORGOT draw from one bucket per address, shared by every daemon")
    func oneAddressBucket() async throws {
        try await withTwoConfiguredDaemons(configure: {
            $0.registrationRate = RateLimit(count: 2, seconds: 3600)
            $0.recovery = RecoveryRules(mailEnabled: true)
        }) { first, second, environment in
            try await converse(first, from: "127.0.0.7") { (client: Conversation) async throws in try await client.register("one") }
            try await converse(second, from: "127.0.0.7") { (client: Conversation) async throws in
                #expect(try await client.call("FORGOT one") == "OK true")
            }
            try await converse(first, from: "127.0.0.7") { (client: Conversation) async throws in
                expectRateLimited(try await client.call("FORGOT one"), near: 1800, "too many password resets from your address")
            }
            try await converse(second, from: "127.0.0.7") { (client: Conversation) async throws in
                expectRateLimited(
                    try await client.call("REGISTER two two@example.org password1"), near: 1800, "too many registrations from your address")
            }
            try await converse(second, from: "127.0.0.8") { (client: Conversation) async throws in
                #expect(try await client.call("FORGOT one") == "OK true")
                try await client.register("two")
            }
            let rows = try await environment.pool.query("SELECT count(*) FROM address_buckets")
            #expect(try rows[0].int(0) as Int == 2)
        }
    }

    @Test("a moderator reads a removed private hunt; its player gets NOT_FOUND")
    func moderatorReadsRemovedPrivateHunt() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "player", "mod", "othermod"], address, environment) { (users: [Conversation]) async throws in
                let (host, player, mod, otherMod) = (users[0], users[1], users[2], users[3])
                for name in ["mod", "othermod"] { _ = try await environment.database.setRole(username: name, role: .moderator) }
                let hunt = try await host.makeHunt("", name: "Secret", stops: [StopPlan()])
                try await player.join(hunt)
                _ = try await player.ok("REPORT \(hunt.id) spam")
                _ = try await mod.ok("CLAIM \(hunt.id)")
                _ = try await mod.ok("RESOLVE \(hunt.id) remove")
                #expect(try await mod.hunt(hunt.id)["hunt"]["state"].string == "ended")
                #expect(try await otherMod.hunt(hunt.id)["hunt"]["id"].string == hunt.id)
                #expect(try await host.hunt(hunt.id)["hunt"]["state"].string == "ended")
                expectError(try await player.call("HUNT \(hunt.id)"), "NOT_FOUND")
            }
        }
    }
}
