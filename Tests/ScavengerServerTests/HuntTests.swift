import Foundation
import ScavengerCore
import ScavengerTestSupport
import Testing

/// The ids of a `HUNT` reply's stops, in order.
func stopIDs(_ reply: JSONObject) throws -> [String] {
    try reply["stops"].array.map { try $0["id"].string }
}

/// The ids of a `HUNTS` reply's hunts, in order.
func huntIDs(_ reply: JSONObject) throws -> [String] {
    try reply["hunts"].array.map { try $0["id"].string }
}

extension Conversation {
    /// Every hunt `HUNTS options` lists, following `next` page by page.
    func allHunts(_ options: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String] {
        var ids: [String] = []
        var cursor: String?
        for _ in 0 ..< 1000 {
            let page = try await ok(request("HUNTS", options, cursor.map { "CURSOR \(quoted($0))" } ?? ""))
            ids += try huntIDs(page)
            if page["next"].isNull { return ids }
            cursor = try page["next"].string
        }
        Issue.record("HUNTS's pages did not end", sourceLocation: sourceLocation)
        return ids
    }
}

// The time limit only guards against a hang, and it counts the wait for a TestEnvironment.
@Suite("Hunts over TCP with PostgreSQL (protocol 1.2)", .timeLimit(.minutes(10)))
struct HuntTests {
    /// A join code's alphabet: A-Z and 2-9 without I, O, 0 and 1.
    static let codeAlphabet = Set("ABCDEFGHJKLMNPQRSTUVWXYZ23456789")

    // MARK: CREATEHUNT

    @Test("CREATEHUNT answers a scheduled hunt with a join code of 6 characters from A-Z 2-9 without I O 0 1")
    func createHunt() async throws {
        try await withDatabaseServer { address, environment in
            try await asUser("host", address, environment) { (host: Conversation) async throws in
                let hunt = try await host.createHunt("DESCRIPTION \(quoted("Find the bridges.")) ORDERED PUBLIC", name: "Old town")
                let fields: Set = ["id", "name", "description", "host", "state", "starts", "ends", "ordered", "public", "stops", "players", "code"]
                #expect(fields.isSubset(of: hunt.keys), "\(hunt.keys)")
                #expect(try hunt["name"].string == "Old town")
                #expect(try hunt["description"].string == "Find the bridges.")
                #expect(try hunt["host"].string == "host")
                #expect(try hunt["state"].string == "scheduled")
                #expect(hunt["starts"].isNull && hunt["ends"].isNull)
                #expect(hunt["ordered"].bool == true && hunt["public"].bool == true)
                #expect(hunt["stops"].int == 0 && hunt["players"].int == 0)
                let code = try hunt["code"].string
                #expect(code.count == 6 && code.allSatisfy(Self.codeAlphabet.contains), "\(code)")
                // Without options: private, unordered, no description; a code of its own.
                let plain = try await host.createHunt("", name: "Plain")
                #expect(try plain["description"].string == "")
                #expect(plain["ordered"].bool == false && plain["public"].bool == false)
                #expect(try plain["code"].string != code)
                #expect(try plain["id"].string != hunt["id"].string)
                #expect(try await host.allHunts("MINE").count == 2)
            }
        }
    }

    /// The options of a CREATEHUNT that must succeed, and what its hunt must show: `starts` and
    /// `ends` offsets from now in seconds (nil: null).
    struct CreateCase: Sendable, CustomTestStringConvertible {
        let name: String
        let options: String
        let starts: Double?
        let ends: Double?
        var testDescription: String { name }
    }

