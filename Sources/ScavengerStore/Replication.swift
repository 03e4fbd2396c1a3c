import Postgres

/// Where the primary stands, read for a load from a standby (`--read-database-url`): its WAL
/// position now, and the history that position belongs to.
public struct PrimaryPlace: Sendable, Equatable {
    /// `pg_current_wal_lsn()`: every transaction committed before it was read is at or before it.
    public var lsn: String
    /// `pg_control_system().system_identifier`: the same on the primary and its physical standbys,
    /// and on no other cluster (initdb draws it).
    public var systemIdentifier: Int64
    /// The timeline the primary writes WAL on (see ``Database/primaryPlace()``).
    public var timeline: Int64

    public init(lsn: String, systemIdentifier: Int64, timeline: Int64) {
        self.lsn = lsn
        self.systemIdentifier = systemIdentifier
        self.timeline = timeline
    }
}

/// Where a server offered as a standby stands against a ``PrimaryPlace``.
public struct StandbyPlace: Sendable, Equatable {
    public var systemIdentifier: Int64
    /// `pg_is_in_recovery()`: a standby (false for a primary, such as an old primary that was not
    /// fenced after a failover, or the primary itself).
    public var inRecovery: Bool
    /// The timeline of the WAL it holds: a standby's WAL receiver's `received_tli`, a primary's
    /// insertion timeline; nil when not known (no WAL receiver running, or a role without
    /// `pg_read_all_stats`, which `pg_stat_wal_receiver` shows only the pid).
    public var timeline: Int64?
    /// Whether it has replayed (a primary: written) WAL up to the primary's position.
    public var replayed: Bool

    public init(systemIdentifier: Int64, inRecovery: Bool, timeline: Int64?, replayed: Bool) {
        self.systemIdentifier = systemIdentifier
        self.inRecovery = inRecovery
        self.timeline = timeline
        self.replayed = replayed
    }
}

// Where a standby stands against its primary: for loads read from a standby (`--read-database-url`).
//
// Which timeline, exactly, on PostgreSQL 15:
// - on a primary, `pg_walfile_name(pg_current_wal_lsn())` names the WAL file by
//   GetWALInsertionTimeLine() (src/backend/access/transam/xlogfuncs.c), the timeline new WAL goes
//   to, set by a promotion before the first write is allowed; its first 8 hex digits are the
//   timeline. `pg_control_checkpoint().timeline_id` is the last checkpoint's and lags a promotion
//   (a fast promotion writes an end-of-recovery record and checkpoints later), and
//   `pg_walfile_name` refuses to run during recovery;
// - on a standby, `pg_stat_wal_receiver.received_tli` is the timeline of the last WAL received and
//   flushed. A WAL receiver streams a timeline only once the startup process has found the
//   standby's replay position on that timeline's history ("new timeline … forked off current
//   database system timeline … before current recovery point" otherwise), so a standby that
//   received the primary's timeline and replayed past the primary's position holds exactly the
//   primary's history up to there. Its `pg_control_checkpoint().timeline_id` is the last
//   restartpoint's and lags.
extension Database {
    /// The primary's WAL position now, with its system identifier and the timeline it writes on.
    public func primaryPlace() async throws(StoreError) -> PrimaryPlace {
        try await mappingErrors {
            let row = try await pool.query("""
                SELECT pg_current_wal_lsn()::text AS lsn,
                       (SELECT system_identifier FROM pg_control_system()) AS system_identifier,
                       ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::bigint AS timeline
                """)[0]
            return PrimaryPlace(
                lsn: try row.string("lsn"), systemIdentifier: Int64(try row.int("system_identifier") as Int),
                timeline: Int64(try row.int("timeline") as Int))
        }
    }

    /// Where this server stands against a primary at `lsn` (see ``StandbyPlace``), read at one moment.
    public func standbyPlace(against lsn: String) async throws(StoreError) -> StandbyPlace {
        try await mappingErrors {
            let row = try await pool.query("""
                SELECT (SELECT system_identifier FROM pg_control_system()) AS system_identifier,
                       pg_is_in_recovery() AS in_recovery,
                       CASE WHEN pg_is_in_recovery() THEN (SELECT received_tli::bigint FROM pg_stat_wal_receiver)
                            ELSE ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::bigint
                       END AS timeline,
                       CASE WHEN pg_is_in_recovery() THEN coalesce(pg_last_wal_replay_lsn() >= \(lsn)::pg_lsn, false)
                            ELSE pg_current_wal_lsn() >= \(lsn)::pg_lsn
                       END AS replayed
                """)[0]
            let timeline: Int? = try row.int("timeline")
            return StandbyPlace(
                systemIdentifier: Int64(try row.int("system_identifier") as Int), inRecovery: try row.bool("in_recovery"),
                timeline: timeline.map(Int64.init), replayed: try row.bool("replayed"))
        }
    }
}
