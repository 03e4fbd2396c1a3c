import Postgres
import ScavengerCore

/// A reader's place in a change log (`feed_changes` or `hunt_changes`): the position of the last
/// change it applied and that row's random stamp (`db/0021`), 0 and 0 before any. The stamp tells
/// the row at the position from another given the same position after a failover to a standby
/// that had not received the last changes: then the reader must load afresh.
public struct LogPlace: Sendable, Equatable {
    public var seq: Int64
    public var stamp: Int64

    public init(seq: Int64, stamp: Int64) {
        self.seq = seq
        self.stamp = stamp
    }

    /// Whether a reader at `seq` with `stamp` may go on from there: at the start, or with no stamp
    /// to check; when the row at `seq` is found with that stamp; or when it is gone because
    /// `expire` trimmed through it (the trim mark decides about what follows). A row missing but
    /// not trimmed, or stamped otherwise, was lost or rewritten.
    public static func holds(seq: Int64, stamp: Int64?, found: Int64?, trimmedThrough: Int64) -> Bool {
        guard seq > 0, let stamp else { return true }
        if let found { return found == stamp }
        return trimmedThrough >= seq
    }
}

/// One entry of the change log (`feed_changes`): a change that affects feeds, numbered after
/// its commit (see ``Database/numberFeedChanges()``), with what the feed must now hold.
public struct FeedChange: Sendable {
    /// Its place in the log.
    public var sequence: Int64
    /// The row's random stamp (see ``LogPlace``).
    public var stamp: Int64 = 0
    public var subject: Subject

    public enum Subject: Sendable {
        /// The pin as it is now; nil when it is gone (deleted, removed, expired).
        case pin(id: String, now: IndexedPin?)
        /// The named region was defined, replaced or deleted.
        case region(String)
    }
}

/// A page of the change log after a place in it.
public struct FeedChangePage: Sendable {
    public var changes: [FeedChange]
    /// False when the log no longer reaches back to the place asked for (`expire` trimmed it), or
    /// the row at the place is not the reader's (``LogPlace``): the feed must be loaded afresh.
    public var isContinuous: Bool
    /// Whether the row at the place was lost or rewritten (a failover), not trimmed.
    public var rewritten: Bool = false
}

extension Database {
    /// The last change in the log with its row's stamp (0 and 0 when there is none): a feed
    /// loaded after this call holds every change up to it.
    public func latestFeedPlace() async throws(StoreError) -> LogPlace {
        try await mappingErrors {
            let rows = try await pool.query("""
                SELECT coalesce(max(seq), 0) AS latest,
                       coalesce((SELECT l.stamp FROM feed_changes l WHERE l.seq IS NOT NULL ORDER BY l.seq DESC LIMIT 1), 0) AS stamp
                FROM feed_changes
                """)
            return LogPlace(seq: Int64(try rows[0].int("latest") as Int), stamp: Int64(try rows[0].int("stamp") as Int))
        }
    }

