import Postgres
import ScavengerCore

// The hunts' change log as the daemons read it (its writer is HuntLog).
extension Database {
    /// Changes after `seq`, in order, at most `limit`, each with its stamp; how far `expire` has
    /// trimmed the log (when `trimmedThrough` is past `seq`, changes after `seq` may be gone); and
    /// whether the row at `seq` is still the one stamped `stamp` (a reader's place): false when the
    /// log was rewritten under it (a standby promoted without the last changes, positions given
    /// out again), and the reader must load afresh. Place 0, or no stamp given, always holds.
    public func huntChanges(after seq: Int, stamp: Int64? = nil, limit: Int) async throws(StoreError) -> HuntChangePage {
        try await mappingErrors {
            // Numbers what is committed and not numbered yet, then reads: a complete prefix (see
            // `db/0037`), and one row with no change when there is none after `seq`.
            let rows = try await pool.query(
                "SELECT * FROM hunt_changes_after(\(seq)::bigint, \(limit)::integer, \(writerID))")
            var changes: [LoggedHuntChange] = []
            for row in rows {
                guard let position: Int = try row.int("seq") else { continue }
                let kind: String = try row.string("kind")
                let payload: String = try row.string("payload")
                let hunt: String = try row.string("hunt_id")
                guard let change = HuntChangeCoding.decode(kind: kind, payload: payload, hunt: hunt) else {
                    throw StoreError.unexpected("a hunt change of kind \(kind) cannot be read: \(payload)")
                }
                changes.append(LoggedHuntChange(seq: position, hunt: hunt, change: change, stamp: Int64(try row.int("stamp") as Int)))
            }
            let trimmedThrough: Int = try rows.first.map { try $0.int("trimmed_through") } ?? 0
            let placeStamp: Int? = try rows.first.flatMap { try $0.int("place_stamp") }
            let holds = LogPlace.holds(
                seq: Int64(seq), stamp: stamp, found: placeStamp.map(Int64.init), trimmedThrough: Int64(trimmedThrough))
            return HuntChangePage(changes: changes, trimmedThrough: trimmedThrough, placeHolds: holds)
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
            return try await trimChangeLog("hunt_changes", mark: "hunt_changes_trimmed", numbering: "hunt_changes_number",
                                           keepSeconds: keepSeconds, limit: limit)
        }
    }

    /// The last position of the hunts' change log and its row's stamp (0 and 0 when empty), every
    /// position below it committed.
    public func lastHuntChange() async throws(StoreError) -> LogPlace {
        try await mappingErrors {
            let rows = try await pool.query("SELECT seq, stamp FROM hunt_changes_end()")
            return LogPlace(seq: Int64(try rows[0].int("seq") as Int), stamp: Int64(try rows[0].int("stamp") as Int))
        }
    }
}
