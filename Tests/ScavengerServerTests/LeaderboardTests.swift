import Foundation
import ScavengerTestSupport
import Synchronization
import Testing

/// Counts the tasks that have reached a point (the racers of the concurrency test).
final class Arrivals: Sendable {
    private let count = Atomic<Int>(0)

    func arrive() {
        _ = count.add(1, ordering: .relaxed)
    }

    var value: Int { count.load(ordering: .relaxed) }
}

/// Records an issue unless `entries`, a whole leaderboard in order, carry competition ranks:
/// each entry's rank is its place, unless it ties the entry before it (the same points, and the
/// same `at`) and shares that entry's rank.
func expectCompetitionRanks(_ entries: [JSONObject], sourceLocation: SourceLocation = #_sourceLocation) {
    for (index, entry) in entries.enumerated() {
        let rank = entry["rank"].int
        if index > 0, rank == entries[index - 1]["rank"].int {
            let previous = entries[index - 1]
            #expect(entry["points"].int == previous["points"].int, "a shared rank at \(index + 1)", sourceLocation: sourceLocation)
            #expect((try? entry["at"].string) == (try? previous["at"].string), "a shared rank at \(index + 1)", sourceLocation: sourceLocation)
        } else {
            #expect(rank == index + 1, "entry \(index + 1) has rank \(rank.map { "\($0)" } ?? "none")", sourceLocation: sourceLocation)
        }
    }
}

