import Foundation
import Logging
import NIOCore
import Postgres
@testable import ScavengerBoard
import ScavengerCore
import ScavengerFeed
import ScavengerTestSupport
import Testing

// Live hunts (protocol 1.2, "Live hunts"): WATCH HUNT's permissions and limit, the `hunt`,
// `hint`, `found` and `score` events, from one daemon and from another on the same database, and
// the leaderboards every daemon keeps in memory. Nothing here is timed: an action's events are
// read up to a marker (a HINT sent after it), and the hunts' change log delivers events in the
// order it logged the changes, so what comes before the marker is exactly what the action caused.

// MARK: Helpers

/// `value` as JSON with sorted keys, for comparing two replies' objects (or printing one).
func canonicalJSON(_ value: JSONObject) -> String {
    guard JSONSerialization.isValidJSONObject(value.value),
          let data = try? JSONSerialization.data(withJSONObject: value.value, options: [.sortedKeys])
    else { return "\(value.value)" }
    return String(decoding: data, as: UTF8.self)
}

/// `hunt` (a host's reply's hunt) without its join code: what a watcher's event must show.
func withoutCode(_ hunt: JSONObject) -> JSONObject {
    var object = (hunt.value as? [String: Any]) ?? [:]
    object["code"] = nil
    return JSONObject(value: object)
}

/// The type of an event ("?" when it has none).
func eventType(_ event: JSONObject) -> String {
    (try? event["type"].string) ?? "?"
}

/// A `found` event as "player stop points".
func foundSummary(_ event: JSONObject) -> String {
    "\((try? event["player"].string) ?? "?") \((try? event["stop"].string) ?? "?") \(event["points"].int.map { "\($0)" } ?? "?")"
}

/// A leaderboard entry as "rank player points found at".
func entrySummary(_ entry: JSONObject) -> String {
    let at = (try? entry["at"].string) ?? (entry["at"].isNull ? "null" : "?")
    return "\(entry["rank"].int.map { "\($0)" } ?? "?") \((try? entry["player"].string) ?? "?") "
        + "\(entry["points"].int.map { "\($0)" } ?? "?") \(entry["found"].int.map { "\($0)" } ?? "?") \(at)"
}

/// The entries of `after` whose points or rank differ from the same player's entry in `before`
/// (or who had none), by player, as canonical JSON.
func changedEntries(from before: [JSONObject], to after: [JSONObject]) throws -> [String: String] {
    var old: [String: String] = [:]
    for entry in before { old[try entry["player"].string] = "\(entry["points"].int ?? -1) \(entry["rank"].int ?? -1)" }
    var changed: [String: String] = [:]
    for entry in after {
        let name = try entry["player"].string
        if old[name] == "\(entry["points"].int ?? -1) \(entry["rank"].int ?? -1)" { continue }
        changed[name] = canonicalJSON(entry)
    }
    return changed
}

/// The last `score` entry heard for each player, as canonical JSON.
func lastScores(_ events: [JSONObject]) throws -> [String: String] {
    var last: [String: String] = [:]
    for event in events where eventType(event) == "score" {
        last[try event["entry"]["player"].string] = canonicalJSON(event["entry"])
    }
    return last
}

extension Conversation {
    /// `WATCH HUNT id`: the watch's id.
    func watchHunt(_ hunt: String) async throws -> String {
        try await ok("WATCH HUNT \(hunt)")["watch"].string
    }

    /// Sends a HINT (as the host) whose text no other has, and returns the text: a watcher's
    /// events before it are those of everything the hunt's log had before it.
    func mark(_ hunt: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
        let text = "marker \(UUID().uuidString)"
        let reply = try await call("HINT \(hunt) \(quoted(text))")
        #expect(reply == "OK true", "HINT: \(reply)", sourceLocation: sourceLocation)
        return text
    }

    /// The events up to the `hint` whose text is `marker`, and that hint's event.
    func huntEvents(through marker: String) async throws -> (events: [JSONObject], marker: JSONObject) {
        var events: [JSONObject] = []
        while true {
            let event = try await event()
            if eventType(event) == "hint", (try? event["text"].string) == marker { return (events, event) }
            events.append(event)
        }
    }

    /// The events up to the `hint` whose text is `marker` (left out).
    func huntEvents(before marker: String) async throws -> [JSONObject] {
        try await huntEvents(through: marker).events
    }

    /// Every page of `LEADERBOARD hunt LIMIT limit`, as the reply lines themselves.
    func leaderboardLines(_ hunt: String, limit: Int) async throws -> [String] {
        var lines: [String] = []
        var cursor: String?
        for _ in 0 ..< 1000 {
            let line = try await call("LEADERBOARD \(hunt) LIMIT \(limit)" + (cursor.map { " CURSOR \(quoted($0))" } ?? ""))
            lines.append(line)
            let page = try JSONObject(okLine: line)
            if page["next"].isNull { return lines }
            cursor = try page["next"].string
        }
        Issue.record("LEADERBOARD's pages did not end")
        return lines
    }
}

/// Logs each of `names` (password `password1`) in on a connection of its own to `address`, and
/// keeps every connection open for `body`, which gets them in the same order.
func asLoggedIn(_ names: [String], _ address: SocketAddress, _ body: ([Conversation]) async throws -> Void) async throws {
    try await logIn(names[...], address, opened: [], body)
}

