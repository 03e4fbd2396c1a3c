import Postgres

/// What a reset or verification code is for.
public enum CodePurpose: String, Sendable, Equatable {
    /// `FORGOT` issues it, `RESET` redeems it.
    case reset
    /// `VERIFY` issues it, `VERIFY code` redeems it.
    case verify
}

/// A mail to write to the outbox.
public struct OutgoingMail: Sendable, Equatable {
    /// The mail's Message-ID (without angle brackets), the same on every try to send it.
    public var messageID: String
    public var recipient: String
    public var subject: String
    public var body: String

    public init(messageID: String, recipient: String, subject: String, body: String) {
        self.messageID = messageID
        self.recipient = recipient
        self.subject = subject
        self.body = body
    }
}

/// What ``Database/issueCode(_:for:decide:)`` read under the user's lock, for the caller to decide on.
public struct CodeIssueFacts: Sendable, Equatable {
    /// The account, or nil when none answers to the name or email.
    public var account: Account?
    /// The account's email.
    public var email: String?
    /// Mails of this purpose queued for the account in the last hour.
    public var mailsInLastHour: Int

    public init(account: Account?, email: String?, mailsInLastHour: Int) {
        self.account = account
        self.email = email
        self.mailsInLastHour = mailsInLastHour
    }
}

/// A code to store (hashed) with the mail that carries it.
public struct CodeIssue: Sendable, Equatable {
    public var codeHash: String
    public var lifetimeSeconds: Int
    public var mail: OutgoingMail

    public init(codeHash: String, lifetimeSeconds: Int, mail: OutgoingMail) {
        self.codeHash = codeHash
        self.lifetimeSeconds = lifetimeSeconds
        self.mail = mail
    }
}

/// Who a code is issued to: an account named by name or email (`FORGOT`), or by id (`VERIFY`).
public enum CodeHolder: Sendable, Equatable {
    case login(String)
    case userID(Int)
}

/// What ``Database/redeemCode(_:for:decide:apply:)`` read under locks: the account and its newest live code.
public struct CodeRedeemFacts: Sendable {
    public var account: Account?
    /// The account's email now.
    public var email: String?
    /// The newest code of the purpose that is neither used nor voided.
    public var code: LiveCode?

    /// A stored code as the caller judges it.
    public struct LiveCode: Sendable {
        public var hash: String
        public var wrongCodes: Int
        /// Whether its lifetime is over, by the database's clock.
        public var expired: Bool
        /// The address it was mailed to.
        public var email: String

        public init(hash: String, wrongCodes: Int, expired: Bool, email: String) {
            self.hash = hash
            self.wrongCodes = wrongCodes
            self.expired = expired
            self.email = email
        }
    }
}

/// The caller's verdict on a code.
public enum CodeVerdict: Sendable, Equatable {
    /// The code is right: spend it and apply the change.
    case accept
    /// A wrong code: count it; `void` when that makes the code void.
    case wrong(void: Bool)
    /// No live code to try (none, expired, void): change nothing.
    case refuse
}

/// What redeeming a code did.
public enum CodeRedemption: Sendable, Equatable {
    /// Spent; the account as it is now.
    case accepted(Account)
    /// Refused (the wrong code was counted if there was a live one).
    case refused
}

/// What a redeemed code changes besides being spent.
public enum CodeEffect: Sendable {
    /// `RESET`: the new password hash; every session of the user ends and this one starts.
    case resetPassword(passwordHash: String, tokenHash: [UInt8], sessionTTLSeconds: Int)
    /// `VERIFY code`: the email the code was sent to is verified (if it is still the account's).
    case verifyEmail
}

