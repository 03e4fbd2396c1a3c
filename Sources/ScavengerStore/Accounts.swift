import Postgres
import ScavengerCore

/// A user with their database id.
public struct Account: Sendable, Equatable {
    public var id: Int
    public var user: User
    /// Set while the user is banned.
    public var ban: BanEnd?
    /// A guest's hunt (the one hunt they play); nil for an account.
    public var guestHunt: String?

    public init(id: Int, user: User, ban: BanEnd? = nil, guestHunt: String? = nil) {
        self.id = id
        self.user = user
        self.ban = ban
        self.guestHunt = guestHunt
    }
}

/// What `LOGIN` checks a password against.
public struct Credentials: Sendable {
    public var account: Account
    /// The stored argon2id hash string.
    public var passwordHash: String
}

/// Which uniqueness rule a registration broke.
public enum RegistrationConflict: Sendable, Equatable {
    case username
    case email
}

extension Database {
    /// Creates a user and their first session in one transaction.
    /// Throws `.conflict` naming `users_name_unique` or `users_email_unique`.
    public func register(
        name: String, email: String, passwordHash: String, tokenHash: [UInt8], sessionTTLSeconds: Int
    ) async throws(StoreError) -> Account {
        try await mappingErrors {
            try await pool.transaction { connection in
                let rows = try connection.query("""
                    INSERT INTO users (name, email, password_hash) VALUES (\(name), \(email), \(passwordHash))
                    RETURNING id AS account_id, name AS account_name, role AS account_role, NULL::bigint AS account_ban,
                        NULL::text AS account_guest_hunt
                    """)
                let account = try AccountColumns(rows).account(rows[0])
                try Self.insertSession(connection, userID: account.id, tokenHash: tokenHash, ttlSeconds: sessionTTLSeconds)
                return account
            }
        }
    }

    /// Which rule a registration with this name and email would break now, if any: checked
    /// before the password is hashed, so a taken name costs no hashing. The unique indexes
    /// still decide when two registrations race.
    public func registrationConflict(name: String, email: String) async throws(StoreError) -> RegistrationConflict? {
        try await mappingErrors {
            let rows = try await pool.query("""
                SELECT bool_or(lower(name) = lower(\(name))) AS name_taken, bool_or(lower(email) = lower(\(email))) AS email_taken
                FROM users WHERE role <> 'guest' AND (lower(name) = lower(\(name)) OR lower(email) = lower(\(email)))
                """)
            let nameTaken: Bool? = try rows[0].bool("name_taken")
            let emailTaken: Bool? = try rows[0].bool("email_taken")
            if nameTaken == true { return .username }
            if emailTaken == true { return .email }
            return nil
        }
    }

    /// The account whose name or email (case-insensitively) is `login`, with its password hash.
    public func credentials(login: String) async throws(StoreError) -> Credentials? {
        try await mappingErrors {
            let rows = try await pool.query("""
                SELECT \(unescaped: Self.accountColumns("users")), password_hash FROM users
                WHERE role <> 'guest' AND (lower(name) = lower(\(login)) OR lower(email) = lower(\(login)))
                LIMIT 1
                """)
            guard let row = rows.first else { return nil }
            return Credentials(account: try AccountColumns(rows).account(row), passwordHash: try row.string("password_hash"))
        }
    }

    /// Starts a session: only the token's hash is stored.
    public func createSession(userID: Int, tokenHash: [UInt8], ttlSeconds: Int) async throws(StoreError) {
        try await mappingErrors {
            try await pool.withConnection { connection in
                try Self.insertSession(connection, userID: userID, tokenHash: tokenHash, ttlSeconds: ttlSeconds)
            }
        }
    }

    /// The account of a live session, or nil when the token is unknown, expired or revoked.
    public func account(sessionTokenHash tokenHash: [UInt8]) async throws(StoreError) -> Account? {
        try await mappingErrors {
            let rows = try await pool.query("""
                SELECT \(unescaped: Self.accountColumns("u")) FROM sessions s JOIN users u ON u.id = s.user_id
                WHERE s.token_hash = \(tokenHash) AND s.expires_at > now()
                """)
            return try rows.first.map(AccountColumns(rows).account)
        }
    }

