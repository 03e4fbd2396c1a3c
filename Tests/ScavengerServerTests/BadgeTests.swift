import Foundation
import NIOCore
import ScavengerCore
import ScavengerTestSupport
import Testing

// Badges (protocol 1.4, "Achievements") over TCP against PostgreSQL: awarded in the transaction
// of what earns them (a check-in alone or in a group, an APPROVE), once per user and badge, taken
// back by a REJECT, listed by BADGES, counted by PROFILE, told to hunt watchers on every daemon,
// kept across a restart. Nothing here is timed; a time trial's clock is moved in the database.

extension Conversation {
    /// `BADGES [username]`: the ids, oldest first.
    func badgeIDs(_ username: String? = nil) async throws -> [String] {
        try await ok("BADGES" + (username.map { " \($0)" } ?? ""))["badges"].array.map { try $0["id"].string }
    }
}

/// The names of the users holding `badge`, as the database has it, in name order.
func badgeHolders(_ badge: String, _ environment: TestEnvironment) async throws -> [String] {
    let rows = try await environment.pool.query("""
        SELECT u.name FROM user_badges b JOIN users u ON u.id = b.user_id WHERE b.badge = \(badge) ORDER BY u.name
        """)
    return try rows.map { try $0.string("name") }
}

// The time limit only guards against a hang, and it counts the wait for a TestEnvironment.
@Suite("Badges: awarded with what earns them, taken back by REJECT, BADGES, PROFILE, watch events (protocol 1.4)", .timeLimit(.minutes(10)))
struct BadgeTests {
    @Test("a first accepted check-in earns first-find, once: BADGES shows it (yours or anyone's), PROFILE counts it; unknown user NOT_FOUND, no login UNAUTHORIZED")
    func firstFind() async throws {
        try await withDatabaseServer { address, environment in
            try await asUser("host", address, environment) { (host: Conversation) async throws in
                let hunt = try await host.makeHunt(stops: [StopPlan(), StopPlan(title: "second")])
                #expect(try await host.badgeIDs() == [])
                #expect(try await host.ok("PROFILE")["badges"].int == 0)
                try await asUser("amy", address, environment) { (amy: Conversation) async throws in
                    try await amy.join(hunt)
                    try await amy.checkIn(hunt.stops[0], at: hunt.places[0])
                    try await amy.checkIn(hunt.stops[1], at: hunt.places[1])
                    let badges = try await amy.ok("BADGES")["badges"].array
                    // Two stops of a hunt of 1 player: first-find and finisher, no pathfinder.
                    #expect(try badges.map { try $0["id"].string } == ["first-find", "finisher"])
                    let first = try #require(badges.first)
                    #expect(try first["name"].string == "First find")
                    #expect(try first["description"].string == BadgeRules.firstFind.description)
                    #expect(try first["hunt"].string == hunt.id)
                    let at = try parseTime(first["at"])
                    #expect(abs(at.timeIntervalSinceNow) < 3600)
                    #expect(Set((first.value as? [String: Any])?.keys.map { $0 } ?? []) == ["id", "name", "description", "hunt", "at"])
                    #expect(try await amy.ok("PROFILE")["badges"].int == 2)
                    #expect(try await host.ok("PROFILE amy")["badges"].int == 2)
                    #expect(try await host.badgeIDs("AMY") == ["first-find", "finisher"])
                }
                expectError(try await host.call("BADGES nosuchuser"), "NOT_FOUND")
                expectError(try await host.call("BADGES a b"), "BAD_ARGUMENT")
            }
            try await converse(address) { (anonymous: Conversation) async throws in
                expectError(try await anonymous.call("BADGES"), "UNAUTHORIZED")
                #expect(try await anonymous.badgeIDs("amy") == ["first-find", "finisher"])
            }
            let rows = try await environment.pool.query("SELECT count(*) AS n FROM user_badges")
            #expect(try rows[0].int("n") as Int == 2)
        }
    }