    @Test("CREATEHUNT takes its options in any order, up to their bounds", arguments: [
        CreateCase(name: "an 80-character name, a 2,000-character description", options: "DESCRIPTION \(String(repeating: "d", count: 2000))",
                   starts: nil, ends: nil),
        CreateCase(name: "STARTS and ENDS", options: "STARTS {3600} ENDS {7200}", starts: 3600, ends: 7200),
        CreateCase(name: "ENDS before STARTS in the line", options: "ENDS {7200} PUBLIC STARTS {3600} ORDERED", starts: 3600, ends: 7200),
        CreateCase(name: "ENDS alone", options: "ENDS {7200}", starts: nil, ends: 7200),
        CreateCase(name: "DURATION 1 s (ends stays null until the start)", options: "DURATION 1 STARTS {3600}", starts: 3600, ends: nil),
        CreateCase(name: "DURATION 30 days", options: "PUBLIC DURATION 2592000", starts: nil, ends: nil),
    ])
    func createHuntOptions(scenario: CreateCase) async throws {
        try await withDatabaseServer { address, environment in
            try await asUser("host", address, environment) { (host: Conversation) async throws in
                var options = scenario.options
                var times: [Double: String] = [:]
                for seconds in [scenario.starts, scenario.ends].compactMap({ $0 }) {
                    times[seconds] = rfc3339(secondsFromNow: seconds)
                    options = options.replacingOccurrences(of: "{\(Int(seconds))}", with: times[seconds]!)
                }
                let name = scenario.options.hasPrefix("DESCRIPTION") ? String(repeating: "n", count: 80) : "Hunt"
                let hunt = try await host.createHunt(options, name: name)
                #expect(try hunt["name"].string == name)
                #expect(try hunt["state"].string == "scheduled")
                if let starts = scenario.starts { #expect(try hunt["starts"].string == times[starts]) } else { #expect(hunt["starts"].isNull) }
                if let ends = scenario.ends { #expect(try hunt["ends"].string == times[ends]) } else { #expect(hunt["ends"].isNull) }
                #expect(hunt["public"].bool == options.contains("PUBLIC"))
                #expect(hunt["ordered"].bool == options.contains("ORDERED"))
                if options.hasPrefix("DESCRIPTION") { #expect(try hunt["description"].string.count == 2000) }
            }
        }
    }

    @Test("CREATEHUNT refuses bad names, descriptions, times and durations, and creates nothing", arguments: [
        #""""#,
        String(repeating: "n", count: 81),
        #""bell\u0007""#,
        "name DESCRIPTION \(String(repeating: "d", count: 2001))",
        "name STARTS {past}",
        "name ENDS {past}",
        "name STARTS {later} ENDS {soon}",
        "name STARTS {soon} ENDS {soon}",
        "name ENDS {later} DURATION 60",
        "name DURATION 0",
        "name DURATION 2592001",
        "name DURATION 1.5",
        "name STARTS tomorrow",
        "name STARTS 2030-01-01",
        "name STARTS",
        "name COLOR red",
    ])
    func createHuntRejects(options: String) async throws {
        try await withDatabaseServer { address, environment in
            try await asUser("host", address, environment) { (host: Conversation) async throws in
                let line = "CREATEHUNT " + options
                    .replacingOccurrences(of: "{past}", with: rfc3339(secondsFromNow: -3600))
                    .replacingOccurrences(of: "{soon}", with: rfc3339(secondsFromNow: 3600))
                    .replacingOccurrences(of: "{later}", with: rfc3339(secondsFromNow: 7200))
                expectError(try await host.call(line), "BAD_ARGUMENT")
                #expect(try await host.allHunts("MINE").isEmpty)
            }
        }
    }

    @Test("every hunt write needs a login", arguments: [
        "CREATEHUNT hunt", "ADDSTOP h 48.85 2.35 50 10 title", "REMOVESTOP s", "JOIN ABCDEF", "LEAVE h", "STARTHUNT h", "EXTEND h 60",
        "ENDHUNT h", "HINT h text", "CHECKIN s 48.85 2.35", "APPROVE c", "REJECT c",
    ])
    func loginNeeded(line: String) async throws {
        try await withDatabaseServer { address, _ in
            let reply = try await converseReturning(address) { try await $0.call(line) }
            expectError(reply, "UNAUTHORIZED")
        }
    }

    @Test("a banned user's hunt writes get BANNED")
    func bannedWrites() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "player"], address, environment) { (users: [Conversation]) async throws in
                let (host, player) = (users[0], users[1])
                let hunt = try await host.makeHunt(stops: [StopPlan()])
                try await player.join(hunt)
                try await asUser("mod", role: .moderator, address, environment) { (mod: Conversation) async throws in
                    _ = try await mod.ok("BAN host 3600")
                    _ = try await mod.ok("BAN player 3600")
                }
                #expect(try await host.call("CREATEHUNT another").hasPrefix("ERR BANNED "))
                #expect(try await host.call("HINT \(hunt.id) \(quoted("look up"))").hasPrefix("ERR BANNED "))
                #expect(try await player.checkInReply(hunt.stops[0], at: hunt.places[0]).hasPrefix("ERR BANNED "))
                #expect(try await host.hunt(hunt.id)["stops"][0]["found_by"].int == 0)
            }
        }
    }

    // MARK: The join code's secrecy

    @Test("the join code is in every reply to the host and in no reply to anyone else; a stop's code is shown to nobody")
    func codeSecrecy() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "player", "stranger"], address, environment) { (users: [Conversation]) async throws in
                let (host, player, stranger) = (users[0], users[1], users[2])
                let secret = "swordfish42"
                let hunt = try await host.makeHunt(
                    stops: [StopPlan(title: "Gate", options: "PROOF code CODE \(secret)"), StopPlan(north: 100, title: "Arch")], start: false)
                var others: [String] = []
                others.append(try await player.call("JOIN \(hunt.code.lowercased())"))
                for client in [player, stranger] {
                    others.append(try await client.call("HUNT \(hunt.id)"))
                    others.append(try await client.call("HUNTS"))
                    others.append(try await client.call("HUNTS MINE"))
                    others.append(try await client.call("LEADERBOARD \(hunt.id)"))
                }
                others.append(try await converseReturning(address) { try await $0.call("HUNT \(hunt.id)") })

                var hosts: [(String, JSONObject)] = []
                hosts.append(("HUNT", try await host.hunt(hunt.id)["hunt"]))
                hosts.append(("HUNTS", try await host.ok("HUNTS")["hunts"][0]))
                hosts.append(("HUNTS MINE", try await host.ok("HUNTS MINE")["hunts"][0]))
                hosts.append(("STARTHUNT", try await host.ok("STARTHUNT \(hunt.id)")["hunt"]))
                hosts.append(("EXTEND", try await host.ok("EXTEND \(hunt.id) 600")["hunt"]))

                // Running: the stops are shown, the code stop among them.
                for client in [player, stranger] { others.append(try await client.call("HUNT \(hunt.id)")) }
                others.append(try await player.checkInReply(hunt.stops[0], at: hunt.places[0], "CODE \(secret)"))
                others.append(try await stranger.call("LEADERBOARD \(hunt.id)"))
                try await asUser("mod", role: .moderator, address, environment) { (mod: Conversation) async throws in
                    others.append(try await mod.call("HUNT \(hunt.id)"))
                    others.append(try await mod.call("ENDHUNT \(hunt.id)"))
                }
                hosts.append(("HUNT after the end", try await host.hunt(hunt.id)["hunt"]))

                for (command, object) in hosts {
                    #expect(try object["code"].string == hunt.code, "\(command)")
                }
                for line in others {
                    let reply = try JSONObject(okLine: line)
                    #expect(!holdsKey(reply, "code"), "\(line)")
                    #expect(!line.contains(secret), "\(line)")
                }
                let seen = try await host.hunt(hunt.id)
                #expect(try stopIDs(seen) == hunt.stops)
                #expect(!holdsKey(seen["stops"], "code"))
                let hostLine = try await host.call("HUNT \(hunt.id)")
                #expect(!hostLine.contains(secret))
            }
        }
    }

    // MARK: ADDSTOP and REMOVESTOP

    @Test("ADDSTOP answers each stop in its place, options in any order, up to their bounds")
    func addStop() async throws {
        try await withDatabaseServer { address, environment in
            try await asUser("host", address, environment) { (host: Conversation) async throws in
                let id = try await host.createHunt()["id"].string
                let fountain = huntOrigin.moved(north: 120, east: -40)
                let first = try await host.ok("ADDSTOP \(id) \(fountain) 25 5 Fountain CLUE \(quoted("Where the water sings"))")["stop"]
                let fields: Set = ["id", "hunt", "n", "title", "clue", "lat", "lon", "radius_m", "points", "proof", "found_by"]
                #expect(fields.isSubset(of: first.keys), "\(first.keys)")
                #expect(try first["hunt"].string == id)
                #expect(first["n"].int == 1)
                #expect(try first["title"].string == "Fountain")
                #expect(try first["clue"].string == "Where the water sings")
                #expect(first["lat"].double == fountain.lat && first["lon"].double == fountain.lon)
                #expect(first["radius_m"].double == 25)
                #expect(first["points"].int == 5)
                #expect(try first["proof"].string == "place")
                #expect(first["found_by"].int == 0)
                #expect(!holdsKey(first, "code"))

                let second = try await host.ok("ADDSTOP \(id) \(huntOrigin) 5 0 Gate HIDDEN CODE \(quoted("open sesame")) PROOF code")["stop"]
                #expect(second["n"].int == 2)
                #expect(try second["proof"].string == "code")
                #expect(try second["clue"].string == "")
                #expect(second["lat"].double == huntOrigin.lat, "the host sees a hidden stop's place")
                #expect(second["radius_m"].double == 5 && second["points"].int == 0)
                #expect(!holdsKey(second, "code"))

                let title = String(repeating: "t", count: 80)
                let clue = String(repeating: "c", count: 500)
                let third = try await host.ok("ADDSTOP \(id) \(huntOrigin) 1000 10000 \(title) PROOF photo CLUE \(clue)")["stop"]
                #expect(third["n"].int == 3)
                #expect(try third["proof"].string == "photo")
                #expect(try third["title"].string == title && third["clue"].string == clue)
                #expect(third["radius_m"].double == 1000 && third["points"].int == 10000)

                let seen = try await host.hunt(id)
                #expect(seen["hunt"]["stops"].int == 3)
                #expect(try stopIDs(seen) == [first["id"].string, second["id"].string, third["id"].string])
                #expect(seen["stops"].array.map { $0["n"].int } == [1, 2, 3])
            }
        }
    }

    @Test("ADDSTOP refuses bad places, radii, points, titles, clues, proofs and codes, and adds nothing", arguments: [
        "91 0 50 10 title",
        "0 -180.5 50 10 title",
        "48.85 2.35 4.9 10 title",
        "48.85 2.35 1001 10 title",
        "48.85 2.35 0 10 title",
        "48.85 2.35 50 -1 title",
        "48.85 2.35 50 10001 title",
        "48.85 2.35 50 1.5 title",
        #"48.85 2.35 50 10 """#,
        "48.85 2.35 50 10 \(String(repeating: "t", count: 81))",
        "48.85 2.35 50 10 title CLUE \(String(repeating: "c", count: 501))",
        "48.85 2.35 50 10 title PROOF code",
        "48.85 2.35 50 10 title CODE abcd",
        "48.85 2.35 50 10 title PROOF place CODE abcd",
        "48.85 2.35 50 10 title PROOF photo CODE abcd",
        "48.85 2.35 50 10 title PROOF code CODE abc",
        "48.85 2.35 50 10 title PROOF code CODE \(String(repeating: "k", count: 65))",
        "48.85 2.35 50 10 title PROOF magic",
        "48.85 2.35 50 10",
    ])
    func addStopRejects(options: String) async throws {
        try await withDatabaseServer { address, environment in
            try await asUser("host", address, environment) { (host: Conversation) async throws in
                let id = try await host.createHunt()["id"].string
                expectError(try await host.call("ADDSTOP \(id) \(options)"), "BAD_ARGUMENT")
                #expect(try await host.hunt(id)["hunt"]["stops"].int == 0)
            }
        }
    }

    @Test("ADDSTOP: the host only, while the hunt is scheduled, up to the most stops a hunt holds")
    func addStopRefusals() async throws {
        try await withDatabaseServer(configure: { $0.hunts.maximumStops = 2 }) { address, environment in
            try await asUsers(["host", "player"], address, environment) { (users: [Conversation]) async throws in
                let (host, player) = (users[0], users[1])
                let hunt = try await host.makeHunt(stops: [StopPlan(), StopPlan(north: 100)], start: false)
                try await player.join(hunt)
                expectError(try await player.call(StopPlan(north: 200).line(hunt: hunt.id)), "FORBIDDEN")
                expectError(try await host.call(StopPlan(north: 200).line(hunt: hunt.id)), "CONFLICT")
                // A pin's id is a well-formed id of no hunt.
                let pin = try await host.ok("POST \(huntOrigin) hello")["pin"]["id"].string
                expectError(try await host.call(StopPlan().line(hunt: pin)), "NOT_FOUND")
                // Room again after a removal, but not once the hunt runs or has ended.
                #expect(try await host.ok("REMOVESTOP \(hunt.stops[1])").bool == true)
                _ = try await host.addStop(hunt.id, StopPlan(north: 300))
                _ = try await host.ok("REMOVESTOP \(hunt.stops[0])")
                _ = try await host.ok("STARTHUNT \(hunt.id)")
                expectError(try await host.call(StopPlan(north: 200).line(hunt: hunt.id)), "CONFLICT")
                _ = try await host.ok("ENDHUNT \(hunt.id)")
                expectError(try await host.call(StopPlan(north: 200).line(hunt: hunt.id)), "CONFLICT")
                #expect(try await host.hunt(hunt.id)["hunt"]["stops"].int == 1)
            }
        }
    }

    @Test("REMOVESTOP: later stops move up one place; the host only, while the hunt is scheduled")
    func removeStop() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "player"], address, environment) { (users: [Conversation]) async throws in
                let (host, player) = (users[0], users[1])
                let hunt = try await host.makeHunt(
                    stops: [StopPlan(title: "a"), StopPlan(north: 100, title: "b"), StopPlan(north: 200, title: "c"), StopPlan(north: 300, title: "d")],
                    start: false)
                try await player.join(hunt)
                expectError(try await player.call("REMOVESTOP \(hunt.stops[1])"), "FORBIDDEN")
                #expect(try await host.ok("REMOVESTOP \(hunt.stops[1])").bool == true)
                var seen = try await host.hunt(hunt.id)
                #expect(try stopIDs(seen) == [hunt.stops[0], hunt.stops[2], hunt.stops[3]])
                #expect(seen["stops"].array.map { $0["n"].int } == [1, 2, 3])
                #expect(try seen["stops"].array.map { try $0["title"].string } == ["a", "c", "d"])
                #expect(seen["hunt"]["stops"].int == 3)
                _ = try await host.ok("REMOVESTOP \(hunt.stops[0])")
                seen = try await host.hunt(hunt.id)
                #expect(try seen["stops"].array.map { try $0["title"].string } == ["c", "d"])
                #expect(seen["stops"].array.map { $0["n"].int } == [1, 2])
                expectError(try await host.call("REMOVESTOP \(hunt.stops[0])"), "NOT_FOUND")
                _ = try await host.ok("STARTHUNT \(hunt.id)")
                expectError(try await host.call("REMOVESTOP \(hunt.stops[2])"), "CONFLICT")
                #expect(try await host.hunt(hunt.id)["hunt"]["stops"].int == 2)
            }
        }
    }

    // MARK: JOIN and LEAVE

    @Test("JOIN: by the code in any case, or by a public hunt's id; never by a private hunt's id; never the host")
    func join() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "player", "latecomer"], address, environment) { (users: [Conversation]) async throws in
                let (host, player, latecomer) = (users[0], users[1], users[2])
                let hidden = try await host.makeHunt("", name: "Private", stops: [StopPlan()], start: false)
                let open = try await host.makeHunt("PUBLIC", name: "Public", stops: [StopPlan()], start: false)
                expectError(try await player.call("JOIN \(hidden.id)"), "NOT_FOUND")
                let joined = try await player.ok("JOIN \(hidden.code.lowercased())")["hunt"]
                #expect(try joined["id"].string == hidden.id)
                #expect(joined["players"].int == 1)
                #expect(try await player.ok("JOIN \(open.id)")["hunt"]["id"].string == open.id)
                #expect(try await player.ok("JOIN \(open.code)")["hunt"]["players"].int == 1)
                expectError(try await host.call("JOIN \(hidden.code)"), "FORBIDDEN")
                expectError(try await host.call("JOIN \(open.id)"), "FORBIDDEN")
                let unknown = hidden.code == "ZZZZZZ" || open.code == "ZZZZZZ" ? "YYYYYY" : "ZZZZZZ"
                expectError(try await player.call("JOIN \(unknown)"), "NOT_FOUND")
                let pin = try await host.ok("POST \(huntOrigin) hello")["pin"]["id"].string
                expectError(try await player.call("JOIN \(pin)"), "NOT_FOUND")
                // A running hunt can be joined.
                _ = try await host.ok("STARTHUNT \(open.id)")
                #expect(try await latecomer.ok("JOIN \(open.id)")["hunt"]["players"].int == 2)
                #expect(try await host.hunt(open.id)["hunt"]["players"].int == 2)
                #expect(try await host.hunt(hidden.id)["hunt"]["players"].int == 1)
            }
        }
    }

    @Test("JOIN's names: the username or AS name, unique in the hunt in any case; joining again changes nothing or renames")
    func joinNames() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "alice", "bob"], address, environment) { (users: [Conversation]) async throws in
                let (host, alice, bob) = (users[0], users[1], users[2])
                let hunt = try await host.makeHunt(stops: [StopPlan(points: 10)])
                try await alice.join(hunt)
                #expect(try players(await host.leaderboard(hunt.id)) == ["alice"])
                expectError(try await bob.call("JOIN \(hunt.code) AS alice"), "CONFLICT")
                expectError(try await bob.call("JOIN \(hunt.code) AS ALICE"), "CONFLICT")
                expectError(try await bob.call("JOIN \(hunt.code) AS b"), "BAD_ARGUMENT")
                expectError(try await bob.call("JOIN \(hunt.code) AS \(quoted("bob smith"))"), "BAD_ARGUMENT")
                #expect(try await host.hunt(hunt.id)["hunt"]["players"].int == 1)
                try await bob.join(hunt, as: "robert")
                #expect(try players(await host.leaderboard(hunt.id)) == ["alice", "robert"])

                // Again with the same name: the same answer, nothing changed.
                let again = try await alice.call("JOIN \(hunt.code)")
                let onceMore = try await alice.call("JOIN \(hunt.code)")
                #expect(again == onceMore)
                #expect(try JSONObject(okLine: again)["hunt"]["players"].int == 2)
                #expect(try players(await host.leaderboard(hunt.id)) == ["alice", "robert"])

                // Another name renames the player, who keeps their points.
                _ = try await alice.checkIn(hunt.stops[0], at: hunt.places[0])
                try await alice.join(hunt, as: "ally")
                var entries = try await host.leaderboard(hunt.id)
                #expect(try players(entries) == ["ally", "robert"])
                #expect(entries.first?["points"].int == 10)
                #expect(try await host.hunt(hunt.id)["hunt"]["players"].int == 2)
                expectError(try await bob.call("JOIN \(hunt.code) AS ALLY"), "CONFLICT")
                // Joining again without AS is joining with the username: another name, so a rename back.
                try await alice.join(hunt)
                entries = try await host.leaderboard(hunt.id)
                #expect(try players(entries) == ["alice", "robert"])
                #expect(entries.first?["points"].int == 10)
                // Names are free again once given up.
                try await bob.join(hunt, as: "ally")
                #expect(try players(await host.leaderboard(hunt.id)) == ["alice", "ally"])
            }
        }
    }

    @Test("JOIN of an ended hunt: a code finds nothing (NOT_FOUND); a public hunt's id is CONFLICT")
    func joinEnded() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "player"], address, environment) { (users: [Conversation]) async throws in
                let (host, player) = (users[0], users[1])
                let hidden = try await host.makeHunt("", stops: [StopPlan()])
                let open = try await host.makeHunt("PUBLIC", stops: [StopPlan()])
                for hunt in [hidden, open] { _ = try await host.ok("ENDHUNT \(hunt.id)") }
                expectError(try await player.call("JOIN \(hidden.code)"), "NOT_FOUND")
                expectError(try await player.call("JOIN \(open.code)"), "NOT_FOUND")
                expectError(try await player.call("JOIN \(hidden.id)"), "NOT_FOUND")
                expectError(try await player.call("JOIN \(open.id)"), "CONFLICT")
                #expect(try await host.hunt(open.id)["hunt"]["players"].int == 0)
            }
        }
    }

    @Test("LEAVE: before the end the player goes; after it, CONFLICT")
    func leave() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "stays", "goes"], address, environment) { (users: [Conversation]) async throws in
                let (host, stays, goes) = (users[0], users[1], users[2])
                let hunt = try await host.makeHunt(stops: [StopPlan()])
                try await stays.join(hunt)
                try await goes.join(hunt)
                #expect(try await goes.hunt(hunt.id)["me"]["points"].int == 0)
                #expect(try await goes.ok("LEAVE \(hunt.id)").bool == true)
                #expect(try await host.hunt(hunt.id)["hunt"]["players"].int == 1)
                #expect(try await goes.hunt(hunt.id)["me"].isNull)
                #expect(try players(await host.leaderboard(hunt.id)) == ["stays"])
                expectError(try await goes.checkInReply(hunt.stops[0], at: hunt.places[0]), "FORBIDDEN")
                _ = try await host.ok("ENDHUNT \(hunt.id)")
                expectError(try await stays.call("LEAVE \(hunt.id)"), "CONFLICT")
                #expect(try players(await host.leaderboard(hunt.id)) == ["stays"])
            }
        }
    }

    // MARK: HUNT: what each reader sees

    @Test("HUNT before the start: everyone but the host sees stops: [] and the count; me only for players")
    func beforeStart() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "player", "stranger"], address, environment) { (users: [Conversation]) async throws in
                let (host, player, stranger) = (users[0], users[1], users[2])
                let hunt = try await host.makeHunt(stops: [StopPlan(), StopPlan(north: 100)], start: false)
                try await player.join(hunt)
                let anonymous = try await converseReturning(address) { try await $0.hunt(hunt.id) }
                let playerView = try await player.hunt(hunt.id)
                let strangerView = try await stranger.hunt(hunt.id)
                for (reader, seen) in [("player", playerView), ("stranger", strangerView), ("anonymous", anonymous)] {
                    #expect(seen["stops"].array.isEmpty, "\(reader)")
                    #expect(seen["hunt"]["stops"].int == 2, "\(reader)")
                    #expect(seen["hints"].array.isEmpty && seen["winners"].array.isEmpty, "\(reader)")
                }
                let mine = try await player.hunt(hunt.id)["me"]
                #expect(mine["points"].int == 0 && mine["found"].array.isEmpty && mine["rank"].int == 1)
                #expect(try await stranger.hunt(hunt.id)["me"].isNull)
                let hosts = try await host.hunt(hunt.id)
                #expect(try stopIDs(hosts) == hunt.stops)
                #expect(hosts["me"].isNull)
                _ = try await host.ok("STARTHUNT \(hunt.id)")
                #expect(try stopIDs(await stranger.hunt(hunt.id)) == hunt.stops)
                #expect(try stopIDs(await player.hunt(hunt.id)) == hunt.stops)
                let anonymousAfter = try await converseReturning(address) { try await $0.hunt(hunt.id) }
                #expect(try stopIDs(anonymousAfter) == hunt.stops)
            }
        }
    }

    @Test("HUNT of a private hunt: its host and players only, NOT_FOUND to anyone else")
    func privateHunt() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "player", "stranger"], address, environment) { (users: [Conversation]) async throws in
                let (host, player, stranger) = (users[0], users[1], users[2])
                let hunt = try await host.makeHunt("", stops: [StopPlan()])
                try await player.join(hunt)
                #expect(try await host.hunt(hunt.id)["hunt"]["public"].bool == false)
                #expect(try stopIDs(await player.hunt(hunt.id)) == hunt.stops)
                expectError(try await stranger.call("HUNT \(hunt.id)"), "NOT_FOUND")
                expectError(try await converseReturning(address) { try await $0.call("HUNT \(hunt.id)") }, "NOT_FOUND")
                let pin = try await host.ok("POST \(huntOrigin) hello")["pin"]["id"].string
                expectError(try await host.call("HUNT \(pin)"), "NOT_FOUND")
                #expect(try await stranger.ok("HUNTS")["hunts"].array.isEmpty)
            }
        }
    }

    @Test("a HIDDEN stop's place is null to everyone but the host and the players who have found it")
    func hiddenStops() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "finder", "seeker", "stranger"], address, environment) { (users: [Conversation]) async throws in
                let (host, finder, seeker, stranger) = (users[0], users[1], users[2], users[3])
                let hunt = try await host.makeHunt(stops: [StopPlan(title: "open"), StopPlan(north: 150, title: "hidden", options: "HIDDEN")])
                try await finder.join(hunt)
                try await seeker.join(hunt)
                // Degrees to nine decimals (about a millimetre): Foundation's JSON parser may not
                // read a 17-digit number back to the very same Double.
                func places(_ client: Conversation) async throws -> [Double?] {
                    let stops = try await client.hunt(hunt.id)["stops"].array
                    return stops.flatMap { [$0["lat"].double, $0["lon"].double] }.map { $0.map(rounded) }
                }
                func rounded(_ degrees: Double) -> Double { (degrees * 1e9).rounded() / 1e9 }
                let (open, hidden) = (hunt.places[0], hunt.places[1])
                #expect(try await places(host) == [open.lat, open.lon, hidden.lat, hidden.lon].map(rounded))
                for client in [finder, seeker, stranger] { #expect(try await places(client) == [rounded(open.lat), rounded(open.lon), nil, nil]) }
                let anonymousView = try await converseReturning(address) { try await $0.hunt(hunt.id) }
                let anonymous = anonymousView["stops"][1]
                #expect(anonymous["lat"].isNull && anonymous["lon"].isNull)
                #expect(try anonymous["title"].string == "hidden")

                _ = try await finder.checkIn(hunt.stops[1], at: hidden)
                #expect(try await places(finder) == [open.lat, open.lon, hidden.lat, hidden.lon].map(rounded))
                for client in [seeker, stranger] { #expect(try await places(client) == [rounded(open.lat), rounded(open.lon), nil, nil]) }
                #expect(try await places(host) == [open.lat, open.lon, hidden.lat, hidden.lon].map(rounded))
            }
        }
    }

    @Test("an ordered hunt: a player sees the stops found and the next one; everyone else but the host sees the first")
    func orderedVisibility() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "runner", "walker", "stranger"], address, environment) { (users: [Conversation]) async throws in
                let (host, runner, walker, stranger) = (users[0], users[1], users[2], users[3])
                let hunt = try await host.makeHunt(
                    "PUBLIC ORDERED", stops: [StopPlan(title: "one"), StopPlan(north: 200, title: "two"), StopPlan(north: 400, title: "three")])
                try await runner.join(hunt)
                try await walker.join(hunt)
                let anonymous = { try await converseReturning(address) { try await stopIDs($0.hunt(hunt.id)) } }
                #expect(try stopIDs(await host.hunt(hunt.id)) == hunt.stops)
                for client in [runner, walker, stranger] { #expect(try stopIDs(await client.hunt(hunt.id)) == [hunt.stops[0]]) }
                #expect(try await anonymous() == [hunt.stops[0]])
                #expect(try await host.hunt(hunt.id)["hunt"]["stops"].int == 3)

                for found in 1 ... 3 {
                    _ = try await runner.checkIn(hunt.stops[found - 1], at: hunt.places[found - 1])
                    let seen = try await runner.hunt(hunt.id)
                    #expect(try stopIDs(seen) == Array(hunt.stops.prefix(min(found + 1, 3))))
                    #expect(try Set(seen["me"]["found"].array.map { try $0.string }) == Set(hunt.stops.prefix(found)))
                    for client in [walker, stranger] { #expect(try stopIDs(await client.hunt(hunt.id)) == [hunt.stops[0]]) }
                    #expect(try await anonymous() == [hunt.stops[0]])
                    #expect(try stopIDs(await host.hunt(hunt.id)) == hunt.stops)
                }
            }
        }
    }

    // MARK: HUNTS

    @Test("HUNTS: public hunts not ended, running first by starts, then scheduled by starts, started-by-hand last; pages list each once")
    func huntsOrder() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "reader"], address, environment) { (users: [Conversation]) async throws in
                let (host, reader) = (users[0], users[1])
                let inTwoHours = try await host.createHunt("PUBLIC STARTS \(rfc3339(secondsFromNow: 7200))", name: "A")["id"].string
                let inOneHour = try await host.createHunt("PUBLIC STARTS \(rfc3339(secondsFromNow: 3600))", name: "B")["id"].string
                let byHand = try await host.createHunt("PUBLIC", name: "C")["id"].string
                _ = try await host.createHunt("STARTS \(rfc3339(secondsFromNow: 3600))", name: "D (private)")
                let runningFirst = try await host.createHunt("PUBLIC", name: "E")["id"].string
                _ = try await host.ok("STARTHUNT \(runningFirst)")
                let runningSecond = try await host.createHunt("PUBLIC STARTS \(rfc3339(secondsFromNow: 10800))", name: "F")["id"].string
                _ = try await host.ok("STARTHUNT \(runningSecond)")
                let ended = try await host.createHunt("PUBLIC", name: "G")["id"].string
                _ = try await host.ok("STARTHUNT \(ended)")
                _ = try await host.ok("ENDHUNT \(ended)")

                let expected = [runningFirst, runningSecond, inOneHour, inTwoHours, byHand]
                #expect(try huntIDs(await reader.ok("HUNTS")) == expected)
                for limit in [1, 2, 4, 5] {
                    #expect(try await reader.allHunts("LIMIT \(limit)") == expected, "LIMIT \(limit)")
                }
                let anonymous = try await converseReturning(address) { try await huntIDs($0.ok("HUNTS")) }
                #expect(anonymous == expected)
                let listed = try await reader.ok("HUNTS")["hunts"].array
                #expect(try listed.map { try $0["state"].string } == ["running", "running", "scheduled", "scheduled", "scheduled"])
            }
        }
    }

    @Test("HUNTS MINE: the hunts the caller hosts or plays, in any state, newest first")
    func huntsMine() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "player", "idle"], address, environment) { (users: [Conversation]) async throws in
                let (host, player, idle) = (users[0], users[1], users[2])
                let first = try await host.makeHunt("", name: "first", stops: [StopPlan()], start: false)
                let second = try await host.makeHunt("PUBLIC", name: "second", stops: [StopPlan()])
                let third = try await host.makeHunt("PUBLIC", name: "third", stops: [StopPlan()], start: false)
                let fourth = try await host.makeHunt("", name: "fourth", stops: [StopPlan()])
                try await player.join(first)
                try await player.join(second)
                try await player.join(fourth)
                _ = try await host.ok("ENDHUNT \(fourth.id)")
                #expect(try await host.allHunts("MINE") == [fourth.id, third.id, second.id, first.id])
                #expect(try await host.allHunts("MINE LIMIT 3") == [fourth.id, third.id, second.id, first.id])
                #expect(try await player.allHunts("MINE") == [fourth.id, second.id, first.id])
                #expect(try await player.allHunts("LIMIT 1 MINE") == [fourth.id, second.id, first.id])
                #expect(try await idle.allHunts("MINE").isEmpty)
                let states = try await player.ok("HUNTS MINE")["hunts"].array.map { try $0["state"].string }
                #expect(states == ["ended", "running", "scheduled"])
            }
        }
    }

    @Test("HUNTS NEAR: only hunts with a stop everyone sees within the radius, nearest such stop first")
    func huntsNear() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "reader"], address, environment) { (users: [Conversation]) async throws in
                let (host, reader) = (users[0], users[1])
                let far = try await host.makeHunt(name: "far", stops: [StopPlan(north: 300)])
                let near = try await host.makeHunt(name: "near", stops: [StopPlan(north: 5000), StopPlan(east: 100)])
                _ = try await host.makeHunt(name: "hidden", stops: [StopPlan(north: 50, options: "HIDDEN"), StopPlan(north: 4000)])
                _ = try await host.makeHunt("PUBLIC ORDERED", name: "ordered", stops: [StopPlan(north: 5000), StopPlan(north: 20)])
                _ = try await host.makeHunt(name: "elsewhere", stops: [StopPlan(north: 3000)])
                _ = try await host.makeHunt("", name: "private", stops: [StopPlan(north: 10)])
                let endedNear = try await host.makeHunt(name: "ended", stops: [StopPlan(north: 10)])
                _ = try await host.ok("ENDHUNT \(endedNear.id)")
                #expect(try huntIDs(await reader.ok("HUNTS NEAR \(huntOrigin) 1000")) == [near.id, far.id])
                #expect(try await reader.allHunts("LIMIT 1 NEAR \(huntOrigin) 1000") == [near.id, far.id])
                #expect(try huntIDs(await reader.ok("HUNTS NEAR \(huntOrigin) 200")) == [near.id])
                #expect(try huntIDs(await reader.ok("HUNTS NEAR \(huntOrigin.moved(north: 300)) 150")) == [far.id])
                expectError(try await reader.call("HUNTS NEAR 91 0 1000"), "BAD_ARGUMENT")
            }
        }
    }

    // MARK: STARTHUNT, EXTEND, ENDHUNT

    @Test("STARTHUNT: the host starts a scheduled hunt now, even before its STARTS; starts becomes that moment")
    func startHunt() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "player"], address, environment) { (users: [Conversation]) async throws in
                let (host, player) = (users[0], users[1])
                let planned = rfc3339(secondsFromNow: 3600)
                let id = try await host.createHunt("PUBLIC STARTS \(planned) DURATION 3600")["id"].string
                _ = try await player.ok("JOIN \(id)")
                expectError(try await player.call("STARTHUNT \(id)"), "FORBIDDEN")
                #expect(try await host.hunt(id)["hunt"]["state"].string == "scheduled")
                let before = Date()
                let started = try await host.ok("STARTHUNT \(id)")["hunt"]
                let after = Date()
                #expect(try started["state"].string == "running")
                let starts = try parseTime(started["starts"])
                #expect(try starts < parseTime(planned))
                #expect(starts >= before.addingTimeInterval(-1) && starts <= after.addingTimeInterval(1), "\(starts) not between \(before) and \(after)")
                #expect(try parseTime(started["ends"]).timeIntervalSince(starts) == 3600)
                let seen = try await player.hunt(id)["hunt"]
                #expect(try seen["state"].string == "running")
                #expect(try seen["starts"].string == started["starts"].string)
                let pin = try await host.ok("POST \(huntOrigin) hello")["pin"]["id"].string
                expectError(try await host.call("STARTHUNT \(pin)"), "NOT_FOUND")
            }
        }
    }

    /// The cases of EXTEND: the state of the hunt and what must happen.
    enum ExtendCase: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case runningWithoutEnd = "running without an end: it ends that many seconds from now"
        case runningWithEnd = "running with an end: the end moves later"
        case scheduledWithDuration = "scheduled with a DURATION: it gets that much longer"
        case scheduledWithNeither = "scheduled with neither: it ends that many seconds after it starts"
        case scheduledWithEnds = "scheduled with ENDS: the end moves later"
        case ended = "ended: CONFLICT"
        case badSeconds = "seconds not a whole number >= 1: BAD_ARGUMENT"
        case notHost = "not the host: FORBIDDEN"

        var testDescription: String { rawValue }
    }

    @Test("EXTEND moves the end later by that many seconds", arguments: ExtendCase.allCases)
    func extend(scenario: ExtendCase) async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "player"], address, environment) { (users: [Conversation]) async throws in
                let (host, player) = (users[0], users[1])
                switch scenario {
                case .runningWithoutEnd:
                    let id = try await host.makeHunt(stops: [StopPlan()]).id
                    let before = Date()
                    let hunt = try await host.ok("EXTEND \(id) 600")["hunt"]
                    let after = Date()
                    let ends = try parseTime(hunt["ends"])
                    #expect(ends >= before.addingTimeInterval(599) && ends <= after.addingTimeInterval(601), "\(ends)")
                    #expect(try hunt["state"].string == "running")
                case .runningWithEnd:
                    let id = try await host.makeHunt("PUBLIC DURATION 3600", stops: [StopPlan()]).id
                    let ends = try parseTime(await host.hunt(id)["hunt"]["ends"])
                    let hunt = try await host.ok("EXTEND \(id) 60")["hunt"]
                    #expect(try parseTime(hunt["ends"]).timeIntervalSince(ends) == 60)
                case .scheduledWithDuration:
                    let id = try await host.createHunt("PUBLIC DURATION 3600")["id"].string
                    let extended = try await host.ok("EXTEND \(id) 60")["hunt"]
                    #expect(extended["ends"].isNull)
                    #expect(try extended["state"].string == "scheduled")
                    let hunt = try await host.ok("STARTHUNT \(id)")["hunt"]
                    #expect(try parseTime(hunt["ends"]).timeIntervalSince(parseTime(hunt["starts"])) == 3660)
                case .scheduledWithNeither:
                    let id = try await host.createHunt("PUBLIC")["id"].string
                    #expect(try await host.ok("EXTEND \(id) 120")["hunt"]["ends"].isNull)
                    let hunt = try await host.ok("STARTHUNT \(id)")["hunt"]
                    #expect(try parseTime(hunt["ends"]).timeIntervalSince(parseTime(hunt["starts"])) == 120)
                case .scheduledWithEnds:
                    let planned = rfc3339(secondsFromNow: 7200)
                    let id = try await host.createHunt("PUBLIC STARTS \(rfc3339(secondsFromNow: 3600)) ENDS \(planned)")["id"].string
                    let hunt = try await host.ok("EXTEND \(id) 90")["hunt"]
                    #expect(try parseTime(hunt["ends"]).timeIntervalSince(parseTime(planned)) == 90)
                    #expect(try hunt["state"].string == "scheduled")
                case .ended:
                    let id = try await host.makeHunt(stops: [StopPlan()]).id
                    _ = try await host.ok("ENDHUNT \(id)")
                    expectError(try await host.call("EXTEND \(id) 60"), "CONFLICT")
                case .badSeconds:
                    let id = try await host.makeHunt(stops: [StopPlan()]).id
                    for seconds in ["0", "-5", "1.5", "soon"] { expectError(try await host.call("EXTEND \(id) \(seconds)"), "BAD_ARGUMENT") }
                    expectError(try await host.call("EXTEND \(id)"), "BAD_ARGUMENT")
                    #expect(try await host.hunt(id)["hunt"]["ends"].isNull)
                case .notHost:
                    let hunt = try await host.makeHunt(stops: [StopPlan()])
                    try await player.join(hunt)
                    expectError(try await player.call("EXTEND \(hunt.id) 60"), "FORBIDDEN")
                    #expect(try await host.hunt(hunt.id)["hunt"]["ends"].isNull)
                }
            }
        }
    }

    @Test("ENDHUNT: the host or a moderator; an ended hunt leaves HUNTS and refuses changes")
    func endHunt() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "player"], address, environment) { (users: [Conversation]) async throws in
                let (host, player) = (users[0], users[1])
                let byHost = try await host.makeHunt(name: "by host", stops: [StopPlan()])
                let byModerator = try await host.makeHunt(name: "by moderator", stops: [StopPlan()])
                try await player.join(byHost)
                try await player.join(byModerator)
                expectError(try await player.call("ENDHUNT \(byHost.id)"), "FORBIDDEN")
                #expect(try await host.ok("ENDHUNT \(byHost.id)")["hunt"]["state"].string == "ended")
                try await asUser("mod", role: .moderator, address, environment) { (mod: Conversation) async throws in
                    #expect(try await mod.ok("ENDHUNT \(byModerator.id)")["hunt"]["state"].string == "ended")
                }
                for hunt in [byHost, byModerator] {
                    #expect(try await player.hunt(hunt.id)["hunt"]["state"].string == "ended")
                    expectError(try await player.checkInReply(hunt.stops[0], at: hunt.places[0]), "CONFLICT")
                    expectError(try await host.call("HINT \(hunt.id) \(quoted("too late"))"), "CONFLICT")
                    expectError(try await host.call("EXTEND \(hunt.id) 60"), "CONFLICT")
                    expectError(try await player.call("LEAVE \(hunt.id)"), "CONFLICT")
                }
                #expect(try await player.ok("HUNTS")["hunts"].array.isEmpty)
                #expect(try await player.allHunts("MINE").count == 2)
            }
        }
    }

    // MARK: HINT and winners

    @Test("HINT: the host, while the hunt runs; hints are kept in HUNT in order")
    func hints() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "player", "stranger"], address, environment) { (users: [Conversation]) async throws in
                let (host, player, stranger) = (users[0], users[1], users[2])
                let hunt = try await host.makeHunt(stops: [StopPlan()], start: false)
                try await player.join(hunt)
                expectError(try await host.call("HINT \(hunt.id) \(quoted("not yet"))"), "CONFLICT")
                _ = try await host.ok("STARTHUNT \(hunt.id)")
                expectError(try await player.call("HINT \(hunt.id) \(quoted("cheat"))"), "FORBIDDEN")
                let before = Date()
                #expect(try await host.ok("HINT \(hunt.id) \(quoted("Look up"))").bool == true)
                #expect(try await host.ok("HINT \(hunt.id) \(quoted("Under the bridge, then left"))").bool == true)
                for client in [host, player, stranger] {
                    let hints = try await client.hunt(hunt.id)["hints"].array
                    #expect(try hints.map { try $0["text"].string } == ["Look up", "Under the bridge, then left"])
                    for hint in hints {
                        let at = try parseTime(hint["at"])
                        #expect(at >= before.addingTimeInterval(-1))
                    }
                }
                _ = try await host.ok("ENDHUNT \(hunt.id)")
                expectError(try await host.call("HINT \(hunt.id) \(quoted("over"))"), "CONFLICT")
                #expect(try await stranger.hunt(hunt.id)["hints"].array.count == 2)
            }
        }
    }

    @Test("winners: once the hunt has ended, the players who found every stop in the order they finished; a later approval adds one")
    func winners() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "ann", "bob", "cat", "dan"], address, environment) { (users: [Conversation]) async throws in
                let (host, ann, bob, cat, dan) = (users[0], users[1], users[2], users[3], users[4])
                let hunt = try await host.makeHunt(stops: [StopPlan(), StopPlan(north: 150), StopPlan(north: 300, options: "PROOF photo")])
                var last: [String: String] = [:]
                for (name, player) in [("bob", bob), ("ann", ann), ("dan", dan)] {
                    try await player.join(hunt)
                    _ = try await player.checkIn(hunt.stops[0], at: hunt.places[0])
                    _ = try await player.checkIn(hunt.stops[1], at: hunt.places[1])
                    last[name] = try await player.checkIn(hunt.stops[2], at: hunt.places[2], photoOption)["checkin"]["id"].string
                }
                try await cat.join(hunt)
                _ = try await cat.checkIn(hunt.stops[0], at: hunt.places[0])
                // Ann's photo is approved before Bob's: she finished first.
                _ = try await host.ok("APPROVE \(last["ann"]!)")
                _ = try await host.ok("APPROVE \(last["bob"]!)")
                #expect(try await host.hunt(hunt.id)["winners"].array.isEmpty, "no winners before the end")
                _ = try await host.ok("ENDHUNT \(hunt.id)")
                #expect(try await cat.hunt(hunt.id)["winners"].array.map { try $0.string } == ["ann", "bob"])
                _ = try await host.ok("APPROVE \(last["dan"]!)")
                let anonymous = try await converseReturning(address) { try await $0.hunt(hunt.id) }
                #expect(try anonymous["winners"].array.map { try $0.string } == ["ann", "bob", "dan"])
            }
        }
    }

    // MARK: Starting and ending by themselves

    @Test("a hunt whose STARTS passes starts by itself, and players can check in")
    func startsByItself() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "player"], address, environment) { (users: [Conversation]) async throws in
                let (host, player) = (users[0], users[1])
                let created = try await host.createHunt("PUBLIC STARTS \(rfc3339(secondsFromNow: 3600))")
                #expect(try created["state"].string == "scheduled")
                let id = try created["id"].string
                let stop = try await host.addStop(id, StopPlan(points: 7))["id"].string
                _ = try await player.ok("JOIN \(id)")
                // Its STARTS, moved in the database to a second from now once the stop is in (a
                // STARTS two seconds ahead raced ADDSTOP on a loaded machine).
                let moved = try await environment.pool.query("""
                    UPDATE hunts SET starts_at = date_trunc('second', clock_timestamp()) + interval '2 seconds' WHERE id = \(id)
                    RETURNING (extract(epoch FROM starts_at))::bigint AS starts
                    """, idempotent: false)
                let planned: Int = try moved[0].int("starts")
                try await eventually("HUNT shows the hunt running") { try await player.hunt(id)["hunt"]["state"].string == "running" }
                let hunt = try await player.hunt(id)["hunt"]
                #expect(try parseTime(hunt["starts"]).timeIntervalSince1970 == Double(planned))
                #expect(hunt["ends"].isNull)
                #expect(try await player.checkIn(stop, at: huntOrigin)["checkin"]["status"].string == "accepted")
                #expect(try huntIDs(await player.ok("HUNTS")) == [id])
            }
        }
    }

    @Test("a hunt whose ENDS passes ends by itself; one with a DURATION ends that long after it started")
    func endsByItself() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "player"], address, environment) { (users: [Conversation]) async throws in
                let (host, player) = (users[0], users[1])
                let startsAt = rfc3339(secondsFromNow: 2)
                let endsAt = rfc3339(secondsFromNow: 4)
                let timed = try await host.createHunt("PUBLIC STARTS \(startsAt) ENDS \(endsAt)", name: "timed")["id"].string
                let lasting = try await host.createHunt("PUBLIC STARTS \(startsAt) DURATION 2", name: "lasting")["id"].string
                _ = try await player.ok("JOIN \(timed)")
                for id in [timed, lasting] {
                    try await eventually("HUNT shows the hunt ended") { try await player.hunt(id)["hunt"]["state"].string == "ended" }
                }
                let hunt = try await player.hunt(timed)["hunt"]
                #expect(try parseTime(hunt["starts"]) >= parseTime(startsAt))
                let other = try await player.hunt(lasting)["hunt"]
                #expect(try parseTime(other["ends"]).timeIntervalSince(parseTime(other["starts"])) == 2)
                #expect(try await player.ok("HUNTS")["hunts"].array.isEmpty)
                expectError(try await player.call("LEAVE \(timed)"), "CONFLICT")
            }
        }
    }
}
