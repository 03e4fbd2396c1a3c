import ScavengerTestSupport

// The reference model of the game (issue 51 item 3), written from the contract (protocol 1.2–1.5)
// and nothing else: no sockets, no database. Its state is the hunts (their stops and schedule
// state), the memberships and the check-ins with their status; every view (a leaderboard, HUNT's
// `me` and `winners`, RANKING, PROFILE, BADGES) is a recount of the accepted check-ins that still
// stand, so a view that a daemon keeps incrementally is compared with what it should add up to.
//
// Assumptions where the contract is silent (read from the README and the daemon's behaviour):
// - A JOIN goes by join code: an ended or removed hunt is NOT_FOUND; a member's JOIN of the team
//   they are in is OK and changes nothing. LEAVE deletes the player's check-ins (a later
//   APPROVE/REJECT of one is NOT_FOUND); it is refused (CONFLICT) once the hunt is over.
// - CHECKIN's checks come in the README's order: player (FORBIDDEN), running, time is up, a live
//   check-in of the player, of the team, the ordered hunt's next stop (each CONFLICT), distance
//   (TOO_FAR), then the travel check (flagged beats a photo stop's pending). An ordered hunt's next
//   stop is the first without a live (accepted, pending, flagged) check-in of the player (team).
// - The travel check's previous fix is the player's latest accepted or pending check-in anywhere.
// - `pathfinder` needs 5 players (members, in a team hunt) in the hunt when the check-in is
//   accepted. 1.5: the first accepted check-in at a stop that is not rejected later "records the
//   first": leaving keeps it the first, so no later check-in there earns it; a REJECT of it frees
//   the stop again. Before 1.5 (the daemon today): whenever the stop's `found_by` was 0.
// - `first-find` (1.5): taken back when the REJECT takes the user's last accepted check-in that
//   still stands; left hunts' check-ins are gone but the badge stays. Before 1.5: taken when the
//   user's stops found across hunts fall to 0 on a REJECT.
// - A removed hunt counts as if every player had left it: out of RANKING, PROFILE (points,
//   stops_found, hunts_played, hunts_completed) and, 1.5, its completion badges. Its LEADERBOARD
//   and HUNT are not compared after the removal (NOT_FOUND to its players).
// - Ranks and orders: a hunt's `at` is the acceptance (by the server or a review) of the entry's
//   latest accepted check-in; the model orders by the step of that acceptance. RANKING is compared
//   as its (player, points, found) rows in points order, not its ties. A trial's times carry the
//   real seconds the test took besides the model's ticks, so entries with equal model times are
//   compared as a group (see GameModelTests).
// - Trials: time_s runs from the clock's start (1.5: the start stays when its check-in leaves with
//   a teammate; before 1.5: the earliest live check-in) to the latest accepted check-in.

/// One stop of a model hunt.
struct ModelStop: Sendable {
    var north: Double
    var east: Double
    var points: Int
    var photo: Bool = false
}

/// A hunt as the test creates it.
struct ModelHuntSpec: Sendable {
    var name: String
    var ordered = false
    var teamSize: Int?
    var trial: Int?
    var badge: String?
    var stops: [ModelStop]
    var isTeam: Bool { teamSize != nil }
}

