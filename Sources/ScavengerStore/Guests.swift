import Postgres
import ScavengerCore

// Guests (protocol 1.5): a row of `users` with role 'guest' and the hunt it plays, so a guest's
// check-ins, standings, sessions and rates are a player's (db/0035_guests.sql). The board
// decides; these apply.
extension Database {
    /// A guest who joined: the hunt as it stands after the join, and the guest's account.
    public struct GuestJoin: Sendable, Equatable {
        public var hunt: HuntRecord
        public var guest: Account
    }

    /// Makes a guest of `huntID` named `name` with a first session (`tokenHash`, for
    /// `sessionTTLSeconds`), and seats them in the hunt (for `team` in a team hunt), in one
    /// transaction under the hunt's row lock, so the count of guests `check` sees is exact. A name
    /// another player of the hunt holds is ``StoreError/conflict(constraint:)`` `hunt_players_name`.
    /// Nil when no such hunt.
    public func joinAsGuest(
        huntID: String, name: String, team: String?, tokenHash: [UInt8], sessionTTLSeconds: Int,
        check: @escaping @Sendable (_ hunt: HuntRecord, _ now: Timestamp, _ guests: Int) throws -> Void,
        checkTeam: @escaping @Sendable (TeamJoinFacts) throws -> Void = { _ in }
    ) async throws(StoreError) -> GuestJoin? {
        try await huntTransaction { connection, log in
            guard let hunt = try Self.hunt(connection, id: huntID, lock: "FOR NO KEY UPDATE OF h") else { return nil }
            let now = try Self.clock(connection)
            let guests: Int = try connection.query("""
                SELECT count(*) AS n FROM hunt_players p JOIN users u ON u.id = p.user_id
                WHERE p.hunt_id = \(huntID) AND u.role = 'guest'
                """)[0].int("n")
            try check(hunt, now, guests)
            let rows = try connection.query("""
                INSERT INTO users (name, role, guest_hunt) VALUES (\(name), 'guest', \(huntID))
                RETURNING \(unescaped: Self.accountColumns("users"))
                """)
            let guest = try AccountColumns(rows).account(rows[0])
            try Self.insertSession(connection, userID: guest.id, tokenHash: tokenHash, ttlSeconds: sessionTTLSeconds)
            let outcome = try Self.seat(connection, log, hunt: hunt, userID: guest.id, name: name, team: team, now: now, checkTeam: checkTeam)
            guard case .joined(let joined) = outcome else { throw StoreError.unexpected("a new guest was already a player") }
            return GuestJoin(hunt: joined, guest: guest)
        }
    }

    /// Turns guest `userID` into an account (`REGISTER` on a guest's connection): the row keeps
    /// its id, so its place, check-ins and points in the hunt stay; its guest sessions end and a
    /// new session starts. Its totals are logged again, now an account's, so the rankings take
    /// them in. Nil when `userID` is no guest (any more). Throws `.conflict` naming
    /// `users_name_unique` or `users_email_unique`, as ``register(name:email:passwordHash:tokenHash:sessionTTLSeconds:)``.
    public func registerGuest(
        userID: Int, name: String, email: String, passwordHash: String, tokenHash: [UInt8], sessionTTLSeconds: Int
    ) async throws(StoreError) -> Account? {
        let account = try await huntTransaction { connection, log -> Account? in
            let rows = try connection.query("""
                UPDATE users SET name = \(name), email = \(email), password_hash = \(passwordHash), role = 'user', guest_hunt = NULL
                WHERE id = \(userID) AND role = 'guest'
                RETURNING \(unescaped: Self.accountColumns("users"))
                """)
            guard let row = rows.first else { return nil }
            let account = try AccountColumns(rows).account(row)
            try connection.query("DELETE FROM sessions WHERE user_id = \(userID)")
            try Self.insertSession(connection, userID: userID, tokenHash: tokenHash, ttlSeconds: sessionTTLSeconds)
            let scored = try connection.query("SELECT 1 FROM user_scores WHERE user_id = \(userID)")
            if !scored.isEmpty { try Self.logCurrentTotals(connection, log, userID: userID) }
            return account
        }
        // Connections that resumed the guest's session hear that it ended (as after a RESET).
        if account != nil { try? await announce(.user(userID)) }
        return account
    }
}
