import Postgres
import Synchronization

/// Wakes every daemon's change listener after hunt writes commit: a `NOTIFY` on the hunts'
/// channel, sent from a transaction of its own once the writes are committed, never from the
/// writes' transactions (PostgreSQL commits notifying transactions one at a time, which made
/// every hunt write in the database wait for the flushes of those ahead of it).
///
/// One wake-up is in flight at a time; writes that commit meanwhile are covered by one more
/// sent when it returns, so a crowd of check-ins costs a few wake-ups, not one each. Its
/// transaction does not wait for its own flush (`synchronous_commit` off): it changes nothing.
/// A daemon that dies between a commit and its wake-up leaves the other daemons to find the
/// change at their next wake-up or their periodic catch-up (the listener's safety net).
final class HuntWakeUps: Sendable {
    /// Whether a wake-up is being sent, and whether writes committed since it was sent.
    private enum State {
        case idle
        case sending
        case sendingThenAgain
    }

    private let state = Mutex(State.idle)
    private let pool: PostgresPool
    /// The statement that wakes: `NOTIFY` with the store's writer id as its payload (who woke).
    private let script: String

    /// - Parameter writerID: the store's ``Database/writerID`` (letters and digits only).
    init(pool: PostgresPool, writerID: String) {
        precondition(writerID.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }, "a writer id is letters and digits")
        self.pool = pool
        script = "SET LOCAL synchronous_commit = off; NOTIFY \(ChangeListener.huntsChannel), '\(writerID)'"
    }

    /// Asks for a wake-up covering every write committed before this call.
    func wake() {
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
        pool.submit({ [script] connection in
            try connection.execute(script: script)
        }, completion: { [self] _ in
            // A failure (the database unreachable) is not retried here: the listeners catch up
            // when they reconnect, and their periodic catch-up covers the rest.
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