    /// Revokes a session everywhere; false when it was not there. Once it is deleted, every
    /// daemon is told (``announce(_:)``), so connections that resumed it hear that it ended.
    @discardableResult
    public func deleteSession(tokenHash: [UInt8]) async throws(StoreError) -> Bool {
        let deleted = try await mappingErrors {
            try await pool.query("DELETE FROM sessions WHERE token_hash = \(tokenHash)", idempotent: false).affectedRows > 0
        }
        // The LOGOUT stands without it: reads check their session in the database anyway, and a
        // listener that lost its connection checks every session it holds when it is back.
        if deleted { try? await announce(.token(tokenHash)) }
        return deleted
    }

    /// Sets a user's role; false when there is no such user. A user with totals has them logged
    /// again, so every daemon's profiles (PROFILE, from memory) show the new role.
    public func setRole(username: String, role: Role) async throws(StoreError) -> Bool {
        try await mappingErrors {
            try await pool.transaction { connection in
                let rows = try connection.query("""
                    UPDATE users SET role = \(role.rawValue) WHERE role <> 'guest' AND lower(name) = lower(\(username)) RETURNING id,
                        EXISTS (SELECT 1 FROM user_scores s WHERE s.user_id = users.id) AS has_totals
                    """)
                guard let row = rows.first else { return false }
                if try row.bool("has_totals") {
                    let log = HuntLog()
                    try Self.logCurrentTotals(connection, log, userID: try row.int("id"))
                    try log.write(on: connection, wakeListeners: true)
                }
                return true
            }
        }
    }

    /// Sets a user's password hash (found by name, case-insensitively; never a guest's row, as the
    /// guests branch keeps name look-ups) and ends every session of theirs, as `RESET` does, in one
    /// transaction; the user's id, or nil when there is no such user.
    public func setPassword(username: String, passwordHash: String) async throws(StoreError) -> Int? {
        try await mappingErrors {
            try await pool.transaction { connection in
                let rows = try connection.query("""
                    UPDATE users SET password_hash = \(passwordHash) WHERE role <> 'guest' AND lower(name) = lower(\(username)) RETURNING id
                    """)
                guard let row = rows.first else { return nil }
                let id: Int = try row.int("id")
                try connection.query("DELETE FROM sessions WHERE user_id = \(id)")
                return id
            }
        }
    }

    static func insertSession(_ connection: PostgresConnection, userID: Int, tokenHash: [UInt8], ttlSeconds: Int) throws {
        try connection.query("""
            INSERT INTO sessions (token_hash, user_id, expires_at)
            VALUES (\(tokenHash), \(userID), now() + make_interval(secs => \(ttlSeconds)))
            """)
    }

    /// The ban of a user row as one bigint column: NULL when not banned (or the ban is over),
    /// -1 for a permanent ban, else the end in microseconds.
    static func banColumn(_ table: String) -> String {
        """
        CASE WHEN \(table).banned_until IS NULL OR \(table).banned_until <= now() THEN NULL
             WHEN \(table).banned_until = 'infinity' THEN -1
             ELSE (extract(epoch FROM \(table).banned_until) * 1000000)::bigint END
        """
    }

    /// A user row's account as the columns ``AccountColumns`` reads: id, name, role and ban.
    static func accountColumns(_ table: String) -> String {
        """
        \(table).id AS account_id, \(table).name AS account_name, \(table).role AS account_role,
        \(banColumn(table)) AS account_ban, \(table).guest_hunt AS account_guest_hunt
        """
    }

    /// ``accountColumns(_:)`` found in one result, to read an account from each of its rows.
    struct AccountColumns {
        let id, name, role, ban, guestHunt: PostgresColumn

        init(_ rows: PostgresRows) throws(PostgresError) {
            id = try rows.column("account_id")
            name = try rows.column("account_name")
            role = try rows.column("account_role")
            ban = try rows.column("account_ban")
            guestHunt = try rows.column("account_guest_hunt")
        }

        func account(_ row: PostgresRow) throws -> Account {
            let roleName: String = try row.string(role)
            guard let role = Role(rawValue: roleName) else {
                throw StoreError.unexpected("unknown role \(roleName) in the database")
            }
            var ban: BanEnd?
            if let end: Int = try row.int(self.ban) {
                ban = end < 0 ? .permanent : .until(Timestamp(microseconds: Int64(end)))
            }
            return Account(id: try row.int(id), user: User(name: try row.string(name), role: role), ban: ban, guestHunt: try row.string(guestHunt))
        }
    }
}

extension RegistrationConflict {
    /// Which rule a conflict from ``Database/register`` broke.
    public init?(_ error: StoreError) {
        guard case .conflict(let constraint) = error else { return nil }
        switch constraint {
        case "users_name_unique": self = .username
        case "users_email_unique": self = .email
        default: return nil
        }
    }
}
