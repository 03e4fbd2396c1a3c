import Foundation
import NIOCore
import ScavengerCore
import ScavengerTestSupport
import Synchronization
import Testing

// A crowd arriving at once (protocol 1.3): players on two daemons, every connection opened and
// logged in first, then every request released by one gate. The tests assert on every reply
// and on the final state, never on how long anything took.

/// Logs each of `logins` (a name and the daemon to use) in on a connection of its own and keeps
/// them all open for `body`, in the same order.
func asCrowd(_ logins: [(name: String, address: SocketAddress)], _ body: ([Conversation]) async throws -> Void) async throws {
    try await openCrowd(logins[...], opened: [], body)
}

private func openCrowd(
    _ logins: ArraySlice<(name: String, address: SocketAddress)>, opened: [Conversation], _ body: ([Conversation]) async throws -> Void
) async throws {
    guard let login = logins.first else { return try await body(opened) }
    try await converse(login.address) { (client: Conversation) async throws in
        _ = try await client.ok("LOGIN \(login.name) password1")
        try await openCrowd(logins.dropFirst(), opened: opened + [client], body)
    }
}

/// Registers `names` (password `password1`), one connection each, one after the other.
func registerAll(_ names: [String], at address: SocketAddress) async throws {
    for name in names {
        try await converse(address) { (client: Conversation) async throws in try await client.register(name) }
    }
}

/// Sends `requests[i]` on `connections[i]`, all released by one gate once every task is
/// waiting at it, and returns each reply in the same order.
func atOnce(_ connections: [Conversation], _ requests: [String]) async throws -> [String] {
    precondition(connections.count == requests.count)
    let gate = Gate()
    let ready = Arrivals()
    let boxes = connections.map { UncheckedBox($0) }
    return try await withThrowingTaskGroup(of: (Int, String).self) { group in
        for (index, request) in requests.enumerated() {
            let box = boxes[index]
            group.addTask {
                ready.arrive()
                await gate.wait()
                return (index, try await box.value.call(request))
            }
        }
        try await eventually("every request is waiting at the gate") { ready.value == requests.count }
        gate.open()
        var replies = [String](repeating: "", count: requests.count)
        for try await (index, reply) in group { replies[index] = reply }
        return replies
    }
}

/// A value handed to one task that alone uses it (a connection, each to its own task).
struct UncheckedBox<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}

/// Records an issue for every reply that is `ERR INTERNAL` or `ERR UNAVAILABLE` (the database is
/// up in these tests: neither may come from others arriving at the same moment).
func expectNoFailures(_ replies: [String], _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
    for reply in replies where reply.hasPrefix("ERR INTERNAL") || reply.hasPrefix("ERR UNAVAILABLE") {
        Issue.record("\(what): \(reply)", sourceLocation: sourceLocation)
    }
}

// The time limit only guards against a hang.
@Suite("A crowd at once, on two daemons (protocol 1.3)", .timeLimit(.minutes(10)))
struct CrowdTests {
    @Test("30 players send JOIN with one code at the same instant, half on each daemon: every one OK, 30 players on both daemons")
    func joinsAtOnce() async throws {
        try await withTwoDaemons { a, b, environment in
            try await asUser("host", a, environment) { (host: Conversation) async throws in
                let hunt = try await host.makeHunt(stops: [StopPlan(), StopPlan(north: 100)])
                let names = (0 ..< 30).map { String(format: "joiner%02d", $0) }
                try await registerAll(names, at: a)
                try await asCrowd(names.enumerated().map { ($0.element, $0.offset % 2 == 0 ? a : b) }) { crowd in
                    let replies = try await atOnce(crowd, names.map { _ in "JOIN \(hunt.code)" })
                    expectNoFailures(replies, "JOIN")
                    #expect(replies.allSatisfy { $0.hasPrefix("OK ") }, "\(replies.filter { !$0.hasPrefix("OK ") })")

                    // The same again at once (each is already a player): unchanged, all OK.
                    let again = try await atOnce(crowd, names.map { _ in "JOIN \(hunt.code)" })
                    #expect(again.allSatisfy { $0.hasPrefix("OK ") }, "\(again.filter { !$0.hasPrefix("OK ") })")
                }
                for daemon in [a, b] {
                    try await converse(daemon) { (reader: Conversation) async throws in
                        try await eventually("both daemons list every player") {
                            (try? await reader.leaderboard(hunt.id).count) == names.count
                        }
                        #expect(try await reader.hunt(hunt.id)["hunt"]["players"].int == names.count)
                        #expect(Set(try players(await reader.leaderboard(hunt.id))) == Set(names))
                    }
                }
                let counted = try await environment.pool.query("SELECT count(*) AS n FROM hunt_players WHERE hunt_id = \(hunt.id)")
                #expect(try counted[0].int("n") as Int == names.count)
            }
        }
    }