    @Test("ten stops of a hunt with its own BADGE: explorer-10, finisher and the hunt's badge; a second hunt adds none twice; REJECTs take back what no longer stands")
    func explorerAndHuntBadge() async throws {
        try await withDatabaseServer { address, environment in
            try await asUser("host", address, environment) { (host: Conversation) async throws in
                let plans = (0 ..< 10).map { StopPlan(title: "stop \($0)") }
                let hunt = try await host.makeHunt("PUBLIC BADGE \(quoted("Bridge master"))", name: "Bridges", stops: plans)
                let other = try await host.makeHunt(name: "Again", stops: [StopPlan()])
                try await asUser("amy", address, environment) { (amy: Conversation) async throws in
                    try await amy.join(hunt)
                    for (index, stop) in hunt.stops.enumerated() {
                        try await amy.checkIn(stop, at: hunt.places[index])
                        let expected = index < 9 ? ["first-find"] : ["first-find", "explorer-10", "finisher", "hunt:\(hunt.id)"]
                        #expect(try await amy.badgeIDs() == expected, "after \(index + 1) stops")
                    }
                    let own = try #require(try await amy.ok("BADGES")["badges"].array.last)
                    #expect(try own["name"].string == "Bridge master")
                    #expect(try own["description"].string == "Completed the hunt \u{201C}Bridges\u{201D}.")
                    #expect(try own["hunt"].string == hunt.id)
                    try await amy.join(other)
                    let again = try await amy.checkIn(other.stops[0], at: other.places[0])["checkin"]["id"].string
                    #expect(try await amy.badgeIDs() == ["first-find", "explorer-10", "finisher", "hunt:\(hunt.id)"])
                    // A rejection in the first hunt: 10 found still (the other hunt's), a hunt
                    // completed still (the other): only the first hunt's own badge goes (first-find
                    // moves to a find that stands).
                    let firstCheckIn = try await environment.pool.query("""
                        SELECT id FROM checkins WHERE hunt_id = \(hunt.id) ORDER BY created_at LIMIT 1
                        """)[0].string("id") as String
                    _ = try await host.ok("REJECT \(firstCheckIn)")
                    #expect(try await amy.badgeIDs() == ["first-find", "explorer-10", "finisher"])
                    // Another: 9 found, explorer-10 goes, and no hunt is completed any more.
                    _ = try await host.ok("REJECT \(again)")
                    #expect(try await amy.badgeIDs() == ["first-find"])
                }
            }
        }
    }

    @Test("REJECT of an accepted check-in takes back what it earned (first-find, finisher, the hunt's badge); a new find earns them again")
    func rejectTakesBack() async throws {
        try await withDatabaseServer { address, environment in
            try await asUser("host", address, environment) { (host: Conversation) async throws in
                let hunt = try await host.makeHunt("PUBLIC BADGE Solo", stops: [StopPlan()])
                try await asUser("amy", address, environment) { (amy: Conversation) async throws in
                    try await amy.join(hunt)
                    let checkIn = try await amy.checkIn(hunt.stops[0], at: hunt.places[0])["checkin"]["id"].string
                    #expect(try await amy.badgeIDs() == ["first-find", "finisher", "hunt:\(hunt.id)"])
                    #expect(try await host.ok("REJECT \(checkIn)")["checkin"]["status"].string == "rejected")
                    #expect(try await amy.badgeIDs() == [])
                    #expect(try await amy.ok("PROFILE")["badges"].int == 0)
                    // Found again: earned again.
                    try await amy.checkIn(hunt.stops[0], at: hunt.places[0])
                    #expect(try await amy.badgeIDs() == ["first-find", "finisher", "hunt:\(hunt.id)"])
                }
            }
        }
    }