    /// Changes after `sequence`, oldest first, at most `limit`, each with the pin as it is now.
    /// Gap-free: a reader sees the positions of a prefix of the numberings, so no position below
    /// the last one returned can appear later (see `db/0037_logs_numbered_after_commit.sql`).
    /// Changes committed and not yet numbered are not read: number them first.
    ///
    /// Planned once per connection: the place is hidden from the planner (`(SELECT $1)`) and the
    /// limit is written into the text, so a custom plan costs what the generic one does and PostgreSQL
    /// keeps its generic one. With the place visible it planned afresh at every call, which took
    /// five times as long as running the query. Each pin is looked up alone (`LATERAL … LIMIT
    /// 1`), so no plan can scan the pins table.
    public func feedChanges(after sequence: Int64, stamp: Int64? = nil, limit: Int) async throws(StoreError) -> FeedChangePage {
        try await mappingErrors {
            let rows = try await pool.query("""
                SELECT c.seq, c.kind AS change_kind, c.subject, c.stamp AS change_stamp,
                       (SELECT through FROM feed_changes_trimmed) AS trimmed_through,
                       (SELECT l.stamp FROM feed_changes l WHERE l.seq = (SELECT \(sequence)::bigint)) AS place_stamp,
                       p.id IS NOT NULL AS pin_present, \(unescaped: Self.pinColumns)
                FROM (
                    SELECT seq, kind, subject, stamp FROM feed_changes WHERE seq > (SELECT \(sequence)::bigint)
                    ORDER BY seq LIMIT \(unescaped: String(limit))
                ) c
                LEFT JOIN LATERAL (
                    SELECT * FROM pins p WHERE c.kind = 'pin' AND p.id = c.subject AND \(unescaped: Self.livePin) LIMIT 1
                ) p ON true
                LEFT JOIN users u ON u.id = p.author_id
                ORDER BY c.seq
                """)
            var changes: [FeedChange] = []
            var trimmedThrough: Int64 = 0
            var placeStamp: Int64?
            let (seq, kind, subject, through, present) = try (
                rows.column("seq"), rows.column("change_kind"), rows.column("subject"), rows.column("trimmed_through"),
                rows.column("pin_present"))
            let (changeStamp, place) = try (rows.column("change_stamp"), rows.column("place_stamp"))
            let pin = try PinColumns(rows)
            changes.reserveCapacity(rows.count)
            for row in rows {
                trimmedThrough = Int64(try row.int(through) as Int)
                placeStamp = (try row.int(place) as Int?).map(Int64.init)
                let subjectID: String = try row.string(subject)
                let change: FeedChange.Subject
                if try row.string(kind) as String == "region" {
                    change = .region(subjectID)
                } else {
                    let now: IndexedPin? = try row.bool(present) ? pin.pin(row) : nil
                    change = .pin(id: subjectID, now: now)
                }
                changes.append(FeedChange(sequence: Int64(try row.int(seq) as Int), stamp: Int64(try row.int(changeStamp) as Int), subject: change))
            }
            if rows.isEmpty {
                let trimmed = try await pool.query("""
                    SELECT through, (SELECT l.stamp FROM feed_changes l WHERE l.seq = \(sequence)::bigint) AS place_stamp
                    FROM feed_changes_trimmed
                    """)
                trimmedThrough = Int64(try trimmed[0].int("through") as Int)
                placeStamp = (try trimmed[0].int("place_stamp") as Int?).map(Int64.init)
            }
            let holds = LogPlace.holds(seq: sequence, stamp: stamp, found: placeStamp, trimmedThrough: trimmedThrough)
            return FeedChangePage(changes: changes, isContinuous: sequence >= trimmedThrough && holds, rewritten: !holds)
        }
    }

    /// The pin changes after `sequence` whose logged place lies in a latitude band (or is not
    /// logged: entries older than `db/0016`), oldest first, with the log's trim mark and its
    /// last entry, all read at one moment: for replaying the changes inside a watch's circle
    /// (`WATCH … SINCE`). When the log no longer reaches back to `sequence` (the mark is past it),
    /// or `sequence` belongs to a history the database lost in a failover (`db/0033`), no changes
    /// are read.
    public func pinChanges(after sequence: Int64, latitudes: ClosedRange<Double>) async throws(StoreError) -> LoggedPinChanges {
        try await mappingErrors {
            let rows = try await pool.query("""
                SELECT m.through, m.latest, m.lost, c.seq, c.subject, c.lat, c.lon, c.pin_kind, c.shown_before
                FROM (
                    SELECT (SELECT through FROM feed_changes_trimmed) AS through,
                           (SELECT coalesce(max(seq), 0) FROM feed_changes) AS latest,
                           feed_position_lost(\(sequence)::bigint) AS lost
                ) m
                LEFT JOIN LATERAL (
                    SELECT seq, subject, lat, lon, pin_kind, shown_before FROM feed_changes
                    WHERE seq > \(sequence)::bigint AND kind = 'pin' AND m.through <= \(sequence)::bigint AND NOT m.lost
                      AND (lat IS NULL OR lat BETWEEN \(latitudes.lowerBound) AND \(latitudes.upperBound))
                ) c ON true
                ORDER BY c.seq
                """)
            var log = LoggedPinChanges(trimmedThrough: 0, latest: 0, changes: [])
            for row in rows {
                log.trimmedThrough = Int64(try row.int("through") as Int)
                log.latest = Int64(try row.int("latest") as Int)
                log.lost = try row.bool("lost")
                guard let seq: Int = try row.int("seq") else { continue }
                let kind: String? = try row.string("pin_kind")
                log.changes.append(LoggedPinChange(
                    sequence: Int64(seq), id: try row.string("subject"), lat: try row.double("lat"), lon: try row.double("lon"),
                    kind: kind.flatMap(PinKind.init(rawValue:)), shownBefore: (try row.bool("shown_before") as Bool?) ?? true))
            }
            return log
        }
    }