/// Logs `name` in on a connection of its own to `address` for `body`, and returns what it returns.
func asLoggedInReturning<T: Sendable>(_ name: String, _ address: SocketAddress, _ body: (Conversation) async throws -> T) async throws -> T {
    try await converseReturning(address) { (client: Conversation) async throws in
        _ = try await client.ok("LOGIN \(name) password1")
        return try await body(client)
    }
}

private func logIn(
    _ names: ArraySlice<String>, _ address: SocketAddress, opened: [Conversation], _ body: ([Conversation]) async throws -> Void
) async throws {
    guard let name = names.first else { return try await body(opened) }
    try await converse(address) { (client: Conversation) async throws in
        _ = try await client.ok("LOGIN \(name) password1")
        try await logIn(names.dropFirst(), address, opened: opened + [client], body)
    }
}

/// A second daemon on the environment's database, beside the one `withDatabaseServer` runs: a
/// board with a feed (hunts included) and a listener of its own, as another process would have,
/// both on `clock`. Runs `body` with the first daemon's address and the second's.
func withTwoDaemons(
    configuration: PostgresConfiguration? = nil, clock: any WallClock = .system, configure: (inout BoardRules) -> Void = { _ in },
    _ body: (SocketAddress, SocketAddress, TestEnvironment) async throws -> Void
) async throws {
    try await withDatabaseServer(configuration: configuration, listening: true, clock: clock, configure: configure) { first, environment in
        let other = environment.secondDaemon()
        do {
            var logger = Logger(label: "second-daemon")
            logger.logLevel = .warning
            let listener = FeedListener(feed: other.feed, logger: logger, listening: try await other.feed.startListening())
            try await withServer(board: other, alongside: [listener]) { second, _ in
                try await eventually("the second daemon's feed is loaded") { other.feed.isLoaded }
                try await body(first, second, environment)
            }
        } catch {
            await other.passwords.shutdown()
            throw error
        }
        await other.passwords.shutdown()
    }
}

/// A watcher: a connection and its watch's id, and whether it watches as the hunt's host (the
/// host's watches also hear `review` events).
struct HuntWatcher {
    let connection: Conversation
    let watch: String
    var isHost = false
}

/// Runs `action` and checks what each of `watchers` hears of it, up to a marker the host sends
/// after it: exactly the `found` events `found` ("player stop points", in order), then one `score`
/// event for each entry whose points or rank changed (the leaderboard `reader` shows before and
/// after; `changed` names them, as the test expects), each the entry as LEADERBOARD shows it
/// after. `reviews`, when given: the statuses of the `review` events the host's watchers hear
/// (others hear none). Returns every event heard.
@discardableResult
func expectHuntEvents(
    _ label: String, hunt: String, host: Conversation, reader: Conversation, watchers: [HuntWatcher],
    found: [String], changed: Set<String>, reviews: [String]? = nil, sourceLocation: SourceLocation = #_sourceLocation,
    _ action: () async throws -> Void
) async throws -> [JSONObject] {
    let before = try await reader.leaderboard(hunt)
    try await action()
    let marker = try await host.mark(hunt, sourceLocation: sourceLocation)
    let after = try await reader.leaderboard(hunt)
    let diff = try changedEntries(from: before, to: after)
    #expect(Set(diff.keys) == changed, "\(label): the entries that changed on the leaderboard", sourceLocation: sourceLocation)
    var heard: [JSONObject] = []
    for watcher in watchers {
        // Badges (protocol 1.4) come with some finds; BadgeTests checks them.
        let all = try await watcher.connection.huntEvents(before: marker).filter { eventType($0) != "badge" }
        heard += all
        // A check-in waiting for review is told to the host's watches only.
        let reviewed = all.filter { eventType($0) == "review" }.map { (try? $0["status"].string) ?? "?" }
        if let reviews {
            #expect(reviewed == (watcher.isHost ? reviews : []), "\(label): review events heard by \(watcher.isHost ? "the host" : "a player")",
                    sourceLocation: sourceLocation)
        }
        let events = all.filter { eventType($0) != "review" }
        #expect(events.allSatisfy { (try? $0["watch"].string) == watcher.watch }, "\(label): events of another watch", sourceLocation: sourceLocation)
        let types = events.map(eventType)
        #expect(
            types == Array(repeating: "found", count: found.count) + Array(repeating: "score", count: diff.count),
            "\(label): heard \(events.map(canonicalJSON))", sourceLocation: sourceLocation)
        #expect(events.filter { eventType($0) == "found" }.map(foundSummary) == found, "\(label)", sourceLocation: sourceLocation)
        let scores = events.filter { eventType($0) == "score" }
        let scored = scores.map { (try? $0["entry"]["player"].string) ?? "?" }
        #expect(Set(scored).count == scored.count, "\(label): a player's entry told twice: \(scored)", sourceLocation: sourceLocation)
        #expect(try lastScores(scores) == diff, "\(label): the score events' entries", sourceLocation: sourceLocation)
    }
    return heard
}