    @Test("REJECT of the find that earned first-find moves it to a find that stands, and takes the hunt's completion badges")
    func rejectKeepsWhatStillQualifies() async throws {
        try await withDatabaseServer { address, environment in
            try await asUser("host", address, environment) { (host: Conversation) async throws in
                let hunt = try await host.makeHunt("PUBLIC BADGE Pair", stops: [StopPlan(), StopPlan(title: "two")])
                try await asUser("amy", address, environment) { (amy: Conversation) async throws in
                    try await amy.join(hunt)
                    let first = try await amy.checkIn(hunt.stops[0], at: hunt.places[0])["checkin"]["id"].string
                    try await amy.checkIn(hunt.stops[1], at: hunt.places[1])
                    #expect(try await amy.badgeIDs() == ["first-find", "finisher", "hunt:\(hunt.id)"])
                    // The check-in that earned first-find is rejected: another find stands, and
                    // the badge is now that one's.
                    _ = try await host.ok("REJECT \(first)")
                    #expect(try await amy.badgeIDs() == ["first-find"])
                }
            }
        }
    }

    @Test("APPROVE of a pending photo check-in awards in its transaction; a time trial completed in time earns trial, one completed too late does not")
    func approveAndTrial() async throws {
        try await withDatabaseServer { address, environment in
            try await asUser("host", address, environment) { (host: Conversation) async throws in
                let stops = [StopPlan(), StopPlan(title: "photo", options: "PROOF photo")]
                let fast = try await host.makeHunt("PUBLIC TRIAL 600", name: "Fast", stops: stops)
                let slow = try await host.makeHunt("PUBLIC TRIAL 600", name: "Slow", stops: stops)
                try await asUser("amy", address, environment) { (amy: Conversation) async throws in
                    try await amy.join(fast)
                    try await amy.join(slow)
                    try await amy.checkIn(fast.stops[0], at: fast.places[0])
                    let pending = try await amy.checkIn(fast.stops[1], at: fast.places[1], photoOption)["checkin"]
                    #expect(try pending["status"].string == "pending")
                    #expect(try await amy.badgeIDs() == ["first-find"])
                    _ = try await host.ok("APPROVE \(pending["id"].string)")
                    #expect(try await amy.badgeIDs() == ["first-find", "finisher", "trial"])
                }
                try await asUser("bob", address, environment) { (bob: Conversation) async throws in
                    try await bob.join(slow)
                    let first = try await bob.checkIn(slow.stops[0], at: slow.places[0])["checkin"]["id"].string
                    let pending = try await bob.checkIn(slow.stops[1], at: slow.places[1], photoOption)["checkin"]["id"].string
                    // The first check-in was made 20 minutes ago: the trial's 10 are over.
                    try await environment.pool.query("UPDATE checkins SET created_at = created_at - interval '20 minutes' WHERE id = \(first)")
                    _ = try await host.ok("APPROVE \(pending)")
                    #expect(try await bob.badgeIDs() == ["first-find", "finisher"])
                }
            }
        }
    }

