import Foundation
import NIOCore
import ScavengerCore
import ScavengerTestSupport
import Sodium
import Testing

// A fair game (protocol 1.3): what a cheating player, a probing stranger or a host with a second
// account could do before, each tried over TCP against a real PostgreSQL.

/// Reads lines until one is `OK …` (the reply), keeping the `EVENT` lines met on the way.
func replyAndEvents(_ client: Conversation, _ line: String) async throws -> (reply: String, events: [JSONObject]) {
    try await client.writer.send(line + "\n")
    var events: [JSONObject] = []
    while let next = try await client.reader.next() {
        if next.hasPrefix("EVENT ") { events.append(try eventJSON(next)); continue }
        return (next, events)
    }
    throw ConnectionClosed(request: line)
}

// The time limit only guards against a hang.
@Suite("A fair game: what a cheater, a prober or a host's second account cannot do (protocol 1.3)", .timeLimit(.minutes(10)))
struct FairGameTests {
    @Test("HUNTS NEAR lists no scheduled hunt (its stops are its host's alone), and only running public hunts by their visible stops")
    func nearListsNoScheduledHunt() async throws {
        try await withDatabaseServer { address, environment in
            try await asUser("host", address, environment) { (host: Conversation) async throws in
                let scheduled = try await host.makeHunt(
                    "PUBLIC STARTS \(rfc3339(secondsFromNow: 3600))", name: "later", stops: [StopPlan()], start: false)
                let running = try await host.makeHunt(name: "now", stops: [StopPlan(north: 20)])
                try await converse(address) { (stranger: Conversation) async throws in
                    let near = try await stranger.ok("HUNTS NEAR \(huntOrigin) 500")["hunts"].array.map { try $0["id"].string }
                    #expect(near == [running.id])
                    let listed = try await stranger.ok("HUNTS")["hunts"].array.map { try $0["id"].string }
                    #expect(Set(listed) == [running.id, scheduled.id])
                    // A LIMIT 1 page's cursor leads to nothing more: nothing scheduled hides behind it.
                    let page = try await stranger.ok("HUNTS NEAR \(huntOrigin) 500 LIMIT 1")
                    #expect(page["next"].isNull)
                }
            }
        }
    }

