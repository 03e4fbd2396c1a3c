import ScavengerCore
import ScavengerStore

/// The hunts' leaderboards kept in memory, each with the last change in it and who may read it:
/// loaded from a snapshot of the players' standings, then changed only by the log's entries, so
/// a `LEADERBOARD` needs no read of the database and every daemon holds the same board.
///
/// Boards are changed in place, never copied out and back: a copy would make the next change
/// copy the whole board.
struct HuntBoards {
    /// A hunt's board as of log position `through`, and who may read it (its host, whether it is
    /// public or removed, and its players by user id), kept by the same log entries; nil `access`
    /// when the log could not keep it (an entry written before user ids were logged): then
    /// readers ask the database.
    struct Kept {
        var board: Leaderboard
        var through: Int
        var access: Access?
        /// A team hunt's teams (its board's entries are teams, not players): each member's team
        /// by user id, and each team's members; nil for a hunt of single players.
        var teams: Teams?

        /// The board of a snapshot of a team hunt's teams through log position `through`.
        init(teams: [TeamStandingChange], through: Int, facts: HuntAccessFacts?, trial: Bool = false) {
            var board = Leaderboard(trial: trial)
            var members: [Int: String] = [:]
            var rosters = Teams()
            for team in teams {
                rosters.set(team)
                for (id, name) in zip(team.memberIDs, team.members) { members[id] = name }
                guard team.isShown else { continue }
                board.update(
                    team.team, points: team.points, found: team.found, at: team.points > 0 ? team.at : nil, trialTime: team.trialTime,
                    members: team.members)
            }
            self.board = board
            self.through = through
            access = facts.map { Access(facts: $0, members: members) }
            self.teams = rosters
        }

        /// The board of a snapshot of the hunt's players through log position `through` (a time
        /// trial's board when `trial`, ordered by the players' trial times).
        init(players: [PlayerRecord], through: Int, facts: HuntAccessFacts?, trial: Bool = false) {
            var board = Leaderboard(trial: trial)
            var members: [Int: String] = [:]
            for player in players {
                var time: Int64?
                if let first = player.trialFirst, let last = player.trialLast { time = max(0, last.microseconds - first.microseconds) }
                board.update(
                    player.name, points: player.points, found: player.found, at: player.points > 0 ? player.pointsAt : nil, trialTime: time)
                members[player.userID] = player.name
            }
            self.board = board
            self.through = through
            access = facts.map { Access(facts: $0, members: members) }
        }
    }

    /// A team hunt's rosters: who plays for which team.
    struct Teams {
        var teamOf: [Int: String] = [:]
        var members: [String: [Int]] = [:]

        /// Sets `team`'s members as the change says (those it no longer has lose it).
        mutating func set(_ team: TeamStandingChange) {
            for id in members[team.team] ?? [] where teamOf[id] == team.team { teamOf[id] = nil }
            for id in team.memberIDs { teamOf[id] = team.team }
            members[team.team] = team.memberIDs
        }
    }

    /// Who may read a hunt, kept with its board.
    struct Access {
        var facts: HuntAccessFacts
        var members: [Int: String]
    }

    /// Boards kept for hunts nobody watches, before half of them are dropped (a dropped board is
    /// loaded again on its next read).
    static let maximumUnwatched = 2000

    private var kept: [String: Kept] = [:]

    var count: Int { kept.count }

    func holds(_ hunt: String) -> Bool { kept[hunt] != nil }

    /// The hunts whose boards are kept.
    var hunts: Set<String> { Set(kept.keys) }

    func board(of hunt: String) -> Leaderboard? { kept[hunt]?.board }

    /// Who `viewer` (nil: nobody logged in) is to a hunt whose board and access are kept; nil
    /// when they are not kept.
    func viewer(_ viewer: Int?, of hunt: String) -> HuntFeed.Viewer? {
        guard let access = kept[hunt]?.access else { return nil }
        return HuntFeed.Viewer(
            hostID: access.facts.hostID, isPublic: access.facts.isPublic, removed: access.facts.removed,
            playerName: viewer.flatMap { access.members[$0] }, teamName: viewer.flatMap { kept[hunt]?.teams?.teamOf[$0] })
    }

    /// Keeps `snapshot` as `hunt`'s board unless a later one is kept already, or the snapshot
    /// may lack a change already applied (`place` is past it, or not known); returns the board
    /// the caller should read. Beyond ``maximumUnwatched`` boards of hunts nobody watches (by
    /// `watches`), half of those are dropped first.
    mutating func keep(_ snapshot: Kept, of hunt: String, place: HuntLogPlace, watches: HuntWatches) -> Leaderboard {
        // Another task may have loaded it meanwhile, possibly later in the log: keep the later.
        if let cached = kept[hunt], cached.through >= snapshot.through { return cached.board }
        guard place.keeps(snapshotThrough: snapshot.through) else { return snapshot.board }
        if kept.count >= Self.maximumUnwatched + watches.huntCount {
            let unwatched = kept.keys.filter { !watches.isWatched($0) }
            for id in unwatched.prefix(kept.count / 2) { kept[id] = nil }
        }
        kept[hunt] = snapshot
        return snapshot.board
    }