// The time limit only guards against a hang, and it counts the wait for a TestEnvironment.
@Suite("LEADERBOARD over TCP with PostgreSQL (protocol 1.2)", .timeLimit(.minutes(10)))
struct LeaderboardTests {
    @Test("the order: points descending, then the moment they were reached, then name; players at 0 share the last rank, by name, at null")
    func order() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "zoe", "amy", "mia", "bob", "yan", "bea"], address, environment) { (users: [Conversation]) async throws in
                let host = users[0]
                let (zoe, amy, mia, bob) = (users[1], users[2], users[3], users[4])
                let hunt = try await host.makeHunt(stops: [StopPlan(points: 10), StopPlan(north: 150, points: 20), StopPlan(north: 300, points: 10)])
                for player in users.dropFirst() { try await player.join(hunt) }

                // Nobody has points: everyone shares rank 1, listed by name.
                var entries = try await host.leaderboard(hunt.id)
                #expect(try players(entries) == ["amy", "bea", "bob", "mia", "yan", "zoe"])
                #expect(entries.allSatisfy { $0["rank"].int == 1 && $0["points"].int == 0 && $0["found"].int == 0 && $0["at"].isNull })

                // Each check-in answers the player's standing after it.
                var scores: [JSONObject] = []
                scores.append(try await zoe.checkIn(hunt.stops[0], at: hunt.places[0])["score"])
                scores.append(try await amy.checkIn(hunt.stops[2], at: hunt.places[2])["score"])
                scores.append(try await mia.checkIn(hunt.stops[1], at: hunt.places[1])["score"])
                scores.append(try await bob.checkIn(hunt.stops[0], at: hunt.places[0])["score"])
                scores.append(try await bob.checkIn(hunt.stops[2], at: hunt.places[2])["score"])
                #expect(scores.map { $0["points"].int } == [10, 10, 20, 10, 20])
                #expect(scores.map { $0["found"].int } == [1, 1, 1, 1, 2])
                #expect(scores.map { $0["rank"].int } == [1, 2, 1, 4, 2])

                // Equal points reached at different moments never share a rank.
                entries = try await host.leaderboard(hunt.id)
                #expect(try players(entries) == ["mia", "bob", "zoe", "amy", "bea", "yan"])
                #expect(entries.map { $0["rank"].int } == [1, 2, 3, 4, 5, 5])
                #expect(entries.map { $0["points"].int } == [20, 20, 10, 10, 0, 0])
                #expect(entries.map { $0["found"].int } == [1, 2, 1, 1, 0, 0])
                try #require(entries.count == 6)
                #expect(entries[4]["at"].isNull && entries[5]["at"].isNull)
                let times = try entries.prefix(4).map { try parseTime($0["at"]) }
                #expect(times[0] <= times[1] && times[2] <= times[3])

                // The same from anyone, on pages of any size, and in each player's HUNT.
                #expect(try players(await host.leaderboard(hunt.id, limit: 4)) == players(entries))
                #expect(try players(await converseReturning(address) { try await $0.leaderboard(hunt.id, limit: 1) }) == players(entries))
                for (player, name) in zip(users.dropFirst(), ["zoe", "amy", "mia", "bob", "yan", "bea"]) {
                    let me = try await player.hunt(hunt.id)["me"]
                    let entry = try #require(try entries.first { try $0["player"].string == name })
                    #expect(me["points"].int == entry["points"].int && me["rank"].int == entry["rank"].int, "\(name)")
                    #expect(me["found"].array.count == entry["found"].int, "\(name)")
                }
            }
        }
    }

    @Test("LEADERBOARD: readable by whoever may read the hunt")
    func readers() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "player", "stranger"], address, environment) { (users: [Conversation]) async throws in
                let (host, player, stranger) = (users[0], users[1], users[2])
                let open = try await host.makeHunt("PUBLIC", name: "open", stops: [StopPlan()])
                let closed = try await host.makeHunt("", name: "closed", stops: [StopPlan()])
                try await player.join(open)
                try await player.join(closed)
                #expect(try players(await stranger.leaderboard(open.id)) == ["player"])
                #expect(try players(await converseReturning(address) { try await $0.leaderboard(open.id) }) == ["player"])
                #expect(try players(await host.leaderboard(closed.id)) == ["player"])
                #expect(try players(await player.leaderboard(closed.id)) == ["player"])
                expectError(try await stranger.call("LEADERBOARD \(closed.id)"), "NOT_FOUND")
                expectError(try await converseReturning(address) { try await $0.call("LEADERBOARD \(closed.id)") }, "NOT_FOUND")
                let pin = try await host.ok("POST \(huntOrigin) hello")["pin"]["id"].string
                expectError(try await host.call("LEADERBOARD \(pin)"), "NOT_FOUND")
            }
        }
    }

    /// The scoring players of the AROUND test, best first (p10 has 100 points … p01 10), then
    /// the two at 0 points.
    static let aroundOrder = (1 ... 10).reversed().map { "p" + ($0 < 10 ? "0" : "") + String($0) } + ["z01", "z02"]

    @Test("AROUND: the page holding the caller's entry, with up to LIMIT/2 entries above it; the first page for a caller without one", arguments: [
        ("p10", ["p10", "p09", "p08", "p07"]),
        ("p09", ["p10", "p09", "p08", "p07"]),
        ("p05", ["p07", "p06", "p05", "p04"]),
        ("p01", ["p03", "p02", "p01", "z01"]),
        ("z02", ["p01", "z01", "z02"]),
        ("host", ["p10", "p09", "p08", "p07"]),
        ("stranger", ["p10", "p09", "p08", "p07"]),
    ])
    func around(caller: String, expected: [String]) async throws {
        try await withDatabaseServer { address, environment in
            let names = ["host", "stranger"] + Self.aroundOrder
            try await asUsers(names, address, environment) { (users: [Conversation]) async throws in
                let host = users[0]
                let client = try #require(zip(names, users).first { $0.0 == caller }?.1)
                let hunt = try await host.makeHunt(stops: (1 ... 10).map { StopPlan(north: Double($0) * 80, points: $0 * 10) })
                for (name, player) in zip(names, users).dropFirst(2) {
                    try await player.join(hunt)
                    if name.hasPrefix("p"), let index = Int(name.dropFirst()) {
                        _ = try await player.checkIn(hunt.stops[index - 1], at: hunt.places[index - 1])
                    }
                }
                let page = try await client.ok("LEADERBOARD \(hunt.id) AROUND LIMIT 4")
                let entries = page["entries"].array
                #expect(try players(entries) == expected)
                let ranks = try entries.map { entry in
                    let name = try entry["player"].string
                    return (name, entry["rank"].int)
                }
                for (name, rank) in ranks {
                    let place = Self.aroundOrder.firstIndex(of: name).map { min($0 + 1, 11) }
                    #expect(rank == place, "\(name)")
                }
                // Its next page carries on right after it.
                let last = try #require(Self.aroundOrder.firstIndex(of: expected.last ?? ""))
                let rest = Array(Self.aroundOrder[(last + 1)...].prefix(4))
                if rest.isEmpty {
                    #expect(page["next"].isNull)
                } else {
                    let cursor = try page["next"].string
                    let next = try await client.ok("LEADERBOARD \(hunt.id) LIMIT 4 CURSOR \(quoted(cursor))")
                    #expect(try players(next["entries"].array) == rest)
                }
            }
        }
    }

    @Test("LIMIT and CURSOR: following next to the end lists every player exactly once, in order, at any page size")
    func paging() async throws {
        try await withDatabaseServer { address, environment in
            // Names in no particular order, so the order by points and time is not the order by name.
            let names = (0 ..< 25).map { "player\(($0 * 7) % 25)" }
            try await asUsers(["host"] + names, address, environment) { (users: [Conversation]) async throws in
                let host = users[0]
                let hunt = try await host.makeHunt(stops: [StopPlan(points: 10), StopPlan(north: 100, points: 20), StopPlan(north: 200, points: 30)])
                for player in users.dropFirst() { try await player.join(hunt) }
                // Every fifth player scores nothing; the others 10, 20, 30 (in two check-ins) or 30 (in one).
                var reached: [String: (points: Int, moment: Int)] = [:]
                var moment = 0
                for (index, (name, player)) in zip(names, users.dropFirst()).enumerated() {
                    let stops: [Int] = [[], [0], [1], [0, 1], [2]][index % 5]
                    for stop in stops {
                        _ = try await player.checkIn(hunt.stops[stop], at: hunt.places[stop])
                        moment += 1
                        reached[name] = ((reached[name]?.points ?? 0) + [10, 20, 30][stop], moment)
                    }
                }
                let expected = names.sorted { a, b in
                    let (x, y) = (reached[a] ?? (0, 0), reached[b] ?? (0, 0))
                    if x.points != y.points { return x.points > y.points }
                    if x.points > 0 && x.moment != y.moment { return x.moment < y.moment }
                    return a < b
                }
                let scoring = reached.count
                let expectedRanks = expected.indices.map { $0 < scoring ? $0 + 1 : scoring + 1 }
                for limit in [1, 2, 7, 25, 40, nil] {
                    let label = "LIMIT " + (limit.map { "\($0)" } ?? "default")
                    let entries = try await host.leaderboard(hunt.id, limit: limit)
                    #expect(try players(entries) == expected, "\(label)")
                    #expect(entries.map { $0["rank"].int } == expectedRanks, "\(label)")
                    #expect(entries.map { $0["points"].int } == expected.map { reached[$0]?.points ?? 0 }, "\(label)")
                }
            }
        }
    }

    @Test("LEAVE takes the player's points out: the leaderboard, found_by and the players count")
    func leaveRemovesPoints() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "alice", "bob", "carl"], address, environment) { (users: [Conversation]) async throws in
                let (host, alice, bob, carl) = (users[0], users[1], users[2], users[3])
                let hunt = try await host.makeHunt(stops: [StopPlan(points: 10), StopPlan(north: 150, points: 20)])
                for player in [alice, bob, carl] { try await player.join(hunt) }
                _ = try await alice.checkIn(hunt.stops[0], at: hunt.places[0])
                _ = try await alice.checkIn(hunt.stops[1], at: hunt.places[1])
                _ = try await bob.checkIn(hunt.stops[1], at: hunt.places[1])
                _ = try await carl.checkIn(hunt.stops[0], at: hunt.places[0])
                var entries = try await host.leaderboard(hunt.id)
                #expect(try players(entries) == ["alice", "bob", "carl"])
                #expect(entries.map { $0["points"].int } == [30, 20, 10])
                #expect(try await host.hunt(hunt.id)["stops"].array.map { $0["found_by"].int } == [2, 2])

                _ = try await alice.ok("LEAVE \(hunt.id)")
                entries = try await host.leaderboard(hunt.id)
                #expect(try players(entries) == ["bob", "carl"])
                #expect(entries.map { $0["rank"].int } == [1, 2])
                let seen = try await host.hunt(hunt.id)
                #expect(seen["stops"].array.map { $0["found_by"].int } == [1, 1])
                #expect(seen["hunt"]["players"].int == 2)
                #expect(try await bob.hunt(hunt.id)["me"]["rank"].int == 1)
            }
        }
    }

    @Test("REJECT of an accepted check-in takes its points out; the player may check in there again")
    func rejectAccepted() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "alice", "bob"], address, environment) { (users: [Conversation]) async throws in
                let (host, alice, bob) = (users[0], users[1], users[2])
                let hunt = try await host.makeHunt(stops: [StopPlan(points: 10), StopPlan(north: 150, points: 20)])
                for player in [alice, bob] { try await player.join(hunt) }
                _ = try await alice.checkIn(hunt.stops[0], at: hunt.places[0])
                let first = try await bob.checkIn(hunt.stops[0], at: hunt.places[0])["checkin"]
                let second = try await bob.checkIn(hunt.stops[1], at: hunt.places[1])["checkin"]
                #expect(try players(await host.leaderboard(hunt.id)) == ["bob", "alice"])

                let rejected = try await host.ok("REJECT \(second["id"].string) NOTE \(quoted("not at the arch"))")["checkin"]
                #expect(try rejected["status"].string == "rejected")
                var entries = try await host.leaderboard(hunt.id)
                #expect(try players(entries) == ["alice", "bob"])
                #expect(entries.map { $0["points"].int } == [10, 10])
                #expect(entries.map { $0["found"].int } == [1, 1])
                #expect(entries.map { $0["rank"].int } == [1, 2])
                try #require(entries.count == 2)
                #expect(try parseTime(entries[1]["at"]) == parseTime(first["at"]), "bob reached 10 points with his first check-in")
                #expect(try await host.hunt(hunt.id)["stops"].array.map { $0["found_by"].int } == [2, 0])
                #expect(try await bob.hunt(hunt.id)["me"]["points"].int == 10)

                let again = try await bob.checkIn(hunt.stops[1], at: hunt.places[1])
                #expect(try again["checkin"]["status"].string == "accepted")
                #expect(again["score"]["points"].int == 30 && again["score"]["rank"].int == 1)
                entries = try await host.leaderboard(hunt.id)
                #expect(try players(entries) == ["bob", "alice"])
                #expect(entries.map { $0["points"].int } == [30, 10])
            }
        }
    }

    @Test("a late approval counts from the approval: a pending check-in made first ranks after one accepted meanwhile")
    func lateApproval() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "amy", "zed"], address, environment) { (users: [Conversation]) async throws in
                let (host, amy, zed) = (users[0], users[1], users[2])
                let hunt = try await host.makeHunt(stops: [StopPlan(points: 10, options: "PROOF photo"), StopPlan(north: 150, points: 10)])
                for player in [amy, zed] { try await player.join(hunt) }
                let pending = try await amy.checkIn(hunt.stops[0], at: hunt.places[0], photoOption)["checkin"]["id"].string
                _ = try await zed.checkIn(hunt.stops[1], at: hunt.places[1])
                var entries = try await host.leaderboard(hunt.id)
                #expect(try players(entries) == ["zed", "amy"])
                #expect(entries.map { $0["points"].int } == [10, 0])
                _ = try await host.ok("APPROVE \(pending)")
                entries = try await host.leaderboard(hunt.id)
                #expect(try players(entries) == ["zed", "amy"])
                #expect(entries.map { $0["points"].int } == [10, 10])
                #expect(entries.map { $0["rank"].int } == [1, 2])
                try #require(entries.count == 2)
                #expect(try parseTime(entries[0]["at"]) <= parseTime(entries[1]["at"]))
            }
        }
    }

    @Test("100 players check in at one stop at once over 100 connections: found_by is 100 and every score is exact")
    func hundredAtOnce() async throws {
        try await withDatabaseServer { address, environment in
            try await asUser("host", address, environment) { (host: Conversation) async throws in
                let hunt = try await host.makeHunt(stops: [StopPlan(radius: 50, points: 25)])
                let (stop, place) = (hunt.stops[0], hunt.places[0].moved(north: 5))
                let names = (0 ..< 100).map { "racer\($0)" }
                // Registering and joining one by one: what runs at once is the check-ins.
                var tokens: [String] = []
                for name in names {
                    tokens.append(try await converseReturning(address) { (client: Conversation) async throws in
                        let token = try await client.register(name)
                        try await client.join(hunt)
                        return token
                    })
                }
                let arrivals = Arrivals()
                let gate = Gate()
                let replies = try await withThrowingTaskGroup(of: (String, String).self) { group in
                    for (index, (name, token)) in zip(names, tokens).enumerated() {
                        group.addTask {
                            // From four local addresses: 100 connections are more than one address may hold.
                            try await converseReturning(address, from: "127.0.0.\(10 + index % 4)") { (client: Conversation) async throws in
                                _ = try await client.ok("AUTH \(token)")
                                arrivals.arrive()
                                await gate.wait()
                                return (name, try await client.checkInReply(stop, at: place))
                            }
                        }
                    }
                    try await eventually("all 100 players are connected and logged in", timeout: .seconds(300)) { arrivals.value == names.count }
                    gate.open()
                    var replies: [(String, String)] = []
                    for try await reply in group { replies.append(reply) }
                    return replies
                }

                #expect(replies.count == 100)
                for (name, line) in replies {
                    let reply = try JSONObject(okLine: line)
                    #expect(try reply["checkin"]["status"].string == "accepted", "\(name)")
                    #expect(try reply["checkin"]["player"].string == name)
                    #expect(reply["checkin"]["points"].int == 25, "\(name)")
                    #expect(reply["score"]["points"].int == 25 && reply["score"]["found"].int == 1, "\(name)")
                    #expect((1 ... 100).contains(reply["score"]["rank"].int ?? 0), "\(name)")
                }
                let seen = try await host.hunt(hunt.id)
                #expect(seen["stops"][0]["found_by"].int == 100)
                #expect(seen["hunt"]["players"].int == 100)

                let entries = try await host.leaderboard(hunt.id)
                #expect(entries.count == 100)
                #expect(try Set(players(entries)) == Set(names))
                #expect(entries.allSatisfy { $0["points"].int == 25 && $0["found"].int == 1 && !$0["at"].isNull })
                expectCompetitionRanks(entries)
                let times = try entries.map { try parseTime($0["at"]) }
                #expect(zip(times, times.dropFirst()).allSatisfy { $0 <= $1 }, "entries in the order their points were reached")

                // Each player's own standing agrees with the leaderboard.
                let ranks = Dictionary(try entries.map { (try $0["player"].string, $0["rank"].int ?? 0) }, uniquingKeysWith: { first, _ in first })
                for (name, token) in zip(names, tokens) {
                    let me = try await converseReturning(address) { (client: Conversation) async throws in
                        _ = try await client.ok("AUTH \(token)")
                        return try await client.hunt(hunt.id)["me"]
                    }
                    #expect(me["points"].int == 25 && me["rank"].int == ranks[name], "\(name)")
                    #expect(try me["found"].array.map { try $0.string } == [stop], "\(name)")
                }
            }
        }
    }
}