extension Database {
    /// Issues a code: in one transaction, finds the holder, takes an advisory lock on them (on
    /// the name asked for when there is no such account), counts the mails of this purpose
    /// queued for them in the last hour, and asks `decide` for the code and its mail and whether
    /// to send them. When so, voids the older live codes of the purpose and writes the code
    /// (hashed) and its mail to the outbox; when not, writes both as decoys (a code of no user,
    /// a mail never sent), so that every call does the same statements and writes alike. Every
    /// call also writes one `recovery_requests` row. Returns whether a mail was queued.
    @discardableResult
    public func issueCode(
        _ purpose: CodePurpose, for holder: CodeHolder,
        decide: @escaping @Sendable (CodeIssueFacts) -> (issue: CodeIssue, send: Bool)
    ) async throws(StoreError) -> Bool {
        try await mappingErrors {
            try await pool.transaction { connection in
                let rows: PostgresRows
                switch holder {
                case .login(let login):
                    rows = try connection.query("""
                        SELECT \(unescaped: Self.accountColumns("users")), email FROM users
                        WHERE (role <> 'guest' AND lower(name) = lower(\(login))) OR lower(email) = lower(\(login))
                        ORDER BY lower(name) = lower(\(login)) DESC LIMIT 1
                        """)
                case .userID(let id):
                    rows = try connection.query("""
                        SELECT \(unescaped: Self.accountColumns("users")), email FROM users WHERE id = \(id)
                        """)
                }
                let account = try rows.first.map(AccountColumns(rows).account)
                let email: String? = try rows.first.map { (row) throws -> String in try row.string("email") }
                // Codes of one account are issued one at a time (the count below and the insert
                // after it as one step): an advisory lock on the account, or on the name asked
                // for when there is none, so that both cases take one lock alike.
                let key: String
                switch (account, holder) {
                case (let account?, _): key = "user:\(account.id)"
                case (nil, .login(let login)): key = "login:\(login.lowercased())"
                case (nil, .userID(let id)): key = "user:\(id)"
                }
                try connection.query("SELECT pg_advisory_xact_lock(7470, hashtext(\(key)))")
                // The same count whether or not there is an account (id -1 matches nothing).
                let counted = try connection.query("""
                    SELECT count(*) AS mails FROM mail_outbox
                    WHERE user_id = \(account?.id ?? -1) AND purpose = \(purpose.rawValue)
                      AND created_at > now() - interval '1 hour'
                    """)
                let facts = CodeIssueFacts(account: account, email: email, mailsInLastHour: try counted[0].int("mails"))
                let decision = decide(facts)
                let issue = decision.issue
                let send = decision.send && account != nil && email != nil
                let userID: Int? = send ? account?.id : nil
                // One statement whether or not a mail goes out, writing a code and a mail either
                // way (decoys when not), so that a call for no account does the same work.
                try connection.query("""
                    WITH voided AS (
                        UPDATE account_codes SET used_at = now()
                        WHERE user_id = \(userID ?? -1) AND purpose = \(purpose.rawValue) AND used_at IS NULL
                    ), code AS (
                        INSERT INTO account_codes (user_id, purpose, code_hash, email, expires_at)
                        VALUES (\(userID), \(purpose.rawValue), \(issue.codeHash), \(email ?? ""),
                                now() + make_interval(secs => \(issue.lifetimeSeconds)))
                    ), mail AS (
                        INSERT INTO mail_outbox (message_id, user_id, purpose, recipient, subject, body, next_attempt_at, decoy)
                        VALUES (\(issue.mail.messageID), \(userID), \(purpose.rawValue), \(issue.mail.recipient),
                                \(issue.mail.subject), \(issue.mail.body),
                                CASE WHEN \(send)::boolean THEN now() ELSE 'infinity' END, NOT \(send)::boolean)
                    )
                    INSERT INTO recovery_requests DEFAULT VALUES
                    """)
                return send
            }
        }
    }

