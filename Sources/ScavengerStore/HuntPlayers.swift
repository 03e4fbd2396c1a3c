import Postgres
import ScavengerCore

// A hunt's players: who plays, their standings, joining and leaving.
extension Database {
    /// A hunt's players with the position of the hunts' change log they reflect, read in one
    /// statement (one snapshot): every change up to `through` is in them and none after it, since
    /// the log's numbers follow commit order.
    public func playersSnapshot(huntID: String) async throws(StoreError)
        -> (players: [PlayerRecord], through: Int, access: HuntAccessFacts?, trial: Bool)
    {
        try await mappingErrors {
            // One snapshot under the log's lock: the players are exactly the log through `through`
            // (in a time trial with each player's times).
            let rows = try await pool.query("SELECT * FROM hunt_board_snapshot(\(huntID))")
            let through: Int = try rows[0].int("through")
            var access: HuntAccessFacts?
            if let host: Int = try rows[0].int("hunt_host_id") {
                access = HuntAccessFacts(hostID: host, isPublic: try rows[0].bool("hunt_public"), removed: try rows[0].bool("hunt_removed"))
            }
            let trialSeconds: Int? = try rows[0].int("hunt_trial_s")
            let user = try rows.column("user_id")
            var players: [PlayerRecord] = []
            for row in rows where try !row.isNull(user) {
                var player = try Self.player(row)
                let first: Int? = try row.int("trial_first_us"), last: Int? = try row.int("trial_last_us")
                player.trialFirst = first.map { Timestamp(microseconds: Int64($0)) }
                player.trialLast = last.map { Timestamp(microseconds: Int64($0)) }
                players.append(player)
            }
            return (players, through, access, trialSeconds != nil)
        }
    }

    /// A player's standing, each column named for ``player(_:)``.
    static let playerColumns = "user_id, name, points, found, (extract(epoch FROM points_at) * 1000000)::bigint AS at_us"

    /// One player of a hunt, its row locked for the transaction when `forUpdate`; nil when not a player.
    static func player(_ connection: PostgresConnection, hunt: String, user: Int, forUpdate: Bool) throws -> PlayerRecord? {
        let rows = try connection.query("""
            SELECT \(unescaped: playerColumns) FROM hunt_players WHERE hunt_id = \(hunt) AND user_id = \(user)
            \(unescaped: forUpdate ? "FOR UPDATE" : "")
            """)
        return try rows.first.map(player)
    }

    static func player(_ row: PostgresRow) throws -> PlayerRecord {
        let at: Int? = try row.int("at_us")
        return PlayerRecord(
            userID: try row.int("user_id"), name: try row.string("name"), points: try row.int("points"), found: try row.int("found"),
            pointsAt: at.map { Timestamp(microseconds: Int64($0)) })
    }

    /// A player's columns read with `prefix` before each name (`user_id`, `name`, `points`,
    /// `found`, `at_us`) from an outer join: nil when the user is not a player.
    static func player(_ row: PostgresRow, prefix: String) throws -> PlayerRecord? {
        guard let userID: Int = try row.int(prefix + "user_id") else { return nil }
        let at: Int? = try row.int(prefix + "at_us")
        return PlayerRecord(
            userID: userID, name: try row.string(prefix + "name"), points: try row.int(prefix + "points"),
            found: try row.int(prefix + "found"), pointsAt: at.map { Timestamp(microseconds: Int64($0)) })
    }

    /// The caller as a player of a hunt, with the stops they have a check-in at that is not
    /// rejected (`live`) and those accepted (`found`); nil when not a player. In a team hunt,
    /// with their team's name, and the stops are the team's.
    public func player(huntID: String, userID: Int) async throws(StoreError)
        -> (player: PlayerRecord, live: Set<String>, found: [String], team: String?)?
    {
        try await mappingErrors {
            let rows = try await pool.query("""
                SELECT \(unescaped: Self.playerColumns), team_id, (SELECT t.name FROM hunt_teams t WHERE t.id = team_id) AS team_name
                FROM hunt_players WHERE hunt_id = \(huntID) AND user_id = \(userID)
                """)
            guard let row = rows.first else { return nil }
            let player = try Self.player(row)
            let teamID: Int? = try row.int("team_id")
            // Each by its own index: the player's check-ins in the hunt, or the team's.
            let whose: SQL = teamID.map { "c.team_id = \($0)::bigint" } ?? "c.hunt_id = \(huntID) AND c.user_id = \(userID)"
            var query: SQL = "SELECT c.stop_id, c.status FROM checkins c JOIN hunt_stops s ON s.id = c.stop_id WHERE "
            query.append(whose)
            query.append(" AND c.status <> 'rejected' ORDER BY s.n")
            let checkIns = try await pool.query(query)
            var live = Set<String>()
            var found: [String] = []
            for row in checkIns {
                let stop: String = try row.string("stop_id")
                live.insert(stop)
                if try row.string("status") as String == "accepted" { found.append(stop) }
            }
            return (player, live, found, try row.string("team_name"))
        }
    }

