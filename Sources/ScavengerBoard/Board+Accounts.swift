import ScavengerCore
import ScavengerStore
import Sodium

/// A login that worked: the user, and the session token to give the client (stored only hashed).
public struct SignIn: Sendable, Equatable {
    public var user: User
    public var token: String
    /// Whether the user's email is verified, when the call knows it (RESET).
    public var emailVerified: Bool? = nil
}

extension Board {
    // MARK: Use cases

    /// Creates an account with its first session and logs `session` in. The name, email and
    /// password must meet ``RequestChecks/registration(name:email:password:)``. Limited per client
    /// address (``takeAddressToken(_:action:)``); a taken name or email is refused before the
    /// password is hashed.
    public func register(name: String, email: String, password: String, on session: Session) async throws(BoardError) -> SignIn {
        try checks.registration(name: name, email: email, password: password)
        if session.login?.user.isGuest == true {
            return try await registerGuest(name: name, email: email, password: password, on: session)
        }
        return try await guarded {
            try await takeAddressToken(session.address, action: "registrations")
            if let conflict = try await store.registrationConflict(name: name, email: email) {
                throw Self.refusal(conflict)
            }
            let passwordHash = try await passwordQueue.run(
                first: loginThrottle.isClean(session.address), isWanted: { session.isConnected }
            ) { hasher in try await hasher.hash(password) }
            let token = SecureRandom.token()
            let tokenHash = Digest.sha256(token)
            let account: Account
            do {
                account = try await store.register(
                    name: name, email: email, passwordHash: passwordHash, tokenHash: tokenHash,
                    sessionTTLSeconds: rules.sessionTTLSeconds)
            } catch let error as StoreError {
                guard let conflict = RegistrationConflict(error) else { throw error }
                throw Self.refusal(conflict)
            }
            signIn(session, account: account, tokenHash: tokenHash)
            return SignIn(user: account.user, token: token)
        }
    }

    /// Takes a token of the client address's bucket for account requests (`REGISTER` and
    /// `FORGOT` draw from one, kept in the database for every daemon), or refuses with the wait.
    /// Connections without an address (a Unix socket) are not limited.
    func takeAddressToken(_ address: String?, action: String) async throws {
        guard let rate = rules.registrationRate, let address else { return }
        let wait = try await store.takeAddressToken(address, .accounts, rate: rate)
        guard wait > 0 else { return }
        let seconds = max(1, Int(wait.rounded(.up)))
        throw BoardError.rateLimited(retryAfter: seconds, "too many \(action) from your address; wait \(seconds) s")
    }

    static func refusal(_ conflict: RegistrationConflict) -> BoardError {
        switch conflict {
        case .username: BoardError(.conflict, "that username is taken")
        case .email: BoardError(.conflict, "that email is already registered")
        }
    }

    /// Checks a name or email and password and starts a new session on `session`. A wrong name
    /// and a wrong password are refused alike, after the same work.
    ///
    /// Failed attempts are counted per client address and per account (``LoginThrottle``):
    /// past the free ones, `RATE_LIMITED` with the wait, before any hashing. The check waits in
    /// the ``PasswordQueue``, ahead of others when the address has no failures on record.
    public func logIn(_ login: String, password: String, on session: Session) async throws(BoardError) -> SignIn {
        return try await guarded {
            let wrong = BoardError(.unauthorized, "wrong name or password")
            // No account's password is this long (REGISTER refuses it): no need to hash it.
            guard password.utf8.count <= Validation.maximumPasswordBytes else { throw wrong }
            try loginThrottle.checkAddress(session.address)
            let credentials = try await store.credentials(login: login)
            let attempt = try loginThrottle.begin(address: session.address, account: credentials?.account.id)
            var succeeded: Bool?
            defer { loginThrottle.finish(attempt, succeeded: succeeded) }
            let matches = try await passwordQueue.run(first: attempt.addressWasClean, isWanted: { session.isConnected }) { hasher in
                guard let credentials else {
                    // Spend the same time as a real check, so unknown names cannot be told apart.
                    await hasher.verifyDummy(password)
                    return false
                }
                return await hasher.verify(password, against: credentials.passwordHash)
            }
            succeeded = matches
            guard matches, let account = credentials?.account else { throw wrong }
            let token = SecureRandom.token()
            let tokenHash = Digest.sha256(token)
            try await store.createSession(userID: account.id, tokenHash: tokenHash, ttlSeconds: rules.sessionTTLSeconds)
            signIn(session, account: account, tokenHash: tokenHash)
            return SignIn(user: account.user, token: token)
        }
    }