/// A leaderboard as the database's standings make it (`hunt_players`): points descending, then
/// the instant they were reached (microseconds), then name; competition ranks; `at` in whole
/// seconds. Each entry as ``entrySummary(_:)`` shows one.
func databaseStandings(_ hunt: String, _ environment: TestEnvironment) async throws -> [String] {
    let rows = try await environment.pool.query("""
        SELECT name, points, found, (extract(epoch FROM points_at) * 1000000)::bigint AS at_us FROM hunt_players WHERE hunt_id = \(hunt)
        """)
    struct Standing {
        var name: String
        var points: Int
        var found: Int
        var at: Int64?
    }
    var standings: [Standing] = []
    for row in rows {
        let at: Int? = try row.int("at_us")
        let points: Int = try row.int("points")
        standings.append(Standing(
            name: try row.string("name"), points: points, found: try row.int("found"), at: points > 0 ? at.map(Int64.init) : nil))
    }
    func ahead(_ a: Standing, of b: Standing) -> Bool {
        if a.points != b.points { return a.points > b.points }
        return (a.at ?? .max) < (b.at ?? .max)
    }
    standings.sort { a, b in
        if ahead(a, of: b) { return true }
        if ahead(b, of: a) { return false }
        return a.name < b.name
    }
    return standings.map { standing in
        let rank = 1 + standings.filter { ahead($0, of: standing) }.count
        let at = standing.at.map { rfc3339(Date(timeIntervalSince1970: Double($0 / 1_000_000))) } ?? "null"
        return "\(rank) \(standing.name) \(standing.points) \(standing.found) \(at)"
    }
}

// MARK: Tests

// The time limit only guards against a hang, and it counts the wait for a TestEnvironment.
@Suite("Live hunts: WATCH HUNT and its events (protocol 1.2)", .timeLimit(.minutes(10)))
struct LiveHuntTests {
    /// Who asks to watch a hunt, whether it is public, and the answer: nil for OK, else the code.
    struct PermissionCase: Sendable, CustomTestStringConvertible {
        let viewer: String
        let isPublic: Bool
        let expected: String?
        var testDescription: String { "\(viewer), \(isPublic ? "public" : "private") hunt: \(expected ?? "OK")" }
    }

