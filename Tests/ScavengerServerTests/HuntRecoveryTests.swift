import Foundation
import Logging
import NIOCore
import Postgres
@testable import ScavengerBoard
import ScavengerFeed
import ScavengerTestSupport
import Synchronization
import Testing

// Hunts through failures (protocol 1.2): PostgreSQL restarting under concurrent check-ins, and a
// daemon restarting on the same database. What is asserted is what happened — every check-in
// counted once, the leaderboards equal to the database's standings — never how long it took.

/// What the players of the restart test have done so far, counted across their tasks.
final class RestartTally: Sendable {
    struct Counts: Sendable {
        /// Check-ins sent and not answered yet.
        var inFlight = 0
        var accepted = 0
        var unavailable = 0
        var dropped = 0
        /// ERR CONFLICT "already checked in" to a retry: the earlier attempt was written, its answer lost.
        var alreadyIn = 0
        /// Any other answer.
        var other = 0
        var finished = 0

        var failures: Int { unavailable + dropped + other }
    }

    private let counts = Mutex(Counts())

    func update(_ change: (inout Counts) -> Void) {
        counts.withLock { change(&$0) }
    }

    var now: Counts { counts.withLock { $0 } }
}

/// How a daemon is restarted.
enum DaemonRestart: String, Sendable, CaseIterable, CustomTestStringConvertible {
    /// A new server with a new board (feed, leaderboards) in this process.
    case inProcess = "a new server in this process"
    /// A new `scavengerd serve` process.
    case process = "a new scavengerd process"

    var testDescription: String { rawValue }
}

/// Runs `body` until it succeeds (the database may refuse for a while after a restart); its
/// last error after 60 s, a guard against a database that never comes back.
func retrying<T: Sendable>(_ body: () async throws -> T) async throws -> T {
    let deadline = ContinuousClock.now + .seconds(60)
    while true {
        do {
            return try await body()
        } catch {
            if ContinuousClock.now > deadline { throw error }
            try await Task.sleep(for: .milliseconds(100))
        }
    }
}

extension Conversation {
    /// ``mark(_:sourceLocation:)`` sent again while the database answers `UNAVAILABLE`.
    func markRetrying(_ hunt: String) async throws -> String {
        let text = "marker \(UUID().uuidString)"
        for _ in 0 ..< 1000 {
            let reply = try await call("HINT \(hunt) \(quoted(text))")
            if reply == "OK true" { return text }
            guard reply.hasPrefix("ERR UNAVAILABLE ") else { throw UnexpectedReply(line: "HINT: \(reply)") }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw UnexpectedReply(line: "HINT never answered OK")
    }
}

// The time limit only guards against a hang, and it counts the wait for a TestEnvironment.
@Suite("Hunts through failures: PostgreSQL and daemons restarting (protocol 1.2)", .timeLimit(.minutes(10)))
struct HuntRecoveryTests {
    /// A stop to check in at.
    struct Target: Sendable {
        let stop: String
        let place: Place
        let points: Int
    }