/// The hunts every case plays: near stops lie within 400 m of the origin (never 1 km apart, so
/// never flagged between them); the far hunt is 100 km north (flagged when reached from the near
/// ones within half an hour).
let modelHunts: [ModelHuntSpec] = [
    ModelHuntSpec(name: "solo", badge: "Solo star", stops: [
        ModelStop(north: -350, east: 0, points: 10), ModelStop(north: -300, east: 0, points: 20),
        ModelStop(north: -250, east: 0, points: 30, photo: true)]),
    ModelHuntSpec(name: "ordered", ordered: true, stops: [
        ModelStop(north: -200, east: 0, points: 5), ModelStop(north: -150, east: 0, points: 6), ModelStop(north: -100, east: 0, points: 7)]),
    ModelHuntSpec(name: "trial", trial: 1800, stops: [
        ModelStop(north: -50, east: 0, points: 3), ModelStop(north: 0, east: 0, points: 4), ModelStop(north: 50, east: 0, points: 8, photo: true)]),
    ModelHuntSpec(name: "teams", teamSize: 3, badge: "Team star", stops: [
        ModelStop(north: 100, east: 0, points: 11), ModelStop(north: 150, east: 0, points: 12), ModelStop(north: 200, east: 0, points: 13, photo: true)]),
    ModelHuntSpec(name: "teamtrial", teamSize: 3, trial: 1800, stops: [
        ModelStop(north: 250, east: 0, points: 2), ModelStop(north: 300, east: 0, points: 9)]),
    ModelHuntSpec(name: "far", stops: [ModelStop(north: 100_000, east: 0, points: 40), ModelStop(north: 100_050, east: 0, points: 50)]),
]

/// The team names a team hunt's players pick from.
let modelTeams = ["red", "blue", "green"]

/// How far a "too far" fix is from its stop (stops have a 20 m radius).
let modelTooFarMetres = 100.0
/// A tick of the model's clock: check-ins move this far into the past.
let modelTickSeconds = 1000

/// One operation of a sequence. Players and hunts are indices; a review names the latest
/// check-in of a player at a stop, so that a shrunk sequence still means the same.
enum ModelOp: Sendable, Hashable, CustomStringConvertible {
    case start(hunt: Int)
    case join(player: Int, hunt: Int, team: Int?)
    case leave(player: Int, hunt: Int)
    case checkIn(player: Int, hunt: Int, stop: Int, tooFar: Bool)
    case approve(player: Int, hunt: Int, stop: Int)
    case reject(player: Int, hunt: Int, stop: Int)
    case end(hunt: Int)
    case remove(hunt: Int)
    case tick

    /// A Swift literal, to paste into the regression table.
    var description: String {
        switch self {
        case .start(let h): ".start(hunt: \(h))"
        case .join(let p, let h, let t): ".join(player: \(p), hunt: \(h), team: \(t.map(String.init) ?? "nil"))"
        case .leave(let p, let h): ".leave(player: \(p), hunt: \(h))"
        case .checkIn(let p, let h, let s, let far): ".checkIn(player: \(p), hunt: \(h), stop: \(s), tooFar: \(far))"
        case .approve(let p, let h, let s): ".approve(player: \(p), hunt: \(h), stop: \(s))"
        case .reject(let p, let h, let s): ".reject(player: \(p), hunt: \(h), stop: \(s))"
        case .end(let h): ".end(hunt: \(h))"
        case .remove(let h): ".remove(hunt: \(h))"
        case .tick: ".tick"
        }
    }

    var hunt: Int? {
        switch self {
        case .start(let h), .end(let h), .remove(let h), .join(_, let h, _), .leave(_, let h), .checkIn(_, let h, _, _),
             .approve(_, let h, _), .reject(_, let h, _): h
        case .tick: nil
        }
    }
}

/// What a reply must be: OK, or ERR with a code; for a check-in, also its status.
enum ModelReply: Sendable, Equatable, CustomStringConvertible {
    case ok(status: String?)
    case err(String)
    var description: String {
        switch self {
        case .ok(let status): status.map { "OK \($0)" } ?? "OK"
        case .err(let code): "ERR \(code)"
        }
    }
}

enum HuntPhase: Sendable { case scheduled, running, ended }

struct ModelCheckIn: Sendable {
    var player: Int
    var hunt: Int
    var stop: Int
    var team: String?
    var status: String
    var deleted = false
    /// Model seconds when made (ticks only).
    var created: Int
    /// The step of its acceptance, for `at`.
    var acceptedStep: Int?
    var far: Bool
    var live: Bool { !deleted && status != "rejected" }
    var standing: Bool { !deleted && status == "accepted" }
}

