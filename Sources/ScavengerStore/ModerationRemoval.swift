import Postgres
import ScavengerCore

// A queue item's facts, and what a moderator's removal takes away: content deleted for good, and a
// removed hunt's points out of its players' totals (its completions go when the caller settles
// their achievements).
extension Database {
    /// Locks a queue item and reads who may decide it; nil when it is not in the queue.
    static func queueItemFacts(_ connection: PostgresConnection, item: String) throws -> QueueItemFacts? {
        let rows = try connection.query("""
            SELECT status, claimed_by, coalesce(claim_expires > now(), false) AS claim_live, author_id FROM moderation_items
            WHERE item = \(item) FOR UPDATE
            """)
        guard let row = rows.first else { return nil }
        let statusName: String = try row.string("status")
        guard let status = ItemStatus(rawValue: statusName) else { throw StoreError.unexpected("a queue item's status is \(statusName)") }
        return QueueItemFacts(
            authorID: try row.int("author_id"), status: status, holderID: try row.int("claimed_by"), claimLive: try row.bool("claim_live"))
    }

    /// Takes a removed hunt's points out of its players' totals (all-time and each week's) and
    /// the hunt out of their hunts played, as if each had left it; their rows stay (the host and
    /// moderators still read the hunt), and their completions go when the caller settles their
    /// achievements after the removal. The totals are logged for every daemon's rankings
    /// (appended to `log`). Returns the players' user ids; none when it was done before.
    static func takeBackHuntPoints(_ connection: PostgresConnection, _ log: HuntLog, huntID: String) throws -> [Int] {
        let hunts = try connection.query("SELECT points_taken_back FROM hunts WHERE id = \(huntID) FOR NO KEY UPDATE")
        guard let hunt = hunts.first, !(try hunt.bool("points_taken_back")) else { return [] }
        try connection.query("UPDATE hunts SET points_taken_back = true WHERE id = \(huntID)")
        let players = try connection.query("""
            SELECT user_id FROM hunt_players WHERE hunt_id = \(huntID) ORDER BY user_id FOR UPDATE
            """)
        var users: [Int] = []
        for player in players {
            let userID: Int = try player.int("user_id")
            users.append(userID)
            let accepted = try connection.query("""
                SELECT points, (extract(epoch FROM accepted_at) * 1000000)::bigint AS accepted_us FROM checkins
                WHERE hunt_id = \(huntID) AND user_id = \(userID) AND status = 'accepted' ORDER BY id
                """)
            var weeks = Set<ScoreWeek>()
            for checkIn in accepted {
                let acceptedAt = Timestamp(microseconds: Int64(try checkIn.int("accepted_us") as Int))
                try debitTotals(connection, log, userID: userID, points: try checkIn.int("points"), acceptedAt: acceptedAt, logged: false)
                weeks.insert(ScoreWeek(containing: acceptedAt))
            }
            try connection.query("UPDATE user_scores SET hunts_played = hunts_played - 1 WHERE user_id = \(userID)")
            if weeks.isEmpty {
                try logCurrentTotals(connection, log, userID: userID)
            } else {
                try logTotals(connection, log, userID: userID, weeks: weeks)
            }
        }
        return users
    }

    /// Deletes a pin (with its replies and photo) or a reply (keeping the count right).
    /// Returns (pin to refresh, pin removed).
    static func removeContent(_ connection: PostgresConnection, item: String) throws -> (String?, String?) {
        if Identifier.isHunt(item) {
            // Removed for good: it ends now (if it has not) and is gone for all but its host and
            // moderators; its watchers hear that it ended.
            let rows = try connection.query("""
                UPDATE hunts h SET removed = true, moderation_hidden = true,
                    ends_at = CASE WHEN \(unescaped: huntNotEnded) THEN now() ELSE \(unescaped: huntEnd) END,
                    starts_at = CASE WHEN h.starts_at > now() OR h.starts_at IS NULL THEN NULL ELSE h.starts_at END,
                    duration_s = NULL
                WHERE h.id = \(item) RETURNING h.id
                """)
            if !rows.isEmpty { try logHuntChange(connection, hunt: item, .hunt) }
            return (nil, nil)
        }
        if Identifier.isStop(item) {
            try connection.query("UPDATE hunt_stops SET removed = true, moderation_hidden = true WHERE id = \(item)")
            return (nil, nil)
        }
        if Identifier.isPin(item) {
            let rows = try connection.query("DELETE FROM pins WHERE id = \(item) RETURNING id")
            return (nil, rows.isEmpty ? nil : item)
        }
        let rows = try connection.query("DELETE FROM replies WHERE id = \(item) RETURNING pin_id, hidden")
        guard let row = rows.first, let pin: String = try row.string("pin_id") else { return (nil, nil) }
        let wasHidden: Bool = try row.bool("hidden")
        if !wasHidden {
            try connection.query("UPDATE pins SET reply_count = greatest(0, reply_count - 1) WHERE id = \(pin)")
        }
        return (pin, nil)
    }
}
