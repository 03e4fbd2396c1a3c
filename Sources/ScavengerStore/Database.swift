import CoreMetrics
import Postgres
import Synchronization

/// The PostgreSQL store: every read and write of the daemon goes through it.
public final class Database: Sendable {
    public let pool: PostgresPool

    /// Text pins are written in groups (see ``GroupCommit``).
    private let groupCommit = Mutex<GroupCommit?>(nil)

    /// Groups of text pins being written at once; see ``GroupCommit``.
    public let pinWriters: Int

    /// Check-ins without a photo or a key are written in groups (see ``CheckInGroups``).
    private let checkInGroupsMade = Mutex<CheckInGroups?>(nil)

    /// Groups of check-ins written at once; 0 writes every check-in alone.
    public let checkInWriters: Int

    /// Records the check-ins in each group written (`scavenger_group_commit_checkins`).
    let checkInGroupSizes: Recorder?

    /// Numbers the hunts' log after hunt writes commit (see ``LogNumbering``).
    let huntNumbering: LogNumbering
    /// Numbers the feed log after this daemon's new pins commit (see ``LogNumbering``).
    let feedNumbering: LogNumbering

    /// Records the pins in each committed group (`scavenger_group_commit_pins`), when metrics are on.
    let groupSizes: Recorder?

    /// Names this store's numberings of the change logs in their wake-up (the `NOTIFY`
    /// payload), so that its own ``ChangeListener`` can sleep through them: the daemon puts its
    /// own new pins into its feed itself, and reads what it numbered. Random per instance, not a
    /// secret.
    public let writerID = "w" + String(UInt64.random(in: 1 ... .max), radix: 36)

    /// - Parameters:
    ///   - pinWriters: groups of text pins written at once. One makes the largest groups, which
    ///     PostgreSQL writes most cheaply per pin; each writer holds a connection.
    ///   - checkInWriters: groups of check-ins written at once (``CheckInGroups``); 0 writes each
    ///     check-in in a transaction of its own.
    ///   - metrics: where the store's own metrics go (group sizes); nil records none.
    public init(pool: PostgresPool, pinWriters: Int = 1, checkInWriters: Int = 2, metrics: (any MetricsFactory)? = nil) {
        precondition(pinWriters >= 1, "at least one pin writer")
        precondition(checkInWriters >= 0, "no negative number of check-in writers")
        self.checkInWriters = checkInWriters
        self.pool = pool
        huntNumbering = LogNumbering.hunts(pool: pool, writerID: writerID)
        feedNumbering = LogNumbering.feed(pool: pool, writerID: writerID)
        self.pinWriters = pinWriters
        groupSizes = metrics.map { Recorder(label: Self.groupSizeLabel, aggregate: true, factory: $0) }
        checkInGroupSizes = metrics.map { Recorder(label: Self.checkInGroupSizeLabel, aggregate: true, factory: $0) }
    }

    /// The histogram of check-in group sizes.
    public static let checkInGroupSizeLabel = "scavenger_group_commit_checkins"

    /// The check-in group committer, made on first use; nil when check-ins are written alone.
    var checkInGroups: CheckInGroups? {
        guard checkInWriters > 0 else { return nil }
        return checkInGroupsMade.withLock { groups in
            if let groups { return groups }
            let made = CheckInGroups(database: self, maximumWriters: checkInWriters)
            groups = made
            return made
        }
    }

    /// The histogram of group-commit sizes, in pins.
    public static let groupSizeLabel = "scavenger_group_commit_pins"

    /// The group committer, made on first use (it refers back to this database).
    var textPinWriter: GroupCommit {
        groupCommit.withLock { writer in
            if let writer { return writer }
            let made = GroupCommit(database: self, maximumWriters: pinWriters)
            writer = made
            return made
        }
    }

    /// Where this daemon's listener hands the sessions it hears were ended (``EndedSessions``).
    public let sessionEndings = SessionEndings()

    /// Whether the database answers.
    public func ping() async throws(StoreError) {
        try await mappingErrors {
            try await pool.query("SELECT 1")
        }
    }
}