/// A leaderboard entry as the model computes it.
struct ModelEntry: Sendable, Equatable {
    var player: String
    var points: Int
    var found: [Int]
    var members: [String]?
    var at: Int?
    var timeS: Int?
    var rank = 0
}

struct GameModel: Sendable {
    /// Whether the 1.5 revisions apply (false: the 1.2–1.4 contract the daemon implements today).
    var v15: Bool
    var players: [String]
    var phase: [HuntPhase] = Array(repeating: .scheduled, count: modelHunts.count)
    var removed: [Bool] = Array(repeating: false, count: modelHunts.count)
    /// member[hunt][player]: in the hunt; team[hunt][player]: their team's name.
    var member: [[Bool]]
    var team: [[String?]]
    /// 1.5: left a running trial or team hunt (JOIN is CONFLICT until it ends).
    var leftForGood: [[Bool]]
    var checkIns: [ModelCheckIn] = []
    var now = 0
    var step = 0
    /// 1.5 trial clocks, by hunt and player name or "team:" name: the check-in that started it.
    var clocks: [[String: Int]] = Array(repeating: [:], count: modelHunts.count)
    /// Event badges: pathfinder's and first-find's earning check-ins (indices into checkIns).
    var pathfinderBy: [Int?]
    var firstFindBy: [Int?]
    /// Before 1.5: badges held, awarded and taken back by events; the check-in that earned a
    /// user's pathfinder and the hunt of their `trial`.
    var held: [Set<String>]
    var pathfinderOf: [Int?]
    var trialHunt: [Int?]
    /// completion[hunt][player]: the player (their team) completed the hunt while they played it,
    /// and it still is complete (a player who joins a team after it completed has not).
    var completion: [[Bool]]
    var huntIDs: [String]

    init(players: [String], huntIDs: [String], v15: Bool) {
        self.v15 = v15
        self.players = players
        self.huntIDs = huntIDs
        member = Array(repeating: Array(repeating: false, count: players.count), count: modelHunts.count)
        team = Array(repeating: Array(repeating: nil, count: players.count), count: modelHunts.count)
        leftForGood = member
        completion = member
        pathfinderBy = Array(repeating: nil, count: modelHunts.reduce(0) { $0 + $1.stops.count })
        firstFindBy = Array(repeating: nil, count: players.count)
        held = Array(repeating: [], count: players.count)
        pathfinderOf = Array(repeating: nil, count: players.count)
        trialHunt = Array(repeating: nil, count: players.count)
    }

    static func stopIndex(hunt: Int, stop: Int) -> Int { modelHunts[..<hunt].reduce(0) { $0 + $1.stops.count } + stop }

    // MARK: Derived facts

    func key(_ hunt: Int, _ player: Int) -> String { team[hunt][player].map { "team:" + $0 } ?? players[player] }

    /// The live check-ins of a player's side (the player, or their team) in a hunt.
    func sideCheckIns(_ hunt: Int, _ player: Int) -> [Int] {
        checkIns.indices.filter { i in
            let c = checkIns[i]
            guard c.hunt == hunt, !c.deleted else { return false }
            if let name = team[hunt][player] { return c.team?.lowercased() == name.lowercased() }
            return c.player == player
        }
    }

    func membersCount(_ hunt: Int) -> Int { member[hunt].filter { $0 }.count }

    func teamMembers(_ hunt: Int, _ name: String) -> [Int] {
        players.indices.filter { member[hunt][$0] && team[hunt][$0]?.lowercased() == name.lowercased() }
    }

    /// The trial clock's start of a side, if started.
    func clockStart(_ hunt: Int, _ player: Int) -> Int? {
        guard modelHunts[hunt].trial != nil else { return nil }
        if v15 { return clocks[hunt][key(hunt, player)].map { checkIns[$0].created } }
        return sideCheckIns(hunt, player).filter { checkIns[$0].live }.map { checkIns[$0].created }.min()
    }

