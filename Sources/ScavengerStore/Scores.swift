import Postgres
import ScavengerCore

/// A user's totals as loaded for the rankings: by user id, so batches follow the key. The
/// profile's fields are read for the all-time totals only (zero and `.user` for a week's).
public struct RankedTotals: Sendable, Equatable {
    public var userID: Int
    public var user: String
    public var standing: Leaderboard.Standing
    public var huntsPlayed = 0
    public var huntsCompleted = 0
    public var role = Role.user

    /// The profile these totals make (no rank).
    public var profile: UserProfile {
        UserProfile(user: User(name: user, role: role), standing: standing, huntsPlayed: huntsPlayed, huntsCompleted: huntsCompleted, rank: nil)
    }
}

extension Database {
    /// Up to `limit` users with totals (with points or not), all-time, after user id
    /// `afterUserID`, by id, with their profiles' fields: the batches the all-time ranking and
    /// the profiles load from. Both sides of the join are bounded by the id (bounding one only
    /// made each batch read `users` from the first id again).
    public func allTotals(afterUserID: Int, limit: Int) async throws(StoreError) -> [RankedTotals] {
        try await mappingErrors {
            let rows = try await pool.query("""
                SELECT s.user_id, u.name, s.points, s.found, (extract(epoch FROM s.points_at) * 1000000)::bigint AS at_us,
                    s.hunts_played, s.hunts_completed, u.role
                FROM user_scores s JOIN users u ON u.id = s.user_id
                WHERE s.user_id > \(afterUserID) AND u.id > \(afterUserID) AND u.role <> 'guest'
                ORDER BY s.user_id LIMIT \(limit)
                """)
            var totals = try Self.rankedTotals(rows)
            let played = try rows.column("hunts_played"), completed = try rows.column("hunts_completed"), role = try rows.column("role")
            for (index, row) in rows.enumerated() {
                totals[index].huntsPlayed = try row.int(played)
                totals[index].huntsCompleted = try row.int(completed)
                guard let parsed = Role(rawValue: try row.string(role)) else { throw StoreError.unexpected("a user with an unknown role") }
                totals[index].role = parsed
            }
            return totals
        }
    }

    /// Up to `limit` users with points in `week`, after user id `afterUserID`, by id.
    public func rankedTotals(in week: ScoreWeek, afterUserID: Int, limit: Int) async throws(StoreError) -> [RankedTotals] {
        try await mappingErrors {
            let rows = try await pool.query("""
                SELECT w.user_id, u.name, w.points, w.found, (extract(epoch FROM w.points_at) * 1000000)::bigint AS at_us
                FROM user_week_scores w JOIN users u ON u.id = w.user_id
                WHERE w.week = date '1970-01-01' + \(week.mondayDay)::integer AND w.user_id > \(afterUserID) AND u.id > \(afterUserID)
                  AND w.points > 0 AND u.role <> 'guest'
                ORDER BY w.user_id LIMIT \(limit)
                """)
            return try Self.rankedTotals(rows)
        }
    }

    /// The weeks with points from `week` on (a daemon whose clock runs behind the database's
    /// still loads a week that has begun there).
    public func scoredWeeks(from week: ScoreWeek) async throws(StoreError) -> [ScoreWeek] {
        try await mappingErrors {
            let rows = try await pool.query("""
                SELECT DISTINCT (week - date '1970-01-01') AS day FROM user_week_scores
                WHERE week >= date '1970-01-01' + \(week.mondayDay)::integer ORDER BY day
                """)
            return try rows.compactMap { row in ScoreWeek(mondayDay: try row.int("day")) }
        }
    }

    private static func rankedTotals(_ rows: PostgresRows) throws -> [RankedTotals] {
        let userID = try rows.column("user_id"), name = try rows.column("name"), points = try rows.column("points")
        let found = try rows.column("found"), at = try rows.column("at_us")
        var totals: [RankedTotals] = []
        totals.reserveCapacity(rows.count)
        for row in rows {
            let instant: Int? = try row.int(at)
            totals.append(RankedTotals(
                userID: try row.int(userID), user: try row.string(name),
                standing: Leaderboard.Standing(points: try row.int(points), found: try row.int(found), at: instant.map { Timestamp(microseconds: Int64($0)) })))
        }
        return totals
    }

    /// `username`'s profile (its name matched case-insensitively), with no rank (the rankings are
    /// in memory); nil when there is no such user.
    public func profile(username: String) async throws(StoreError) -> UserProfile? {
        try await mappingErrors {
            let rows = try await pool.query("""
                SELECT u.name, u.role, coalesce(s.points, 0) AS points, coalesce(s.found, 0) AS found,
                    (extract(epoch FROM s.points_at) * 1000000)::bigint AS at_us,
                    coalesce(s.hunts_played, 0) AS hunts_played, coalesce(s.hunts_completed, 0) AS hunts_completed
                FROM users u LEFT JOIN user_scores s ON s.user_id = u.id
                WHERE u.role <> 'guest' AND lower(u.name) = lower(\(username))
                """)
            guard let row = rows.first else { return nil }
            guard let role = Role(rawValue: try row.string("role")) else { throw StoreError.unexpected("a user with an unknown role") }
            let at: Int? = try row.int("at_us")
            return UserProfile(
                user: User(name: try row.string("name"), role: role),
                standing: Leaderboard.Standing(points: try row.int("points"), found: try row.int("found"), at: at.map { Timestamp(microseconds: Int64($0)) }),
                huntsPlayed: try row.int("hunts_played"), huntsCompleted: try row.int("hunts_completed"), rank: nil)
        }
    }
}
