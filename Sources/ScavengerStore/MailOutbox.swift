import Postgres

/// A mail claimed from the outbox for sending.
public struct OutboxMail: Sendable, Equatable {
    public var id: Int
    /// Its Message-ID (without angle brackets), the same on every try.
    public var messageID: String
    public var recipient: String
    public var subject: String
    public var body: String
    /// Tries so far, this one included.
    public var attempts: Int
    /// When it was queued, in microseconds since 1970 (for its Date header).
    public var createdMicroseconds: Int64
}

/// How many mails the outbox holds, by state.
public struct OutboxCounts: Sendable, Equatable {
    public var queued = 0
    public var sent = 0
    public var failed = 0

    public init(queued: Int = 0, sent: Int = 0, failed: Int = 0) {
        self.queued = queued
        self.sent = sent
        self.failed = failed
    }
}

extension Database {
    /// Claims the oldest mail that is due: rows another sender holds are skipped (`FOR UPDATE
    /// SKIP LOCKED`), and the claimed row is leased for `leaseSeconds` (its next try moved that
    /// far ahead, its tries counted) in the same statement, so no other daemon sends it while
    /// this one does; should this daemon die before it marks the outcome, another sends it once
    /// the lease is over. Nil when nothing is due.
    public func claimMail(leaseSeconds: Int) async throws(StoreError) -> OutboxMail? {
        try await mappingErrors {
            let rows = try await pool.query("""
                UPDATE mail_outbox SET attempts = attempts + 1, next_attempt_at = now() + make_interval(secs => \(leaseSeconds))
                WHERE id = (
                    SELECT id FROM mail_outbox WHERE sent_at IS NULL AND failed_at IS NULL AND next_attempt_at <= now() AND NOT decoy
                    ORDER BY next_attempt_at, id LIMIT 1 FOR UPDATE SKIP LOCKED
                )
                RETURNING id, message_id, recipient, subject, body, attempts,
                    (extract(epoch FROM created_at) * 1000000)::bigint AS created_us
                """, idempotent: false)
            guard let row = rows.first else { return nil }
            return OutboxMail(
                id: try row.int("id"), messageID: try row.string("message_id"), recipient: try row.string("recipient"),
                subject: try row.string("subject"), body: try row.string("body"), attempts: try row.int("attempts"),
                createdMicroseconds: Int64(try row.int("created_us") as Int))
        }
    }

    /// The SMTP server accepted the mail: it is never sent again.
    public func markMailSent(id: Int) async throws(StoreError) {
        try await mappingErrors {
            try await pool.query("UPDATE mail_outbox SET sent_at = now(), last_error = NULL WHERE id = \(id)", idempotent: true)
        }
    }

    /// A try failed and another is due in `retryAfterSeconds`; with nil, the mail is given up.
    public func markMailFailed(id: Int, error: String, retryAfterSeconds: Double?) async throws(StoreError) {
        try await mappingErrors {
            if let retryAfterSeconds {
                try await pool.query("""
                    UPDATE mail_outbox SET last_error = \(String(error.prefix(500))),
                        next_attempt_at = now() + make_interval(secs => \(retryAfterSeconds))
                    WHERE id = \(id) AND sent_at IS NULL
                    """, idempotent: true)
            } else {
                try await pool.query("""
                    UPDATE mail_outbox SET last_error = \(String(error.prefix(500))), failed_at = now()
                    WHERE id = \(id) AND sent_at IS NULL
                    """, idempotent: true)
            }
        }
    }

    /// Mails waiting to be sent, sent and given up, over the whole outbox (every daemon's).
    public func outboxCounts() async throws(StoreError) -> OutboxCounts {
        try await mappingErrors {
            let rows = try await pool.query("""
                SELECT count(*) FILTER (WHERE sent_at IS NULL AND failed_at IS NULL) AS queued,
                       count(*) FILTER (WHERE sent_at IS NOT NULL) AS sent,
                       count(*) FILTER (WHERE failed_at IS NOT NULL) AS failed
                FROM mail_outbox WHERE NOT decoy
                """)
            return OutboxCounts(queued: try rows[0].int("queued"), sent: try rows[0].int("sent"), failed: try rows[0].int("failed"))
        }
    }

    /// Deletes sent, given-up and decoy mails older than `keepSeconds`, codes past their lifetime for
    /// as long, and FORGOT's request rows; returns how many rows went.
    public func expireMail(keepSeconds: Int, limit: Int) async throws(StoreError) -> Int {
        try await mappingErrors {
            var total = 0
            while true {
                let gone = try await pool.query("""
                    WITH mails AS (
                        DELETE FROM mail_outbox WHERE id IN (
                            SELECT id FROM mail_outbox WHERE (sent_at IS NOT NULL OR failed_at IS NOT NULL OR decoy)
                              AND created_at < now() - make_interval(secs => \(keepSeconds))
                            LIMIT \(limit) FOR UPDATE SKIP LOCKED) RETURNING 1
                    ), codes AS (
                        DELETE FROM account_codes WHERE id IN (
                            SELECT id FROM account_codes WHERE expires_at < now() - make_interval(secs => \(keepSeconds))
                            LIMIT \(limit) FOR UPDATE SKIP LOCKED) RETURNING 1
                    ), requests AS (
                        DELETE FROM recovery_requests WHERE id IN (
                            SELECT id FROM recovery_requests WHERE created_at < now() - make_interval(secs => \(keepSeconds))
                            LIMIT \(limit) FOR UPDATE SKIP LOCKED) RETURNING 1
                    )
                    SELECT (SELECT count(*) FROM mails) + (SELECT count(*) FROM codes) + (SELECT count(*) FROM requests) AS gone
                    """, idempotent: false)
                let count: Int = try gone[0].int("gone")
                total += count
                if count == 0 { return total }
            }
        }
    }
}