    @Test("WATCH HUNT: the host and players only; no login UNAUTHORIZED, a stranger NOT_FOUND (private) or FORBIDDEN (public)", arguments: [
        PermissionCase(viewer: "nobody", isPublic: false, expected: "UNAUTHORIZED"),
        PermissionCase(viewer: "nobody", isPublic: true, expected: "UNAUTHORIZED"),
        PermissionCase(viewer: "stranger", isPublic: false, expected: "NOT_FOUND"),
        PermissionCase(viewer: "stranger", isPublic: true, expected: "FORBIDDEN"),
        PermissionCase(viewer: "leaver", isPublic: false, expected: "NOT_FOUND"),
        PermissionCase(viewer: "leaver", isPublic: true, expected: "FORBIDDEN"),
        PermissionCase(viewer: "host", isPublic: false, expected: nil),
        PermissionCase(viewer: "host", isPublic: true, expected: nil),
        PermissionCase(viewer: "player", isPublic: false, expected: nil),
        PermissionCase(viewer: "player", isPublic: true, expected: nil),
    ])
    func permissions(scenario: PermissionCase) async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "player", "stranger", "leaver"], address, environment) { (users: [Conversation]) async throws in
                try #require(users.count == 4)
                let (host, player, leaver) = (users[0], users[1], users[3])
                let hunt = try await host.makeHunt(scenario.isPublic ? "PUBLIC" : "", stops: [StopPlan()])
                try await player.join(hunt)
                try await leaver.join(hunt)
                _ = try await leaver.ok("LEAVE \(hunt.id)")
                let reply: String
                if scenario.viewer == "nobody" {
                    reply = try await converseReturning(address) { try await $0.call("WATCH HUNT \(hunt.id)") }
                } else {
                    let index = try #require(["host", "player", "stranger", "leaver"].firstIndex(of: scenario.viewer))
                    reply = try await users[index].call("WATCH HUNT \(hunt.id)")
                }
                if let expected = scenario.expected {
                    expectError(reply, expected)
                    #expect(environment.feed.hunts.watchCount == 0)
                } else {
                    let watch = try JSONObject(okLine: reply)["watch"]
                    #expect(try !watch.string.isEmpty)
                    #expect(environment.feed.hunts.watchCount == 1)
                }
                // A hunt nobody has, and ids of other things, are NOT_FOUND to anyone logged in.
                let pin = try await host.ok("POST \(huntOrigin) hello")["pin"]["id"].string
                let stop = try #require(hunt.stops.first)
                for id in ["h000000000000000000000000", pin, stop, "nonsense"] {
                    expectError(try await host.call("WATCH HUNT \(id)"), "NOT_FOUND")
                }
            }
        }
    }

    @Test("WATCH HUNT counts against the per-connection watch limit with area watches; UNWATCH ends it; only its connection can")
    func limitAndUnwatch() async throws {
        try await withDatabaseServer(feedRules: FeedRules(maximumWatchesPerConnection: 2)) { address, environment in
            try await asUsers(["host", "amy"], address, environment) { (users: [Conversation]) async throws in
                try #require(users.count == 2)
                let (host, amy) = (users[0], users[1])
                let hunt = try await host.makeHunt(stops: [StopPlan()])
                try await amy.join(hunt)
                try await asLoggedIn(["amy"], address) { (watchers: [Conversation]) async throws in
                    let watcher = try #require(watchers.first)
                    let first = try await watcher.watchHunt(hunt.id)
                    let area = try await watcher.watch("\(huntOrigin) 500")
                    expectError(try await watcher.call("WATCH HUNT \(hunt.id)"), "BAD_ARGUMENT")
                    expectError(try await watcher.call("WATCH \(huntOrigin) 500"), "BAD_ARGUMENT")
                    #expect(environment.feed.hunts.watchCount == 1)

                    // Another connection of the same user holds no such watch.
                    expectError(try await amy.call("UNWATCH \(first)"), "NOT_FOUND")
                    #expect(try await watcher.call("UNWATCH \(first)") == "OK true")
                    expectError(try await watcher.call("UNWATCH \(first)"), "NOT_FOUND")
                    #expect(environment.feed.hunts.watchCount == 0)

                    // Room again: a hunt watch in place of the area's too; two watches of one hunt both hear.
                    let second = try await watcher.watchHunt(hunt.id)
                    #expect(second != first)
                    #expect(try await watcher.call("UNWATCH \(area)") == "OK true")
                    let third = try await watcher.watchHunt(hunt.id)
                    #expect(Set([first, second, third]).count == 3)
                    expectError(try await watcher.call("WATCH HUNT \(hunt.id)"), "BAD_ARGUMENT")
                    let marker = try await host.mark(hunt.id)
                    let heard = [try await watcher.event(), try await watcher.event()]
                    #expect(heard.allSatisfy { eventType($0) == "hint" && (try? $0["text"].string) == marker }, "\(heard.map(canonicalJSON))")
                    #expect(Set(heard.compactMap { try? $0["watch"].string }) == [second, third])
                    // Nothing for the watch that ended.
                    #expect(try await watcher.call("PING") == #"OK "PONG""#)
                }
                try await eventually("the closed connection's watches end") { environment.feed.hunts.watchCount == 0 }
            }
        }
    }

    @Test("found for each accepted check-in (none for pending or flagged until approved); score for every entry whose points or rank changed; hint; never the code")
    func checkInEvents() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "amy", "bob", "cat", "dan"], address, environment) { (users: [Conversation]) async throws in
                try #require(users.count == 5)
                let (host, amy, bob, cat, dan) = (users[0], users[1], users[2], users[3], users[4])
                let hunt = try await host.makeHunt(stops: [
                    StopPlan(points: 10), StopPlan(north: 150, points: 20), StopPlan(north: 300, points: 30, options: "PROOF photo"),
                    StopPlan(north: 50_000, points: 50),
                ])
                try #require(hunt.stops.count == 4 && hunt.places.count == 4)
                let (s, p) = (hunt.stops, hunt.places)
                for player in [amy, bob, cat] { try await player.join(hunt) }
                // The host's watch and a player's, each on a connection that does nothing else.
                try await asLoggedIn(["host", "amy"], address) { (connections: [Conversation]) async throws in
                    var watchers: [HuntWatcher] = []
                    for connection in connections { watchers.append(HuntWatcher(connection: connection, watch: try await connection.watchHunt(hunt.id))) }
                    watchers[0].isHost = true
                    var heard: [JSONObject] = []
                    func step(
                        _ label: String, found: [String], changed: Set<String>, reviews: [String] = [], _ action: () async throws -> Void
                    ) async throws {
                        heard += try await expectHuntEvents(
                            label, hunt: hunt.id, host: host, reader: host, watchers: watchers, found: found, changed: changed,
                            reviews: reviews, action)
                    }

                    // At 0 everyone shares rank 1: amy's 10 points move bob and cat to rank 2.
                    var amyFirst = ""
                    try await step("amy's check-in", found: ["amy \(s[0]) 10"], changed: ["amy", "bob", "cat"]) {
                        amyFirst = try await amy.checkIn(s[0], at: p[0])["checkin"]["id"].string
                    }
                    // Bob passes amy: both change, and cat drops to rank 3.
                    try await step("bob passes amy", found: ["bob \(s[1]) 20"], changed: ["amy", "bob", "cat"]) {
                        _ = try await bob.checkIn(s[1], at: p[1])
                    }
                    // A pending check-in (a photo stop) and a flagged one (50 km at once) earn nothing: no
                    // found or score; the host's watch alone hears that each waits for review.
                    var pending = ""
                    try await step("cat's photo, pending", found: [], changed: [], reviews: ["pending"]) {
                        let checkin = try await cat.checkIn(s[2], at: p[2], photoOption)["checkin"]
                        #expect(try checkin["status"].string == "pending")
                        pending = try checkin["id"].string
                    }
                    var flagged = ""
                    try await step("amy 50 km away at once, flagged", found: [], changed: [], reviews: ["flagged"]) {
                        let checkin = try await amy.checkIn(s[3], at: p[3])["checkin"]
                        #expect(try checkin["status"].string == "flagged")
                        flagged = try checkin["id"].string
                    }
                    let reviewEvents = heard.filter { eventType($0) == "review" }
                    #expect(try reviewEvents.map { "\(try $0["watch"].string) \(try $0["checkin"].string) \(try $0["status"].string)" }
                        == ["\(watchers[0].watch) \(pending) pending", "\(watchers[0].watch) \(flagged) flagged"])
                    // Approvals are accepted check-ins: found (with the points they earned) and scores.
                    try await step("cat's photo approved", found: ["cat \(s[2]) 30"], changed: ["amy", "bob", "cat"]) {
                        _ = try await host.ok("APPROVE \(pending)")
                    }
                    try await step("amy's flagged check-in approved with a bonus", found: ["amy \(s[3]) 55"], changed: ["amy", "bob", "cat"]) {
                        let approved = try await host.ok("APPROVE \(flagged) BONUS 5")["checkin"]
                        #expect(approved["points"].int == 55)
                    }
                    // A rejection takes points out: a score, no found; amy keeps rank 1, nobody else moves.
                    try await step("amy's first check-in rejected", found: [], changed: ["amy"]) {
                        _ = try await host.ok("REJECT \(amyFirst)")
                    }
                    // Bob reaches cat's 30 points later than cat did: his points change, his rank (3) does not, nobody else's does.
                    try await step("bob ties cat, later", found: ["bob \(s[0]) 10"], changed: ["bob"]) {
                        _ = try await bob.checkIn(s[0], at: p[0])
                    }
                    #expect(try players(await host.leaderboard(hunt.id)) == ["amy", "cat", "bob"])
                    // A new player is a new entry (last, at 0); a rename is the entry under its new
                    // name; a player who leaves moves those below up.
                    try await step("dan joins", found: [], changed: ["dan"]) {
                        try await dan.join(hunt)
                    }
                    try await step("dan renames himself dex", found: [], changed: ["dex"]) {
                        try await dan.join(hunt, as: "dex")
                    }
                    try await step("cat leaves", found: [], changed: ["bob", "dex"]) {
                        _ = try await cat.ok("LEAVE \(hunt.id)")
                    }
                    #expect(try players(await host.leaderboard(hunt.id)) == ["amy", "bob", "dex"])

                    // A hint: its text and the time, as HUNT keeps it.
                    let text = "Look under the arch, \u{1F309}"
                    #expect(try await host.call("HINT \(hunt.id) \(quoted(text))") == "OK true")
                    let marker = try await host.mark(hunt.id)
                    let hints = try await host.hunt(hunt.id)["hints"].array
                    let kept = try #require(try hints.first { try $0["text"].string == text })
                    for watcher in watchers {
                        let events = try await watcher.connection.huntEvents(before: marker)
                        heard += events
                        #expect(events.count == 1, "\(events.map(canonicalJSON))")
                        let hint = try #require(events.first)
                        #expect(try hint["watch"].string == watcher.watch)
                        #expect(eventType(hint) == "hint")
                        #expect(try hint["text"].string == text)
                        #expect(try hint["at"].string == kept["at"].string)
                        _ = try parseTime(hint["at"])
                    }
                    #expect(!heard.isEmpty)
                    #expect(!heard.contains { holdsKey($0, "code") }, "an event holds a code")
                }
            }
        }
    }

    @Test("hunt events on STARTHUNT, EXTEND and ENDHUNT: the hunt as its host's reply shows it, without the code")
    func scheduleEvents() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "amy"], address, environment) { (users: [Conversation]) async throws in
                try #require(users.count == 2)
                let (host, amy) = (users[0], users[1])
                let hunt = try await host.makeHunt("", stops: [StopPlan()], start: false)
                try await amy.join(hunt)
                try await asLoggedIn(["amy", "host"], address) { (connections: [Conversation]) async throws in
                    var watchers: [HuntWatcher] = []
                    for connection in connections { watchers.append(HuntWatcher(connection: connection, watch: try await connection.watchHunt(hunt.id))) }

                    /// The one event each watcher hears of `change`: the hunt as `expected` (a host's reply) shows it, without its code.
                    func expectHuntEvent(_ label: String, _ expected: JSONObject, state: String, marked: Bool) async throws {
                        #expect(try expected["state"].string == state, "\(label)")
                        #expect(holdsKey(expected, "code"), "\(label): the host's reply has the code")
                        let marker = marked ? try await host.mark(hunt.id) : nil
                        for watcher in watchers {
                            let events: [JSONObject]
                            if let marker {
                                events = try await watcher.connection.huntEvents(before: marker)
                            } else {
                                events = [try await watcher.connection.event()]
                            }
                            #expect(events.count == 1, "\(label): \(events.map(canonicalJSON))")
                            let event = try #require(events.first)
                            #expect(try event["watch"].string == watcher.watch, "\(label)")
                            #expect(eventType(event) == "hunt", "\(label)")
                            #expect(!holdsKey(event, "code"), "\(label): \(canonicalJSON(event))")
                            #expect(canonicalJSON(event["hunt"]) == canonicalJSON(withoutCode(expected)), "\(label)")
                        }
                    }

                    // A scheduled hunt with no end: extended, it will end that long after it starts
                    // (no HINT before the start: the next event itself must be the extension's).
                    let scheduled = try await host.ok("EXTEND \(hunt.id) 600")["hunt"]
                    try await expectHuntEvent("EXTEND before the start", scheduled, state: "scheduled", marked: false)
                    let started = try await host.ok("STARTHUNT \(hunt.id)")["hunt"]
                    try await expectHuntEvent("STARTHUNT", started, state: "running", marked: true)
                    #expect(try parseTime(started["ends"]) == parseTime(started["starts"]).addingTimeInterval(600))
                    let extended = try await host.ok("EXTEND \(hunt.id) 3600")["hunt"]
                    try await expectHuntEvent("EXTEND", extended, state: "running", marked: true)
                    #expect(try parseTime(extended["ends"]) == parseTime(started["ends"]).addingTimeInterval(3600))
                    let again = try await host.ok("EXTEND \(hunt.id) 60")["hunt"]
                    try await expectHuntEvent("EXTEND again", again, state: "running", marked: true)
                    #expect(try parseTime(again["ends"]) == parseTime(extended["ends"]).addingTimeInterval(60))
                    let ended = try await host.ok("ENDHUNT \(hunt.id)")["hunt"]
                    // No HINT after the end: the next event itself must be the end.
                    try await expectHuntEvent("ENDHUNT", ended, state: "ended", marked: false)
                    for watcher in watchers { #expect(try await watcher.connection.call("PING") == #"OK "PONG""#) }
                }
            }
        }
    }

    @Test("a hunt whose STARTS and then its DURATION pass starts and ends by itself; its watchers hear both, from the daemon's clock")
    func automaticStartAndEnd() async throws {
        // The daemon's clock is held: the test moves it to the start, then to the end.
        let clock = HeldClock()
        try await withDatabaseServer(listening: true, clock: clock) { address, environment in
            try await asUsers(["host", "amy"], address, environment) { (users: [Conversation]) async throws in
                try #require(users.count == 2)
                let (host, amy) = (users[0], users[1])
                try await asLoggedIn(["amy", "host"], address) { (connections: [Conversation]) async throws in
                    // An hour away, so that the database's clock (which the daemon's does not
                    // follow) never reaches it while the test runs: only the held clock does.
                    let starts = clock.wholeSecond(secondsFromNow: 3600)
                    let hunt = try await host.makeHunt("PUBLIC STARTS \(starts.rfc3339) DURATION 3", stops: [StopPlan()], start: false)
                    try await amy.join(hunt)
                    var watchers: [HuntWatcher] = []
                    for connection in connections { watchers.append(HuntWatcher(connection: connection, watch: try await connection.watchHunt(hunt.id))) }
                    // A microsecond before its STARTS, it has not started.
                    clock.set(to: Timestamp(microseconds: starts.microseconds - 1))
                    #expect(try await host.hunt(hunt.id)["hunt"]["state"].string == "scheduled")
                    try await Self.expectAutomaticStartAndEnd(hunt.id, starts: starts, watchers: watchers, clock: clock)
                    let seen = try await host.hunt(hunt.id)["hunt"]
                    #expect(try seen["state"].string == "ended")
                    #expect(try seen["starts"].string == starts.rfc3339)
                    #expect(try seen["ends"].string == Self.ends(starts).rfc3339)
                }
            }
        }
    }

    /// The end of a hunt that starts at `starts` and lasts 3 s.
    static func ends(_ starts: Timestamp) -> Timestamp {
        Timestamp(microseconds: starts.microseconds + 3_000_000)
    }

    /// Moves `clock` to `starts`: each watcher hears the hunt start by itself, with `ends` 3 s
    /// later; then to that end: each hears it end; and nothing else. (Each daemon announces it
    /// on its listener's next look at the clock, within half a second.)
    static func expectAutomaticStartAndEnd(
        _ hunt: String, starts: Timestamp, watchers: [HuntWatcher], clock: HeldClock, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        for (time, state) in [(starts, "running"), (ends(starts), "ended")] {
            clock.set(to: time)
            for watcher in watchers {
                // (The suite's time limit guards against events that never come.)
                let event = try await watcher.connection.event()
                #expect(try event["watch"].string == watcher.watch, sourceLocation: sourceLocation)
                #expect(eventType(event) == "hunt", "\(canonicalJSON(event))", sourceLocation: sourceLocation)
                #expect(!holdsKey(event, "code"), sourceLocation: sourceLocation)
                let view = event["hunt"]
                #expect(try view["id"].string == hunt, sourceLocation: sourceLocation)
                #expect(try view["starts"].string == starts.rfc3339, sourceLocation: sourceLocation)
                #expect(try view["ends"].string == ends(starts).rfc3339, sourceLocation: sourceLocation)
                #expect(try view["state"].string == state, sourceLocation: sourceLocation)
            }
        }
    }

    // MARK: Two daemons

    @Test("two daemons on one database: a watcher on A hears check-ins, hints and approvals made on B; A's LEADERBOARD then equals B's")
    func eventsFromAnotherDaemon() async throws {
        try await withTwoDaemons { a, b, environment in
            try await asUsers(["host", "amy", "bob", "cat"], a, environment) { (users: [Conversation]) async throws in
                try #require(users.count == 4)
                let host = users[0]
                let hunt = try await host.makeHunt(stops: [
                    StopPlan(points: 10), StopPlan(north: 150, points: 20), StopPlan(north: 300, points: 30, options: "PROOF photo"),
                ])
                try #require(hunt.stops.count == 3 && hunt.places.count == 3)
                let (s, p) = (hunt.stops, hunt.places)
                for player in users.dropFirst() { try await player.join(hunt) }
                // Watchers on A (the host, a player) and one on B; every write on B.
                try await asLoggedIn(["host", "bob"], a) { (onA: [Conversation]) async throws in
                    try await asLoggedIn(["host", "host", "amy", "bob", "cat"], b) { (onB: [Conversation]) async throws in
                        try #require(onB.count == 5)
                        let (watcherOnB, hostB, amyB, bobB, catB) = (onB[0], onB[1], onB[2], onB[3], onB[4])
                        var watchers: [HuntWatcher] = []
                        for connection in onA + [watcherOnB] { watchers.append(HuntWatcher(connection: connection, watch: try await connection.watchHunt(hunt.id))) }
                        var heard: [JSONObject] = []
                        func step(_ label: String, found: [String], changed: Set<String>, _ action: () async throws -> Void) async throws {
                            heard += try await expectHuntEvents(
                                label, hunt: hunt.id, host: hostB, reader: hostB, watchers: watchers, found: found, changed: changed, action)
                            // A has applied everything up to the marker it heard: its leaderboard is B's.
                            #expect(try await host.leaderboardLines(hunt.id, limit: 2) == hostB.leaderboardLines(hunt.id, limit: 2), "\(label)")
                        }
                        try await step("amy checks in on B", found: ["amy \(s[0]) 10"], changed: ["amy", "bob", "cat"]) {
                            _ = try await amyB.checkIn(s[0], at: p[0])
                        }
                        try await step("bob passes amy on B", found: ["bob \(s[1]) 20"], changed: ["amy", "bob", "cat"]) {
                            _ = try await bobB.checkIn(s[1], at: p[1])
                        }
                        var pending = ""
                        try await step("cat's photo on B, pending", found: [], changed: []) {
                            pending = try await catB.checkIn(s[2], at: p[2], photoOption)["checkin"]["id"].string
                        }
                        try await step("the host approves it on B", found: ["cat \(s[2]) 30"], changed: ["amy", "bob", "cat"]) {
                            _ = try await hostB.ok("APPROVE \(pending)")
                        }
                        let text = "The last clue is by the river"
                        #expect(try await hostB.call("HINT \(hunt.id) \(quoted(text))") == "OK true")
                        let marker = try await hostB.mark(hunt.id)
                        for watcher in watchers {
                            let events = try await watcher.connection.huntEvents(before: marker)
                            heard += events
                            #expect(events.map(eventType) == ["hint"])
                            #expect(try events.first?["text"].string == text)
                        }
                        #expect(!heard.contains { holdsKey($0, "code") })
                        #expect(try players(await host.leaderboard(hunt.id)) == ["cat", "bob", "amy"])
                    }
                }
            }
        }
    }

    @Test("two daemons: after a burst of concurrent check-ins on both, LEADERBOARD (every page) is the same on A and B and is the standings")
    func burstOnTwoDaemons() async throws {
        try await withTwoDaemons { a, b, environment in
            try await asUser("host", a, environment) { (host: Conversation) async throws in
                let points = [5, 10, 15, 20, 25, 30]
                let hunt = try await host.makeHunt(stops: points.enumerated().map { StopPlan(north: Double($0.offset) * 100, points: $0.element) })
                let names = (0 ..< 16).map { "runner" + ($0 < 10 ? "0" : "") + String($0) }
                var tokens: [String] = []
                for name in names {
                    tokens.append(try await converseReturning(a) { (client: Conversation) async throws in
                        let token = try await client.register(name)
                        try await client.join(hunt)
                        return token
                    })
                }
                // Each runner's stops: a seeded choice of some, in a seeded order; the last runner none.
                var random = SplitMix64(seed: 1207)
                let plans: [[Int]] = names.indices.map { index in
                    index == names.count - 1 ? [] : Array(points.indices.filter { _ in random.next() % 10 < 6 }).shuffled(using: &random)
                }
                let stops = hunt.stops, places = hunt.places
                try await asLoggedIn(["host"], b) { (onB: [Conversation]) async throws in
                    try await asLoggedIn(["host"], a) { (onA: [Conversation]) async throws in
                        var watchers: [HuntWatcher] = []
                        for connection in onA + onB { watchers.append(HuntWatcher(connection: connection, watch: try await connection.watchHunt(hunt.id))) }

                        let arrivals = Arrivals()
                        let gate = Gate()
                        let replies = try await withThrowingTaskGroup(of: (Int, [String]).self) { group in
                            for (index, (token, plan)) in zip(tokens, plans).enumerated() {
                                let daemon = index % 2 == 0 ? a : b
                                group.addTask {
                                    try await converseReturning(daemon) { (client: Conversation) async throws in
                                        _ = try await client.ok("AUTH \(token)")
                                        arrivals.arrive()
                                        await gate.wait()
                                        var lines: [String] = []
                                        for stop in plan { lines.append(try await client.checkInReply(stops[stop], at: places[stop])) }
                                        return (index, lines)
                                    }
                                }
                            }
                            try await eventually("every runner is connected", timeout: .seconds(300)) { arrivals.value == names.count }
                            gate.open()
                            var replies: [Int: [String]] = [:]
                            for try await (index, lines) in group { replies[index] = lines }
                            return replies
                        }

                        // Every check-in accepted with its stop's points; the test's own sums.
                        var expected: [String: (points: Int, found: Int)] = [:]
                        var pairs: Set<String> = []
                        for (index, (name, plan)) in zip(names, plans).enumerated() {
                            let lines = replies[index] ?? []
                            #expect(lines.count == plan.count, "\(name)")
                            for (stop, line) in zip(plan, lines) {
                                let checkin = try JSONObject(okLine: line)["checkin"]
                                #expect(try checkin["status"].string == "accepted", "\(name)")
                                #expect(checkin["points"].int == points[stop], "\(name)")
                                pairs.insert("\(name) \(stops[stop]) \(points[stop])")
                            }
                            expected[name] = (plan.map { points[$0] }.reduce(0, +), plan.count)
                        }

                        // Once each daemon's watcher has heard a marker sent after the burst, each
                        // daemon has applied every check-in.
                        let marker = try await host.mark(hunt.id)
                        var finals: [[String: String]] = []
                        for watcher in watchers {
                            let events = try await watcher.connection.huntEvents(before: marker)
                            let found = events.filter { eventType($0) == "found" }.map(foundSummary)
                            #expect(found.count == pairs.count, "one found per accepted check-in")
                            #expect(Set(found) == pairs)
                            finals.append(try lastScores(events))
                        }

                        let standings = try await databaseStandings(hunt.id, environment)
                        let hostOnB = try #require(onB.first)
                        for limit in [1, 5, 200] {
                            let onA = try await host.leaderboardLines(hunt.id, limit: limit)
                            let onB = try await hostOnB.leaderboardLines(hunt.id, limit: limit)
                            #expect(onA == onB, "LIMIT \(limit): the pages differ between the daemons")
                            let entries = try onA.flatMap { try JSONObject(okLine: $0)["entries"].array }
                            #expect(entries.map(entrySummary) == standings, "LIMIT \(limit)")
                            for entry in entries {
                                let name = try entry["player"].string
                                #expect(entry["points"].int == expected[name]?.points && entry["found"].int == expected[name]?.found, "\(name)")
                                // Everyone was last told of as they stand now.
                                for final in finals { #expect(final[name] == canonicalJSON(entry), "\(name)") }
                            }
                            expectCompetitionRanks(entries)
                            #expect(try Set(players(entries)) == Set(names))
                        }
                        let seen = try await host.hunt(hunt.id)
                        let foundBy = points.indices.map { stop in plans.filter { $0.contains(stop) }.count }
                        #expect(seen["stops"].array.map { $0["found_by"].int ?? -1 } == foundBy)
                    }
                }
            }
        }
    }

    @Test("two daemons: a hunt that starts and ends by itself is announced by both")
    func automaticStartAndEndOnTwoDaemons() async throws {
        // Both daemons read one held clock, as two machines whose clocks agree.
        let clock = HeldClock()
        try await withTwoDaemons(clock: clock) { a, b, environment in
            try await asUsers(["host", "amy"], a, environment) { (users: [Conversation]) async throws in
                try #require(users.count == 2)
                let (host, amy) = (users[0], users[1])
                try await asLoggedIn(["amy"], b) { (onB: [Conversation]) async throws in
                    try await asLoggedIn(["host"], a) { (onA: [Conversation]) async throws in
                        // An hour away: neither the database's clock nor the held one reaches it
                        // until the test moves the held one there.
                        let starts = clock.wholeSecond(secondsFromNow: 3600)
                        let hunt = try await host.makeHunt("STARTS \(starts.rfc3339) DURATION 1", stops: [StopPlan()], start: false)
                        try await amy.join(hunt)
                        var watchers: [HuntWatcher] = []
                        for connection in onA + onB { watchers.append(HuntWatcher(connection: connection, watch: try await connection.watchHunt(hunt.id))) }
                        // The host, on B, makes it last 2 s longer: both daemons' clocks end it then.
                        let extended = try await asLoggedInReturning("host", b) { try await $0.ok("EXTEND \(hunt.id) 2")["hunt"] }
                        #expect(try extended["state"].string == "scheduled")
                        // Heard before the start: the hunt as it is then.
                        for watcher in watchers {
                            let event = try await watcher.connection.event()
                            #expect(eventType(event) == "hunt" && !holdsKey(event, "code"), "\(canonicalJSON(event))")
                            #expect(canonicalJSON(event["hunt"]) == canonicalJSON(withoutCode(extended)))
                        }
                        try await Self.expectAutomaticStartAndEnd(hunt.id, starts: starts, watchers: watchers, clock: clock)
                        for connection in onA + onB {
                            let seen = try await connection.hunt(hunt.id)["hunt"]
                            #expect(try seen["state"].string == "ended")
                            #expect(try seen["ends"].string == Self.ends(starts).rfc3339)
                        }
                    }
                }
            }
        }
    }

    // MARK: The hunt's chat

    @Test("the hunt's chat: a REPLY on the hunt reaches its watchers as a reply event")
    func replyEvents() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["host", "amy"], address, environment) { (users: [Conversation]) async throws in
                try #require(users.count == 2)
                let (host, amy) = (users[0], users[1])
                let hunt = try await host.makeHunt(stops: [StopPlan()])
                try await amy.join(hunt)
                try await asLoggedIn(["host"], address) { (connections: [Conversation]) async throws in
                    let watcher = try #require(connections.first)
                    let watch = try await watcher.watchHunt(hunt.id)
                    let line = try await amy.call("REPLY \(hunt.id) \(quoted("Anyone found the bridge?"))")
                    let reply = try JSONObject(okLine: line)["reply"]
                    #expect(try reply["pin"].string == hunt.id)
                    let marker = try await host.mark(hunt.id)
                    let events = try await watcher.huntEvents(before: marker)
                    #expect(events.map(eventType) == ["reply"], "\(events.map(canonicalJSON))")
                    let event = try #require(events.first)
                    #expect(try event["watch"].string == watch)
                    #expect(canonicalJSON(event["reply"]) == canonicalJSON(reply))
                }
            }
        }
    }
}