    @Test("TOO_FAR at a HIDDEN stop tells no distance (-1); at a visible stop it does")
    func hiddenStopTellsNoDistance() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "prober"], address, environment) { (users: [Conversation]) async throws in
                let (host, prober) = (users[0], users[1])
                let hunt = try await host.makeHunt(stops: [StopPlan(options: "HIDDEN"), StopPlan(north: 500)])
                try await prober.join(hunt)
                for offset in [300.0, 450.0, 600.0] {
                    let reply = try await prober.checkInReply(hunt.stops[0], at: huntOrigin.moved(east: offset))
                    #expect(tooFarDistance(reply) == -1, "\(reply)")
                    #expect(!reply.contains("\(Int(offset))"), "\(reply)")
                }
                let visible = try await prober.checkInReply(hunt.stops[1], at: huntOrigin.moved(north: 500, east: 300))
                // 300 m east on the sphere, give or take the metre the rounding down takes.
                #expect((299 ... 300).contains(tooFarDistance(visible) ?? 0), "\(visible)")
            }
        }
    }

    @Test("TOO_FAR counts as a try: past the limit even the right place waits, and tries sent at once are judged exactly to the limit")
    func tooFarTries() async throws {
        try await withDatabaseServer(configure: { $0.hunts.tooFarTries = 3 }) { address, environment in
            try await asUsers(["host", "prober"], address, environment) { (users: [Conversation]) async throws in
                let (host, _) = (users[0], users[1])
                let hunt = try await host.makeHunt(stops: [StopPlan(options: "HIDDEN")])
                try await users[1].join(hunt)
                try await asCrowd((0 ..< 10).map { _ in ("prober", address) }) { crowd in
                    let replies = try await atOnce(crowd, crowd.indices.map { "CHECKIN \(hunt.stops[0]) \(huntOrigin.moved(east: 400 + Double($0)))" })
                    #expect(replies.filter { $0.hasPrefix("ERR TOO_FAR -1 ") }.count == 3, "\(replies)")
                    #expect(replies.filter { $0.hasPrefix("ERR RATE_LIMITED ") }.count == 7, "\(replies)")
                }
                expectError(try await users[1].checkInReply(hunt.stops[0], at: hunt.places[0]), "RATE_LIMITED")
            }
        }
    }

    @Test("no one reviews their own check-in: a moderator who plays gets FORBIDDEN for APPROVE and REJECT of their own; another player's is NOT_FOUND to a player")
    func noSelfReview() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "ann"], address, environment) { (users: [Conversation]) async throws in
                let (host, ann) = (users[0], users[1])
                let hunt = try await host.makeHunt(stops: [StopPlan(points: 40, options: "PROOF photo")])
                try await asUser("moddy", role: .moderator, address, environment) { (mod: Conversation) async throws in
                    try await mod.join(hunt)
                    try await ann.join(hunt)
                    let own = try await mod.checkIn(hunt.stops[0], at: hunt.places[0], photoOption)["checkin"]["id"].string
                    let anns = try await ann.checkIn(hunt.stops[0], at: hunt.places[0], photoOption)["checkin"]["id"].string
                    expectError(try await mod.call("APPROVE \(own) BONUS 10000"), "FORBIDDEN")
                    expectError(try await mod.call("REJECT \(own)"), "FORBIDDEN")
                    expectError(try await ann.call("APPROVE \(own)"), "NOT_FOUND")
                    expectError(try await ann.call("APPROVE \(anns)"), "FORBIDDEN")
                    // The moderator may review another's; the host theirs.
                    _ = try await mod.ok("APPROVE \(anns)")
                    _ = try await host.ok("APPROVE \(own)")
                    #expect(try await mod.hunt(hunt.id)["me"]["points"].int == 40)
                }
            }
        }
    }

    @Test("a flagged check-in shows its reviewers the travel figures; other check-ins show null; the player's own replies never carry them")
    func travelFigures() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "jumper"], address, environment) { (users: [Conversation]) async throws in
                let (host, jumper) = (users[0], users[1])
                let hunt = try await host.makeHunt(stops: [StopPlan(), StopPlan(north: 50_000), StopPlan(north: 50, options: "PROOF photo")])
                try await jumper.join(hunt)
                let first = try await jumper.checkIn(hunt.stops[0], at: hunt.places[0])
                #expect(!holdsKey(first, "travel"))
                let jump = try await jumper.checkIn(hunt.stops[1], at: hunt.places[1])
                #expect(try jump["checkin"]["status"].string == "flagged")
                #expect(!holdsKey(jump, "travel"))
                let photo = try await jumper.checkIn(hunt.stops[2], at: hunt.places[2], photoOption)
                #expect(try photo["checkin"]["status"].string == "pending")

                let review = try await host.ok("REVIEW \(hunt.id)")["checkins"].array
                try #require(review.count == 2)
                let flagged = try #require(try review.first { try $0["status"].string == "flagged" })
                let travel = flagged["travel"]
                let meters = try #require(travel["from_m"].double)
                #expect(abs(meters - haversine(hunt.places[0], hunt.places[1])) < 1)
                let seconds = try #require(travel["seconds"].double)
                #expect(seconds >= 0)
                let kmh = try #require(travel["kmh"].double)
                #expect(kmh > 200)
                let pending = try #require(try review.first { try $0["status"].string == "pending" })
                #expect(pending["travel"].isNull && (pending.value as? [String: Any])?.keys.contains("travel") == true)
                let approved = try await host.ok("APPROVE \(try flagged["id"].string)")["checkin"]
                #expect(approved["travel"]["from_m"].double == meters)
                #expect(!holdsKey(try await jumper.hunt(hunt.id), "travel"))
            }
        }
    }

    @Test("LEAVE ends the player's WATCH HUNTs with closed/left on both daemons, and nothing of the hunt reaches them after; the host's watch goes on")
    func leaveClosesWatches() async throws {
        try await withTwoDaemons { a, b, environment in
            try await asUsers(["host", "leaver", "stayer"], a, environment) { (users: [Conversation]) async throws in
                let (host, leaver, stayer) = (users[0], users[1], users[2])
                let hunt = try await host.makeHunt(stops: [StopPlan(), StopPlan(north: 100)])
                try await leaver.join(hunt)
                try await stayer.join(hunt)
                let hostWatch = try await host.watchHunt(hunt.id)
                let onA = try await leaver.watchHunt(hunt.id)
                try await asLoggedIn(["leaver", "host"], b) { (onB: [Conversation]) async throws in
                    let (remote, hostB) = (onB[0], onB[1])
                    let onBWatch = try await remote.watchHunt(hunt.id)
                    _ = try await hostB.watchHunt(hunt.id)
                    let (reply, eventsBefore) = try await replyAndEvents(leaver, "LEAVE \(hunt.id)")
                    #expect(reply == "OK true")
                    var closing = eventsBefore
                    if !closing.contains(where: { eventType($0) == "closed" }) { closing.append(try await leaver.event()) }
                    let closed = try #require(closing.first { eventType($0) == "closed" })
                    #expect(try closed["watch"].string == onA && closed["reason"].string == "left")
                    let remoteClosed = try await remote.event()
                    #expect(try remoteClosed["watch"].string == onBWatch && remoteClosed["reason"].string == "left")
                    // Nothing after: a hint and a check-in reach the host's watches on both
                    // daemons; once they have, the leaver's connections have nothing waiting.
                    _ = try await stayer.checkIn(hunt.stops[0], at: hunt.places[0])
                    let marker = try await asLoggedInReturning("host", a) { (marking: Conversation) async throws in try await marking.mark(hunt.id) }
                    let heard = try await host.huntEvents(before: marker)
                    #expect(heard.contains { eventType($0) == "found" })
                    #expect(heard.allSatisfy { (try? $0["watch"].string) == hostWatch })
                    _ = try await hostB.huntEvents(before: marker)
                    #expect(try await leaver.call("PING") == "OK \"PONG\"")
                    #expect(try await remote.call("PING") == "OK \"PONG\"")
                    expectError(try await leaver.call("UNWATCH \(onA)"), "NOT_FOUND")
                }
            }
        }
    }

    @Test("a hunt removed by moderators closes every watch (removed) and takes its points out of RANKING and PROFILE; MODLOG says so")
    func removalTakesPointsBack() async throws {
        try await withDatabaseServer(listening: true) { address, environment in
            try await asUsers(["farmer", "alt", "rep1", "rep2", "rep3"], address, environment) { (users: [Conversation]) async throws in
                let (farmer, alt) = (users[0], users[1])
                let hunt = try await farmer.makeHunt("PUBLIC", name: "farm", stops: [StopPlan(points: 10_000), StopPlan(north: 1, points: 10_000)])
                let honest = try await farmer.makeHunt("", name: "honest", stops: [StopPlan(north: 5, points: 7)])
                try await alt.join(hunt)
                try await alt.join(honest)
                _ = try await alt.checkIn(hunt.stops[0], at: hunt.places[0])
                _ = try await alt.checkIn(hunt.stops[1], at: hunt.places[1])
                _ = try await alt.checkIn(honest.stops[0], at: honest.places[0])
                let watch = try await alt.watchHunt(hunt.id)
                try await eventually("the farmed points are ranked") { (try? await alt.ok("PROFILE")["points"].int) == 20_007 }
                let before = try await alt.ok("PROFILE")
                #expect(before["hunts_played"].int == 2 && before["hunts_completed"].int == 2)

                try await asUser("mod", role: .moderator, address, environment) { (mod: Conversation) async throws in
                    for reporter in users[2...] { _ = try await reporter.ok("REPORT \(hunt.id) spam") }
                    _ = try await mod.ok("CLAIM")
                    _ = try await mod.ok("RESOLVE \(hunt.id) remove")
                    let closing = try await alt.event()
                    let events = eventType(closing) == "closed" ? [closing] : [closing, try await alt.event()]
                    let closed = try #require(events.last)
                    #expect(try closed["watch"].string == watch && closed["reason"].string == "removed")
                    let log = try await mod.ok("MODLOG")["entries"].array
                    let removal = try #require(try log.first { try $0["action"].string == "remove" })
                    #expect(try removal["note"].string.contains("its points left the rankings (1 player)"))
                }
                try await eventually("the points leave the ranking") { (try? await alt.ok("PROFILE")["points"].int) == 7 }
                let after = try await alt.ok("PROFILE")
                #expect(after["hunts_played"].int == 1 && after["hunts_completed"].int == 1 && after["stops_found"].int == 1)
                let ranking = try await alt.ok("RANKING")["entries"].array
                #expect(try ranking.map { try $0["player"].string } == ["alt"] && ranking.first?["points"].int == 7)
                // The database agrees: the totals are a recount of the check-ins that still count.
                let totals = try await environment.pool.query("SELECT points FROM user_scores s JOIN users u ON u.id = s.user_id WHERE u.name = 'alt'")
                #expect(try totals[0].int("points") as Int == 7)
            }
        }
    }

    @Test("rates: HINT draws from the host's REPLY bucket, CHECKIN with PHOTO from POSTPHOTO's, JOIN and LEAVE share one")
    func newRates() async throws {
        let rates = WriteRates(
            post: nil, photo: RateLimit(count: 1, seconds: 600), reply: RateLimit(count: 2, seconds: 600), report: nil,
            join: RateLimit(count: 3, seconds: 600))
        try await withDatabaseServer(configure: { $0.writeRates = rates }) { address, environment in
            try await asUsers(["host", "player"], address, environment) { (users: [Conversation]) async throws in
                let (host, player) = (users[0], users[1])
                let hunt = try await host.makeHunt(stops: [StopPlan(options: "PROOF photo"), StopPlan(north: 30, options: "PROOF photo")])
                #expect(try await host.call("HINT \(hunt.id) one") == "OK true")
                #expect(try await host.call("HINT \(hunt.id) two") == "OK true")
                expectError(try await host.call("HINT \(hunt.id) three"), "RATE_LIMITED")
                expectError(try await host.call("REPLY \(hunt.id) chat"), "RATE_LIMITED")

                try await player.join(hunt)
                _ = try await player.checkIn(hunt.stops[0], at: hunt.places[0], photoOption)
                expectError(try await player.checkInReply(hunt.stops[1], at: hunt.places[1], photoOption), "RATE_LIMITED")

                #expect(try await player.call("LEAVE \(hunt.id)") == "OK true")
                _ = try await player.join(hunt)
                expectError(try await player.call("LEAVE \(hunt.id)"), "RATE_LIMITED")
                expectError(try await player.call("JOIN \(hunt.code)"), "RATE_LIMITED")
            }
        }
    }

    @Test("EXTEND past what a hunt may last is BAD_ARGUMENT, never INTERNAL", arguments: [
        ("DURATION 2592000", "1", false),
        ("DURATION 60", "2592000", false),
        ("", "3153600000", true),
    ])
    func extendBounds(options: String, seconds: String, start: Bool) async throws {
        try await withDatabaseServer { address, environment in
            try await asUser("host", address, environment) { (host: Conversation) async throws in
                let hunt = try await host.makeHunt("PUBLIC \(options)", stops: [StopPlan()], start: start)
                // A day first for the running one: then 100 years more is past the bound.
                if start { _ = try await host.ok("EXTEND \(hunt.id) 86400") }
                expectError(try await host.call("EXTEND \(hunt.id) \(seconds)"), "BAD_ARGUMENT")
            }
        }
    }

    @Test("who hears NOT_FOUND and who FORBIDDEN for a host's commands: a player and anyone on a public hunt FORBIDDEN, a stranger to a private hunt NOT_FOUND")
    func refusals() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "player", "stranger"], address, environment) { (users: [Conversation]) async throws in
                let (host, player, stranger) = (users[0], users[1], users[2])
                let secret = try await host.makeHunt("", name: "secret", stops: [StopPlan(), StopPlan(north: 10)], start: false)
                let open = try await host.makeHunt("PUBLIC", name: "open", stops: [StopPlan(), StopPlan(north: 10)], start: false)
                try await player.join(secret)
                try await player.join(open)
                func lines(_ hunt: MadeHunt) -> [String] {
                    [
                        "EXTEND \(hunt.id) 60", "STARTHUNT \(hunt.id)", "ENDHUNT \(hunt.id)", StopPlan(north: 40).line(hunt: hunt.id),
                        "REMOVESTOP \(hunt.stops[1])", "HINT \(hunt.id) psst", "REVIEW \(hunt.id)",
                    ]
                }
                for line in lines(secret) {
                    expectError(try await player.call(line), "FORBIDDEN")
                    expectError(try await stranger.call(line), "NOT_FOUND")
                }
                for line in lines(open) {
                    expectError(try await player.call(line), "FORBIDDEN")
                    expectError(try await stranger.call(line), "FORBIDDEN")
                }
            }
        }
    }

    @Test("stop codes match as join codes do: any case, surrounding spaces ignored, and a right code typed so spends no guess")
    func stopCodesIgnoreCase() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "player"], address, environment) { (users: [Conversation]) async throws in
                let (host, player) = (users[0], users[1])
                let hunt = try await host.makeHunt(stops: [StopPlan(options: "PROOF code CODE BRIDGE-77"), StopPlan(north: 20, options: "PROOF code CODE \(quoted("Old Oak"))")])
                try await player.join(hunt)
                _ = try await player.checkIn(hunt.stops[0], at: hunt.places[0], "CODE \(quoted(" bridge-77 "))")
                _ = try await player.checkIn(hunt.stops[1], at: hunt.places[1], "CODE \(quoted("OLD OAK"))")
                let guesses = try await environment.pool.query("SELECT count(*) AS n FROM code_guesses")
                #expect(try guesses[0].int("n") as Int == 0)
            }
        }
    }

    @Test("a REQUEST key's request is stored as an HMAC under the daemons' secret, never as a bare hash")
    func requestDigestIsKeyed() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "player"], address, environment) { (users: [Conversation]) async throws in
                let (host, player) = (users[0], users[1])
                let hunt = try await host.makeHunt(stops: [StopPlan()])
                try await player.join(hunt)
                #expect(try await player.call("LEAVE \(hunt.id) REQUEST leave-key-1") == "OK true")
                #expect(try await player.call("LEAVE \(hunt.id) REQUEST leave-key-1") == "OK true")
                let canonical = ["LEAVE", hunt.id, ""].map { "\($0.utf8.count):\($0)" }.joined()
                let rows = try await environment.pool.query("SELECT digest FROM request_keys", binaryResults: true)
                let secrets = try await environment.pool.query("SELECT value FROM daemon_secrets WHERE name = 'request_keys'", binaryResults: true)
                let digest = try #require(try rows.first?.bytes("digest"))
                let secret = try #require(try secrets.first?.bytes("value"))
                #expect(secret.count == 32)
                #expect(digest == Digest.hmacSHA256(key: secret, canonical))
                #expect(digest != Digest.sha256(canonical))
            }
        }
    }

    @Test("WATCH … SNAPSHOT holds every pin its daemon acknowledged before it, however many were written at once")
    func snapshotHoldsOwnPins() async throws {
        try await withDatabaseServer(listening: true) { address, environment in
            try await registerAll(["poster"], at: address)
            for round in 0 ..< 3 {
                try await asCrowd((0 ..< 12).map { _ in ("poster", address) }) { crowd in
                    let replies = try await atOnce(crowd, crowd.indices.map { "POST \(huntOrigin.moved(north: Double($0))) round-\(round)-\($0)" })
                    let ids = try replies.map { try JSONObject(okLine: $0)["pin"]["id"].string }
                    let (_, events) = try await replyAndEvents(crowd[0], "WATCH \(huntOrigin) 1000 SNAPSHOT")
                    var snapshot: [String] = events.compactMap { eventType($0) == "pin" ? try? $0["pin"]["id"].string : nil }
                    if !events.contains(where: { eventType($0) == "ready" }) {
                        while true {
                            let event = try await crowd[0].event()
                            if eventType(event) == "ready" { break }
                            if eventType(event) == "pin" { snapshot.append(try event["pin"]["id"].string) }
                        }
                    }
                    #expect(Set(ids).isSubset(of: Set(snapshot)), "round \(round): \(Set(ids).subtracting(snapshot).count) acknowledged pins came after ready")
                }
            }
        }
    }
}