    @Test("20 players check in at 2 stops at one instant on two daemons: every check-in OK, first-find for each, exactly one pathfinder per stop")
    func pathfinderCrowd() async throws {
        try await withTwoDaemons { a, b, environment in
            try await asUser("host", a, environment) { (host: Conversation) async throws in
                let hunt = try await host.makeHunt(stops: [StopPlan(), StopPlan(north: 100, title: "north")])
                let names = (0 ..< 20).map { String(format: "runner%02d", $0) }
                try await registerAll(names, at: a)
                for name in names {
                    _ = try await asLoggedInReturning(name, a) { (client: Conversation) async throws in try await client.join(hunt) }
                }
                try await asCrowd(names.enumerated().map { ($0.element, $0.offset % 2 == 0 ? a : b) }) { crowd in
                    let requests = names.indices.map { "CHECKIN \(hunt.stops[$0 % 2]) \(hunt.places[$0 % 2])" }
                    let replies = try await atOnce(crowd, requests)
                    expectNoFailures(replies, "CHECKIN")
                    #expect(replies.allSatisfy { $0.hasPrefix("OK ") }, "\(replies.filter { !$0.hasPrefix("OK ") })")
                }
                #expect(try await badgeHolders("first-find", environment) == names)
                let pathfinders = try await environment.pool.query("""
                    SELECT b.checkin_id, c.stop_id, c.user_id,
                        (SELECT min(o.accepted_at) FROM checkins o WHERE o.stop_id = c.stop_id AND o.status = 'accepted') = c.accepted_at AS first
                    FROM user_badges b JOIN checkins c ON c.id = b.checkin_id WHERE b.badge = 'pathfinder' ORDER BY c.stop_id
                    """)
                #expect(try pathfinders.map { try $0.string("stop_id") as String } == hunt.stops.sorted())
                for row in pathfinders { #expect(try row.bool("first") as Bool, "the pathfinder was the first accepted at the stop") }
            }
        }
    }

    @Test("first finds of 6 players earned at one instant two ways on two daemons (an APPROVE in one hunt, a CHECKIN in another): one first-find each, no INTERNAL")
    func firstFindTwoWaysAtOnce() async throws {
        try await withTwoDaemons { a, b, environment in
            try await asUser("host", a, environment) { (host: Conversation) async throws in
                let photos = try await host.makeHunt(name: "Photos", stops: [StopPlan(options: "PROOF photo")])
                let places = try await host.makeHunt(name: "Places", stops: [StopPlan()])
                let names = (0 ..< 6).map { String(format: "twoway%02d", $0) }
                try await registerAll(names, at: a)
                var pending: [String] = []
                for name in names {
                    pending.append(try await asLoggedInReturning(name, a) { (client: Conversation) async throws in
                        try await client.join(photos)
                        try await client.join(places)
                        return try await client.checkIn(photos.stops[0], at: photos.places[0], photoOption)["checkin"]["id"].string
                    })
                }
                var logins: [(name: String, address: SocketAddress)] = []
                var requests: [String] = []
                for (index, name) in names.enumerated() {
                    logins.append(("host", index % 2 == 0 ? b : a))
                    requests.append("APPROVE \(pending[index])")
                    logins.append((name, index % 2 == 0 ? a : b))
                    requests.append("CHECKIN \(places.stops[0]) \(places.places[0])")
                }
                try await asCrowd(logins) { crowd in
                    let replies = try await atOnce(crowd, requests)
                    expectNoFailures(replies, "APPROVE and CHECKIN")
                    #expect(replies.allSatisfy { $0.hasPrefix("OK ") }, "\(zip(requests, replies).filter { !$0.1.hasPrefix("OK ") })")
                }
                #expect(try await badgeHolders("first-find", environment) == names)
                #expect(try await badgeHolders("finisher", environment) == names)
                let logged = try await environment.pool.query("""
                    SELECT count(*) AS n FROM hunt_changes WHERE kind = 'badge' AND payload->>'id' = 'first-find'
                    """)[0].int("n") as Int
                #expect(logged == names.count, "one badge event per first-find awarded")
            }
        }
    }

    @Test("a hunt with fewer than 5 players has no pathfinder; the fifth player's hunt does; REJECT takes it back; LEAVE keeps the firsts and takes the completion's")
    func pathfinderNeedsFivePlayers() async throws {
        try await withDatabaseServer { address, environment in
            try await asUser("host", address, environment) { (host: Conversation) async throws in
                let small = try await host.makeHunt(name: "Small", stops: [StopPlan()])
                let large = try await host.makeHunt(name: "Large", stops: [StopPlan()])
                let names = ["ann", "ben", "cat", "dan", "eve"]
                try await registerAll(names, at: address)
                try await asLoggedIn(names, address) { players in
                    for player in players.prefix(4) { try await player.join(small) }
                    for player in players { try await player.join(large) }
                    try await players[0].checkIn(small.stops[0], at: small.places[0])
                    // One stop each: every find completes its hunt.
                    #expect(try await players[0].badgeIDs() == ["first-find", "finisher"])
                    try await players[1].checkIn(large.stops[0], at: large.places[0])
                    #expect(try await players[1].badgeIDs() == ["first-find", "pathfinder", "finisher"])
                    try await players[2].checkIn(large.stops[0], at: large.places[0])
                    #expect(try await players[2].badgeIDs() == ["first-find", "finisher"])
                    // The pathfinder's check-in rejected: the badge goes (and is not passed on).
                    let pathfinding = try await environment.pool.query("""
                        SELECT checkin_id FROM user_badges WHERE badge = 'pathfinder'
                        """)[0].string("checkin_id") as String
                    _ = try await host.ok("REJECT \(pathfinding)")
                    #expect(try await players[1].badgeIDs() == [])
                    #expect(try await badgeHolders("pathfinder", environment) == [])
                    // LEAVE takes points back and the completion with its badge; a first stays.
                    _ = try await players[2].ok("LEAVE \(large.id)")
                    #expect(try await players[2].badgeIDs() == ["first-find"])
                }
            }
        }
    }

    @Test("watchers of a hunt on two daemons hear the same badge events, after the find that earned them, as BADGES shows them")
    func watchEventsOnTwoDaemons() async throws {
        try await withTwoDaemons { a, b, environment in
            try await asUser("host", a, environment) { (host: Conversation) async throws in
                let hunt = try await host.makeHunt("PUBLIC BADGE Solo", name: "Solo", stops: [StopPlan()])
                try await asUser("amy", a, environment) { (amy: Conversation) async throws in
                    try await amy.join(hunt)
                    try await asUser("bob", b, environment) { (bob: Conversation) async throws in
                        try await bob.join(hunt)
                        // One watcher on each daemon (the check-in is written through the first).
                        let told = try await asLoggedInReturning("host", a) { (hostA: Conversation) async throws in
                            let watchers = [
                                HuntWatcher(connection: bob, watch: try await bob.watchHunt(hunt.id)),
                                HuntWatcher(connection: hostA, watch: try await hostA.watchHunt(hunt.id)),
                            ]
                            try await amy.checkIn(hunt.stops[0], at: hunt.places[0])
                            let marker = try await host.mark(hunt.id)
                            var seen: [[String]] = []
                            for watcher in watchers {
                                let events = try await watcher.connection.huntEvents(before: marker)
                                let types = events.map(eventType)
                                let badges = events.filter { eventType($0) == "badge" }
                                #expect(try badges.map { "\(try $0["player"].string) \(try $0["badge"]["id"].string)" }
                                    == ["amy first-find", "amy finisher", "amy hunt:\(hunt.id)"])
                                #expect(badges.allSatisfy { (try? $0["watch"].string) == watcher.watch })
                                let firstBadge = try #require(types.firstIndex(of: "badge"))
                                #expect(types.firstIndex(of: "found").map { $0 < firstBadge } == true, "\(types)")
                                seen.append(badges.map { canonicalJSON($0["badge"]) })
                            }
                            #expect(seen[0] == seen[1], "both daemons tell the same badges")
                            // The events' badges are BADGES' own.
                            let listed = try await host.ok("BADGES amy")["badges"].array.map(canonicalJSON)
                            #expect(seen[0] == listed)
                            return seen[0]
                        }
                        #expect(told.count == 3)
                    }
                }
            }
        }
    }

