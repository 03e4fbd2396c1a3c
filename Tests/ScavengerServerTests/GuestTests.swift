import Foundation
import NIOCore
import Postgres
@testable import ScavengerBoard
import ScavengerCore
import ScavengerTestSupport
import Testing

// Guests (protocol 1.5, "a class gets in"): `CREATEHUNT … GUESTS [n]`, `JOIN code AS name GUEST`
// on a connection with no login, what a guest may and may not do, their place on the hunt's
// board and nowhere else, their session until a day after the hunt, REGISTER keeping their
// place, and a class of thirty joining from one address in the same instant.

extension Conversation {
    /// `JOIN code AS name GUEST`: the raw reply line.
    func joinAsGuestReply(_ hunt: MadeHunt, as name: String, _ options: String = "") async throws -> String {
        try await call(request("JOIN \(hunt.code) AS \(name)", options, "GUEST"))
    }

    /// Joins `hunt` as guest `name`, which must succeed: `{"hunt", "token", "user"}`.
    @discardableResult
    func joinAsGuest(_ hunt: MadeHunt, as name: String, _ options: String = "") async throws -> JSONObject {
        try JSONObject(okLine: try await joinAsGuestReply(hunt, as: name, options))
    }
}

@Suite("Guests over TCP with PostgreSQL (protocol 1.5)", .timeLimit(.minutes(10)))
struct GuestTests {
    @Test("CREATEHUNT … GUESTS [n]: the hunt's guests, default 100, 1–1,000; null without")
    func createWithGuests() async throws {
        try await withDatabaseServer { address, environment in
            try await asUser("host", address, environment) { (host: Conversation) async throws in
                #expect(try await host.createHunt("GUESTS")["guests"].int == 100)
                #expect(try await host.createHunt("GUESTS 30 PUBLIC")["guests"].int == 30)
                #expect(try await host.createHunt("TEAMS GUESTS 1000")["guests"].int == 1000)
                #expect(try await host.createHunt("PUBLIC")["guests"].isNull)
                for bad in ["GUESTS 0", "GUESTS 1001", "GUESTS GUESTS", "GUESTS many"] {
                    expectError(try await host.call("CREATEHUNT \"Bad\" \(bad)"), "BAD_ARGUMENT")
                }
                #expect(try await host.ok("HUNTS MINE")["hunts"].array.count == 4)
            }
        }
    }

    @Test("JOIN … GUEST: a guest session that plays the hunt, on its board only; every other write FORBIDDEN")
    func guestPlays() async throws {
        try await withDatabaseServer { address, environment in
            try await asUser("host", address, environment) { (host: Conversation) async throws in
                let hunt = try await host.makeHunt("GUESTS 5", stops: [StopPlan(points: 10), StopPlan(north: 500, points: 5)])
                let other = try await host.makeHunt("PUBLIC", name: "Other", stops: [StopPlan()])
                let pin = try await host.ok("POST 5 5 \(quoted("a pin"))")["pin"]["id"].string
                try await converse(address) { (pupil: Conversation) async throws in
                    let joined = try await pupil.joinAsGuest(hunt, as: "host")
                    // A guest's name need be unique in the hunt only: "host" is an account's.
                    #expect(try joined["hunt"]["id"].string == hunt.id)
                    #expect(try joined["user"]["name"].string == "host")
                    #expect(try joined["user"]["role"].string == "user")
                    #expect(joined["user"]["guest"].value as? Bool == true)
                    #expect(try joined["token"].string.count >= 32)
                    #expect(try await pupil.ok("WHOAMI")["user"]["guest"].value as? Bool == true)
                    let found = try await pupil.checkIn(hunt.stops[0], at: hunt.places[0])
                    #expect(found["score"]["points"].int == 10)
                    #expect(try players(try await pupil.leaderboard(hunt.id)) == ["host"])
                    #expect(try await pupil.hunt(hunt.id)["me"]["points"].int == 10)
                    _ = try await pupil.ok("REPLY \(hunt.id) \(quoted("found it!"))")
                    #expect(try await pupil.ok("REPLIES \(hunt.id)")["replies"].array.count == 1)
                    _ = try await pupil.ok("REPORT \(hunt.id) other")
                    for refused in [
                        "POST 5 5 \(quoted("hi"))", "CREATEHUNT \(quoted("Mine"))", "JOIN \(other.code)", "REPLY \(pin) \(quoted("hi"))",
                        "REPORT \(pin) spam",
                    ] {
                        expectError(try await pupil.call(refused), "FORBIDDEN")
                    }
                    // Never in RANKING, no PROFILE, no BADGES: the account "host" is who those name.
                    let ranking = try await pupil.ok("RANKING")["entries"].array
                    #expect(try ranking.map { try $0["player"].string }.isEmpty, "\(ranking.map(\.value))")
                    #expect(try await pupil.ok("PROFILE host")["points"].int == 0)
                    // Their own: none (not the account "host"'s).
                    expectError(try await pupil.call("PROFILE"), "NOT_FOUND")
                    expectError(try await pupil.call("BADGES"), "NOT_FOUND")
                    // The host's own account is untouched: it still logs in.
                    try await converse(address) { (again: Conversation) async throws in
                        #expect(try await again.ok("LOGIN host password1")["user"]["guest"].isNull)
                    }
                }
                // The guest's standing is the hunt's, as its host reads it.
                #expect(try players(try await host.leaderboard(hunt.id)) == ["host"])
            }
        }
    }