    func timeIsUp(_ hunt: Int, _ player: Int) -> Bool {
        guard let trial = modelHunts[hunt].trial, let start = clockStart(hunt, player) else { return false }
        return now - start >= trial
    }

    /// The player's latest accepted or pending check-in anywhere (the travel check's reference).
    func previousFix(_ player: Int) -> ModelCheckIn? {
        checkIns.last { $0.player == player && !$0.deleted && ($0.status == "accepted" || $0.status == "pending") }
    }

    // MARK: Views

    /// The entries of a hunt's leaderboard, ordered and ranked.
    func entries(_ hunt: Int) -> [ModelEntry] {
        let spec = modelHunts[hunt]
        var entries: [ModelEntry] = []
        func entry(name: String, members: [String]?, of checks: [Int], clock: Int?) -> ModelEntry {
            let standing = checks.filter { checkIns[$0].standing }
            let points = standing.reduce(0) { $0 + spec.stops[checkIns[$1].stop].points }
            let at = standing.compactMap { checkIns[$0].acceptedStep }.max()
            var time: Int?
            if spec.trial != nil, let last = standing.map({ checkIns[$0].created }).max() {
                time = last - (clock ?? last)
            }
            return ModelEntry(player: name, points: points, found: standing.map { checkIns[$0].stop }.sorted(), members: members, at: at, timeS: time)
        }
        if spec.isTeam {
            var names: [String] = []
            for p in players.indices where member[hunt][p] { if let t = team[hunt][p], !names.contains(t) { names.append(t) } }
            for c in checkIns where c.hunt == hunt && c.standing { if let t = c.team, !names.contains(t) { names.append(t) } }
            for name in names {
                let members = teamMembers(hunt, name)
                let checks = checkIns.indices.filter { checkIns[$0].hunt == hunt && !checkIns[$0].deleted && checkIns[$0].team == name }
                let clock = v15 ? clocks[hunt]["team:" + name].map { checkIns[$0].created } : checks.filter { checkIns[$0].live }.map { checkIns[$0].created }.min()
                let e = entry(name: name, members: members.map { players[$0] }.sorted(), of: checks, clock: clock)
                if !members.isEmpty || e.points > 0 || !e.found.isEmpty { entries.append(e) }
            }
        } else {
            for p in players.indices where member[hunt][p] {
                entries.append(entry(name: players[p], members: nil, of: sideCheckIns(hunt, p), clock: clockStart(hunt, p)))
            }
        }
        if spec.trial != nil {
            entries.sort { a, b in
                if a.found.count != b.found.count { return a.found.count > b.found.count }
                if (a.timeS ?? Int.max) != (b.timeS ?? Int.max) { return (a.timeS ?? Int.max) < (b.timeS ?? Int.max) }
                return a.player < b.player
            }
            for i in entries.indices {
                let tied = i > 0 && entries[i - 1].found.count == entries[i].found.count && entries[i - 1].timeS == entries[i].timeS
                entries[i].rank = tied ? entries[i - 1].rank : i + 1
            }
        } else {
            entries.sort { a, b in
                if a.points != b.points { return a.points > b.points }
                if (a.at ?? Int.max) != (b.at ?? Int.max) { return (a.at ?? Int.max) < (b.at ?? Int.max) }
                return a.player < b.player
            }
            for i in entries.indices {
                let tied = i > 0 && entries[i - 1].points == entries[i].points && entries[i - 1].at == entries[i].at
                entries[i].rank = tied ? entries[i - 1].rank : i + 1
            }
        }
        return entries
    }

    /// HUNT's `me` of a player: their (team's) entry, or nil when not a player.
    func me(_ hunt: Int, _ player: Int) -> ModelEntry? {
        guard member[hunt][player] else { return nil }
        let name = team[hunt][player] ?? players[player]
        return entries(hunt).first { $0.player == name }
    }