    /// The finish times of a hunt's players who found every stop (the `at` of their last
    /// accepted check-in), first first.
    public func finishers(huntID: String) async throws(StoreError) -> [String] {
        try await mappingErrors {
            // A team hunt's finishers are teams, ordered alike from the team's check-ins.
            let teams = try await pool.query("""
                SELECT t.name, h.trial_s,
                    (extract(epoch FROM max(c.created_at)) * 1000000)::bigint - (extract(epoch FROM t.trial_started_at) * 1000000)::bigint AS trial_us
                FROM hunt_teams t JOIN hunts h ON h.id = t.hunt_id
                JOIN checkins c ON c.team_id = t.id AND c.status = 'accepted'
                WHERE t.hunt_id = \(huntID) AND h.stop_count > 0 AND h.team_size IS NOT NULL
                GROUP BY t.id, t.name, t.trial_started_at, h.stop_count, h.trial_s
                HAVING count(*) = h.stop_count
                ORDER BY max(c.accepted_at), t.name
                """)
            if let first = teams.first {
                guard try first.int("trial_s") as Int? != nil else { return try teams.map { try $0.string("name") } }
                var board = ScavengerCore.Leaderboard(trial: true)
                for row in teams {
                    board.update(try row.string("name"), points: 0, found: 1, at: nil, trialTime: Int64(try row.int("trial_us") as Int))
                }
                return board.page(after: nil, limit: max(1, board.count)).entries.map(\.player)
            }
            // A time trial's finishers in its leaderboard's order: by the time from the first
            // live check-in to the last accepted one, then name (as ``Leaderboard`` orders them).
            let rows = try await pool.query("""
                SELECT hp.name, h.trial_s,
                    (extract(epoch FROM max(c.created_at)) * 1000000)::bigint - (SELECT (extract(epoch FROM min(f.created_at)) * 1000000)::bigint
                        FROM checkins f WHERE f.hunt_id = hp.hunt_id AND f.user_id = hp.user_id AND f.status <> 'rejected') AS trial_us
                FROM hunt_players hp JOIN hunts h ON h.id = hp.hunt_id
                JOIN checkins c ON c.hunt_id = hp.hunt_id AND c.user_id = hp.user_id AND c.status = 'accepted'
                WHERE hp.hunt_id = \(huntID) AND h.stop_count > 0 AND h.team_size IS NULL
                GROUP BY hp.name, hp.hunt_id, hp.user_id, h.stop_count, h.trial_s
                HAVING count(*) = h.stop_count
                ORDER BY max(c.accepted_at), hp.name
                """)
            guard let first = rows.first, try first.int("trial_s") as Int? != nil else {
                return try rows.map { try $0.string("name") }
            }
            var board = ScavengerCore.Leaderboard(trial: true)
            for row in rows {
                let time: Int = try row.int("trial_us")
                board.update(try row.string("name"), points: 0, found: 1, at: nil, trialTime: Int64(time))
            }
            return board.page(after: nil, limit: max(1, board.count)).entries.map(\.player)
        }
    }

    // MARK: Players

    /// How JOIN went.
    public enum JoinOutcome: Sendable, Equatable {
        case joined(HuntRecord)
        case unchanged(HuntRecord)
        /// Renamed, moved to another team, or both.
        case renamed(HuntRecord)
    }

