import Base64
import Foundation
import ScavengerCore
import ScavengerTestSupport
import Testing

// The time limit only guards against a hang, and it counts the wait for a TestEnvironment.
@Suite("CHECKIN and reviews: proof of presence over TCP with PostgreSQL (protocol 1.2)", .timeLimit(.minutes(10)))
struct CheckInTests {
    // MARK: Place stops

    @Test("a fix inside the radius is accepted and adds the stop's points at once: the score, found_by, HUNT's me, the leaderboard")
    func accepted() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "walker"], address, environment) { (users: [Conversation]) async throws in
                let (host, walker) = (users[0], users[1])
                let hunt = try await host.makeHunt(stops: [StopPlan(radius: 50, points: 25, title: "Fountain")])
                try await walker.join(hunt)
                let fix = hunt.places[0].moved(north: 30, east: 10)
                let reply = try await walker.checkIn(hunt.stops[0], at: fix)
                let checkin = reply["checkin"]
                let fields: Set = ["id", "hunt", "stop", "player", "status", "points", "at", "distance_m", "photo"]
                #expect(fields.isSubset(of: checkin.keys), "\(checkin.keys)")
                #expect(try !checkin["id"].string.isEmpty)
                #expect(try checkin["hunt"].string == hunt.id)
                #expect(try checkin["stop"].string == hunt.stops[0])
                #expect(try checkin["player"].string == "walker")
                #expect(try checkin["status"].string == "accepted")
                #expect(checkin["points"].int == 25)
                let at = try parseTime(checkin["at"])
                #expect(abs((checkin["distance_m"].double ?? -1) - haversine(fix, hunt.places[0])) < 0.5)
                #expect(checkin["photo"].isNull)
                #expect(reply["score"]["points"].int == 25 && reply["score"]["found"].int == 1 && reply["score"]["rank"].int == 1)

                #expect(try await host.hunt(hunt.id)["stops"][0]["found_by"].int == 1)
                let me = try await walker.hunt(hunt.id)["me"]
                #expect(me["points"].int == 25 && me["rank"].int == 1)
                #expect(try me["found"].array.map { try $0.string } == [hunt.stops[0]])
                let entries = try await host.leaderboard(hunt.id)
                let entry = try #require(entries.first)
                #expect(entries.count == 1)
                #expect(try entry["player"].string == "walker")
                #expect(entry["rank"].int == 1 && entry["points"].int == 25 && entry["found"].int == 1)
                #expect(try parseTime(entry["at"]) == at)
            }
        }
    }

    @Test("a fix outside the radius is TOO_FAR with the distance in whole metres, rounded down, and changes nothing", arguments: [
        (51.0, 0.0), (0.0, 75.3), (120.7, -40.2), (-333.3, 444.4), (700.0, 700.0), (-12_345.6, 6_789.1),
    ])
    func tooFar(north: Double, east: Double) async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "walker"], address, environment) { (users: [Conversation]) async throws in
                let (host, walker) = (users[0], users[1])
                let hunt = try await host.makeHunt(stops: [StopPlan(radius: 50, points: 10)])
                try await walker.join(hunt)
                let fix = hunt.places[0].moved(north: north, east: east)
                let distance = haversine(fix, hunt.places[0])
                let reply = try await walker.checkInReply(hunt.stops[0], at: fix)
                let reported = tooFarDistance(reply)
                #expect(reported != nil, "\(reply)")
                if let reported {
                    // Exact, unless the distance is within a hair of a whole metre (where two correct
                    // computations of it may round down to neighbours).
                    let expected = distance.rounded(.down)
                    let nearWhole = distance - expected < 0.001 || expected + 1 - distance < 0.001
                    #expect(abs(Double(reported) - expected) <= (nearWhole ? 1 : 0), "\(reply) for \(distance) m")
                }
                #expect(try await host.hunt(hunt.id)["stops"][0]["found_by"].int == 0)
                #expect(try await walker.hunt(hunt.id)["me"]["points"].int == 0)
                // A refused fix is no check-in: the player may still check in there.
                #expect(try await walker.checkIn(hunt.stops[0], at: hunt.places[0])["checkin"]["status"].string == "accepted")
            }
        }
    }

    /// An ACCURACY case: the stop's proof, the option, and whether the check-in goes through.
    struct AccuracyCase: Sendable, CustomTestStringConvertible {
        let proof: String
        let option: String
        let allowed: Bool
        var testDescription: String { "\(option) at a \(proof) stop of radius 50: \(allowed ? "taken" : "BAD_ARGUMENT")" }
    }

    @Test("ACCURACY larger than the stop's radius is BAD_ARGUMENT at place and photo stops, and never checked at code stops", arguments: [
        AccuracyCase(proof: "place", option: "ACCURACY 0", allowed: true),
        AccuracyCase(proof: "place", option: "ACCURACY 50", allowed: true),
        AccuracyCase(proof: "place", option: "ACCURACY 12.5", allowed: true),
        AccuracyCase(proof: "place", option: "ACCURACY 50.5", allowed: false),
        AccuracyCase(proof: "place", option: "ACCURACY 5000", allowed: false),
        AccuracyCase(proof: "place", option: "ACCURACY -1", allowed: false),
        AccuracyCase(proof: "place", option: "ACCURACY nan", allowed: false),
        AccuracyCase(proof: "photo", option: "ACCURACY 51", allowed: false),
        AccuracyCase(proof: "photo", option: "ACCURACY 49", allowed: true),
        AccuracyCase(proof: "code", option: "ACCURACY 5000", allowed: true),
    ])
    func accuracy(scenario: AccuracyCase) async throws {
        let (proof, option, allowed) = (scenario.proof, scenario.option, scenario.allowed)
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "walker"], address, environment) { (users: [Conversation]) async throws in
                let (host, walker) = (users[0], users[1])
                let proofOptions = ["place": "", "photo": "PROOF photo", "code": "PROOF code CODE letmein"][proof]!
                let hunt = try await host.makeHunt(stops: [StopPlan(radius: 50, options: proofOptions)])
                try await walker.join(hunt)
                let evidence = ["place": "", "photo": photoOption, "code": "CODE letmein"][proof]!
                let reply = try await walker.checkInReply(hunt.stops[0], at: hunt.places[0].moved(north: 10), request(option, evidence))
                if allowed {
                    let status = try JSONObject(okLine: reply)["checkin"]["status"].string
                    #expect(status == (proof == "photo" ? "pending" : "accepted"))
                } else {
                    expectError(reply, "BAD_ARGUMENT")
                    #expect(try await host.ok("REVIEW \(hunt.id)")["checkins"].array.isEmpty)
                    #expect(try await host.hunt(hunt.id)["stops"][0]["found_by"].int == 0)
                }
            }
        }
    }

    @Test("CHECKIN refuses bad fixes", arguments: ["91 0", "0 180.5", "nan 2.35", "48.85", "48.85 2.35 EXTRA 1"])
    func badFixes(fix: String) async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "walker"], address, environment) { (users: [Conversation]) async throws in
                let (host, walker) = (users[0], users[1])
                let hunt = try await host.makeHunt(stops: [StopPlan()])
                try await walker.join(hunt)
                expectError(try await walker.call("CHECKIN \(hunt.stops[0]) \(fix)"), "BAD_ARGUMENT")
            }
        }
    }

    // MARK: Code stops

    @Test("a code stop: the right code checks in wherever the fix is (its distance recorded); a wrong one is FORBIDDEN")
    func codeStop() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "walker"], address, environment) { (users: [Conversation]) async throws in
                let (host, walker) = (users[0], users[1])
                let hunt = try await host.makeHunt(stops: [StopPlan(radius: 20, points: 30, options: "PROOF code CODE \(quoted("open sesame"))")])
                try await walker.join(hunt)
                let fix = hunt.places[0].moved(north: 2500, east: -900)
                expectError(try await walker.checkInReply(hunt.stops[0], at: hunt.places[0], "CODE \(quoted("open sesame!"))"), "FORBIDDEN")
                #expect(try await host.hunt(hunt.id)["stops"][0]["found_by"].int == 0)
                let reply = try await walker.checkIn(hunt.stops[0], at: fix, "CODE \(quoted("open sesame"))")
                #expect(try reply["checkin"]["status"].string == "accepted")
                #expect(reply["checkin"]["points"].int == 30)
                #expect(abs((reply["checkin"]["distance_m"].double ?? -1) - haversine(fix, hunt.places[0])) < 1)
                #expect(reply["score"]["points"].int == 30)
                #expect(try await host.hunt(hunt.id)["stops"][0]["found_by"].int == 1)
            }
        }
    }

    @Test("after as many wrong codes as the rules allow, every CHECKIN of that player at that stop is RATE_LIMITED", arguments: [5, 3, 1])
    func codeLockout(guesses: Int) async throws {
        // 5 is the default; the others are configured.
        try await withDatabaseServer(configure: { if guesses != 5 { $0.hunts.codeGuesses = guesses } }) { address, environment in
            try await asUsers(["host", "guesser", "other"], address, environment) { (users: [Conversation]) async throws in
                let (host, guesser, other) = (users[0], users[1], users[2])
                let hunt = try await host.makeHunt(stops: [
                    StopPlan(points: 10, options: "PROOF code CODE right-one"), StopPlan(north: 100, points: 20, options: "PROOF code CODE second-one"),
                ])
                try await guesser.join(hunt)
                try await other.join(hunt)
                for index in 1 ... guesses {
                    expectError(try await guesser.checkInReply(hunt.stops[0], at: hunt.places[0], "CODE wrong-\(index)"), "FORBIDDEN")
                }
                for code in ["right-one", "wrong-again"] {
                    let reply = try await guesser.checkInReply(hunt.stops[0], at: hunt.places[0], "CODE \(code)")
                    let words = reply.split(separator: " ", maxSplits: 3)
                    #expect(words.count == 4 && words[0] == "ERR" && words[1] == "RATE_LIMITED", "\(reply)")
                    if words.count == 4, let seconds = Int(words[2]) {
                        #expect((1 ... 600).contains(seconds), "\(reply)")
                    } else {
                        Issue.record("no seconds to wait in \(reply)")
                    }
                }
                // The lockout is this player's, at this stop.
                #expect(try await other.checkIn(hunt.stops[0], at: hunt.places[0], "CODE right-one")["checkin"]["status"].string == "accepted")
                #expect(try await guesser.checkIn(hunt.stops[1], at: hunt.places[1], "CODE second-one")["checkin"]["status"].string == "accepted")
                #expect(try await host.hunt(hunt.id)["stops"][0]["found_by"].int == 1)
            }
        }
    }

    @Test("fewer wrong codes than the limit lock nothing out")
    func fewerWrongCodes() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "guesser"], address, environment) { (users: [Conversation]) async throws in
                let (host, guesser) = (users[0], users[1])
                let hunt = try await host.makeHunt(stops: [StopPlan(options: "PROOF code CODE right-one")])
                try await guesser.join(hunt)
                for index in 1 ... 4 {
                    expectError(try await guesser.checkInReply(hunt.stops[0], at: hunt.places[0], "CODE wrong-\(index)"), "FORBIDDEN")
                }
                #expect(try await guesser.checkIn(hunt.stops[0], at: hunt.places[0], "CODE right-one")["checkin"]["status"].string == "accepted")
            }
        }
    }

    @Test("the lockout ends when the window has passed the wrong codes")
    func lockoutEnds() async throws {
        try await withDatabaseServer(configure: { $0.hunts.codeGuesses = 2; $0.hunts.codeGuessWindowSeconds = 600 }) { address, environment in
            try await asUsers(["host", "guesser"], address, environment) { (users: [Conversation]) async throws in
                let (host, guesser) = (users[0], users[1])
                let hunt = try await host.makeHunt(stops: [StopPlan(options: "PROOF code CODE right-one")])
                try await guesser.join(hunt)
                for index in 1 ... 2 {
                    expectError(try await guesser.checkInReply(hunt.stops[0], at: hunt.places[0], "CODE wrong-\(index)"), "FORBIDDEN")
                }
                expectError(try await guesser.checkInReply(hunt.stops[0], at: hunt.places[0], "CODE right-one"), "RATE_LIMITED")
                // The window passes the wrong codes (moved back in the database, whose clock
                // judges them, rather than waited for): the right code checks in.
                try await environment.pool.query("UPDATE code_guesses SET at = at - interval '601 seconds'", idempotent: false)
                #expect(try await guesser.checkIn(hunt.stops[0], at: hunt.places[0], "CODE right-one")["checkin"]["status"].string == "accepted")
                #expect(try await host.hunt(hunt.id)["stops"][0]["found_by"].int == 1)
            }
        }
    }

    // MARK: Who, when, where

    @Test("one check-in per stop: again while accepted, pending or flagged is CONFLICT; after a rejection, another try")
    func oncePerStop() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "walker"], address, environment) { (users: [Conversation]) async throws in
                let (host, walker) = (users[0], users[1])
                let hunt = try await host.makeHunt(stops: [
                    StopPlan(points: 10), StopPlan(north: 100, points: 20, options: "PROOF photo"), StopPlan(north: 50_000, points: 30),
                ])
                try await walker.join(hunt)
                let accepted = try await walker.checkIn(hunt.stops[0], at: hunt.places[0])["checkin"]["id"].string
                expectError(try await walker.checkInReply(hunt.stops[0], at: hunt.places[0]), "CONFLICT")
                let pending = try await walker.checkIn(hunt.stops[1], at: hunt.places[1], photoOption)["checkin"]
                #expect(try pending["status"].string == "pending")
                expectError(try await walker.checkInReply(hunt.stops[1], at: hunt.places[1], photoOption), "CONFLICT")

                #expect(try await host.ok("REJECT \(pending["id"].string)")["checkin"]["status"].string == "rejected")
                let retried = try await walker.checkIn(hunt.stops[1], at: hunt.places[1], photoOption)["checkin"]
                #expect(try retried["status"].string == "pending")
                #expect(try retried["id"].string != pending["id"].string)
                expectError(try await walker.checkInReply(hunt.stops[1], at: hunt.places[1], photoOption), "CONFLICT")

                _ = try await host.ok("REJECT \(accepted)")
                #expect(try await walker.checkIn(hunt.stops[0], at: hunt.places[0])["checkin"]["status"].string == "accepted")

                // 50 km in moments: flagged, and then as taken as any other.
                #expect(try await walker.checkIn(hunt.stops[2], at: hunt.places[2])["checkin"]["status"].string == "flagged")
                expectError(try await walker.checkInReply(hunt.stops[2], at: hunt.places[2]), "CONFLICT")
                #expect(try await walker.hunt(hunt.id)["me"]["points"].int == 10)
            }
        }
    }

    @Test("CHECKIN needs the hunt running: before its start and after its end, CONFLICT")
    func notRunning() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "walker"], address, environment) { (users: [Conversation]) async throws in
                let (host, walker) = (users[0], users[1])
                let hunt = try await host.makeHunt(stops: [StopPlan(), StopPlan(north: 100)], start: false)
                try await walker.join(hunt)
                expectError(try await walker.checkInReply(hunt.stops[0], at: hunt.places[0]), "CONFLICT")
                _ = try await host.ok("STARTHUNT \(hunt.id)")
                _ = try await walker.checkIn(hunt.stops[0], at: hunt.places[0])
                _ = try await host.ok("ENDHUNT \(hunt.id)")
                expectError(try await walker.checkInReply(hunt.stops[1], at: hunt.places[1]), "CONFLICT")
                #expect(try await walker.hunt(hunt.id)["me"]["points"].int == 10)
            }
        }
    }

    @Test("an ordered hunt: a check-in anywhere but the player's next stop is CONFLICT")
    func orderedWrongStop() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "walker"], address, environment) { (users: [Conversation]) async throws in
                let (host, walker) = (users[0], users[1])
                let hunt = try await host.makeHunt("PUBLIC ORDERED", stops: [StopPlan(), StopPlan(north: 200), StopPlan(north: 400)])
                try await walker.join(hunt)
                expectError(try await walker.checkInReply(hunt.stops[1], at: hunt.places[1]), "CONFLICT")
                expectError(try await walker.checkInReply(hunt.stops[2], at: hunt.places[2]), "CONFLICT")
                _ = try await walker.checkIn(hunt.stops[0], at: hunt.places[0])
                expectError(try await walker.checkInReply(hunt.stops[2], at: hunt.places[2]), "CONFLICT")
                _ = try await walker.checkIn(hunt.stops[1], at: hunt.places[1])
                _ = try await walker.checkIn(hunt.stops[2], at: hunt.places[2])
                let me = try await walker.hunt(hunt.id)["me"]
                #expect(me["points"].int == 30)
                #expect(try Set(me["found"].array.map { try $0.string }) == Set(hunt.stops))
            }
        }
    }

    @Test("only players check in: the host, strangers and those who left are FORBIDDEN; no login is UNAUTHORIZED")
    func nonPlayers() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "stranger", "leaver"], address, environment) { (users: [Conversation]) async throws in
                let (host, stranger, leaver) = (users[0], users[1], users[2])
                let hunt = try await host.makeHunt(stops: [StopPlan()])
                try await leaver.join(hunt)
                _ = try await leaver.ok("LEAVE \(hunt.id)")
                for client in [host, stranger, leaver] {
                    expectError(try await client.checkInReply(hunt.stops[0], at: hunt.places[0]), "FORBIDDEN")
                }
                expectError(try await converseReturning(address) { try await $0.checkInReply(hunt.stops[0], at: hunt.places[0]) }, "UNAUTHORIZED")
                let pin = try await host.ok("POST \(huntOrigin) hello")["pin"]["id"].string
                try await leaver.join(hunt)
                expectError(try await leaver.checkInReply(pin, at: huntOrigin), "NOT_FOUND")
                #expect(try await host.hunt(hunt.id)["stops"][0]["found_by"].int == 0)
            }
        }
    }

    // MARK: Photo stops

    @Test("a photo stop: PHOTO needed, the check-in pending and worth nothing until approved, its photo cleaned as POSTPHOTO's")
    func photoStop() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "snapper", "other"], address, environment) { (users: [Conversation]) async throws in
                let (host, snapper, other) = (users[0], users[1], users[2])
                let hunt = try await host.makeHunt(stops: [StopPlan(radius: 40, points: 40, options: "PROOF photo")])
                try await snapper.join(hunt)
                try await other.join(hunt)
                let stop = hunt.stops[0]
                expectError(try await snapper.checkInReply(stop, at: hunt.places[0]), "BAD_ARGUMENT")
                expectError(try await snapper.checkInReply(stop, at: hunt.places[0], "PHOTO abc"), "BAD_ARGUMENT")
                expectError(try await snapper.checkInReply(stop, at: hunt.places[0], "PHOTO \(Base64.encode(Array("not an image".utf8)))"), "BAD_ARGUMENT")
                let far = hunt.places[0].moved(north: 500)
                let tooFar = try await snapper.checkInReply(stop, at: far, photoOption)
                #expect(tooFarDistance(tooFar).map { abs(Double($0) - haversine(far, hunt.places[0]).rounded(.down)) <= 1 } == true, "\(tooFar)")
                #expect(try await host.ok("REVIEW \(hunt.id)")["checkins"].array.isEmpty)

                let camera = PhotoFixtures.progressiveJPEG
                let reply = try await snapper.checkIn(stop, at: hunt.places[0], "PHOTO \(Base64.encode(camera))")
                let checkin = reply["checkin"]
                #expect(try checkin["status"].string == "pending")
                #expect(checkin["points"].int == 0)
                #expect(try checkin["photo"]["mime"].string == "image/jpeg")
                #expect(checkin["photo"]["bytes"].int == PhotoMetadataTests.cleaned.count)
                #expect(reply["score"]["points"].int == 0 && reply["score"]["found"].int == 0)
                #expect(try await host.hunt(hunt.id)["stops"][0]["found_by"].int == 0)
                #expect(try await host.leaderboard(hunt.id).map { $0["points"].int } == [0, 0])

                let id = try checkin["id"].string
                for (reader, client) in [("the player", snapper), ("the host", host)] {
                    let photo = try await client.ok("PHOTO \(id)")
                    #expect(try photo["mime"].string == "image/jpeg", "\(reader)")
                    let data = try Base64.decode(photo["data"].string)
                    #expect(data == PhotoMetadataTests.cleaned, "\(reader)")
                    for leak in ["ScavengerCam", "Model X", "SN-0123456789", "shot at home"] {
                        #expect(!PhotoFixtures.contains(data, leak), "\(leak) came back to \(reader)")
                    }
                }
                try await asUser("mod", role: .moderator, address, environment) { (mod: Conversation) async throws in
                    #expect(try await mod.ok("PHOTO \(id)")["data"].string == Base64.encode(PhotoMetadataTests.cleaned))
                }
                let refused = try await other.call("PHOTO \(id)")
                #expect(refused.hasPrefix("ERR FORBIDDEN ") || refused.hasPrefix("ERR NOT_FOUND "), "\(refused)")

                let approved = try await host.ok("APPROVE \(id)")["checkin"]
                #expect(try approved["status"].string == "accepted")
                #expect(approved["points"].int == 40)
                #expect(approved["photo"]["bytes"].int == PhotoMetadataTests.cleaned.count)
                #expect(try await host.hunt(hunt.id)["stops"][0]["found_by"].int == 1)
                #expect(try await snapper.hunt(hunt.id)["me"]["points"].int == 40)
            }
        }
    }

    // MARK: Travel speed

    /// A travel-speed case: a first check-in at the origin, then one `metres` north of it at
    /// once (in the same hunt, or in another), under these rules.
    struct TravelCase: Sendable, CustomTestStringConvertible {
        let name: String
        let metres: Double
        var minimumMetres: Double?
        var maximumKmh: Double?
        var otherHunt = false
        let flagged: Bool
        var testDescription: String { name }
    }

    @Test("a fix more than 1 km from the previous check-in's and too fast to reach is flagged and earns nothing", arguments: [
        TravelCase(name: "50 km at once", metres: 50_000, flagged: true),
        TravelCase(name: "50 km at once, in another hunt", metres: 50_000, otherHunt: true, flagged: true),
        TravelCase(name: "900 m at once: within 1 km, never flagged", metres: 900, flagged: false),
        TravelCase(name: "300 m at once, the minimum configured to 100 m", metres: 300, minimumMetres: 100, flagged: true),
        TravelCase(name: "50 km at once, the speed limit configured to 10^12 km/h", metres: 50_000, maximumKmh: 1e12, flagged: false),
    ])
    func travelSpeed(scenario: TravelCase) async throws {
        try await withDatabaseServer(configure: {
            if let minimum = scenario.minimumMetres { $0.hunts.travelCheckMinimumMeters = minimum }
            if let maximum = scenario.maximumKmh { $0.hunts.maximumTravelSpeedKmh = maximum }
        }) { address, environment in
            try await asUsers(["host", "traveller"], address, environment) { (users: [Conversation]) async throws in
                let (host, traveller) = (users[0], users[1])
                let far = StopPlan(north: scenario.metres, points: 20)
                let first = try await host.makeHunt(name: "first", stops: [StopPlan(points: 10)] + (scenario.otherHunt ? [] : [far]))
                var second = first
                if scenario.otherHunt { second = try await host.makeHunt(name: "second", stops: [far]) }
                try await traveller.join(first)
                if scenario.otherHunt { try await traveller.join(second) }
                _ = try await traveller.checkIn(first.stops[0], at: first.places[0])
                let stop = second.stops.last!
                let reply = try await traveller.checkIn(stop, at: far.place)
                let checkin = reply["checkin"]
                #expect(try checkin["status"].string == (scenario.flagged ? "flagged" : "accepted"))
                #expect(checkin["points"].int == (scenario.flagged ? 0 : 20))
                #expect(reply["score"]["points"].int == (scenario.flagged ? 0 : 20) + (scenario.otherHunt ? 0 : 10))
                let review = try await host.ok("REVIEW \(second.id)")["checkins"].array
                #expect(try review.map { try $0["id"].string } == (scenario.flagged ? [checkin["id"].string] : []))
                if scenario.flagged { #expect(try review.first?["status"].string == "flagged") }
                #expect(try await host.hunt(second.id)["stops"].array.last?["found_by"].int == (scenario.flagged ? 0 : 1))
            }
        }
    }

    // MARK: Review

    @Test("REVIEW: pending and flagged check-ins, oldest first, page by page; the host and moderators only")
    func review() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "ann", "bob", "cat"], address, environment) { (users: [Conversation]) async throws in
                let (host, ann, bob, cat) = (users[0], users[1], users[2], users[3])
                let hunt = try await host.makeHunt(stops: [
                    StopPlan(points: 10, options: "PROOF photo"), StopPlan(north: 100, points: 20), StopPlan(north: 50_000, points: 30),
                ])
                for player in [ann, bob, cat] { try await player.join(hunt) }
                let first = try await ann.checkIn(hunt.stops[0], at: hunt.places[0], photoOption)["checkin"]["id"].string
                _ = try await bob.checkIn(hunt.stops[1], at: hunt.places[1])
                let second = try await bob.checkIn(hunt.stops[2], at: hunt.places[2])["checkin"]["id"].string
                let third = try await cat.checkIn(hunt.stops[0], at: hunt.places[0], photoOption)["checkin"]["id"].string

                let listed = try await host.ok("REVIEW \(hunt.id)")
                #expect(try listed["checkins"].array.map { try $0["id"].string } == [first, second, third])
                #expect(try listed["checkins"].array.map { try $0["status"].string } == ["pending", "flagged", "pending"])
                #expect(try listed["checkins"].array.map { try $0["player"].string } == ["ann", "bob", "cat"])
                #expect(listed["next"].isNull)
                for limit in [1, 2] {
                    var ids: [String] = []
                    var cursor: String?
                    for _ in 0 ..< 10 {
                        let page = try await host.ok(request("REVIEW \(hunt.id) LIMIT \(limit)", cursor.map { "CURSOR \(quoted($0))" } ?? ""))
                        #expect(page["checkins"].array.count <= limit)
                        ids += try page["checkins"].array.map { try $0["id"].string }
                        if page["next"].isNull { break }
                        cursor = try page["next"].string
                    }
                    #expect(ids == [first, second, third], "LIMIT \(limit)")
                }
                expectError(try await ann.call("REVIEW \(hunt.id)"), "FORBIDDEN")
                try await asUser("mod", role: .moderator, address, environment) { (mod: Conversation) async throws in
                    #expect(try await mod.ok("REVIEW \(hunt.id)")["checkins"].array.map { try $0["id"].string } == [first, second, third])
                }
                _ = try await host.ok("APPROVE \(second)")
                _ = try await host.ok("REJECT \(first)")
                #expect(try await host.ok("REVIEW \(hunt.id)")["checkins"].array.map { try $0["id"].string } == [third])
            }
        }
    }

    @Test("APPROVE: accepted, points = the stop's + BONUS (0–10,000); a bad BONUS changes nothing", arguments: [
        ("", 0), ("BONUS 0", 0), ("BONUS 15", 15), ("BONUS 10000", 10_000),
        ("BONUS 10001", nil), ("BONUS -1", nil), ("BONUS 1.5", nil), ("BONUS", nil),
    ] as [(String, Int?)])
    func approve(option: String, bonus: Int?) async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "snapper"], address, environment) { (users: [Conversation]) async throws in
                let (host, snapper) = (users[0], users[1])
                let hunt = try await host.makeHunt(stops: [StopPlan(points: 40, options: "PROOF photo")])
                try await snapper.join(hunt)
                let pending = try await snapper.checkIn(hunt.stops[0], at: hunt.places[0], photoOption)["checkin"]
                let id = try pending["id"].string
                let reply = try await host.call(request("APPROVE \(id)", option))
                if let bonus {
                    let checkin = try JSONObject(okLine: reply)["checkin"]
                    #expect(try checkin["status"].string == "accepted")
                    #expect(checkin["points"].int == 40 + bonus)
                    #expect(try checkin["id"].string == id)
                    let entry = try #require(try await host.leaderboard(hunt.id).first)
                    #expect(entry["points"].int == 40 + bonus && entry["found"].int == 1 && entry["rank"].int == 1)
                    #expect(try parseTime(entry["at"]) >= parseTime(pending["at"]))
                    #expect(try await host.hunt(hunt.id)["stops"][0]["found_by"].int == 1)
                    #expect(try await host.ok("REVIEW \(hunt.id)")["checkins"].array.isEmpty)
                } else {
                    expectError(reply, "BAD_ARGUMENT")
                    #expect(try await host.ok("REVIEW \(hunt.id)")["checkins"].array.map { try $0["id"].string } == [id])
                    #expect(try await host.leaderboard(hunt.id).first?["points"].int == 0)
                }
            }
        }
    }

    @Test("APPROVE and REJECT: the host or a moderator, whose reviews MODLOG keeps; reviews go on after the end")
    func reviewers() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "ann", "bob", "cat"], address, environment) { (users: [Conversation]) async throws in
                let (host, ann, bob, cat) = (users[0], users[1], users[2], users[3])
                let hunt = try await host.makeHunt(stops: [StopPlan(points: 40, options: "PROOF photo")])
                var pending: [String] = []
                for player in [ann, bob, cat] {
                    try await player.join(hunt)
                    pending.append(try await player.checkIn(hunt.stops[0], at: hunt.places[0], photoOption)["checkin"]["id"].string)
                }
                // Another player's check-in does not exist to a player; their own they may not review (protocol 1.3).
                for line in ["APPROVE \(pending[0])", "REJECT \(pending[0])"] {
                    expectError(try await bob.call(line), "NOT_FOUND")
                }
                expectError(try await bob.call("APPROVE \(pending[1]) BONUS 5"), "FORBIDDEN")
                let pin = try await host.ok("POST \(huntOrigin) hello")["pin"]["id"].string
                expectError(try await host.call("APPROVE \(pin)"), "NOT_FOUND")
                expectError(try await host.call("REJECT \(pin)"), "NOT_FOUND")

                try await asUser("mod", role: .moderator, address, environment) { (mod: Conversation) async throws in
                    let logged = try await mod.ok("MODLOG")["entries"].array.count
                    #expect(try await mod.ok("APPROVE \(pending[0]) BONUS 5")["checkin"]["points"].int == 45)
                    let rejected = try await mod.ok("REJECT \(pending[1]) NOTE \(quoted("blurry"))")["checkin"]
                    #expect(try rejected["status"].string == "rejected")
                    let entries = try await mod.ok("MODLOG")["entries"].array
                    #expect(entries.count == logged + 2)
                    #expect(try entries.prefix(2).map { try $0["moderator"].string } == ["mod", "mod"])
                }
                #expect(try await host.leaderboard(hunt.id).map { $0["points"].int } == [45, 0, 0])

                _ = try await host.ok("ENDHUNT \(hunt.id)")
                #expect(try await host.ok("APPROVE \(pending[2])")["checkin"]["status"].string == "accepted")
                _ = try await host.ok("REJECT \(pending[0])")
                let entries = try await host.leaderboard(hunt.id)
                #expect(try players(entries) == ["cat", "ann", "bob"])
                #expect(entries.map { $0["points"].int } == [40, 0, 0])
            }
        }
    }
}