    /// Whether a player (their team) has every stop of a hunt they play, not removed.
    func sideComplete(_ hunt: Int, _ player: Int) -> Bool {
        guard member[hunt][player], !removed[hunt] else { return false }
        return me(hunt, player)?.found.count == modelHunts[hunt].stops.count
    }

    /// Whether the player completed a hunt and still holds that completion (`hunts_completed`).
    func completed(_ hunt: Int, _ player: Int) -> Bool { completion[hunt][player] && sideComplete(hunt, player) }

    /// After an operation: a side that has just become complete completes the hunt for its members
    /// (before 1.5, earning them its badges); one no longer complete loses it (before 1.5, only a
    /// REJECT takes its badges back).
    mutating func settleCompletions(before: Set<String>, rejecting: Bool) {
        for h in modelHunts.indices {
            for p in players.indices {
                let complete = sideComplete(h, p)
                let was = completion[h][p]
                if complete, !before.contains("\(h)|\(key(h, p))") { completion[h][p] = true }
                if !complete { completion[h][p] = false }
                guard !v15 else { continue }
                if completion[h][p], !was {
                    for badge in completionBadges(h, p) where !held[p].contains(badge) {
                        held[p].insert(badge)
                        if badge == "trial" { trialHunt[p] = h }
                    }
                } else if was, !completion[h][p], rejecting {
                    if trialHunt[p] == h { held[p].remove("trial"); trialHunt[p] = nil }
                    held[p].remove("hunt:" + huntIDs[h])
                    if !modelHunts.indices.contains(where: { completion[$0][p] }) { held[p].remove("finisher") }
                }
            }
        }
    }

    /// The sides complete now, as "hunt|key".
    func completeSides() -> Set<String> {
        var sides: Set<String> = []
        for h in modelHunts.indices { for p in players.indices where sideComplete(h, p) { sides.insert("\(h)|\(key(h, p))") } }
        return sides
    }

    func winners(_ hunt: Int) -> [String] {
        guard phase[hunt] == .ended else { return [] }
        var done = entries(hunt).filter { $0.found.count == modelHunts[hunt].stops.count }
        if modelHunts[hunt].trial == nil { done.sort { ($0.at ?? 0) < ($1.at ?? 0) } }
        return done.map(\.player)
    }

    /// A user's own standing accepted check-ins outside removed hunts.
    func counted(_ player: Int) -> [ModelCheckIn] {
        checkIns.filter { $0.player == player && $0.standing && !removed[$0.hunt] }
    }

    struct Profile: Sendable, Equatable, CustomStringConvertible {
        var points, found, played, completed, badges: Int
        var description: String { "points \(points) found \(found) played \(played) completed \(completed) badges \(badges)" }
    }

    func profile(_ player: Int) -> Profile {
        let mine = counted(player)
        return Profile(
            points: mine.reduce(0) { $0 + modelHunts[$1.hunt].stops[$1.stop].points }, found: mine.count,
            played: modelHunts.indices.filter { member[$0][player] && !removed[$0] }.count,
            completed: modelHunts.indices.filter { completed($0, player) }.count, badges: badges(player).count)
    }

    /// RANKING's rows "player points found", points first.
    func ranking() -> [String] {
        players.indices.map { (players[$0], profile($0)) }.filter { $0.1.points > 0 }
            .sorted { $0.1.points != $1.1.points ? $0.1.points > $1.1.points : $0.0 < $1.0 }
            .map { "\($0.0) \($0.1.points) \($0.1.found)" }
    }

