import Foundation
import NIOCore
import Postgres
import ScavengerTestSupport
import Testing

// A model-based test of the game (issue 51 item 3): a seeded random sequence of operations
// (GameReferenceModel.swift) runs on two daemons sharing one database, each operation on a daemon
// the seed picks; every reply is compared with the model's, and after every step every view that
// the step may have changed (the hunt's LEADERBOARD, every player's HUNT `me` and `winners`,
// BADGES and PROFILE, RANKING) is read on a daemon the seed picks and compared with the model's
// recount. A read waits (a bounded poll, SCAVENGER_MODEL_WAIT seconds, default 15, a guard against
// hangs only) until it agrees, since the other daemon learns of a write from the change log.
//
// Time: a trial's clock and the travel check are PostgreSQL's (TrialTests), so the daemons share
// no injected clock here: the model's `tick` moves every check-in 1,000 s into the past in the
// database, as TrialTests' `moveCheckIns` does. The seconds the test itself takes come on top of
// the model's; the model's times are multiples of 1,000 s against a trial of 1,800 s and a travel
// threshold of 1,800 s (100 km at 200 km/h), so up to 800 s of the test's own time change no verdict,
// and a trial's `time_s` is compared as at least the model's and at most that plus the time the
// run has taken.
//
// Environment: SCAVENGER_MODEL_SEED=n[,m…] runs those seeds alone, SCAVENGER_MODEL_SEEDS=n seeds 1…n
// (default 16); SCAVENGER_MODEL_STEPS (default 150 per seed); SCAVENGER_MODEL_RULES=1.4 switches the
// 1.5 revisions off in the model (what the daemon implements today, to tell "not yet 1.5" from
// "views disagree"); SCAVENGER_MODEL_SHRINK=1 shrinks a failing sequence (drops steps while it
// still fails the same way) and prints it as a literal for `GameModelRegressions.all`.

enum ModelSettings {
    static let environment = ProcessInfo.processInfo.environment
    static let steps = Int(environment["SCAVENGER_MODEL_STEPS"] ?? "") ?? 150
    static let v15 = environment["SCAVENGER_MODEL_RULES"] != "1.4"
    static let shrink = environment["SCAVENGER_MODEL_SHRINK"] == "1"
    static let shrinkRuns = Int(environment["SCAVENGER_MODEL_SHRINK_RUNS"] ?? "") ?? 300
    static let wait = Double(environment["SCAVENGER_MODEL_WAIT"] ?? "") ?? 15
    static let seeds: [UInt64] = {
        let chosen = (environment["SCAVENGER_MODEL_SEED"] ?? "").split(separator: ",").compactMap { UInt64($0) }
        if !chosen.isEmpty { return chosen }
        return Array(1 ... (UInt64(environment["SCAVENGER_MODEL_SEEDS"] ?? "") ?? 16))
    }()
    static let players = ["amy", "bob", "cat", "dan", "eve", "fay"]
}

/// Where a sequence first disagrees with the model.
struct ModelFailure: Error, Sendable, CustomStringConvertible {
    /// The index of the operation in the sequence, the operation, and what disagreed.
    var step: Int
    var op: ModelOp
    var view: String
    var want: String
    var got: String

    /// What must stay the same while shrinking: the kind of operation and of view.
    var signature: String {
        "\(op.description.prefix { $0 != "(" }) \(view.prefix { $0 != " " })"
    }
    var description: String { "step \(step) \(op): \(view): want \(want), got \(got)" }
}

/// One view as read, against the model: `ok` decides (a trial's board is judged, not equal).
struct ViewCheck {
    var name: String
    var want: String
    var got: String
    var ok: Bool
}

extension Conversation {
    /// Sends `lines` at once (pipelined) and returns their replies in order.
    func pipeline(_ lines: [String]) async throws -> [String] {
        try await writer.send(lines.map { $0 + "\n" }.joined())
        var replies: [String] = []
        for line in lines {
            guard let reply = try await reader.next() else { throw ConnectionClosed(request: line) }
            replies.append(reply)
        }
        return replies
    }
}

/// A sequence played on two daemons: the connections of every user on each, the hunts made.
struct GameRun {
    let environment: TestEnvironment
    /// [daemon]: the host's, the moderator's; players[player][daemon].
    let host: [Conversation]
    let moderator: [Conversation]
    let players: [[Conversation]]
    let hunts: [MadeHunt]
    let started = ContinuousClock.now
    var checkInIDs: [String] = []

