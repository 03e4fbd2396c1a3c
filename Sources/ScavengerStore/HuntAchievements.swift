import Postgres
import ScavengerCore

// Completions and the badges that follow a state, settled at the end of every write that changes
// a side's accepted check-ins: the facts of each user it touches are read in one statement, the
// game's rule (``Achievements/settle(_:)``) says what changes, and this applies it. The store
// decides nothing here.
extension Database {
    /// Settles the achievements of `users` in `huntID`, last in the caller's transaction (after
    /// its check-ins, standings, teams and totals are written; user score rows are taken in user id
    /// order, as HuntLog's lock order says). `leaving` is a user leaving the hunt, settled as no
    /// longer playing before their row goes; `checkIn` the check-in the write credits, to which
    /// awards are recorded (nil: a write that takes away, which awards nothing). Changed totals
    /// and new badges are logged.
    static func settleAchievements(
        _ connection: PostgresConnection, _ log: HuntLog, huntID: String, users: Set<Int>, leaving: Int? = nil, checkIn: String? = nil
    ) throws {
        guard !users.isEmpty, let hunt = try Self.hunt(connection, id: huntID, lock: "") else { return }
        let ordered = users.sorted()
        let rows = try connection.query("""
            SELECT u.uid AS user_id, p.name, p.user_id IS NOT NULL AS playing, coalesce(p.completed, false) AS counted,
                coalesce(CASE WHEN p.team_id IS NOT NULL THEN (SELECT t.found FROM hunt_teams t WHERE t.id = p.team_id) ELSE p.found END, 0) AS side_found,
                (SELECT count(*) FROM hunt_players o WHERE o.user_id = u.uid AND o.completed AND o.hunt_id <> \(huntID)) AS other_completions,
                (SELECT count(*) FROM hunt_players o JOIN hunts oh ON oh.id = o.hunt_id
                 WHERE o.user_id = u.uid AND o.completed AND o.hunt_id <> \(huntID) AND oh.trial_s IS NOT NULL) AS other_trials,
                coalesce(s.found, 0) AS all_found,
                extract(epoch FROM (
                    SELECT max(c.created_at) - coalesce(
                        (SELECT t.trial_started_at FROM hunt_teams t WHERE t.id = p.team_id),
                        (SELECT min(f.created_at) FROM checkins f WHERE f.hunt_id = p.hunt_id AND f.user_id = p.user_id AND f.status <> 'rejected'))
                    FROM checkins c
                    WHERE c.status = 'accepted' AND (c.team_id = p.team_id OR (p.team_id IS NULL AND c.hunt_id = p.hunt_id AND c.user_id = p.user_id))
                ))::double precision AS trial_elapsed,
                coalesce((SELECT array_agg(b.badge ORDER BY b.badge) FROM user_badges b WHERE b.user_id = u.uid), '{}') AS held
            FROM unnest(\(PostgresArray.text(ordered.map(String.init)))::bigint[]) AS u(uid)
            LEFT JOIN hunt_players p ON p.hunt_id = \(huntID) AND p.user_id = u.uid
            LEFT JOIN user_scores s ON s.user_id = u.uid
            ORDER BY u.uid
            """)
        var awards: [(userID: Int, player: String, award: BadgeAward)] = []
        for row in rows {
            let userID: Int = try row.int("user_id")
            let playing = try row.bool("playing") && userID != leaving
            var facts = CompletionFacts(
                userID: userID, hunt: hunt.id, huntName: hunt.name, stops: hunt.stops, mode: hunt.mode, huntBadge: hunt.badgeName,
                awardsHuntBadge: !hunt.moderationHidden && !hunt.removed, removed: hunt.removed, playing: playing,
                sideFound: try row.int("side_found"), counted: try row.bool("counted"), otherCompletions: try row.int("other_completions"),
                otherTrialCompletions: try row.int("other_trials"), allTimeFound: try row.int("all_found"),
                held: Set(try PostgresArray.parseText(try row.string("held"))), checkIn: checkIn)
            if hunt.trialSeconds != nil { facts.trialElapsedSeconds = try row.double("trial_elapsed") }
            let effects = Achievements.settle(facts)
            if let completed = effects.completion {
                try connection.query("""
                    UPDATE hunt_players SET completed = \(completed) WHERE hunt_id = \(huntID) AND user_id = \(userID)
                    """)
                try connection.query("""
                    UPDATE user_scores SET hunts_completed = greatest(0, hunts_completed + \(completed ? 1 : -1)) WHERE user_id = \(userID)
                    """)
                try logCurrentTotals(connection, log, userID: userID)
            }
            if !effects.takeBack.isEmpty {
                try connection.query("""
                    DELETE FROM user_badges WHERE user_id = \(userID) AND badge = ANY (\(PostgresArray.text(effects.takeBack))::text[])
                    """)
            }
            if let name: String = try row.string("name") {
                awards += effects.award.map { (userID, name, $0) }
            }
        }
        try award(connection, log, awards)
    }
}
