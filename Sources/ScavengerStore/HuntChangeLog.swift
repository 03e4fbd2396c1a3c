import Postgres
import ScavengerCore

// The hunts' change log as the daemons read it (its writer is HuntLog).
extension Database {
    /// Changes after `seq`, in order, at most `limit`, and how far `expire` has trimmed the log:
    /// when `trimmedThrough` is past `seq`, changes after `seq` may be gone.
    public func huntChanges(after seq: Int, limit: Int) async throws(StoreError) -> (changes: [LoggedHuntChange], trimmedThrough: Int) {
        try await mappingErrors {
            // The trim mark rides on the rows: with none after `seq` the log is continuous (trimming
            // always keeps the newest entry, so a trim past `seq` leaves rows after it).
            // A complete prefix (`hunt_changes_after` reads under the log's lock, exclusively).
            let rows = try await pool.query("SELECT * FROM hunt_changes_after(\(seq)::bigint, \(limit)::integer)")
            let changes = try rows.map { row in
                let kind: String = try row.string("kind")
                let payload: String = try row.string("payload")
                let hunt: String = try row.string("hunt_id")
                guard let change = HuntChangeCoding.decode(kind: kind, payload: payload, hunt: hunt) else {
                    throw StoreError.unexpected("a hunt change of kind \(kind) cannot be read: \(payload)")
                }
                return LoggedHuntChange(seq: try row.int("seq"), hunt: hunt, change: change)
            }
            return (changes, try rows.first.map { try $0.int("trimmed_through") } ?? 0)
        }
    }

    /// Deletes hunt change-log entries and wrong codes older than `keepSeconds` (keeping the
    /// newest entry, so a daemon's place stays findable); returns how many log entries went.
    public func trimHuntChanges(keepSeconds: Int, limit: Int) async throws(StoreError) -> Int {
        try await mappingErrors {
            try await pool.query("""
                DELETE FROM code_guesses WHERE ctid IN (
                    SELECT ctid FROM code_guesses WHERE at < now() - make_interval(secs => \(keepSeconds)) LIMIT \(limit))
                """, idempotent: false)
            try await pool.query("""
                DELETE FROM checkin_tries WHERE ctid IN (
                    SELECT ctid FROM checkin_tries WHERE at < now() - make_interval(secs => \(keepSeconds)) LIMIT \(limit))
                """, idempotent: false)
            return try await trimChangeLog("hunt_changes", mark: "hunt_changes_trimmed", keepSeconds: keepSeconds, limit: limit)
        }
    }

    /// The last position of the hunts' change log (0 when empty).
    public func lastHuntChange() async throws(StoreError) -> Int {
        try await mappingErrors {
            let rows = try await pool.query("SELECT hunt_changes_through() AS seq")
            return try rows[0].int("seq")
        }
    }
}