    /// The ids of a user's badges, sorted.
    func badges(_ player: Int) -> [String] {
        guard v15 else { return held[player].sorted() }
        var ids: Set<String> = []
        if firstFindBy[player] != nil { ids.insert("first-find") }
        if pathfinderBy.contains(where: { $0.map { checkIns[$0].player == player } ?? false }) { ids.insert("pathfinder") }
        if counted(player).count >= 10 { ids.insert("explorer-10") }
        for h in modelHunts.indices where completed(h, player) {
            ids.insert("finisher")
            if let trial = modelHunts[h].trial, let e = me(h, player), (e.timeS ?? Int.max) <= trial { ids.insert("trial") }
            if modelHunts[h].badge != nil { ids.insert("hunt:" + huntIDs[h]) }
        }
        return ids.sorted()
    }

    /// The completion badges a side earns in a hunt now (before 1.5's recount).
    func completionBadges(_ hunt: Int, _ player: Int) -> [String] {
        var ids = ["finisher"]
        if let trial = modelHunts[hunt].trial, let e = me(hunt, player), (e.timeS ?? Int.max) <= trial { ids.append("trial") }
        if modelHunts[hunt].badge != nil { ids.append("hunt:" + huntIDs[hunt]) }
        return ids
    }

    /// The players of a player's side (their team's members, or the player).
    func side(_ hunt: Int, _ player: Int) -> [Int] {
        team[hunt][player].map { teamMembers(hunt, $0) } ?? [player]
    }

    /// The latest check-in of a player at a stop.
    func latest(_ player: Int, _ hunt: Int, _ stop: Int) -> Int? {
        checkIns.indices.last { checkIns[$0].player == player && checkIns[$0].hunt == hunt && checkIns[$0].stop == stop }
    }
}

// MARK: Transitions and the generator

extension GameModel {
    /// Whether `op` makes sense in this state (a shrunk sequence skips those that no longer do).
    func allowed(_ op: ModelOp) -> Bool {
        switch op {
        case .start(let h): return phase[h] == .scheduled && !removed[h]
        case .end(let h): return phase[h] != .ended
        case .remove(let h): return !removed[h]
        case .join(_, let h, let t): return !removed[h] && (t != nil) == modelHunts[h].isTeam
        case .leave(let p, let h): return member[h][p] && !removed[h]
        case .checkIn(_, let h, _, _): return !removed[h]
        case .approve(let p, let h, let s):
            guard let i = latest(p, h, s) else { return false }
            return checkIns[i].deleted || checkIns[i].status == "pending" || checkIns[i].status == "flagged"
        case .reject(let p, let h, let s):
            guard let i = latest(p, h, s) else { return false }
            return checkIns[i].deleted || checkIns[i].status != "rejected"
        case .tick: return true
        }
    }

    /// Applies `op` and answers the reply the contract names.
    mutating func apply(_ op: ModelOp) -> ModelReply {
        let before = completeSides()
        let reply = transition(op)
        if case .reject = op { settleCompletions(before: before, rejecting: true) } else { settleCompletions(before: before, rejecting: false) }
        return reply
    }