    @Test("JOIN … GUEST refused: no guests, a login, a full hunt, a name taken in the hunt, no AS, a REQUEST key, an id")
    func refusals() async throws {
        try await withDatabaseServer { address, environment in
            try await asUser("host", address, environment) { (host: Conversation) async throws in
                let hunt = try await host.makeHunt("GUESTS 2", stops: [StopPlan()])
                let accountsOnly = try await host.makeHunt("PUBLIC", name: "Accounts", stops: [StopPlan()])
                try await converse(address) { (first: Conversation) async throws in
                    _ = try await first.joinAsGuest(hunt, as: "ana")
                    // A guest's connection has a login: GUEST again is BAD_ARGUMENT.
                    expectError(try await first.joinAsGuestReply(hunt, as: "ana2"), "BAD_ARGUMENT")
                }
                expectError(try await host.joinAsGuestReply(hunt, as: "hosty"), "BAD_ARGUMENT")
                try await converse(address) { (client: Conversation) async throws in
                    expectError(try await client.joinAsGuestReply(accountsOnly, as: "bob"), "BAD_ARGUMENT")
                    expectError(try await client.joinAsGuestReply(hunt, as: "ANA"), "CONFLICT")
                    expectError(try await client.call("JOIN \(hunt.code) GUEST"), "BAD_ARGUMENT")
                    expectError(try await client.call("JOIN \(hunt.id) AS bob GUEST"), "BAD_ARGUMENT")
                    expectError(try await client.joinAsGuestReply(hunt, as: "bob", "REQUEST k1"), "BAD_ARGUMENT")
                    expectError(try await client.joinAsGuestReply(hunt, as: "x"), "BAD_ARGUMENT")
                    _ = try await client.joinAsGuest(hunt, as: "bob")
                }
                try await converse(address) { (third: Conversation) async throws in
                    expectError(try await third.joinAsGuestReply(hunt, as: "cyd"), "CONFLICT")
                }
                // Refusals changed nothing: two guests, two players.
                #expect(try await host.hunt(hunt.id)["hunt"]["players"].int == 2)
            }
        }
    }

    @Test("AUTH resumes a guest on another connection until a day after the hunt ends; LOGOUT ends it")
    func guestSessions() async throws {
        let clock = HeldClock()
        try await withDatabaseServer(clock: clock) { address, environment in
            try await asUser("host", address, environment) { (host: Conversation) async throws in
                let hunt = try await host.makeHunt("GUESTS", stops: [StopPlan()])
                var tokens: [String] = []
                for name in ["ana", "bob"] {
                    try await converse(address) { (pupil: Conversation) async throws in
                        tokens.append(try await pupil.joinAsGuest(hunt, as: name)["token"].string)
                    }
                }
                try await converse(address) { (later: Conversation) async throws in
                    #expect(try await later.ok("AUTH \(tokens[0])")["user"]["guest"].value as? Bool == true)
                    _ = try await later.checkIn(hunt.stops[0], at: hunt.places[0])
                    _ = try await later.ok("LOGOUT")
                    expectError(try await later.call("AUTH \(tokens[0])"), "UNAUTHORIZED")
                }
                // The day after the end is counted from the hunt's `ends` (the database's clock), on
                // the daemon's held clock, however long the test itself has taken.
                let ended = try parseTime(try await host.ok("ENDHUNT \(hunt.id)")["hunt"]["ends"])
                let endsAt = Timestamp(microseconds: Int64((ended.timeIntervalSince1970 * 1_000_000).rounded()))
                clock.set(to: Timestamp(microseconds: endsAt.microseconds + 23 * 3_600_000_000))
                try await converse(address) { (after: Conversation) async throws in
                    #expect(try await after.ok("AUTH \(tokens[1])")["user"]["name"].string == "bob")
                    #expect(try await after.leaderboard(hunt.id).count == 2)
                }
                clock.set(to: Timestamp(microseconds: endsAt.microseconds + 24 * 3_600_000_000 + 1_000_000))
                try await converse(address) { (tooLate: Conversation) async throws in
                    expectError(try await tooLate.call("AUTH \(tokens[1])"), "UNAUTHORIZED")
                }
            }
        }
    }