    /// Deletes log entries older than `keepSeconds`, keeping the newest entry always (a feed's
    /// place must stay findable); returns how many went.
    public func trimFeedChanges(keepSeconds: Int, limit: Int) async throws(StoreError) -> Int {
        try await trimChangeLog("feed_changes", mark: "feed_changes_trimmed", numbering: "feed_changes_number",
                                keepSeconds: keepSeconds, limit: limit)
    }

    /// Deletes up to `limit` entries older than `keepSeconds` from a change log (`feed_changes` or
    /// `hunt_changes`), never its newest, and moves its trim mark (`…_trimmed.through`) past them,
    /// so a reader whose place is before the mark knows it cannot replay; returns how many went.
    /// It numbers the log's committed rows first (`numbering`, as a reader does before reading):
    /// a row still unnumbered has no position to compare, and would otherwise outlive its age
    /// and be numbered after the mark, past where a reader was told the log reaches.
    /// The table and function names are constants of the store, never input.
    func trimChangeLog(_ log: StaticString, mark: StaticString, numbering: StaticString,
                       keepSeconds: Int, limit: Int) async throws(StoreError) -> Int {
        try await mappingErrors {
            try await pool.query("SELECT \(unescaped: "\(numbering)")(\(writerID))", idempotent: true)
            let rows = try await pool.query("""
                WITH doomed AS (
                    SELECT seq FROM \(unescaped: "\(log)")
                    WHERE at < now() - make_interval(secs => \(keepSeconds))
                      AND seq < (SELECT max(seq) FROM \(unescaped: "\(log)"))
                    ORDER BY seq LIMIT \(limit)
                ), gone AS (
                    DELETE FROM \(unescaped: "\(log)") c USING doomed d WHERE c.seq = d.seq RETURNING c.seq
                ), marked AS (
                    UPDATE \(unescaped: "\(mark)") SET through = greatest(through, (SELECT max(seq) FROM gone))
                    WHERE EXISTS (SELECT 1 FROM gone)
                )
                SELECT count(*) AS trimmed FROM gone
                """, idempotent: false)
            return try rows[0].int("trimmed")
        }
    }

    /// Numbers every committed change of the feed log not numbered yet (in a transaction of its
    /// own, which waits for a synchronous standby like any write), after the log's last
    /// position; a numbering that gave out positions wakes every daemon's listener, naming this
    /// store's ``writerID``. Writers take no lock and send no wake-up: their commits run side by
    /// side, and what they logged is readable once numbered (`db/0037`). Answers how many.
    @discardableResult
    public func numberFeedChanges() async throws(StoreError) -> Int {
        try await mappingErrors {
            try await pool.query("SELECT feed_changes_number(\(writerID)) AS numbered")[0].int("numbered")
        }
    }
}

/// One pin change as the log recorded it: where the pin was and its kind (nil for entries
/// written before the log recorded them), and whether the pin was shown before it.
public struct LoggedPinChange: Sendable, Equatable {
    public var sequence: Int64
    public var id: String
    public var lat: Double?
    public var lon: Double?
    public var kind: PinKind?
    /// Whether the pin existed and was not hidden by moderation just before this change (false
    /// for its creation; true for entries logged before `db/0039`, which did not record it).
    public var shownBefore: Bool

    public init(sequence: Int64, id: String, lat: Double?, lon: Double?, kind: PinKind?, shownBefore: Bool = true) {
        self.sequence = sequence
        self.id = id
        self.lat = lat
        self.lon = lon
        self.kind = kind
        self.shownBefore = shownBefore
    }
}

/// Pin changes read for a replay, with the log's trim mark and last entry when they were read.
public struct LoggedPinChanges: Sendable {
    /// Entries up to this one are gone: a place before it cannot be replayed.
    public var trimmedThrough: Int64
    /// The log's last entry (0 when it has none).
    public var latest: Int64
    public var changes: [LoggedPinChange]
    /// Whether the position asked for belongs to a history the database lost in a failover
    /// (`feed_position_lost`, `db/0033`): it cannot be replayed from, even when the log's
    /// positions now reach past it.
    public var lost = false
}
