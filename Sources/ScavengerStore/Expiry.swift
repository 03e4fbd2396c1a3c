import Postgres

/// What one expiry pass removed.
public struct ExpiryReport: Sendable, Equatable {
    public var pins = 0
    public var replies = 0
    public var photoBytes = 0
    public var sessions = 0
    /// Change-log entries trimmed.
    public var changes = 0
    /// `REQUEST` keys past their retention deleted.
    public var requestKeys = 0
    /// Sent or given-up mails, spent codes and FORGOT's request rows past their retention.
    public var mail = 0

    public init() {}

    public static func + (lhs: ExpiryReport, rhs: ExpiryReport) -> ExpiryReport {
        var sum = lhs
        sum.pins += rhs.pins
        sum.replies += rhs.replies
        sum.photoBytes += rhs.photoBytes
        sum.sessions += rhs.sessions
        sum.changes += rhs.changes
        sum.requestKeys += rhs.requestKeys
        sum.mail += rhs.mail
        return sum
    }
}

extension Database {
    /// Deletes up to `limit` expired pins with their replies and photos, in one short
    /// transaction. Rows another pass is deleting are skipped (`SKIP LOCKED`), so passes running
    /// at once never wait for each other nor count a row twice.
    public func expirePins(limit: Int) async throws(StoreError) -> ExpiryReport {
        // Numbered soon after the commit (or a failure that may have committed): see LogNumbering.
        defer { feedNumbering.number() }
        return try await mappingErrors {
            let rows = try await pool.transaction { connection in
                try connection.query("""
                WITH doomed AS (
                    SELECT id FROM pins WHERE expires_at <= now()
                    ORDER BY expires_at LIMIT \(limit)
                    FOR UPDATE SKIP LOCKED
                ), gone_replies AS (
                    DELETE FROM replies r USING doomed d WHERE r.pin_id = d.id RETURNING 1
                ), gone AS (
                    DELETE FROM pins p USING doomed d WHERE p.id = d.id RETURNING p.photo_bytes
                )
                SELECT (SELECT count(*) FROM gone) AS pins, (SELECT count(*) FROM gone_replies) AS replies,
                       (SELECT coalesce(sum(photo_bytes), 0) FROM gone) AS photo_bytes
                """)
            }
            var report = ExpiryReport()
            report.pins = try rows[0].int("pins")
            report.replies = try rows[0].int("replies")
            report.photoBytes = try rows[0].int("photo_bytes")
            return report
        }
    }

    /// Deletes up to `limit` expired sessions; returns how many.
    public func expireSessions(limit: Int) async throws(StoreError) -> Int {
        try await mappingErrors {
            try await pool.query("""
                DELETE FROM sessions WHERE token_hash IN (
                    SELECT token_hash FROM sessions WHERE expires_at <= now() LIMIT \(limit) FOR UPDATE SKIP LOCKED
                )
                """, idempotent: false).affectedRows
        }
    }

    /// One whole pass: batches until nothing expired is left (or only rows another pass holds).
    ///
    /// Then trims the change logs (pins' and hunts') and the wrong codes of code stops to
    /// `keepChangesSeconds` (a daemon that has been away from the database longer than that
    /// reloads its feed and its hunts' leaderboards instead of replaying), and deletes `REQUEST`
    /// keys older than `keepRequestKeysSeconds`; last, sent and given-up mails, spent codes and
    /// FORGOT's request rows older than `keepMailSeconds`, and address buckets untouched that long.
    public func expire(
        batchSize: Int = 5000, keepChangesSeconds: Int = 24 * 3600, keepRequestKeysSeconds: Int = 24 * 3600,
        keepMailSeconds: Int = 7 * 24 * 3600
    ) async throws(StoreError) -> ExpiryReport {
        var total = ExpiryReport()
        while true {
            let batch = try await expirePins(limit: batchSize)
            total = total + batch
            if batch.pins < batchSize { break }
        }
        while true {
            let sessions = try await expireSessions(limit: batchSize)
            total.sessions += sessions
            if sessions < batchSize { break }
        }
        while true {
            let changes = try await trimFeedChanges(keepSeconds: keepChangesSeconds, limit: batchSize)
            total.changes += changes
            if changes < batchSize { break }
        }
        while true {
            let changes = try await trimHuntChanges(keepSeconds: keepChangesSeconds, limit: batchSize)
            total.changes += changes
            if changes < batchSize { break }
        }
        while true {
            let keys = try await trimRequestKeys(keepSeconds: keepRequestKeysSeconds, limit: batchSize)
            total.requestKeys += keys
            if keys < batchSize { break }
        }
        total.mail = try await expireMail(keepSeconds: keepMailSeconds, limit: batchSize)
        try await sweepAddressBuckets(untouchedSeconds: keepMailSeconds)
        return total
    }
}