    /// Runs `ops` (skipping those the model no longer allows) and answers the first disagreement.
    mutating func run(_ ops: [ModelOp], v15: Bool, seed: UInt64) async throws -> ModelFailure? {
        var model = GameModel(players: ModelSettings.players, huntIDs: hunts.map(\.id), v15: v15)
        var route = SplitMix64(seed: seed ^ 0x5EED_D1CE)
        for (index, op) in ops.enumerated() where model.allowed(op) {
            let (writer, reader) = (route.int(in: 0 ... 1), route.int(in: 0 ... 1))
            let target: Int? = switch op {
            case .approve(let p, let h, let s), .reject(let p, let h, let s): model.latest(p, h, s)
            default: nil
            }
            let before = model.checkIns.count
            let want = model.apply(op)
            let line = try await perform(op, on: writer, target: target.map { checkInIDs[$0] })
            let got = reply(line)
            if got != want { return ModelFailure(step: index, op: op, view: "reply", want: "\(want)", got: String(line.prefix(160))) }
            if model.checkIns.count > before { checkInIDs.append(try JSONObject(okLine: line)["checkin"]["id"].string) }
            if let bad = try await compare(model, hunts: op.hunt.map { [$0] } ?? [], on: reader) {
                return ModelFailure(step: index, op: op, view: bad.name, want: bad.want, got: bad.got)
            }
        }
        // Last, every hunt on both daemons.
        for daemon in 0 ... 1 {
            if let bad = try await compare(model, hunts: Array(modelHunts.indices), on: daemon) {
                return ModelFailure(step: ops.count - 1, op: ops.last ?? .tick, view: bad.name, want: bad.want, got: bad.got)
            }
        }
        return nil
    }

    /// OK (with a check-in's status) or the ERR code of a reply line.
    func reply(_ line: String) -> ModelReply {
        if line.hasPrefix("ERR ") { return .err(String(line.dropFirst(4).prefix { $0 != " " })) }
        let status = try? JSONObject(okLine: line)["checkin"]["status"].string
        return line.hasPrefix("OK ") ? .ok(status: status) : .err("?")
    }

    func perform(_ op: ModelOp, on daemon: Int, target: String?) async throws -> String {
        switch op {
        case .start(let h): return try await host[daemon].call("STARTHUNT \(hunts[h].id)")
        case .end(let h): return try await host[daemon].call("ENDHUNT \(hunts[h].id)")
        case .remove(let h):
            // A report opens the hunt's item; the moderator claims it and removes the hunt.
            let id = hunts[h].id
            for line in ["REPORT \(id) spam", "CLAIM \(id)"] {
                let reply = try await moderator[daemon].call(line)
                if !reply.hasPrefix("OK ") { return reply }
            }
            return try await moderator[daemon].call("RESOLVE \(id) remove")
        case .join(let p, let h, let t):
            return try await players[p][daemon].call("JOIN \(hunts[h].code)" + (t.map { " TEAM \(quoted(modelTeams[$0]))" } ?? ""))
        case .leave(let p, let h): return try await players[p][daemon].call("LEAVE \(hunts[h].id)")
        case .checkIn(let p, let h, let s, let tooFar):
            let place = tooFar ? hunts[h].places[s].moved(east: modelTooFarMetres) : hunts[h].places[s]
            return try await players[p][daemon].checkInReply(hunts[h].stops[s], at: place, modelHunts[h].stops[s].photo ? photoOption : "")
        case .approve: return try await host[daemon].call("APPROVE \(target!)")
        case .reject: return try await host[daemon].call("REJECT \(target!)")
        case .tick:
            let sql: SQL = "UPDATE checkins SET created_at = created_at - \(Double(modelTickSeconds))::double precision * interval '1 second'"
            try await environment.pool.query(sql, idempotent: false)
            // A team's trial clock is kept on its row (1.5): it moves with the check-ins.
            let clocks: SQL = """
                UPDATE hunt_teams SET trial_started_at = trial_started_at - \(Double(modelTickSeconds))::double precision * interval '1 second'
                WHERE trial_started_at IS NOT NULL
                """
            try await environment.pool.query(clocks, idempotent: false)
            return "OK true"
        }
    }

