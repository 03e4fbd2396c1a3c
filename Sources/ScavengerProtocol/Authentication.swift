import ScavengerCore
import ScavengerStore
import Sodium

extension CommandContext {
    /// The logged-in account, checked against the database on every call so that a revoked or
    /// expired session, or a changed role, takes effect at once. `UNAUTHORIZED` otherwise.
    public func requireAccount() async throws -> Account {
        let tokenHash = try requireLogin().tokenHash
        let database = try services.requireDatabase()
        guard let account = try await database.account(sessionTokenHash: tokenHash) else {
            session.logOut()
            throw CommandError(.unauthorized, "the session has expired or was logged out; log in again")
        }
        session.logIn(user: account.user, userID: account.id, tokenHash: tokenHash)
        return account
    }

    /// This connection's login as last checked, without asking the database: for writes that
    /// check the session in their own statement (``NewPin/sessionTokenHash``).
    public func requireLogin() throws(CommandError) -> (tokenHash: [UInt8], userID: Int, user: User) {
        guard let login = session.login else {
            throw CommandError(.unauthorized, "log in first (REGISTER, LOGIN or AUTH)")
        }
        return login
    }

    /// The logged-in account, which must not be banned: what every write asks for.
    public func requireWriter() async throws -> Account {
        let account = try await requireAccount()
        if let ban = account.ban {
            throw CommandError(.banned, ban.text)
        }
        return account
    }

    /// The logged-in account, which must be a moderator or an admin.
    public func requireModerator() async throws -> Account {
        let account = try await requireAccount()
        guard account.user.role.canModerate else {
            throw CommandError(.forbidden, "moderators only")
        }
        return account
    }

    /// Starts a session for `account` on this connection and returns the token to give the client.
    func startSession(_ account: Account, database: Database) async throws -> String {
        let token = SecureRandom.token()
        let tokenHash = Digest.sha256(token)
        try await database.createSession(userID: account.id, tokenHash: tokenHash, ttlSeconds: services.sessionTTLSeconds)
        session.logIn(user: account.user, userID: account.id, tokenHash: tokenHash)
        return token
    }
}