    private mutating func transition(_ op: ModelOp) -> ModelReply {
        step += 1
        switch op {
        case .tick:
            now += modelTickSeconds
            return .ok(status: nil)
        case .start(let h):
            phase[h] = .running
            return .ok(status: nil)
        case .end(let h):
            phase[h] = .ended
            return .ok(status: nil)
        case .remove(let h):
            removed[h] = true
            phase[h] = .ended
            return .ok(status: nil)
        case .join(let p, let h, let t):
            if phase[h] == .ended { return .err("NOT_FOUND") }
            if v15, leftForGood[h][p], phase[h] == .running { return .err("CONFLICT") }
            let name = t.map { modelTeams[$0] }
            if member[h][p] {
                guard let name, team[h][p] != name else { return .ok(status: nil) }
                if v15, phase[h] == .running { return .err("CONFLICT") }
            }
            if let name, let size = modelHunts[h].teamSize, teamMembers(h, name).count >= size { return .err("CONFLICT") }
            if team[h][p] != name { completion[h][p] = false }
            member[h][p] = true
            team[h][p] = name
            return .ok(status: nil)
        case .leave(let p, let h):
            if phase[h] == .ended { return .err("CONFLICT") }
            for i in checkIns.indices where checkIns[i].player == p && checkIns[i].hunt == h { checkIns[i].deleted = true }
            if v15, phase[h] == .running, modelHunts[h].isTeam || modelHunts[h].trial != nil { leftForGood[h][p] = true }
            // A single player's clock goes with them (they may join again only before the start).
            if team[h][p] == nil { clocks[h][players[p]] = nil }
            member[h][p] = false
            team[h][p] = nil
            completion[h][p] = false
            return .ok(status: nil)
        case .checkIn(let p, let h, let s, let tooFar):
            return checkIn(p, h, s, tooFar: tooFar)
        case .approve(let p, let h, let s):
            let i = latest(p, h, s)!
            if checkIns[i].deleted { return .err("NOT_FOUND") }
            if removed[h] { return .err("CONFLICT") }
            accept(i)
            return .ok(status: "accepted")
        case .reject(let p, let h, let s):
            let i = latest(p, h, s)!
            if checkIns[i].deleted { return .err("NOT_FOUND") }
            if removed[h] { return .err("CONFLICT") }
            reject(i)
            return .ok(status: "rejected")
        }
    }

    private mutating func checkIn(_ p: Int, _ h: Int, _ s: Int, tooFar: Bool) -> ModelReply {
        let spec = modelHunts[h]
        guard member[h][p] else { return .err("FORBIDDEN") }
        guard phase[h] == .running else { return .err("CONFLICT") }
        if timeIsUp(h, p) { return .err("CONFLICT") }
        let side = sideCheckIns(h, p)
        if checkIns.contains(where: { $0.player == p && $0.hunt == h && $0.stop == s && $0.live }) { return .err("CONFLICT") }
        if side.contains(where: { checkIns[$0].stop == s && checkIns[$0].live }) { return .err("CONFLICT") }
        if spec.ordered, let next = spec.stops.indices.first(where: { n in !side.contains { checkIns[$0].stop == n && checkIns[$0].live } }), next != s {
            return .err("CONFLICT")
        }
        if tooFar { return .err("TOO_FAR") }
        let far = spec.name == "far"
        var status = spec.stops[s].photo ? "pending" : "accepted"
        // 100 km at more than 200 km/h: less than 1,800 s between the two fixes.
        if let previous = previousFix(p), previous.far != far, now - previous.created < 1800 { status = "flagged" }
        checkIns.append(ModelCheckIn(player: p, hunt: h, stop: s, team: team[h][p], status: status, created: now, far: far))
        let i = checkIns.count - 1
        if spec.trial != nil, clocks[h][key(h, p)] == nil { clocks[h][key(h, p)] = i }
        if status == "accepted" { accept(i) }
        return .ok(status: status)
    }

    private mutating func accept(_ i: Int) {
        let c = checkIns[i]
        let stopIndex = Self.stopIndex(hunt: c.hunt, stop: c.stop)
        let foundBefore = checkIns.indices.filter { $0 != i && checkIns[$0].hunt == c.hunt && checkIns[$0].stop == c.stop && checkIns[$0].standing }
        let enough = membersCount(c.hunt) >= 5
        checkIns[i].status = "accepted"
        checkIns[i].acceptedStep = step
        if v15 {
            if firstFindBy[c.player] == nil { firstFindBy[c.player] = i }
            // The first accepted check-in at the stop that no REJECT took back, left or not.
            let earlier = checkIns.indices.contains { $0 != i && checkIns[$0].hunt == c.hunt && checkIns[$0].stop == c.stop && checkIns[$0].status == "accepted" }
            if enough, !earlier, pathfinderBy[stopIndex] == nil { pathfinderBy[stopIndex] = i }
            return
        }
        held[c.player].insert("first-find")
        if enough, foundBefore.isEmpty, !held[c.player].contains("pathfinder") {
            held[c.player].insert("pathfinder")
            pathfinderOf[c.player] = i
        }
        if counted(c.player).count >= 10 { held[c.player].insert("explorer-10") }
    }

