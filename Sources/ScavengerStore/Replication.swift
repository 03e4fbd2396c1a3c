import Postgres

// Where a standby stands against its primary: for loads read from a standby (`--read-database-url`).
extension Database {
    /// The primary's WAL position now (`pg_current_wal_lsn`), as PostgreSQL writes it: every
    /// transaction committed before this call is at or before it.
    public func walPosition() async throws(StoreError) -> String {
        try await mappingErrors {
            try await pool.query("SELECT pg_current_wal_lsn()::text AS lsn")[0].string("lsn")
        }
    }

    /// Whether this database shows everything committed at or before `lsn` on its primary: a
    /// standby that has replayed that far, or a server that is not a standby (a primary shows its
    /// own commits).
    public func hasReplayed(_ lsn: String) async throws(StoreError) -> Bool {
        try await mappingErrors {
            let row = try await pool.query("""
                SELECT NOT pg_is_in_recovery() OR coalesce(pg_last_wal_replay_lsn() >= \(lsn)::pg_lsn, false) AS replayed
                """)[0]
            return try row.bool("replayed")
        }
    }
}