    @Test("REGISTER on a guest's connection keeps their place, check-ins and points, and puts them in RANKING")
    func registerKeepsPlace() async throws {
        try await withDatabaseServer { address, environment in
            try await asUser("host", address, environment) { (host: Conversation) async throws in
                let hunt = try await host.makeHunt("GUESTS", stops: [StopPlan(points: 7), StopPlan(north: 500, points: 3)])
                try await converse(address) { (pupil: Conversation) async throws in
                    let token = try await pupil.joinAsGuest(hunt, as: "pupil7")["token"].string
                    _ = try await pupil.checkIn(hunt.stops[0], at: hunt.places[0])
                    #expect(try await pupil.ok("RANKING")["entries"].array.isEmpty)
                    // A taken username is refused as any REGISTER's, and the guest stays one.
                    expectError(try await pupil.call("REGISTER host other@example.org password1"), "CONFLICT")
                    let account = try await pupil.ok("REGISTER mira mira@example.org password1")
                    #expect(try account["user"]["name"].string == "mira")
                    #expect(account["user"]["guest"].isNull)
                    // The same place on the board (the name in the hunt stays), the same points.
                    #expect(try players(try await pupil.leaderboard(hunt.id)) == ["pupil7"])
                    #expect(try await pupil.hunt(hunt.id)["me"]["points"].int == 7)
                    _ = try await pupil.checkIn(hunt.stops[1], at: hunt.places[1])
                    #expect(try await pupil.hunt(hunt.id)["me"]["points"].int == 10)
                    let ranking = try await pupil.ok("RANKING")["entries"].array
                    #expect(try ranking.map { "\(try $0["player"].string) \($0["points"].int ?? -1)" } == ["mira 10"])
                    #expect(try await pupil.ok("PROFILE mira")["points"].int == 10)
                    // Now an account: it writes, and its old guest token is gone.
                    _ = try await pupil.ok("POST 5 5 \(quoted("hello"))")
                    try await converse(address) { (old: Conversation) async throws in
                        expectError(try await old.call("AUTH \(token)"), "UNAUTHORIZED")
                        #expect(try await old.ok("LOGIN mira password1")["user"]["name"].string == "mira")
                    }
                }
            }
        }
    }

    @Test("a guest earns no badges; completing the hunt counts on its board")
    func noBadges() async throws {
        try await withDatabaseServer { address, environment in
            try await asUser("host", address, environment) { (host: Conversation) async throws in
                let hunt = try await host.makeHunt("GUESTS BADGE \(quoted("Class star"))", stops: [StopPlan()])
                try await converse(address) { (pupil: Conversation) async throws in
                    _ = try await pupil.joinAsGuest(hunt, as: "star")
                    _ = try await pupil.checkIn(hunt.stops[0], at: hunt.places[0])
                    #expect(try await pupil.hunt(hunt.id)["me"]["found"].array.count == 1)
                }
                let held = try await environment.pool.query("""
                    SELECT count(*) AS n FROM user_badges b JOIN users u ON u.id = b.user_id WHERE u.role = 'guest'
                    """)
                #expect(try held[0].int("n") == 0)
                expectError(try await host.call("BADGES star"), "NOT_FOUND")
            }
        }
    }

    @Test("a class of 30 joins as guests from one address in the same instant: 30 OK, 30 on the board; wrong codes still count")
    func classAtOnce() async throws {
        try await withDatabaseServer(configure: { $0.joinFailureRate = RateLimit(count: 3, seconds: 600) }) { address, environment in
            try await asUser("teacher", address, environment) { (host: Conversation) async throws in
                let hunt = try await host.makeHunt("GUESTS 30", stops: [StopPlan()])
                let gate = Gate()
                let arrivals = Arrivals()
                let replies = try await withThrowingTaskGroup(of: String.self) { group in
                    for index in 0 ..< 30 {
                        group.addTask {
                            try await converseReturning(address, from: "127.0.0.9") { (pupil: Conversation) async throws in
                                _ = try await pupil.ok("PING")
                                arrivals.arrive()
                                await gate.wait()
                                return try await pupil.joinAsGuestReply(hunt, as: "pupil\(index)")
                            }
                        }
                    }
                    try await eventually("every pupil is connected", timeout: .seconds(120)) { arrivals.value == 30 }
                    gate.open()
                    var replies: [String] = []
                    for try await reply in group { replies.append(reply) }
                    return replies
                }
                #expect(replies.filter { $0.hasPrefix("OK ") }.count == 30, "\(replies.filter { !$0.hasPrefix("OK ") })")
                #expect(try await host.leaderboard(hunt.id).count == 30)
                #expect(try await host.hunt(hunt.id)["hunt"]["players"].int == 30)
                // A 31st is one too many; wrong codes from that address run out its guesses.
                try await converse(address, from: "127.0.0.9") { (late: Conversation) async throws in
                    expectError(try await late.joinAsGuestReply(hunt, as: "pupil30"), "CONFLICT")
                    for _ in 0 ..< 3 { expectError(try await late.call("JOIN ZZZZZZ AS lost GUEST"), "NOT_FOUND") }
                    expectError(try await late.call("JOIN ZZZZZZ AS lost GUEST"), "RATE_LIMITED")
                }
            }
        }
    }
}