    /// Reads the views of `hunts` and of every user on `daemon` until they agree with the model
    /// (or the wait runs out): the first that does not, or nil.
    func compare(_ model: GameModel, hunts ids: [Int], on daemon: Int) async throws -> ViewCheck? {
        var last: [ViewCheck] = []
        let agreed = try await poll(timeout: .seconds(ModelSettings.wait)) {
            last = try await read(model, hunts: ids.filter { !model.removed[$0] }, on: daemon)
            return last.allSatisfy(\.ok)
        }
        return agreed ? nil : last.first { !$0.ok }.map { check in
            var check = check
            check.name += " (on daemon \(daemon == 0 ? "A" : "B"))"
            return check
        }
    }

    func read(_ model: GameModel, hunts ids: [Int], on daemon: Int) async throws -> [ViewCheck] {
        var checks: [ViewCheck] = []
        let drift = (ContinuousClock.now - started) / .seconds(1) + 2
        let boards = try await host[daemon].pipeline(ids.map { "LEADERBOARD \(hunts[$0].id) LIMIT 50" } + ["RANKING LIMIT 50"])
        for (h, line) in zip(ids, boards) {
            checks.append(boardCheck(model, h, try JSONObject(okLine: line)["entries"].array, drift: drift))
        }
        checks.append(rankingCheck(model, try JSONObject(okLine: boards.last!)["entries"].array))
        for p in model.players.indices {
            let name = model.players[p]
            let lines = try await players[p][daemon].pipeline(ids.map { "HUNT \(hunts[$0].id)" } + ["BADGES", "PROFILE"])
            for (h, line) in zip(ids, lines) {
                let hunt = try JSONObject(okLine: line)
                checks.append(meCheck(model, h, p, hunt["me"]))
                let trial = modelHunts[h].trial != nil
                let winners = try hunt["winners"].array.map { try $0.string }
                let want = model.winners(h)
                checks.append(ViewCheck(
                    name: "winners \(modelHunts[h].name) to \(name)", want: want.joined(separator: ", "),
                    got: winners.joined(separator: ", "), ok: trial ? winners.sorted() == want.sorted() : winners == want))
            }
            let badges = try JSONObject(okLine: lines[ids.count])["badges"].array.map { try $0["id"].string }.sorted()
            let want = model.badges(p)
            checks.append(ViewCheck(
                name: "BADGES \(name)", want: want.joined(separator: " "), got: badges.joined(separator: " "), ok: badges == want))
            let profile = try JSONObject(okLine: lines[ids.count + 1])
            let got = GameModel.Profile(
                points: profile["points"].int ?? -1, found: profile["stops_found"].int ?? -1, played: profile["hunts_played"].int ?? -1,
                completed: profile["hunts_completed"].int ?? -1, badges: profile["badges"].int ?? -1)
            let wantProfile = model.profile(p)
            checks.append(ViewCheck(name: "PROFILE \(name)", want: "\(wantProfile)", got: "\(got)", ok: got == wantProfile))
        }
        return checks
    }

    func stopIDs(_ h: Int, _ stops: [Int]) -> String { stops.map { hunts[h].stops[$0] }.sorted().joined(separator: ",") }

    /// A leaderboard: rows equal in order (a trial's: judged, see ``trialBoardAgrees``).
    func boardCheck(_ model: GameModel, _ h: Int, _ entries: [JSONObject], drift: Double) -> ViewCheck {
        let want = model.entries(h)
        func row(_ rank: Int, _ player: String, _ points: Int, _ found: Int, _ members: [String]?, _ time: String?) -> String {
            "\(rank) \(player) \(points) \(found)" + (members.map { " [\($0.joined(separator: ","))]" } ?? "") + (time.map { " t=\($0)" } ?? "")
        }
        let trial = modelHunts[h].trial != nil
        let wantRows = want.map { e in
            let time: String? = trial ? e.timeS.map { String($0) } ?? "null" : nil
            return row(e.rank, e.player, e.points, e.found.count, e.members, time)
        }
        var gotRows: [String] = []
        for e in entries {
            let members: [String]? = modelHunts[h].isTeam ? e["members"].array.compactMap { try? $0.string } : nil
            var time: String?
            if trial { time = e["time_s"].double.map { String(format: "%.1f", $0) } ?? "null" }
            gotRows.append(row(e["rank"].int ?? -1, (try? e["player"].string) ?? "?", e["points"].int ?? -1, e["found"].int ?? -1, members, time))
        }
        let ok = trial ? trialBoardAgrees(want, entries, drift: drift) : wantRows == gotRows
        return ViewCheck(name: "LEADERBOARD \(modelHunts[h].name)", want: wantRows.joined(separator: "; "), got: gotRows.joined(separator: "; "), ok: ok)
    }