    /// Resumes the session of `token` on `session`.
    public func resume(token: String, on session: Session) async throws(BoardError) -> User {
        return try await guarded {
            let tokenHash = Digest.sha256(token)
            guard let account = try await liveAccount(sessionTokenHash: tokenHash) else {
                throw BoardError(.unauthorized, "unknown, expired or revoked token")
            }
            signIn(session, account: account, tokenHash: tokenHash)
            return account.user
        }
    }

    /// Ends the session everywhere: its token stops working on every connection, and every
    /// daemon closes the hunt watches of the connections that used it (this one's too).
    public func logOut(_ session: Session) async throws(BoardError) {
        try await guarded {
            guard let tokenHash = session.tokenHash else { throw BoardError(.unauthorized, "not logged in") }
            try await store.deleteSession(tokenHash: tokenHash)
            sessionEnded(session, tokenHash: tokenHash)
        }
    }

    /// Who is logged in on `session` now, checked against the database; nil when nobody is, or
    /// when the session has ended. `unavailable` when the database cannot say.
    public func currentUser(of session: Session) async throws(BoardError) -> User? {
        return try await guarded {
            guard session.tokenHash != nil else { return nil }
            do {
                return try await account(of: session).user
            } catch let refusal as BoardError where refusal.code == .unauthorized {
                return nil
            }
        }
    }

    // MARK: Checks

    /// The logged-in account, checked against the database on every call so that a revoked or
    /// expired session, or a changed role, takes effect at once. `unauthorized` otherwise.
    func account(of session: Session) async throws(BoardError) -> Account {
        return try await guarded {
            let tokenHash = try login(of: session).tokenHash
            guard let account = try await liveAccount(sessionTokenHash: tokenHash) else {
                sessionEnded(session, tokenHash: tokenHash)
                throw BoardError(.unauthorized, "the session has expired or was logged out; log in again")
            }
            session.logIn(user: account.user, userID: account.id, tokenHash: tokenHash)
            return account
        }
    }

    /// The session's login as last checked, without asking the database: for writes that check
    /// the session in their own statement (``NewPin/sessionTokenHash``).
    func login(of session: Session) throws(BoardError) -> (tokenHash: [UInt8], userID: Int, user: User) {
        guard let login = session.login else {
            throw BoardError(.unauthorized, "log in first (REGISTER, LOGIN or AUTH)")
        }
        return login
    }

    /// The logged-in account, which must not be banned, nor a guest (``player(of:)`` lets a guest
    /// play their hunt): what every write asks for.
    func writer(of session: Session) async throws(BoardError) -> Account {
        return try await guarded {
            let account = try await account(of: session)
            try Self.refuseGuest(account.user, guestHunt: account.guestHunt)
            if let ban = account.ban {
                throw BoardError(.banned, ban.text)
            }
            return account
        }
    }

    /// The logged-in account, which must be a moderator or an admin (`forbidden` otherwise) and
    /// not banned: a banned moderator or admin has no moderator powers while banned (`banned`).
    func moderator(of session: Session) async throws(BoardError) -> Account {
        return try await guarded {
            let account = try await account(of: session)
            guard account.user.role.canModerate else {
                throw BoardError(.forbidden, "moderators only")
            }
            if let ban = account.ban {
                throw BoardError(.banned, ban.text)
            }
            return account
        }
    }

    /// The moderator or admin logged in on `session`, checked against the database now:
    /// `unauthorized`, `forbidden` (neither role) or `banned` otherwise. For front ends that act
    /// only for moderators (the console).
    public func signedInModerator(of session: Session) async throws(BoardError) -> User {
        try await moderator(of: session).user
    }
}