    /// Drops every board (a load of the rankings: each is loaded again on use).
    mutating func dropAll() {
        kept = [:]
    }

    /// The hunt's record was written (`record` as read since; nil: not read): who may read it
    /// follows it, or is no longer known.
    mutating func huntChanged(_ hunt: String, record: HuntRecord?) {
        guard kept[hunt]?.access != nil else { return }
        if let record {
            kept[hunt]!.access!.facts = HuntAccessFacts(hostID: record.hostID, isPublic: record.isPublic, removed: record.removed)
        } else {
            kept[hunt]!.access = nil
        }
    }

    /// Applies a player's new standing, log entry `seq` (renamed from `renamedFrom`); returns the
    /// entries that changed (``latest(_:)``), none when the board is not kept or already has it.
    mutating func apply(_ standing: StandingChange, renamedFrom: String?, of hunt: String, seq: Int) -> [LeaderboardEntry] {
        guard let through = kept[hunt]?.through, seq > through else { return [] }
        if kept[hunt]!.access != nil {
            if let user = standing.userID {
                kept[hunt]!.access!.members[user] = standing.player
            } else {
                kept[hunt]!.access = nil
            }
        }
        if kept[hunt]!.teams != nil {
            // A team hunt's board holds teams: a player's standing moves who plays, not the board
            // (their team's standing is logged beside it).
            kept[hunt]!.through = seq
            return []
        }
        var changed: [LeaderboardEntry] = []
        if let old = renamedFrom {
            changed += kept[hunt]!.board.removeReportingChanges(old)
        }
        let at = standing.points > 0 ? standing.at : nil
        changed += kept[hunt]!.board.updateReportingChanges(
            standing.player, points: standing.points, found: standing.found, at: at, trialTime: standing.trialTime)
        kept[hunt]!.through = seq
        return Self.latest(changed)
    }

    /// Takes out a player who left (user `userID`; nil in entries written before it was logged),
    /// log entry `seq`; returns the entries that changed, as ``apply(_:renamedFrom:of:seq:)``.
    mutating func remove(_ player: String, userID: Int?, of hunt: String, seq: Int) -> [LeaderboardEntry] {
        guard let through = kept[hunt]?.through, seq > through else { return [] }
        if kept[hunt]!.access != nil {
            if let userID {
                kept[hunt]!.access!.members[userID] = nil
            } else {
                kept[hunt]!.access = nil
            }
        }
        if kept[hunt]!.teams != nil {
            // Their team's standing (without them) is logged beside it.
            if let userID, let team = kept[hunt]!.teams!.teamOf.removeValue(forKey: userID) {
                kept[hunt]!.teams!.members[team]?.removeAll { $0 == userID }
            }
            kept[hunt]!.through = seq
            return []
        }
        let changed = kept[hunt]!.board.removeReportingChanges(player)
        kept[hunt]!.through = seq
        return Self.latest(changed)
    }

    /// Applies a team's new standing in a team hunt, log entry `seq`: its members and its entry
    /// (taken off the board when it has neither members nor finds); returns the entries that
    /// changed, as ``apply(_:renamedFrom:of:seq:)``.
    mutating func apply(_ team: TeamStandingChange, of hunt: String, seq: Int) -> [LeaderboardEntry] {
        guard let through = kept[hunt]?.through, seq > through else { return [] }
        kept[hunt]!.through = seq
        guard kept[hunt]!.teams != nil else { return [] }
        kept[hunt]!.teams!.set(team)
        if kept[hunt]!.access != nil {
            for (id, name) in zip(team.memberIDs, team.members) { kept[hunt]!.access!.members[id] = name }
        }
        let changed: [LeaderboardEntry]
        if team.isShown {
            changed = kept[hunt]!.board.updateReportingChanges(
                team.team, points: team.points, found: team.found, at: team.points > 0 ? team.at : nil, trialTime: team.trialTime,
                members: team.members)
        } else {
            changed = kept[hunt]!.board.removeReportingChanges(team.team)
        }
        return Self.latest(changed)
    }

    /// The last entry reported for each player, in the order first reported (a rename or several
    /// steps in one change report a player once, as they stand now).
    static func latest(_ entries: [LeaderboardEntry]) -> [LeaderboardEntry] {
        var last: [String: LeaderboardEntry] = [:]
        var order: [String] = []
        for entry in entries {
            if last.updateValue(entry, forKey: entry.player) == nil { order.append(entry.player) }
        }
        return order.compactMap { last[$0] }
    }
}