    @Test("check-ins at two stops, joins, leaves and approvals crossing at one instant on two daemons: no INTERNAL, and every count equals a recount")
    func mixedCrowd() async throws {
        try await withTwoDaemons { a, b, environment in
            try await asUser("host", a, environment) { (host: Conversation) async throws in
                let hunt = try await host.makeHunt(stops: [
                    StopPlan(points: 10), StopPlan(north: 100, points: 20), StopPlan(north: 200, points: 30, options: "PROOF photo"),
                ])
                let checkers = (0 ..< 8).map { String(format: "checker%02d", $0) }
                let photographers = (0 ..< 4).map { String(format: "photo%02d", $0) }
                let joiners = (0 ..< 12).map { String(format: "joiner%02d", $0) }
                let leavers = (0 ..< 4).map { String(format: "leaver%02d", $0) }
                try await registerAll(checkers + photographers + joiners + leavers, at: a)
                // Those already in the hunt: the leavers with a find each (their points leave with them).
                for name in checkers + photographers + leavers {
                    _ = try await asLoggedInReturning(name, a) { (client: Conversation) async throws in
                        try await client.join(hunt)
                        if leavers.contains(name) { try await client.checkIn(hunt.stops[1], at: hunt.places[1]) }
                        if photographers.contains(name) {
                            let pending = try await client.checkIn(hunt.stops[2], at: hunt.places[2], photoOption)
                            #expect(try pending["checkin"]["status"].string == "pending")
                        }
                    }
                }
                let review = try await host.ok("REVIEW \(hunt.id)")["checkins"].array.map { try $0["id"].string }
                try #require(review.count == photographers.count)

                var logins: [(name: String, address: SocketAddress)] = []
                var requests: [String] = []
                for (index, name) in checkers.enumerated() {
                    logins.append((name, index % 2 == 0 ? a : b))
                    let stop = index % 2
                    requests.append("CHECKIN \(hunt.stops[stop]) \(hunt.places[stop])")
                }
                for (index, name) in joiners.enumerated() {
                    logins.append((name, index % 2 == 0 ? b : a))
                    requests.append("JOIN \(hunt.code)")
                }
                for (index, name) in leavers.enumerated() {
                    logins.append((name, index % 2 == 0 ? a : b))
                    requests.append("LEAVE \(hunt.id)")
                }
                for (index, id) in review.enumerated() {
                    logins.append(("host", index % 2 == 0 ? a : b))
                    requests.append(index % 2 == 0 ? "APPROVE \(id) BONUS 5" : "REJECT \(id)")
                }
                try await asCrowd(logins) { crowd in
                    let replies = try await atOnce(crowd, requests)
                    expectNoFailures(replies, "the crowd")
                    #expect(replies.allSatisfy { $0.hasPrefix("OK ") }, "\(zip(requests, replies).filter { !$0.1.hasPrefix("OK ") })")
                }

                // The database agrees with itself: every stored count equals a recount.
                let recount = try await environment.pool.query("""
                    SELECT p.name, p.points, p.found,
                        (SELECT coalesce(sum(c.points), 0) FROM checkins c
                         WHERE c.hunt_id = p.hunt_id AND c.user_id = p.user_id AND c.status = 'accepted') AS counted_points,
                        (SELECT count(*) FROM checkins c
                         WHERE c.hunt_id = p.hunt_id AND c.user_id = p.user_id AND c.status = 'accepted') AS counted_found
                    FROM hunt_players p WHERE p.hunt_id = \(hunt.id) ORDER BY p.name
                    """)
                var expected: [String: Int] = [:]
                for row in recount {
                    let name: String = try row.string("name")
                    #expect(try row.int("points") as Int == row.int("counted_points") as Int, "\(name)'s points")
                    #expect(try row.int("found") as Int == row.int("counted_found") as Int, "\(name)'s finds")
                    expected[name] = try row.int("points")
                }
                #expect(Set(expected.keys) == Set(checkers + photographers + joiners))
                let stops = try await environment.pool.query("""
                    SELECT s.id, s.found_by, (SELECT count(*) FROM checkins c WHERE c.stop_id = s.id AND c.status = 'accepted') AS counted
                    FROM hunt_stops s WHERE s.hunt_id = \(hunt.id)
                    """)
                for row in stops { #expect(try row.int("found_by") as Int == row.int("counted") as Int, "found_by of a stop") }
                let huntRow = try await environment.pool.query("SELECT player_count FROM hunts WHERE id = \(hunt.id)")
                #expect(try huntRow[0].int("player_count") as Int == expected.count)

                // Both daemons' leaderboards equal the database's.
                for daemon in [a, b] {
                    try await converse(daemon) { (reader: Conversation) async throws in
                        try await eventually("the daemon's leaderboard matches the database") {
                            guard let entries = try? await reader.leaderboard(hunt.id) else { return false }
                            var seen: [String: Int] = [:]
                            for entry in entries { seen[(try? entry["player"].string) ?? ""] = entry["points"].int ?? -1 }
                            return seen == expected
                        }
                    }
                }
            }
        }
    }

    @Test("24 wrong codes for one code stop at one instant from 24 connections of one player, on two daemons: exactly 5 judged, the rest RATE_LIMITED")
    func wrongCodesAtOnce() async throws {
        try await withTwoDaemons { a, b, environment in
            try await asUser("host", a, environment) { (host: Conversation) async throws in
                let hunt = try await host.makeHunt(stops: [StopPlan(options: "PROOF code CODE BRIDGE-77")])
                try await registerAll(["guesser"], at: a)
                _ = try await asLoggedInReturning("guesser", a) { (client: Conversation) async throws in try await client.join(hunt) }
                let logins = (0 ..< 24).map { (name: "guesser", address: $0 % 2 == 0 ? a : b) }
                try await asCrowd(logins) { crowd in
                    let replies = try await atOnce(crowd, crowd.indices.map { "CHECKIN \(hunt.stops[0]) \(hunt.places[0]) CODE WRONG-\($0)" })
                    expectNoFailures(replies, "CHECKIN")
                    let judged = replies.filter { $0.hasPrefix("ERR FORBIDDEN") }
                    let limited = replies.filter { $0.hasPrefix("ERR RATE_LIMITED") }
                    #expect(judged.count == HuntRules().codeGuesses, "\(judged.count) wrong codes judged")
                    #expect(limited.count == replies.count - HuntRules().codeGuesses, "\(replies)")
                    // Locked out: even the right code waits now.
                    expectError(try await crowd[0].call("CHECKIN \(hunt.stops[0]) \(hunt.places[0]) CODE BRIDGE-77"), "RATE_LIMITED")
                }
                let guesses = try await environment.pool.query("SELECT count(*) AS n FROM code_guesses")
                #expect(try guesses[0].int("n") as Int == HuntRules().codeGuesses)
            }
        }
    }

    @Test("a right code after wrong ones is not counted: 4 wrong, the right one, then one more wrong is still judged")
    func rightCodeNotCounted() async throws {
        try await withDatabaseServer { address, environment in
            try await asUser("host", address, environment) { (host: Conversation) async throws in
                let hunt = try await host.makeHunt(stops: [StopPlan(options: "PROOF code CODE ONE-1"), StopPlan(north: 10, options: "PROOF code CODE TWO-2")])
                try await asUser("player", address, environment) { (player: Conversation) async throws in
                    try await player.join(hunt)
                    for attempt in 0 ..< 4 {
                        expectError(try await player.checkInReply(hunt.stops[0], at: hunt.places[0], "CODE NOPE-\(attempt)"), "FORBIDDEN")
                    }
                    _ = try await player.checkIn(hunt.stops[0], at: hunt.places[0], "CODE ONE-1")
                    let counted = try await environment.pool.query("SELECT count(*) AS n FROM code_guesses")
                    #expect(try counted[0].int("n") as Int == 4)
                    // Another stop has a count of its own.
                    expectError(try await player.checkInReply(hunt.stops[1], at: hunt.places[1], "CODE NOPE"), "FORBIDDEN")
                    _ = try await player.checkIn(hunt.stops[1], at: hunt.places[1], "CODE TWO-2")
                }
            }
        }
    }

    @Test("JOINs by unknown codes at one instant from one address: no more judged than the address's limit")
    func joinGuessesAtOnce() async throws {
        let limit = 3
        try await withDatabaseServer(configure: { $0.joinFailureRate = RateLimit(count: limit, seconds: 600) }) { address, environment in
            let names = (0 ..< 12).map { String(format: "prober%02d", $0) }
            try await registerAll(names, at: address)
            try await asCrowd(names.map { ($0, address) }) { crowd in
                let replies = try await atOnce(crowd, crowd.indices.map { "JOIN ZZZZ\(["22", "23", "24", "25", "26", "27", "28", "29", "32", "33", "34", "35"][$0])" })
                expectNoFailures(replies, "JOIN")
                #expect(replies.filter { $0.hasPrefix("ERR NOT_FOUND") }.count == limit, "\(replies)")
                #expect(replies.filter { $0.hasPrefix("ERR RATE_LIMITED") }.count == names.count - limit, "\(replies)")
            }
        }
    }

    @Test("a class behind one address types the right code at once: every JOIN is OK however small the address's limit on unknown codes")
    func classJoinsFromOneAddress() async throws {
        try await withDatabaseServer(configure: { $0.joinFailureRate = RateLimit(count: 2, seconds: 600) }) { address, environment in
            try await asUser("teacher", address, environment) { (teacher: Conversation) async throws in
                let hunt = try await teacher.makeHunt("", stops: [StopPlan()])
                let names = (0 ..< 30).map { String(format: "pupil%02d", $0) }
                try await registerAll(names, at: address)
                try await asCrowd(names.map { ($0, address) }) { crowd in
                    // Two mistypes spend the address's two tokens: past them even the right code waits.
                    expectError(try await crowd[0].call("JOIN ZZZZ22"), "NOT_FOUND")
                    expectError(try await crowd[1].call("JOIN ZZZZ23"), "NOT_FOUND")
                    expectError(try await crowd[2].call("JOIN \(hunt.code)"), "RATE_LIMITED")
                }
            }
        }
        try await withDatabaseServer(configure: { $0.joinFailureRate = RateLimit(count: 2, seconds: 600) }) { address, environment in
            try await asUser("teacher", address, environment) { (teacher: Conversation) async throws in
                let hunt = try await teacher.makeHunt("", stops: [StopPlan()])
                let names = (0 ..< 30).map { String(format: "pupil%02d", $0) }
                try await registerAll(names, at: address)
                try await asCrowd(names.map { ($0, address) }) { crowd in
                    let replies = try await atOnce(crowd, crowd.indices.map { $0 % 2 == 0 ? "JOIN \(hunt.code.lowercased())" : "JOIN \(hunt.code)" })
                    expectNoFailures(replies, "JOIN")
                    #expect(replies.allSatisfy { $0.hasPrefix("OK ") }, "\(replies.filter { !$0.hasPrefix("OK ") })")
                }
            }
        }
    }

    @Test("two check-ins of one player sent at one instant, in two hunts 50 km apart, on two daemons: judged one after the other, so one is flagged")
    func travelAtOnce() async throws {
        try await withTwoDaemons { a, b, environment in
            try await asUser("host", a, environment) { (host: Conversation) async throws in
                let near = try await host.makeHunt(name: "near", stops: [StopPlan()])
                let far = try await host.makeHunt(name: "far", stops: [StopPlan(north: 50_000)])
                try await registerAll(["runner"], at: a)
                _ = try await asLoggedInReturning("runner", a) { (client: Conversation) async throws in
                    try await client.join(near)
                    try await client.join(far)
                }
                try await asCrowd([("runner", a), ("runner", b)]) { crowd in
                    let replies = try await atOnce(crowd, [
                        "CHECKIN \(near.stops[0]) \(near.places[0])", "CHECKIN \(far.stops[0]) \(far.places[0])",
                    ])
                    expectNoFailures(replies, "CHECKIN")
                    let statuses = try replies.map { try JSONObject(okLine: $0)["checkin"]["status"].string }
                    #expect(statuses.sorted() == ["accepted", "flagged"], "\(replies)")
                }
            }
        }
    }

    @Test("LEADERBOARD and AROUND are answered from memory once the board is kept: with the database gone silent, a player and a stranger still get their pages")
    func leaderboardFromMemory() async throws {
        let (proxied, proxy) = try TestDatabase.proxiedConfiguration(prefix: "boardmemory")
        defer { proxy.stop() }
        var configuration = proxied
        // Only a guard: a read that did wait on the silent database would end here, as UNAVAILABLE.
        configuration.commandTimeout = .seconds(5)
        try await withDatabaseServer(configuration: configuration) { address, environment in
            try await asUsers(["host", "ann", "bob", "cat"], address, environment) { (users: [Conversation]) async throws in
                let (host, ann, bob) = (users[0], users[1], users[2])
                let open = try await host.makeHunt("PUBLIC", name: "open", stops: [StopPlan(points: 10), StopPlan(north: 100, points: 20)])
                let closed = try await host.makeHunt("", name: "closed", stops: [StopPlan(points: 5)])
                try await ann.join(open)
                try await bob.join(open, as: "bobby")
                try await bob.join(closed)
                _ = try await ann.checkIn(open.stops[1], at: open.places[1])
                _ = try await bob.checkIn(open.stops[0], at: open.places[0])
                // Renamed after the board was kept: memory follows the log.
                _ = try await bob.ok("LEADERBOARD \(open.id)")
                _ = try await bob.ok("LEADERBOARD \(closed.id)")
                try await bob.join(open, as: "bob2")
                let expected = try await bob.ok("LEADERBOARD \(open.id) AROUND LIMIT 2")
                #expect(try players(expected["entries"].array) == ["ann", "bob2"])

                proxy.blackhole()
                defer { proxy.resume() }
                #expect(canonicalJSON(try await bob.ok("LEADERBOARD \(open.id) AROUND LIMIT 2")) == canonicalJSON(expected))
                #expect(try players(await ann.ok("LEADERBOARD \(open.id) LIMIT 1")["entries"].array) == ["ann"])
                #expect(try players(await converseReturning(address) { try await $0.ok("LEADERBOARD \(open.id)") }["entries"].array) == ["ann", "bob2"])
                #expect(try players(await bob.ok("LEADERBOARD \(closed.id)")["entries"].array) == ["bob"])
                #expect(try players(await host.ok("LEADERBOARD \(closed.id) AROUND")["entries"].array) == ["bob"])
            }
        }
    }

    @Test("after a flagged jump, the next check-in is judged from the last fix that stands, not from the jump")
    func flaggedJumpIsNoReference() async throws {
        try await withDatabaseServer { address, environment in
            try await asUser("host", address, environment) { (host: Conversation) async throws in
                let home = try await host.makeHunt(name: "home", stops: [StopPlan(), StopPlan(north: 60)])
                let away = try await host.makeHunt(name: "away", stops: [StopPlan(north: 50_000), StopPlan(north: 50_100)])
                try await asUser("jumper", address, environment) { (player: Conversation) async throws in
                    try await player.join(home)
                    try await player.join(away)
                    #expect(try await player.checkIn(home.stops[0], at: home.places[0])["checkin"]["status"].string == "accepted")
                    #expect(try await player.checkIn(away.stops[0], at: away.places[0])["checkin"]["status"].string == "flagged")
                    // 100 m from the jump, but still 50 km from the last fix that stands.
                    #expect(try await player.checkIn(away.stops[1], at: away.places[1])["checkin"]["status"].string == "flagged")
                    // Back near home: judged from home's fix, plausible.
                    #expect(try await player.checkIn(home.stops[1], at: home.places[1])["checkin"]["status"].string == "accepted")
                }
            }
        }
    }
}