    @Test("a daemon restarted on the same database lists the same BADGES and PROFILE counts", arguments: DaemonRestart.allCases)
    func restartKeepsBadges(restart: DaemonRestart) async throws {
        try await TestEnvironment.make(prefix: "badgerestart").use { environment in
            let before = try await HuntRecoveryTests.withDaemon(restart, environment, fresh: false) { address in
                try await converseReturning(address) { (host: Conversation) async throws in
                    try await host.register("host")
                    let hunt = try await host.makeHunt("PUBLIC BADGE Kept", stops: [StopPlan()])
                    return try await converseReturning(address) { (amy: Conversation) async throws in
                        try await amy.register("amy")
                        try await amy.join(hunt)
                        try await amy.checkIn(hunt.stops[0], at: hunt.places[0])
                        return [try await amy.call("BADGES"), try await amy.call("PROFILE")]
                    }
                }
            }
            #expect(before[0].contains("hunt:"))
            let after = try await HuntRecoveryTests.withDaemon(restart, environment, fresh: true) { address in
                try await converseReturning(address) { (amy: Conversation) async throws in
                    _ = try await amy.ok("LOGIN amy password1")
                    return [try await amy.call("BADGES"), try await amy.call("PROFILE")]
                }
            }
            #expect(after == before)
        }
    }
}