    /// A trial's board: the same entries (player, points, found, members), each `time_s` at least
    /// the model's and at most that plus `drift` (the run's own seconds), in the order of found
    /// then time then name, ranked by competition over (found, time), and never against the
    /// model's order of times (entries whose model times are equal may come either way).
    func trialBoardAgrees(_ want: [ModelEntry], _ entries: [JSONObject], drift: Double) -> Bool {
        guard want.count == entries.count else { return false }
        let byName = Dictionary(uniqueKeysWithValues: want.map { ($0.player, $0) })
        var previous: (found: Int, time: Double, model: Int, name: String, rank: Int)?
        for (index, e) in entries.enumerated() {
            guard let name = try? e["player"].string, let m = byName[name], e["points"].int == m.points, e["found"].int == m.found.count,
                  (m.members ?? []) == e["members"].array.compactMap({ try? $0.string }) else { return false }
            let time = e["time_s"].double
            if let model = m.timeS {
                guard let time, time >= Double(model) - 0.001, time <= Double(model) + drift else { return false }
            } else if time != nil { return false }
            let now = (found: m.found.count, time: time ?? .infinity, model: m.timeS ?? .max, name: name, rank: e["rank"].int ?? -1)
            if let p = previous {
                let tied = p.found == now.found && p.time == now.time
                guard p.found > now.found || (p.found == now.found && (p.time < now.time || (tied && p.name < now.name))) else { return false }
                guard p.found > now.found || p.model <= now.model else { return false }
                guard now.rank == (tied ? p.rank : index + 1) else { return false }
            } else if now.rank != 1 { return false }
            previous = now
        }
        return true
    }

    func meCheck(_ model: GameModel, _ h: Int, _ p: Int, _ me: JSONObject) -> ViewCheck {
        let trial = modelHunts[h].trial != nil
        var want = "null"
        if let e = model.me(h, p) {
            want = "points \(e.points) found [\(stopIDs(h, e.found))]"
            if !trial { want += " rank \(e.rank)" }
            if let team = model.team[h][p] { want += " team \(team)" }
        }
        var got = "null"
        if !me.isNull {
            let found: [String] = me["found"].array.compactMap { try? $0.string }
            got = "points \(me["points"].int ?? -1) found [\(found.sorted().joined(separator: ","))]"
            if !trial { got += " rank \(me["rank"].int ?? -1)" }
            if let team = try? me["team"].string { got += " team \(team)" }
        }
        return ViewCheck(name: "me \(modelHunts[h].name) of \(model.players[p])", want: want, got: got, ok: want == got)
    }