    /// Redeems a code: in one transaction, locks the user row and their newest live code of the
    /// purpose, asks `decide`, and applies its verdict: a right code is spent and `effect`
    /// applied; a wrong one counted (and the code voided when the verdict says so).
    public func redeemCode(
        _ purpose: CodePurpose, for holder: CodeHolder, effect: CodeEffect,
        decide: @escaping @Sendable (CodeRedeemFacts) -> CodeVerdict
    ) async throws(StoreError) -> CodeRedemption {
        try await mappingErrors {
            try await pool.transaction { connection in
                let rows: PostgresRows
                switch holder {
                case .login(let name):
                    rows = try connection.query("""
                        SELECT \(unescaped: Self.accountColumns("users")), email FROM users
                        WHERE role <> 'guest' AND lower(name) = lower(\(name)) FOR NO KEY UPDATE
                        """)
                case .userID(let id):
                    rows = try connection.query("""
                        SELECT \(unescaped: Self.accountColumns("users")), email FROM users WHERE id = \(id) FOR NO KEY UPDATE
                        """)
                }
                guard let row = rows.first else {
                    _ = decide(CodeRedeemFacts(account: nil, email: nil, code: nil))
                    return .refused
                }
                let account = try AccountColumns(rows).account(row)
                let email: String = try row.string("email")
                let codes = try connection.query("""
                    SELECT id, code_hash, wrong_codes, expires_at <= now() AS expired, email FROM account_codes
                    WHERE user_id = \(account.id) AND purpose = \(purpose.rawValue) AND used_at IS NULL
                    ORDER BY id DESC LIMIT 1 FOR UPDATE
                    """)
                let codeID: Int? = try codes.first.map { (row) throws -> Int in try row.int("id") }
                let code = try codes.first.map { (row) throws -> CodeRedeemFacts.LiveCode in
                    CodeRedeemFacts.LiveCode(
                        hash: try row.string("code_hash"), wrongCodes: try row.int("wrong_codes"),
                        expired: try row.bool("expired"), email: try row.string("email"))
                }
                let verdict = decide(CodeRedeemFacts(account: account, email: email, code: code))
                guard let codeID, let code else { return .refused }
                switch verdict {
                case .refuse:
                    return .refused
                case .wrong(let void):
                    try connection.query("""
                        UPDATE account_codes SET wrong_codes = wrong_codes + 1,
                            used_at = CASE WHEN \(void)::boolean THEN now() ELSE NULL END
                        WHERE id = \(codeID)
                        """)
                    return .refused
                case .accept:
                    try connection.query("UPDATE account_codes SET used_at = now() WHERE id = \(codeID)")
                    switch effect {
                    case .resetPassword(let passwordHash, let tokenHash, let ttl):
                        // The code came to the account's address: it proves that address too.
                        try connection.query("""
                            UPDATE users SET password_hash = \(passwordHash),
                                email_verified = email_verified OR lower(email) = lower(\(code.email))
                            WHERE id = \(account.id)
                            """)
                        try connection.query("DELETE FROM sessions WHERE user_id = \(account.id)")
                        try Self.insertSession(connection, userID: account.id, tokenHash: tokenHash, ttlSeconds: ttl)
                    case .verifyEmail:
                        try connection.query("""
                            UPDATE users SET email_verified = true WHERE id = \(account.id) AND lower(email) = lower(\(code.email))
                            """)
                    }
                    return .accepted(account)
                }
            }
        }
    }

    /// Whether the user's email is verified (false for no such user).
    public func emailVerified(userID: Int) async throws(StoreError) -> Bool {
        try await mappingErrors {
            let rows = try await pool.query("SELECT email_verified FROM users WHERE id = \(userID)")
            return try rows.first.map { try $0.bool("email_verified") } ?? false
        }
    }

    /// Whether each named user's email is verified, for moderators' views; names not found are left out.
    public func emailVerified(usernames: [String]) async throws(StoreError) -> [String: Bool] {
        try await mappingErrors {
            var result: [String: Bool] = [:]
            for name in Set(usernames) {
                let rows = try await pool.query("SELECT name, email_verified FROM users WHERE role <> 'guest' AND lower(name) = lower(\(name))")
                if let row = rows.first {
                    let found: String = try row.string("name")
                    result[found] = try row.bool("email_verified") as Bool
                }
            }
            return result
        }
    }
}