    /// Joins (or renames) `userID` as `name`; `check` sees the hunt under its row lock (a join
    /// changes the hunt's count of players, so joins of one hunt are one after the other). A name
    /// another player holds is ``StoreError/conflict(constraint:)`` `hunt_players_name`. Nil when
    /// no such hunt.
    ///
    /// In a team hunt `team` names the team to play for (nil otherwise): `checkTeam` sees it
    /// (``TeamJoinFacts``) and may refuse; it is made when the hunt has no team of that name
    /// (case-insensitively), and a player of another team moves to it (the check-ins made for the
    /// team left stay with it). The teams' standings are logged. Joins of one hunt are one after
    /// the other (its row), and its check-ins wait (they hold it shared), so a team's members
    /// cannot change under a check-in.
    public func join(
        huntID: String, userID: Int, name: String, team: String? = nil, rate: RateLimit? = nil, request: KeyedWrite<JoinOutcome?>? = nil,
        check: @escaping @Sendable (_ hunt: HuntRecord, _ now: Timestamp, _ left: Bool) throws -> Void,
        checkTeam: @escaping @Sendable (TeamJoinFacts) throws -> Void = { _ in }
    ) async throws(StoreError) -> JoinOutcome? {
        try await huntTransaction(request: request) { connection, log in
            guard let hunt = try Self.hunt(connection, id: huntID, lock: "FOR NO KEY UPDATE OF h") else { return nil }
            let now = try Self.clock(connection)
            let departed = try connection.query("SELECT 1 FROM hunt_departures WHERE hunt_id = \(huntID) AND user_id = \(userID)")
            try check(hunt, now, !departed.isEmpty)
            try Self.takeRateToken(connection, userID: userID, action: .join, rate: rate)
            return try Self.seat(connection, log, hunt: hunt, userID: userID, name: name, team: team, now: now, checkTeam: checkTeam)
        }
    }

    /// Seats `userID` in `hunt` (locked by the caller) as `name`, for `team` in a team hunt: a
    /// new player, or a player renamed or moved. JOIN's body, and a guest's join's.
    static func seat(
        _ connection: PostgresConnection, _ log: HuntLog, hunt: HuntRecord, userID: Int, name: String, team: String?, now: Timestamp,
        checkTeam: (TeamJoinFacts) throws -> Void
    ) throws -> JoinOutcome {
        // The team asked for, then the player's row (HuntLog's order: teams before players).
        var teamID: Int?
        var oldTeamID: Int?
        if let team {
            let found = try connection.query("""
                SELECT t.id, t.name, (SELECT count(*) FROM hunt_players p WHERE p.team_id = t.id) AS members,
                    EXISTS (SELECT 1 FROM hunt_players p WHERE p.team_id = t.id AND p.user_id = \(userID)) AS is_member
                FROM hunt_teams t WHERE t.hunt_id = \(hunt.id) AND lower(t.name) = lower(\(team))
                FOR NO KEY UPDATE OF t
                """)
            let row = found.first
            let current = try Self.team(connection, hunt: hunt.id, user: userID)
            oldTeamID = current?.id
            let teams: Int = row != nil ? 0 : try connection.query("SELECT count(*) AS n FROM hunt_teams WHERE hunt_id = \(hunt.id)")[0].int("n")
            try checkTeam(TeamJoinFacts(
                team: try row?.string("name") ?? team, exists: row != nil, members: try row?.int("members") ?? 0,
                isMember: try row?.bool("is_member") ?? false, currentTeam: current?.name, state: hunt.schedule.state(at: now),
                teams: teams))
            if let row {
                teamID = try row.int("id")
            } else {
                teamID = try connection.query("INSERT INTO hunt_teams (hunt_id, name) VALUES (\(hunt.id), \(team)) RETURNING id")[0].int("id")
            }
        }
        if let player = try Self.player(connection, hunt: hunt.id, user: userID, forUpdate: true) {
            if player.name == name, oldTeamID == teamID { return .unchanged(hunt) }
            try connection.query("""
                UPDATE hunt_players SET name = \(name), team_id = \(teamID)::bigint WHERE hunt_id = \(hunt.id) AND user_id = \(userID)
                """)
            var standing = StandingChange(player: name, points: player.points, found: player.found, at: player.pointsAt, userID: userID)
            if hunt.trialSeconds != nil {
                (standing.trialFirst, standing.trialLast) = try Self.trialTimes(connection, hunt: hunt.id, userID: userID)
            }
            log.append(hunt: hunt.id, .standing(standing, renamedFrom: player.name == name ? nil : player.name))
            try Self.refreshTeams(connection, log, Set([teamID, oldTeamID].compactMap { $0 }))
            return .renamed(hunt)
        }
        try connection.query("""
            INSERT INTO hunt_players (hunt_id, user_id, name, team_id) VALUES (\(hunt.id), \(userID), \(name), \(teamID)::bigint)
            """)
        try connection.query("""
            INSERT INTO user_scores AS t (user_id, hunts_played) VALUES (\(userID), 1)
            ON CONFLICT (user_id) DO UPDATE SET hunts_played = t.hunts_played + 1
            """)
        try Self.logCurrentTotals(connection, log, userID: userID)
        try connection.query("UPDATE hunts SET player_count = player_count + 1 WHERE id = \(hunt.id)")
        log.append(hunt: hunt.id, .standing(StandingChange(player: name, points: 0, found: 0, at: nil, userID: userID), renamedFrom: nil))
        if let teamID { try Self.refreshTeams(connection, log, [teamID]) }
        var joined = hunt
        joined.players += 1
        return .joined(joined)
    }

