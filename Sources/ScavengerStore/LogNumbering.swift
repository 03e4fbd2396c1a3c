import Postgres
import Synchronization

/// Numbers a change log's committed rows soon after this daemon's writes commit, in the
/// background: `SELECT feed_changes_number(writer)` or `hunt_changes_number(writer)`, a short
/// transaction of its own under the log's lock (`db/0037_logs_numbered_after_commit.sql`). A
/// numbering that gave out positions wakes every daemon's listener (its `NOTIFY`, sent from the
/// numbering's transaction, never from a write's: PostgreSQL commits notifying transactions one
/// at a time). Writers take no lock of the log, so their commits run side by side.
///
/// One numbering is in flight at a time; writes that commit meanwhile are covered by one more
/// sent when it returns, so a crowd of writes costs a few numberings, not one each. A daemon
/// that dies between a commit and its numbering leaves the other daemons to number the rows at
/// their next catch-up (each numbers before it reads, and the listener catches up every second
/// while idle): nothing committed stays unread.
final class LogNumbering: Sendable {
    /// Whether a numbering is running, and whether writes committed since it was sent.
    private enum State {
        case idle
        case sending
        case sendingThenAgain
    }

    private let state = Mutex(State.idle)
    private let pool: PostgresPool
    private let statement: SQL

    /// The feed log's numbering for the store whose ``Database/writerID`` is `writerID`.
    static func feed(pool: PostgresPool, writerID: String) -> LogNumbering {
        LogNumbering(pool: pool, statement: "SELECT feed_changes_number(\(writerID))")
    }

    /// The hunts' log's numbering for the store whose ``Database/writerID`` is `writerID`.
    static func hunts(pool: PostgresPool, writerID: String) -> LogNumbering {
        LogNumbering(pool: pool, statement: "SELECT hunt_changes_number(\(writerID))")
    }

    private init(pool: PostgresPool, statement: SQL) {
        self.pool = pool
        self.statement = statement
    }

    /// Asks for a numbering covering every write committed before this call.
    func number() {
        let sendNow = state.withLock { state -> Bool in
            switch state {
            case .idle:
                state = .sending
                return true
            case .sending, .sendingThenAgain:
                state = .sendingThenAgain
                return false
            }
        }
        if sendNow { send() }
    }

    private func send() {
        pool.submit({ [statement] connection in
            try connection.query(statement)
        }, completion: { [self] _ in
            // A failure (the database unreachable) is not retried here: the listeners number
            // and catch up when they reconnect, and every second while idle.
            let again = state.withLock { state -> Bool in
                if case .sendingThenAgain = state {
                    state = .sending
                    return true
                }
                state = .idle
                return false
            }
            if again { send() }
        })
    }
}
