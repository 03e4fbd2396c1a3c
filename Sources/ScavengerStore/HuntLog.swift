import Postgres
import ScavengerCore

/// The change-log entries of one hunt write, kept until its last statement.
///
/// **The lock order of every hunt write.** A write to hunts, their players, stops, check-ins or
/// scores takes its locks in this order and never another, so no two writes wait on each other
/// in a cycle (a crowd arriving at once queues; it does not deadlock):
/// 1. the player, as a transaction-level advisory lock on the user (`CHECKIN` and the count of
///    wrong codes): a player's check-ins, in one hunt or two, are judged one after the other;
/// 2. the hunt's row: `FOR NO KEY UPDATE` when the write changes the row (its schedule, its
///    counts of stops and players: `JOIN`, `LEAVE`, `ADDSTOP`, `REMOVESTOP`, `STARTHUNT`, …),
///    `FOR SHARE` otherwise (a check-in, a review, a hint, a chat message): taken first and at its
///    full strength, never upgraded later;
/// 3. the check-in's row (a review);
/// 4. the teams' rows (`hunt_teams`, team hunts), in id order: a check-in locks its player's team
///    so that one team's check-ins are judged one after the other (`FOR NO KEY UPDATE`), a review
///    its check-in's team; `JOIN` and `LEAVE` hold the hunt's row for update, so no check-in or
///    review of the hunt runs beside them and a player's team is fixed under any of these;
/// 5. the players' rows (`hunt_players`);
/// 6. the stops' rows (`found_by`), in id order when there are several;
/// 7. the user's own rows, which no other user's write takes: score rows (`user_scores`, weekly
///    scores), rate buckets (taken right after the hunt's row by `JOIN`, `LEAVE` and `HINT`),
///    and the request key; the moderation log (inserts only). Two writes take other users'
///    score rows, last and in user id order: a moderator's removal of a hunt (its players'), and
///    a team's completion of its hunt or a rejection undoing it (its members'); such a write and
///    another user's own may meet in a deadlock, which the pool runs again (below);
/// The change-log rows this type writes come last, after every row lock, and take no lock of
/// their own: hunt writes commit side by side. The rows are numbered after the commit by a
/// numbering under the log's lock (advisory 7468, which no write takes), so a second write of
/// the same rows logs after the first committed and is numbered after it (see
/// `db/0037_logs_numbered_after_commit.sql`).
///
/// A group of check-ins (``CheckInGroups``) takes each step's locks for all its check-ins at
/// once, in key order within the step (`checkin_lock_all`: the players by user id, the hunts by
/// id, the players' teams by id, the players' rows, the stops' rows by id), before reading any fact.
///
/// A lock taken out of this order (a cascade of a deleted account, say) can still meet a
/// deadlock; the pool runs such a transaction again (``PostgresPool/transaction(_:)``), so a
/// client never sees it.
final class HuntLog {
    private var entries: [(hunt: String, change: HuntChange)] = []

    init() {}

    /// Appends `change` of `hunt` ("" for a user's totals), to be written at the end.
    func append(hunt: String, _ change: HuntChange) {
        entries.append((hunt, change))
    }

    /// Appends `other`'s entries, in their order.
    func append(contentsOf other: HuntLog) {
        entries += other.entries
    }

    /// Writes the entries, in the order they were appended, in one statement (see
    /// `log_hunt_changes`): the caller's last before `COMMIT`. Answers whether there were any.
    ///
    /// The log does not wake the daemons' listeners itself (a `NOTIFY` in the transaction would
    /// make every hunt write in the database commit one after the other): a write sent through
    /// `Database.huntTransaction` is numbered once it commits (``LogNumbering``), which wakes
    /// them, and a rare write elsewhere passes `wakeListeners` to notify in its own transaction
    /// (the listeners then number it as they catch up).
    @discardableResult
    func write(on connection: PostgresConnection, wakeListeners: Bool = false) throws -> Bool {
        guard !entries.isEmpty else { return false }
        var batch = "["
        for (index, entry) in entries.enumerated() {
            let (kind, payload) = HuntChangeCoding.encode(entry.change)
            if index > 0 { batch += "," }
            batch += "{\"hunt\":\(JSONObjectWriter.quoted(entry.hunt)),\"kind\":\(JSONObjectWriter.quoted(kind)),\"payload\":\(payload)}"
        }
        batch += "]"
        if wakeListeners {
            try connection.query("SELECT log_hunt_changes(\(batch)::jsonb), pg_notify(\(ChangeListener.huntsChannel), '')")
        } else {
            try connection.query("SELECT log_hunt_changes(\(batch)::jsonb)")
        }
        entries.removeAll()
        return true
    }
}
