import Postgres
import ScavengerCore

// Badges: written in the transaction of the check-in or review that earns or takes them back,
// as ScavengerCore's BadgeRules decide from the facts that transaction read; read by BADGES and
// PROFILE.
extension Database {
    /// `username`'s id and badges (the name matched case-insensitively), oldest first, each
    /// with what the caller `viewerID` (nil: no login) is to the hunt it was earned in; nil when
    /// there is no such user.
    public func badges(username: String, viewerID: Int?) async throws(StoreError) -> (userID: Int, badges: [(Badge, BadgeHuntAccess?)])? {
        try await mappingErrors {
            let viewer = viewerID ?? 0
            let rows = try await pool.query("""
                SELECT u.id, b.badge, b.name, b.description, b.hunt_id, (extract(epoch FROM b.at) * 1000000)::bigint AS at_us,
                       coalesce(h.public, false) AS hunt_public, coalesce(h.removed, true) AS hunt_removed,
                       coalesce(h.host_id = \(viewer)::bigint, false) AS viewer_hosts,
                       EXISTS (SELECT 1 FROM hunt_players p WHERE p.hunt_id = b.hunt_id AND p.user_id = \(viewer)::bigint) AS viewer_plays
                FROM users u LEFT JOIN user_badges b ON b.user_id = u.id LEFT JOIN hunts h ON h.id = b.hunt_id
                WHERE u.role <> 'guest' AND lower(u.name) = lower(\(username))
                ORDER BY b.at, b.badge
                """)
            guard let first = rows.first else { return nil }
            var badges: [(Badge, BadgeHuntAccess?)] = []
            for row in rows {
                guard let id: String = try row.string("badge") else { continue }
                let hunt: String? = try row.string("hunt_id")
                let access = try hunt.map { _ in
                    BadgeHuntAccess(
                        isPublic: try row.bool("hunt_public"), removed: try row.bool("hunt_removed"),
                        callerHosts: try row.bool("viewer_hosts"), callerPlays: try row.bool("viewer_plays"))
                }
                badges.append((Badge(
                    id: id, name: try row.string("name"), description: try row.string("description"), hunt: hunt,
                    at: Timestamp(microseconds: Int64(try row.int("at_us") as Int))), access))
            }
            return (try first.int("id"), badges)
        }
    }

    /// How many badges `username` holds (the name matched case-insensitively); nil when there is
    /// no such user.
    public func badgeCount(username: String) async throws(StoreError) -> Int? {
        try await mappingErrors {
            let rows = try await pool.query("""
                SELECT (SELECT count(*) FROM user_badges b WHERE b.user_id = u.id) AS badges
                FROM users u WHERE u.role <> 'guest' AND lower(u.name) = lower(\(username))
                """)
            return try rows.first.map { try $0.int("badges") }
        }
    }

    /// Inserts `awards` (each for a user, under their name in the award's hunt) in one statement,
    /// once per user and badge (a badge already held is left as it was), and logs a `badge`
    /// change in its hunt for each one newly held. In the caller's transaction.
    static func award(_ connection: PostgresConnection, _ log: HuntLog, _ given: [(userID: Int, player: String, award: BadgeAward)]) throws {
        // Once per user and badge (two members' check-ins in one group may both complete a
        // team's hunt as far as each knows): the first of each.
        var seen = Set<String>()
        let awards = given.filter { seen.insert("\($0.userID) \($0.award.id)").inserted }
        guard !awards.isEmpty else { return }
        func column(_ value: ((userID: Int, player: String, award: BadgeAward)) -> String) -> String {
            PostgresArray.text(awards.map(value))
        }
        let rows = try connection.query("""
            INSERT INTO user_badges (user_id, badge, name, description, hunt_id, checkin_id)
            SELECT v.user_id, v.badge, v.name, v.description, v.hunt_id, v.checkin_id
            FROM unnest(\(column { String($0.userID) })::bigint[], \(column { $0.award.id })::text[], \(column { $0.award.name })::text[],
                \(column { $0.award.description })::text[], \(column { $0.award.hunt })::text[], \(column { $0.award.checkIn })::text[])
                WITH ORDINALITY AS v(user_id, badge, name, description, hunt_id, checkin_id, n)
            -- A guest holds no badges (protocol 1.5): the awards are the game's, the guest's row
            -- is left out here, where the badges are written, rather than read apart beforehand.
            JOIN users u ON u.id = v.user_id AND u.role <> 'guest'
            ORDER BY v.n
            ON CONFLICT (user_id, badge) DO NOTHING
            RETURNING user_id, badge, (extract(epoch FROM at) * 1000000)::bigint AS at_us
            """)
        var inserted: [String: Timestamp] = [:]
        for row in rows {
            inserted["\(try row.int("user_id") as Int) \(try row.string("badge") as String)"] = Timestamp(microseconds: Int64(try row.int("at_us") as Int))
        }
        // In the order awarded (RETURNING's order is not promised).
        for (userID, player, award) in awards {
            guard let at = inserted["\(userID) \(award.id)"] else { continue }
            log.append(hunt: award.hunt, .badge(
                player: player, badge: Badge(id: award.id, name: award.name, description: award.description, hunt: award.hunt, at: at)))
        }
    }

    /// The firsts (`first-find`, `pathfinder`) that a rejected check-in earned, as
    /// ``BadgeRules/afterRejecting(checkIn:held:standing:)`` decides: taken back, or `first-find`
    /// moved to the user's earliest accepted check-in that still stands.
    static func takeBackFirsts(_ connection: PostgresConnection, userID: Int, checkIn: String) throws {
        let rows = try connection.query("""
            SELECT badge, checkin_id FROM user_badges WHERE user_id = \(userID) AND checkin_id = \(checkIn)
            """)
        let held = try rows.map { (id: try $0.string("badge") as String, checkIn: try $0.string("checkin_id") as String?) }
        guard !held.isEmpty else { return }
        let standing = try connection.query("""
            SELECT id, hunt_id FROM checkins WHERE user_id = \(userID) AND status = 'accepted' AND id <> \(checkIn)
            ORDER BY created_at, id LIMIT 1
            """).first.map { (id: try $0.string("id") as String, hunt: try $0.string("hunt_id") as String) }
        let change = BadgeRules.afterRejecting(checkIn: checkIn, held: held, standing: standing?.id)
        if !change.takenBack.isEmpty {
            try connection.query("""
                DELETE FROM user_badges WHERE user_id = \(userID) AND badge = ANY (\(PostgresArray.text(change.takenBack))::text[])
                """)
        }
        for (badge, to) in change.moved {
            try connection.query("""
                UPDATE user_badges SET checkin_id = \(to), hunt_id = \(standing?.hunt) WHERE user_id = \(userID) AND badge = \(badge)
                """)
        }
    }
}