    /// Checks in at every one of `targets`, in order, as the player whose session is `token`, on
    /// `daemon`: a check-in that gets no OK (ERR UNAVAILABLE, or the connection dropped) is sent
    /// again, on a new connection if need be, until it gets OK or ERR CONFLICT "already checked
    /// in". Answers, for each stop, "accepted" or "already in" (an earlier attempt was written).
    static func checkInEverywhere(
        _ targets: [Target], token: String, daemon: SocketAddress, tally: RestartTally
    ) async throws -> [String: String] {
        var outcomes: [String: String] = [:]
        var attempts: [String: Int] = [:]
        var remaining = targets[...]
        defer { tally.update { $0.finished += 1 } }
        var connections = 0
        while !remaining.isEmpty, connections < 1000 {
            connections += 1
            do {
                try await converse(daemon) { (client: Conversation) async throws in
                    while true {
                        let reply = try await client.call("AUTH \(token)")
                        if reply.hasPrefix("OK ") { break }
                        guard reply.hasPrefix("ERR UNAVAILABLE ") else { throw UnexpectedReply(line: "AUTH: \(reply)") }
                        try await Task.sleep(for: .milliseconds(50))
                    }
                    while let target = remaining.first {
                        let attempt = attempts[target.stop, default: 0] + 1
                        attempts[target.stop] = attempt
                        guard attempt <= 500 else {
                            Issue.record("a check-in at \(target.stop) never got OK or CONFLICT")
                            remaining.removeFirst()
                            continue
                        }
                        tally.update { $0.inFlight += 1 }
                        let reply: String
                        do {
                            reply = try await client.checkInReply(target.stop, at: target.place)
                            tally.update { $0.inFlight -= 1 }
                        } catch {
                            tally.update {
                                $0.inFlight -= 1
                                $0.dropped += 1
                            }
                            throw error
                        }
                        if reply.hasPrefix("OK ") {
                            let checkin = try JSONObject(okLine: reply)["checkin"]
                            #expect(try checkin["status"].string == "accepted")
                            #expect(checkin["points"].int == target.points)
                            outcomes[target.stop] = "accepted"
                            tally.update { $0.accepted += 1 }
                            remaining.removeFirst()
                        } else if reply.hasPrefix("ERR CONFLICT "), reply.contains("already checked in") {
                            // Only a retry may find its own earlier attempt written.
                            #expect(attempt > 1, "CONFLICT at a first check-in: \(reply)")
                            outcomes[target.stop] = "already in"
                            tally.update { $0.alreadyIn += 1 }
                            remaining.removeFirst()
                        } else if reply.hasPrefix("ERR UNAVAILABLE ") {
                            tally.update { $0.unavailable += 1 }
                            try await Task.sleep(for: .milliseconds(50))
                        } else {
                            // The contract's answer while the database is away is UNAVAILABLE.
                            Issue.record("a check-in during the restart got \(reply)")
                            tally.update { $0.other += 1 }
                            try await Task.sleep(for: .milliseconds(50))
                        }
                    }
                }
            } catch is ConnectionClosed {
                try await Task.sleep(for: .milliseconds(50))
            } catch is IOError {
                try await Task.sleep(for: .milliseconds(50))
            } catch is ChannelError {
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        #expect(remaining.isEmpty, "check-ins left undone: \(remaining.map(\.stop))")
        return outcomes
    }

    @Test("PostgreSQL restarts while players on two daemons check in at once and retry: every check-in counted once, the leaderboards recover")
    func databaseRestart() async throws {
        let (proxied, proxy) = try TestDatabase.proxiedConfiguration(prefix: "huntrestart")
        defer { proxy.stop() }
        var configuration = proxied
        // Guards: no command waits on a held connection for ever.
        configuration.commandTimeout = .seconds(10)
        configuration.connectTimeoutSeconds = 5
        try await withTwoDaemons(configuration: configuration) { a, b, environment in
            try await asUser("host", a, environment) { (host: Conversation) async throws in
                let points = [10, 20, 30, 40, 50, 60]
                let hunt = try await host.makeHunt(stops: points.enumerated().map { StopPlan(north: Double($0.offset) * 100, points: $0.element) })
                let targets = zip(hunt.stops, zip(hunt.places, points)).map { Target(stop: $0.0, place: $0.1.0, points: $0.1.1) }
                let total = points.reduce(0, +)
                let names = (0 ..< 12).map { "walker" + ($0 < 10 ? "0" : "") + String($0) }
                var tokens: [String] = []
                for name in names {
                    tokens.append(try await converseReturning(a) { (client: Conversation) async throws in
                        let token = try await client.register(name)
                        try await client.join(hunt)
                        return token
                    })
                }
                // A check-in's COMMIT takes a moment (a deferred trigger in this test's schema
                // sleeps in it): a restart then finds check-ins committing, and cuts some after
                // PostgreSQL has written them but before their answer came back — the retry must
                // find them written (CONFLICT), never write them twice.
                try await environment.pool.query("""
                    CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$
                    BEGIN PERFORM pg_sleep(0.1); RETURN NULL; END $$
                    """, idempotent: false)
                try await environment.pool.query("""
                    CREATE CONSTRAINT TRIGGER checkins_slow_commit AFTER INSERT ON checkins
                    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION slow_commit()
                    """, idempotent: false)
                try await asLoggedIn(["host"], a) { (onA: [Conversation]) async throws in
                    try await asLoggedIn(["host"], b) { (onB: [Conversation]) async throws in
                        let watcherA = try #require(onA.first), watcherB = try #require(onB.first)
                        _ = try await watcherA.watchHunt(hunt.id)
                        _ = try await watcherB.watchHunt(hunt.id)

                        let tally = RestartTally()
                        var restarts = 0
                        let outcomes = try await withThrowingTaskGroup(of: (Int, [String: String]).self) { group in
                            for (index, token) in tokens.enumerated() {
                                // Half on each daemon; each player starts at a stop of their own and goes round.
                                let daemon = index % 2 == 0 ? a : b
                                let order = targets.indices.map { targets[(index + $0) % targets.count] }
                                group.addTask { (index, try await Self.checkInEverywhere(order, token: token, daemon: daemon, tally: tally)) }
                            }
                            // The restart, once check-ins are going: every byte stops (what was
                            // sent waits), a moment passes, every connection is cut, and the
                            // database answers again — a fast restart. Again, up to five times,
                            // until one has caught a check-in and one has lost a written one's answer.
                            try await eventually("some check-ins are in") { tally.now.accepted >= names.count || tally.now.finished == names.count }
                            while restarts < 5, tally.now.failures == 0 || tally.now.alreadyIn == 0, tally.now.finished < names.count {
                                restarts += 1
                                let written = tally.now.accepted + tally.now.alreadyIn
                                proxy.blackhole()
                                try await eventually("check-ins wait on the stopped database") { tally.now.inFlight > 0 || tally.now.finished == names.count }
                                try await Task.sleep(for: .milliseconds(300))
                                proxy.cutAll()
                                proxy.resume()
                                // Service resumes: check-ins are written again, as many as there are players.
                                try await eventually("check-ins are written again after the restart") {
                                    tally.now.accepted + tally.now.alreadyIn >= written + names.count || tally.now.finished == names.count
                                }
                            }
                            var outcomes: [Int: [String: String]] = [:]
                            for try await (index, outcome) in group { outcomes[index] = outcome }
                            return outcomes
                        }
                        let counts = tally.now
                        #expect(restarts > 0, "the check-ins were over before the restart")
                        #expect(counts.failures > 0, "no check-in was caught by the restarts (\(restarts)): \(counts)")
                        #expect(counts.alreadyIn > 0, "no restart (\(restarts)) cut a written check-in's answer: \(counts)")
                        #expect(counts.other == 0)
                        // Every player got every stop, once: accepted, or found written on a retry.
                        for (index, name) in names.enumerated() {
                            #expect(Set((outcomes[index] ?? [:]).keys) == Set(hunt.stops), "\(name)")
                        }
                        #expect(counts.accepted + counts.alreadyIn == names.count * targets.count, "\(counts)")

                        // The database: one accepted check-in per player and stop, points that are their sums.
                        let (rows, playerRows, stopRows) = try await retrying {
                            try await (
                                environment.pool.query("""
                                    SELECT count(*) AS n, count(DISTINCT (user_id, stop_id)) AS pairs,
                                           count(*) FILTER (WHERE status = 'accepted') AS accepted
                                    FROM checkins WHERE hunt_id = \(hunt.id)
                                    """),
                                environment.pool.query("""
                                    SELECT p.name, p.points, p.found,
                                           (SELECT coalesce(sum(c.points), 0) FROM checkins c
                                            WHERE c.hunt_id = p.hunt_id AND c.user_id = p.user_id AND c.status = 'accepted') AS earned
                                    FROM hunt_players p WHERE p.hunt_id = \(hunt.id) ORDER BY p.name
                                    """),
                                environment.pool.query("SELECT found_by FROM hunt_stops WHERE hunt_id = \(hunt.id) ORDER BY n"))
                        }
                        let row = try #require(rows.first)
                        #expect(try row.int("n") as Int == names.count * targets.count)
                        #expect(try row.int("pairs") as Int == names.count * targets.count)
                        #expect(try row.int("accepted") as Int == names.count * targets.count)
                        #expect(try playerRows.map { try $0.string("name") as String } == names)
                        for player in playerRows {
                            let name: String = try player.string("name")
                            #expect(try player.int("points") as Int == total, "\(name)")
                            #expect(try player.int("earned") as Int == total, "\(name)")
                            #expect(try player.int("found") as Int == targets.count, "\(name)")
                        }
                        #expect(try stopRows.map { try $0.int("found_by") as Int } == Array(repeating: names.count, count: targets.count))
                        #expect(try await retrying { try await host.hunt(hunt.id) }["stops"].array.map { $0["found_by"].int ?? -1 }
                            == Array(repeating: names.count, count: targets.count))

                        // Each daemon's leaderboard, in memory, recovers: once its watcher has heard a
                        // marker sent after everything, it is the database's standings.
                        let marker = try await host.markRetrying(hunt.id)
                        let standings = try await retrying { try await databaseStandings(hunt.id, environment) }
                        var pairs: Set<String> = []
                        for name in names { for target in targets { pairs.insert("\(name) \(target.stop) \(target.points)") } }
                        for (label, watcher) in [("A", watcherA), ("B", watcherB)] {
                            let events = try await watcher.huntEvents(before: marker)
                            let found = events.filter { eventType($0) == "found" }.map(foundSummary)
                            #expect(found.count == pairs.count, "daemon \(label): one found per accepted check-in, none twice")
                            #expect(Set(found) == pairs, "daemon \(label)")
                            let told = try lastScores(events)
                            for limit in [5, 200] {
                                var lines: [String] = []
                                try await eventually("daemon \(label)'s LEADERBOARD is the database's standings") {
                                    lines = try await watcher.leaderboardLines(hunt.id, limit: limit)
                                    return try lines.flatMap { try JSONObject(okLine: $0)["entries"].array }.map(entrySummary) == standings
                                }
                                let entries = try lines.flatMap { try JSONObject(okLine: $0)["entries"].array }
                                #expect(entries.map(entrySummary) == standings, "daemon \(label), LIMIT \(limit)")
                                #expect(entries.allSatisfy { $0["points"].int == total && $0["found"].int == targets.count })
                                for entry in entries {
                                    let name = try entry["player"].string
                                    #expect(told[name] == canonicalJSON(entry), "daemon \(label): the last score event of \(name)")
                                }
                            }
                        }
                        #expect(try await watcherA.leaderboardLines(hunt.id, limit: 5) == watcherB.leaderboardLines(hunt.id, limit: 5))

                        // The rankings of all users, on both daemons, are the brute force over the
                        // check-ins: the restarts changed no rank.
                        let ranking = try await retrying { try await databaseRanking(week: false, environment) }
                        #expect(ranking.count == names.count)
                        for (label, daemon) in [("A", a), ("B", b)] {
                            var shown: [String] = []
                            try await eventually("daemon \(label)'s RANKING is the brute force") {
                                shown = (try? await converseReturning(daemon) { try await $0.ranking(limit: 5) }) ?? []
                                return shown == ranking
                            }
                            #expect(shown == ranking, "daemon \(label)")
                        }
                    }
                }
            }
        }
    }

    @Test("a daemon cut off from PostgreSQL while another daemon's players check in: back, its watchers have heard every change once and its LEADERBOARD is the standings")
    func listenerRecovery() async throws {
        // Daemon A reaches the database through a proxy; daemon B directly, on the same schema.
        let (proxied, proxy) = try TestDatabase.proxiedConfiguration(prefix: "huntlisten")
        defer { proxy.stop() }
        var cutOff = proxied
        cutOff.commandTimeout = .seconds(5)
        cutOff.connectTimeoutSeconds = 5
        var direct = proxied
        direct.connectionString = try TestDatabase.url()
        try await withDatabaseServer(configuration: cutOff, listening: true) { a, environment in
            try await withDatabaseServer(configuration: direct, listening: true) { b, _ in
                try await asUser("host", b, environment) { (host: Conversation) async throws in
                    let points = [10, 20, 30, 40]
                    let hunt = try await host.makeHunt(stops: points.enumerated().map { StopPlan(north: Double($0.offset) * 100, points: $0.element) })
                    let targets = zip(hunt.stops, zip(hunt.places, points)).map { Target(stop: $0.0, place: $0.1.0, points: $0.1.1) }
                    let names = (0 ..< 8).map { "runner\($0)" }
                    var tokens: [String] = []
                    for name in names {
                        tokens.append(try await converseReturning(b) { (client: Conversation) async throws in
                            let token = try await client.register(name)
                            try await client.join(hunt)
                            return token
                        })
                    }
                    try await asLoggedIn(["host"], a) { (onA: [Conversation]) async throws in
                        let watcher = try #require(onA.first)
                        _ = try await watcher.watchHunt(hunt.id)
                        #expect(try players(await watcher.leaderboard(hunt.id)) == names)

                        // A hears nothing while B's players check in everywhere at once.
                        proxy.blackhole()
                        try await withThrowingTaskGroup(of: Void.self) { group in
                            for (index, token) in tokens.enumerated() {
                                let order = targets.indices.map { targets[(index + $0) % targets.count] }
                                group.addTask {
                                    try await converse(b) { (client: Conversation) async throws in
                                        _ = try await client.ok("AUTH \(token)")
                                        for target in order {
                                            #expect(try await client.checkIn(target.stop, at: target.place)["checkin"]["points"].int == target.points)
                                        }
                                    }
                                }
                            }
                            try await group.waitForAll()
                        }
                        // Then every connection of A's is cut, and the database answers it again.
                        proxy.cutAll()
                        proxy.resume()

                        let marker = try await host.mark(hunt.id)
                        let events = try await watcher.huntEvents(before: marker)
                        var pairs: Set<String> = []
                        for name in names { for target in targets { pairs.insert("\(name) \(target.stop) \(target.points)") } }
                        let found = events.filter { eventType($0) == "found" }.map(foundSummary)
                        #expect(found.count == pairs.count, "one found per check-in, none twice")
                        #expect(Set(found) == pairs)
                        let told = try lastScores(events)

                        let standings = try await databaseStandings(hunt.id, environment)
                        var lines: [String] = []
                        try await eventually("A's LEADERBOARD is the database's standings") {
                            guard let read = try? await watcher.leaderboardLines(hunt.id, limit: 3) else { return false }
                            lines = read
                            return try lines.flatMap { try JSONObject(okLine: $0)["entries"].array }.map(entrySummary) == standings
                        }
                        let entries = try lines.flatMap { try JSONObject(okLine: $0)["entries"].array }
                        #expect(entries.map(entrySummary) == standings)
                        for entry in entries {
                            let name = try entry["player"].string
                            #expect(told[name] == canonicalJSON(entry), "the last score event of \(name)")
                        }
                        #expect(try await host.leaderboardLines(hunt.id, limit: 3) == lines)
                    }
                }
            }
        }
    }

    // MARK: A daemon restarting

    /// Runs `body` against a daemon on `environment`'s database, of the kind `restart` names: in
    /// this process (the environment's own board, or with `fresh` a new one, with its own feed
    /// and listener), or a `scavengerd serve` process. The daemon stops after `body`.
    static func withDaemon<T: Sendable>(
        _ restart: DaemonRestart, _ environment: TestEnvironment, fresh: Bool, _ body: (SocketAddress) async throws -> T
    ) async throws -> T {
        switch restart {
        case .process:
            let daemon = try await DaemonProcess(environment: environment, ["--register-rate", "off", "--post-rate", "off"])
            let value: T
            do {
                // Serving starts before the rankings are loaded (RANKING answers UNAVAILABLE
                // until then), as the feed's pins load for NEARBY.
                let address = try daemon.address
                try await eventually("the daemon's rankings are loaded") {
                    try await converseReturning(address) { try await $0.call("RANKING LIMIT 1") }.hasPrefix("OK ")
                }
                value = try await body(address)
            } catch {
                _ = try await daemon.terminate()
                throw error
            }
            #expect(try await daemon.terminate(), "\(daemon.stderr.suffix(2000))")
            return value
        case .inProcess:
            let board = fresh ? environment.secondDaemon() : environment.board
            var logger = Logger(label: "restarted-daemon")
            logger.logLevel = .warning
            var value: T?
            do {
                let listener = FeedListener(feed: board.feed, logger: logger, listening: try await board.feed.startListening())
                try await withServer(board: board, alongside: [listener]) { address, _ in
                    try await eventually("the daemon's feed and rankings are loaded") { board.feed.isLoaded && board.feed.hunts.isLoaded }
                    value = try await body(address)
                }
            } catch {
                if fresh { await board.passwords.shutdown() }
                throw error
            }
            if fresh { await board.passwords.shutdown() }
            return try #require(value)
        }
    }

    /// What viewers see of `hunt`: each request's label and reply line, each on a connection of
    /// its own (with the viewer's token, or none).
    static func views(_ address: SocketAddress, hunt: String, tokens: [String: String]) async throws -> [String] {
        var requests: [(viewer: String?, line: String)] = [
            (nil, "LEADERBOARD \(hunt)"),
            ("bob", "LEADERBOARD \(hunt) AROUND LIMIT 2"),
            ("gus", "LEADERBOARD \(hunt) AROUND LIMIT 3"),
            ("amy", "HUNT \(hunt)"),
            ("bob", "HUNT \(hunt)"),
            ("evelyn", "HUNT \(hunt)"),
            ("host", "HUNT \(hunt)"),
            // The rankings of all users, loaded afresh by a restarted daemon.
            (nil, "RANKING"),
            (nil, "RANKING WEEK"),
            ("bob", "RANKING AROUND LIMIT 2"),
            ("gus", "RANKING WEEK AROUND LIMIT 3"),
            ("gus", "PROFILE"),
            (nil, "PROFILE dan"),
            (nil, "PROFILE amy"),
        ]
        var seen: [String] = []
        // Every page of LIMIT 2, following the cursors.
        let pages = try await converseReturning(address) { try await $0.leaderboardLines(hunt, limit: 2) }
        seen += pages.map { "LEADERBOARD LIMIT 2 page: \($0)" }
        requests.append((nil, "LEADERBOARD \(hunt) LIMIT 4"))
        for ((viewer, line), reply) in zip(requests, try await viewReplies(requests, at: address, tokens: tokens)) {
            seen.append("\(viewer ?? "anyone"): \(line.split(separator: " ").first ?? ""): \(reply)")
        }
        return seen
    }

    /// Each request's reply, sent on a connection of its own as its viewer (by their token in
    /// `tokens`; nil: nobody logged in); each must be OK.
    static func viewReplies(
        _ requests: [(viewer: String?, line: String)], at address: SocketAddress, tokens: [String: String]
    ) async throws -> [String] {
        var replies: [String] = []
        for (viewer, line) in requests {
            let token = try viewer.map { try #require(tokens[$0]) }
            let reply = try await converseReturning(address) { (client: Conversation) async throws in
                if let token { _ = try await client.ok("AUTH \(token)") }
                return try await client.call(line)
            }
            #expect(reply.hasPrefix("OK "), "\(viewer ?? "anyone"): \(line): \(reply)")
            replies.append(reply)
        }
        return replies
    }

    @Test("a daemon restarted on the same database shows the same LEADERBOARD (every page, AROUND), HUNT, RANKING (all-time, week, AROUND) and PROFILE as before", arguments: DaemonRestart.allCases)
    func daemonRestart(restart: DaemonRestart) async throws {
        try await TestEnvironment.make(prefix: "huntdaemon").use { environment in
            let (hunt, tokens, before) = try await Self.withDaemon(restart, environment, fresh: false) { address in
                try await Self.play(address)
            }
            let after = try await Self.withDaemon(restart, environment, fresh: true) { address in
                try await Self.views(address, hunt: hunt, tokens: tokens)
            }
            #expect(after.count == before.count)
            for (was, now) in zip(before, after) { #expect(now == was) }
            // What the standings are, as the database has them.
            let standings = try await databaseStandings(hunt, environment)
            #expect(standings.map { $0.split(separator: " ").dropFirst().prefix(2).joined(separator: " ") }
                == ["dan 50", "cat 37", "amy 30", "bob 30", "evelyn 15", "gus 0"])
            // RANKING as shown before and after is the brute force over the check-ins.
            let ranking = try await databaseRanking(week: false, environment)
            #expect(ranking.count == 5)
            let shown = try #require(before.first { $0.hasPrefix("anyone: RANKING: ") })
            #expect(try JSONObject(okLine: String(shown.dropFirst("anyone: RANKING: ".count)))["entries"].array.map(entrySummary) == ranking)
        }
    }

    /// Plays a hunt on the daemon at `address` — accepted, pending, flagged and approved, rejected
    /// check-ins, a rename, a player who left — and answers its id, the players' tokens, and what
    /// viewers see of it there.
    static func play(_ address: SocketAddress) async throws -> (String, [String: String], [String]) {
        let names = ["host", "amy", "bob", "cat", "dan", "eve", "fay", "gus"]
        var tokens: [String: String] = [:]
        var huntID = ""
        try await openPlayers(names[...], address, opened: [:], tokens: &tokens) { (users: [String: Conversation]) async throws in
            let host = try #require(users["host"]), amy = try #require(users["amy"]), bob = try #require(users["bob"])
            let cat = try #require(users["cat"]), dan = try #require(users["dan"]), eve = try #require(users["eve"])
            let fay = try #require(users["fay"]), gus = try #require(users["gus"])
            let hunt = try await host.makeHunt(stops: [
                StopPlan(points: 10), StopPlan(north: 150, points: 20), StopPlan(north: 300, points: 30, options: "PROOF photo"),
                StopPlan(north: 50_000, points: 40), StopPlan(north: 200, points: 15),
            ])
            huntID = hunt.id
            try #require(hunt.stops.count == 5 && hunt.places.count == 5)
            let (s, p) = (hunt.stops, hunt.places)
            for player in [amy, bob, cat, dan, eve, fay, gus] { try await player.join(hunt) }
            #expect(try await eve.join(hunt, as: "evelyn")["id"].string == hunt.id)
            _ = try await fay.ok("LEAVE \(hunt.id)")

            _ = try await amy.checkIn(s[0], at: p[0])
            _ = try await amy.checkIn(s[1], at: p[1])
            _ = try await bob.checkIn(s[1], at: p[1])
            _ = try await bob.checkIn(s[0], at: p[0])
            let photo = try await cat.checkIn(s[2], at: p[2], photoOption)["checkin"]["id"].string
            _ = try await host.ok("APPROVE \(photo) BONUS 7")
            _ = try await dan.checkIn(s[0], at: p[0])
            let far = try await dan.checkIn(s[3], at: p[3])["checkin"]
            #expect(try far["status"].string == "flagged")
            _ = try await host.ok("APPROVE \(far["id"].string)")
            let rejected = try await eve.checkIn(s[0], at: p[0])["checkin"]["id"].string
            _ = try await host.ok("REJECT \(rejected)")
            _ = try await eve.checkIn(s[4], at: p[4])
            // Still pending when the daemon stops: worth nothing.
            #expect(try await gus.checkIn(s[2], at: p[2], photoOption)["checkin"]["status"].string == "pending")
            #expect(try await host.call("HINT \(hunt.id) \(quoted("Mind the tide"))") == "OK true")
            #expect(try players(await host.leaderboard(hunt.id)) == ["dan", "cat", "amy", "bob", "evelyn", "gus"])
        }
        tokens["evelyn"] = tokens["eve"]
        return (huntID, tokens, try await views(address, hunt: huntID, tokens: tokens))
    }

    /// Registers each of `names` on a connection of its own, keeping their tokens, and keeps every
    /// connection open for `body`.
    private static func openPlayers(
        _ names: ArraySlice<String>, _ address: SocketAddress, opened: [String: Conversation], tokens: inout [String: String],
        _ body: ([String: Conversation]) async throws -> Void
    ) async throws {
        guard let name = names.first else { return try await body(opened) }
        var kept = tokens
        try await converse(address) { (client: Conversation) async throws in
            kept[name] = try await client.register(name)
            var opened = opened
            opened[name] = client
            try await openPlayers(names.dropFirst(), address, opened: opened, tokens: &kept, body)
        }
        tokens = kept
    }
}