    private mutating func reject(_ i: Int) {
        let c = checkIns[i]
        let wasAccepted = c.status == "accepted"
        checkIns[i].status = "rejected"
        checkIns[i].acceptedStep = nil
        let key = c.team.map { "team:" + $0 } ?? players[c.player]
        if clocks[c.hunt][key] == i {
            let side = checkIns.indices.filter { j in
                checkIns[j].hunt == c.hunt && checkIns[j].live && (c.team.map { checkIns[j].team == $0 } ?? (checkIns[j].player == c.player))
            }
            clocks[c.hunt][key] = side.min { checkIns[$0].created < checkIns[$1].created }
        }
        guard wasAccepted else { return }
        if v15 {
            if firstFindBy[c.player] == i { firstFindBy[c.player] = checkIns.indices.first { checkIns[$0].player == c.player && checkIns[$0].standing } }
            let stopIndex = Self.stopIndex(hunt: c.hunt, stop: c.stop)
            if pathfinderBy[stopIndex] == i { pathfinderBy[stopIndex] = nil }
            return
        }
        if pathfinderOf[c.player] == i {
            held[c.player].remove("pathfinder")
            pathfinderOf[c.player] = nil
        }
        let found = counted(c.player).count
        if found < 10 { held[c.player].remove("explorer-10") }
        if found == 0 { held[c.player].remove("first-find") }
    }

    /// The next operation, drawn with `g` from what the state makes sensible.
    func next(_ g: inout SplitMix64) -> ModelOp {
        while true {
            let op = draw(&g)
            if allowed(op) { return op }
        }
    }

    private func draw(_ g: inout SplitMix64) -> ModelOp {
        let h = g.int(in: 0 ... modelHunts.count - 1)
        let p = g.int(in: 0 ... players.count - 1)
        let roll = g.int(in: 0 ... 999)
        switch roll {
        case 0 ..< 60: return .start(hunt: h)
        case 60 ..< 75: return .end(hunt: h)
        case 75 ..< 85: return .remove(hunt: h)
        case 85 ..< 300:
            return .join(player: p, hunt: h, team: modelHunts[h].isTeam ? g.int(in: 0 ... modelTeams.count - 1) : nil)
        case 300 ..< 350: return .leave(player: p, hunt: h)
        case 350 ..< 400: return .tick
        case 400 ..< 850:
            // Mostly a member at a stop of a running hunt they play; now and then anyone anywhere.
            var (player, hunt) = (p, h)
            if g.chance(0.85) {
                let pairs = players.indices.flatMap { q in modelHunts.indices.filter { member[$0][q] && phase[$0] == .running }.map { (q, $0) } }
                if !pairs.isEmpty { (player, hunt) = pairs[g.int(in: 0 ... pairs.count - 1)] }
            }
            return .checkIn(player: player, hunt: hunt, stop: g.int(in: 0 ... modelHunts[hunt].stops.count - 1), tooFar: g.chance(0.08))
        default:
            // Mostly an open (pending, flagged) check-in; now and then a deleted one's id.
            let live = checkIns.indices.filter { checkIns[$0].status != "rejected" && !removed[checkIns[$0].hunt] && (!checkIns[$0].deleted || roll % 9 == 0) }
            let open = live.filter { checkIns[$0].status != "accepted" }
            let pool = !open.isEmpty && g.chance(0.7) ? open : live
            guard !pool.isEmpty else { return .tick }
            let c = checkIns[pool[g.int(in: 0 ... pool.count - 1)]]
            let approve = (c.status == "pending" || c.status == "flagged") && g.chance(0.75)
            return approve ? .approve(player: c.player, hunt: c.hunt, stop: c.stop) : .reject(player: c.player, hunt: c.hunt, stop: c.stop)
        }
    }
}
