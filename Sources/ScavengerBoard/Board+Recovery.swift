import ScavengerCore
import ScavengerStore
import Sodium

extension Board {
    /// `FORGOT login`: mails a reset code to the account named by `login` (name or email), if
    /// there is one, it has an email and it has had fewer than the hourly number of such mails.
    /// Answers alike in every case, after the same work: a code is made and hashed, one
    /// transaction locks, counts and writes a request row whether or not the account exists.
    /// Limited per client address: it draws from REGISTER's bucket (one per address, on every daemon).
    public func forgot(_ login: String, on session: Session) async throws(BoardError) {
        try requireMail()
        guard !login.isEmpty, login.utf8.count <= 254 else {
            throw BoardError(.badArgument, "give a username or an email of 1 to 254 bytes")
        }
        try await guarded {
            try await takeAddressToken(session.address, action: "password resets")
            try await issue(.reset, for: .login(login), template: .reset)
        }
    }

    /// `RESET username code new-password`: with the newest live reset code of the user, sets the
    /// password, ends every session of the user and logs `session` in with a new one. A wrong or
    /// expired code is `forbidden` (a wrong one is counted; the fifth voids the code), and counts
    /// as a failed login of the client's address (``LoginThrottle``).
    public func reset(username: String, code typed: String, newPassword: String, on session: Session) async throws(BoardError) -> SignIn {
        try requireMail()
        let code = try Self.recoveryCode(typed)
        try checks.newPassword(newPassword)
        return try await guarded {
            // Wrong codes count as failed logins of the address: past its free ones, RESETs from
            // it wait as LOGINs do, before any hashing (a new password costs a memory-hard hash).
            let attempt = try loginThrottle.begin(address: session.address, account: nil)
            var succeeded: Bool?
            defer { loginThrottle.finish(attempt, succeeded: succeeded) }
            let passwordHash = try await passwordQueue.run(
                first: attempt.addressWasClean, isWanted: { session.isConnected }
            ) { hasher in try await hasher.hash(newPassword) }
            let token = SecureRandom.token()
            let tokenHash = Digest.sha256(token)
            let recovery = rules.recovery
            let outcome = try await store.redeemCode(
                .reset, for: .login(username),
                effect: .resetPassword(passwordHash: passwordHash, tokenHash: tokenHash, sessionTTLSeconds: rules.sessionTTLSeconds)
            ) { facts in
                RecoveryDecisions.verdict(on: facts.code, matches: Self.matches(code, facts.code), rules: recovery)
            }
            guard case .accepted(let account) = outcome else {
                succeeded = false
                throw Self.wrongCode
            }
            succeeded = true
            signIn(session, account: account, tokenHash: tokenHash)
            // Every daemon ends the user's other sessions on its connections (see Board+Sessions).
            try? await store.announce(.user(account.id))
            let verified = try await store.emailVerified(userID: account.id)
            return SignIn(user: account.user, token: token, emailVerified: verified)
        }
    }

    /// `VERIFY`: mails a verification code to the logged-in account's email (at most the hourly
    /// number of such mails; beyond, silently none).
    public func requestVerification(on session: Session) async throws(BoardError) {
        try requireMail()
        try await guarded {
            let account = try await account(of: session)
            try Self.refuseGuest(account.user, guestHunt: account.guestHunt)
            try await issue(.verify, for: .userID(account.id), template: .verify)
        }
    }

    /// `VERIFY code`: marks the logged-in account's email verified with its newest live
    /// verification code. A wrong or expired code is `forbidden` (the fifth wrong voids it).
    public func verifyEmail(code typed: String, on session: Session) async throws(BoardError) -> User {
        try requireMail()
        let code = try Self.recoveryCode(typed)
        return try await guarded {
            let account = try await account(of: session)
            let recovery = rules.recovery
            try Self.refuseGuest(account.user, guestHunt: account.guestHunt)
            let outcome = try await store.redeemCode(.verify, for: .userID(account.id), effect: .verifyEmail) { facts in
                RecoveryDecisions.verdict(on: facts.code, matches: Self.matches(code, facts.code), rules: recovery)
            }
            guard case .accepted(let account) = outcome else { throw Self.wrongCode }
            return account.user
        }
    }

    /// Whether the email of the account logged in on `session` is verified (checked now).
    public func emailVerified(of session: Session) async throws(BoardError) -> Bool {
        try await guarded {
            let account = try await account(of: session)
            return try await store.emailVerified(userID: account.id)
        }
    }

    /// Whether each named user's email is verified, for moderators (the console).
    public func emailVerified(usernames: [String], by session: Session) async throws(BoardError) -> [String: Bool] {
        try await guarded {
            _ = try await moderator(of: session)
            return try await store.emailVerified(usernames: usernames)
        }
    }

    /// `forbidden` unless the account logged in on `session` has a verified email, when
    /// ``RecoveryRules/huntsNeedVerifiedEmail`` is on.
    func requireVerifiedEmailForHunts(_ account: Account) async throws(BoardError) {
        guard rules.recovery.huntsNeedVerifiedEmail else { return }
        let verified = try await guarded { try await store.emailVerified(userID: account.id) }
        guard verified else {
            throw BoardError(.forbidden, "creating hunts needs a verified email: send VERIFY, then VERIFY with the code mailed to you")
        }
    }

    // MARK: Helpers

    private static let wrongCode = BoardError(.forbidden, "wrong or expired code")

    private func requireMail() throws(BoardError) {
        guard rules.recovery.mailEnabled else {
            throw BoardError(.unavailable, "this server sends no mail (no --smtp-url): account recovery is unavailable")
        }
    }

    private static func recoveryCode(_ typed: String) throws(BoardError) -> RecoveryCode {
        guard let code = RecoveryCode(typed: typed) else {
            throw BoardError(.badArgument, "a code is 8 of A-Z and 2-9 without I, O, 0 and 1 (in any case)")
        }
        return code
    }

    /// Whether `code` is the stored one, by its hash (false when there is none).
    private static func matches(_ code: RecoveryCode, _ stored: CodeRedeemFacts.LiveCode?) -> Bool {
        guard let stored else { return false }
        return PasswordHasher.verifySync(code.text, against: stored.hash)
    }

    /// Makes and hashes a code, renders its mail, and issues both in one transaction when the
    /// rules say so; the same work whether or not the holder exists.
    private func issue(_ purpose: CodePurpose, for holder: CodeHolder, template: MailTemplate) async throws {
        let code = RecoveryCode.random()
        let codeHash = try await passwords.hash(code.text, parameters: .claimCodes)
        let recovery = rules.recovery
        let messageID = "\(Hex.encode(SecureRandom.bytes(16)))@\(recovery.messageIDDomain)"
        let fallbackName: String
        switch holder {
        case .login(let login): fallbackName = login
        case .userID: fallbackName = "you"
        }
        try await store.issueCode(purpose, for: holder) { facts in
            // Rendered whether or not it is sent, so both cases do the same work.
            let text = template.render(
                name: facts.account?.user.name ?? fallbackName, code: code.text, minutes: recovery.codeLifetimeSeconds / 60)
            let mail = OutgoingMail(messageID: messageID, recipient: facts.email ?? "", subject: text.subject, body: text.body)
            let issue = CodeIssue(codeHash: codeHash, lifetimeSeconds: recovery.codeLifetimeSeconds, mail: mail)
            return (issue, RecoveryDecisions.shouldMail(facts, rules: recovery))
        }
    }
}