    /// Takes a player out of a hunt with their check-ins: `found_by` of the stops they had found
    /// drops, their totals lose what the hunt gave them, their team's standing what they found
    /// for it, and the achievements of theirs and their team's that no longer hold go (settled
    /// before their row goes). `check` sees the hunt under its row lock and says whether the
    /// departure is final (then it is recorded: no JOIN until the hunt ends). False when not a
    /// player (or no hunt).
    public func leave(
        huntID: String, userID: Int, rate: RateLimit? = nil, request: KeyedWrite<Bool>? = nil,
        check: @escaping @Sendable (HuntRecord, Timestamp) throws -> LeaveEffect
    ) async throws(StoreError) -> Bool {
        try await huntTransaction(request: request) { connection, log in
            guard let hunt = try Self.hunt(connection, id: huntID, lock: "FOR NO KEY UPDATE OF h") else { return false }
            let effect = try check(hunt, try Self.clock(connection))
            try Self.takeRateToken(connection, userID: userID, action: .join, rate: rate)
            let rows = try connection.query("""
                SELECT name, team_id FROM hunt_players WHERE hunt_id = \(huntID) AND user_id = \(userID) FOR UPDATE
                """)
            guard let row = rows.first else { return false }
            let name: String = try row.string("name")
            let teamID: Int? = try row.int("team_id")
            if effect == .final {
                try connection.query("""
                    INSERT INTO hunt_departures (hunt_id, user_id) VALUES (\(huntID), \(userID)) ON CONFLICT DO NOTHING
                    """)
            }
            try connection.query("""
                UPDATE hunt_stops s SET found_by = found_by - 1
                FROM checkins c WHERE c.stop_id = s.id AND c.hunt_id = \(huntID) AND c.user_id = \(userID) AND c.status = 'accepted'
                """)
            let counted = try connection.query("""
                DELETE FROM checkins WHERE hunt_id = \(huntID) AND user_id = \(userID)
                RETURNING status, points, (extract(epoch FROM accepted_at) * 1000000)::bigint AS accepted_us
                """)
            // The user's totals lose what this hunt gave them; the totals are logged once all is
            // taken (in between, points of check-ins already deleted would still count).
            var debited: [(points: Int, at: Timestamp)] = []
            for checkIn in counted where try checkIn.string("status") as String == "accepted" {
                debited.append((try checkIn.int("points"), Timestamp(microseconds: Int64(try checkIn.int("accepted_us") as Int))))
            }
            try Self.debitAllTotals(connection, userID: userID, debited)
            try connection.query("UPDATE user_scores SET hunts_played = hunts_played - 1 WHERE user_id = \(userID)")
            // Their team without what they found for it (its row's found, read by the settling),
            // then what no longer holds goes: theirs (no longer playing) and their teammates'.
            var users: Set<Int> = [userID]
            if let teamID, let team = try Self.refreshTeams(connection, HuntLog(), [teamID])[teamID] { users.formUnion(team.memberIDs) }
            try Self.settleAchievements(connection, log, huntID: huntID, users: users, leaving: userID)
            try connection.query("DELETE FROM hunt_players WHERE hunt_id = \(huntID) AND user_id = \(userID)")
            // Logged once all is taken, hunts played included (with no check-in taken, for the
            // profile alone).
            if debited.isEmpty {
                try Self.logCurrentTotals(connection, log, userID: userID)
            } else {
                try Self.logTotals(connection, log, userID: userID, weeks: Set(debited.map { ScoreWeek(containing: $0.at) }))
            }
            try connection.query("UPDATE hunts SET player_count = player_count - 1 WHERE id = \(huntID)")
            log.append(hunt: huntID, .left(player: name, userID: userID))
            // Their team without them.
            if let teamID { try Self.refreshTeams(connection, log, [teamID]) }
            return true
        }
    }
}