    /// RANKING: the rows "player points found" by points, then name (ties by time are not compared).
    func rankingCheck(_ model: GameModel, _ entries: [JSONObject]) -> ViewCheck {
        let rows = entries.map { (name: (try? $0["player"].string) ?? "?", points: $0["points"].int ?? -1, found: $0["found"].int ?? -1) }
        let ordered = zip(rows, rows.dropFirst()).allSatisfy { $0.points >= $1.points }
        let got = rows.sorted { $0.points != $1.points ? $0.points > $1.points : $0.name < $1.name }.map { "\($0.name) \($0.points) \($0.found)" }
        let want = model.ranking()
        return ViewCheck(
            name: "RANKING", want: want.joined(separator: "; "), got: got.joined(separator: "; ") + (ordered ? "" : " (out of points order)"),
            ok: ordered && got == want)
    }
}

/// Plays `ops` on two fresh daemons on a fresh database (host, moderator, six players, the
/// hunts of ``modelHunts`` made and not started) and answers the first disagreement.
func replayGame(_ ops: [ModelOp], v15: Bool, seed: UInt64) async throws -> ModelFailure? {
    var failure: ModelFailure?
    let names = ["host", "mod"] + ModelSettings.players
    try await withTwoDaemons { a, b, environment in
        try await asUsers(names, a, environment) { (onA: [Conversation]) async throws in
            _ = try await environment.database.setRole(username: "mod", role: .moderator)
            try await asLoggedIn(names, b) { (onB: [Conversation]) async throws in
                var hunts: [MadeHunt] = []
                for spec in modelHunts {
                    let options = ["PUBLIC", spec.ordered ? "ORDERED" : "", spec.teamSize.map { "TEAMS SIZE \($0)" } ?? "",
                                   spec.trial.map { "TRIAL \($0)" } ?? "", spec.badge.map { "BADGE \(quoted($0))" } ?? ""]
                    let stops = spec.stops.enumerated().map { n, stop in
                        StopPlan(north: stop.north, east: stop.east, radius: 20, points: stop.points, title: "stop \(n + 1)",
                                 options: stop.photo ? "PROOF photo" : "")
                    }
                    hunts.append(try await onA[0].makeHunt(options.filter { !$0.isEmpty }.joined(separator: " "), name: spec.name, stops: stops, start: false))
                }
                var run = GameRun(
                    environment: environment, host: [onA[0], onB[0]], moderator: [onA[1], onB[1]],
                    players: (2 ..< names.count).map { [onA[$0], onB[$0]] }, hunts: hunts)
                failure = try await run.run(ops, v15: v15, seed: seed)
            }
        }
    }
    return failure
}

/// The sequence a seed makes: `steps` operations drawn from the model's state as it goes.
func generateGame(seed: UInt64, steps: Int, v15: Bool) -> [ModelOp] {
    var g = SplitMix64(seed: seed)
    var model = GameModel(players: ModelSettings.players, huntIDs: modelHunts.map(\.name), v15: v15)
    return (0 ..< steps).map { _ in
        let op = model.next(&g)
        _ = model.apply(op)
        return op
    }
}

/// Drops operations while the sequence still fails with the same signature: chunks of half the
/// sequence, then smaller, down to single steps (delta debugging without the complements). Each
/// try replays on a fresh database; at most `runs` tries.
func shrinkGame(_ ops: [ModelOp], _ failure: ModelFailure, v15: Bool, seed: UInt64, runs: Int) async throws -> ([ModelOp], ModelFailure) {
    var best = Array(ops.prefix(failure.step + 1))
    var bestFailure = failure
    var chunk = max(1, best.count / 2)
    var tries = 0
    while tries < runs {
        var removedAny = false
        var start = 0
        while start < best.count, tries < runs {
            var candidate = best
            candidate.removeSubrange(start ..< min(start + chunk, best.count))
            tries += 1
            if let again = try await replayGame(candidate, v15: v15, seed: seed), again.signature == bestFailure.signature {
                best = Array(candidate.prefix(again.step + 1))
                bestFailure = again
                removedAny = true
            } else {
                start += chunk
            }
        }
        if chunk == 1 && !removedAny { break }
        if !removedAny || chunk > 1 { chunk = max(1, chunk / 2) }
    }
    return (best, bestFailure)
}

/// A shrunk failing sequence kept as a regression case (run every time).
struct ModelRegression: Sendable, CustomTestStringConvertible {
    var name: String
    var v15: Bool
    var seed: UInt64 = 0
    var ops: [ModelOp]
    var testDescription: String { name }
}

/// Serialized: each case runs two daemons with their connection pools, and all cases at once
/// beside the rest of the suite would take more of PostgreSQL's connections than it has.
@Suite("The game against a reference model, on two daemons (issue 51)", .serialized, .timeLimit(.minutes(30)))
struct GameModelTests {
    @Test("a seeded random sequence of JOIN, LEAVE, CHECKIN, reviews, ends and removals: every reply and view as the model recounts", arguments: ModelSettings.seeds)
    func randomSequence(seed: UInt64) async throws {
        let v15 = ModelSettings.v15
        let ops = generateGame(seed: seed, steps: ModelSettings.steps, v15: v15)
        guard let failure = try await replayGame(ops, v15: v15, seed: seed) else { return }
        let rules = v15 ? "1.5" : "1.4"
        var report = "seed \(seed) (rules \(rules), \(ops.count) steps) fails at \(failure)\n"
            + "replay: SCAVENGER_MODEL_SEED=\(seed) SCAVENGER_MODEL_STEPS=\(ModelSettings.steps) SCAVENGER_MODEL_RULES=\(rules)"
        if ModelSettings.shrink {
            let (shrunk, last) = try await shrinkGame(ops, failure, v15: v15, seed: seed, runs: ModelSettings.shrinkRuns)
            report += "\nshrunk to \(shrunk.count) steps, failing at \(last)\n"
                + "ModelRegression(name: \"…\", v15: \(v15), seed: \(seed), ops: [\(shrunk.map(\.description).joined(separator: ", "))]),"
        }
        print(report)
        Issue.record("\(report)")
    }

    @Test("shrunk sequences that once failed", arguments: GameModelRegressions.all)
    func regression(_ regression: ModelRegression) async throws {
        if let failure = try await replayGame(regression.ops, v15: regression.v15, seed: regression.seed) {
            Issue.record("\(regression.name): \(failure)")
        }
    }
}
