import Postgres
import Synchronization

/// A connection of its own that `LISTEN`s for the wake-ups the change log sends (see
/// ``FeedChange``): some process committed changes that affect feeds. What changed is read from
/// the log, not from the notification. Its calls block: make them on a thread of their own,
/// never on an event loop or Swift's cooperative pool. One thread at a time.
public final class ChangeListener: Sendable {
    private let connection: PostgresConnection
    /// Ended sessions heard and not yet taken (``takeEndedSessions()``).
    private let endedSessions = Mutex<[EndedSessions]>([])

    /// The channel the change log's trigger notifies.
    public static let channel = "scavenger_feed"
    /// The channel the hunts' change log notifies (`log_hunt_change`); heard on the same
    /// connection, so one wait covers both logs.
    public static let huntsChannel = "scavenger_hunts"
    /// The channel `LOGOUT` and `RESET` notify after their commit (``EndedSessions``); heard on
    /// the same connection too.
    public static let sessionsChannel = "scavenger_sessions"

    /// Opens a connection and starts listening (blocking).
    public init(configuration: PostgresConfiguration) throws(StoreError) {
        do {
            connection = try PostgresConnection.connect(configuration)
            try connection.query("LISTEN \(unescaped: Self.channel)")
            try connection.query("LISTEN \(unescaped: Self.huntsChannel)")
            try connection.query("LISTEN \(unescaped: Self.sessionsChannel)")
        } catch {
            throw StoreError(error)
        }
    }

    /// What woke a listener.
    public enum WakeUp: Sendable, Equatable {
        /// Nothing, within the timeout.
        case none
        /// Only numberings of the store whose ``Database/writerID`` was given (`db/0037`): they
        /// numbered that daemon's own writes, which it put into its feed itself (new pins) or
        /// reads as it numbers them (its catch-ups), so its catch-up can wait a little.
        case ownNewPins
        /// Only the hunts' change log changed: the pins' feed need not catch up.
        case hunts
        /// Changes by anyone else, or of any other kind (the hunts' log may have changed too).
        case changes
    }

    /// Waits (blocking) until a wake-up arrives or the timeout passes.
    ///
    /// Wake-ups for `writerID`'s own new pins alone end the wait only `ownPinsWaitMilliseconds`
    /// after the first of them (or at the timeout, if sooner); any other change ends it at once.
    /// So a daemon writing many groups returns here a few times a second, not once per group
    /// (each return is a trip between threads).
    public func waitForChanges(
        timeoutMilliseconds: Int, ownWriter writerID: String? = nil, ownPinsWaitMilliseconds: Int = 0
    ) throws(StoreError) -> WakeUp {
        var wait = Wait(
            until: .now + .milliseconds(timeoutMilliseconds), ownPinsWait: .milliseconds(ownPinsWaitMilliseconds))
        do {
            while true {
                let notifications = try connection.waitForNotifications(timeoutMilliseconds: Self.milliseconds(wait.end - .now))
                // Ended sessions are kept (whatever else ends the wait) and end the wait at once,
                // for the listener to take them.
                let sessions = notifications.filter { $0.channel == Self.sessionsChannel }
                if !sessions.isEmpty { endedSessions.withLock { $0 += sessions.map { EndedSessions(payload: $0.payload) } } }
                let heard = Self.wakeUp(notifications.filter { $0.channel != Self.sessionsChannel }, ownWriter: writerID)
                if let outcome = wait.heard(heard, at: .now) { return outcome }
                if !sessions.isEmpty { return wait.outcomeSoFar }
            }
        } catch {
            throw StoreError(error)
        }
    }

    /// When a wait for changes ends, and with what, as wake-ups come in.
    struct Wait: Sendable {
        /// When the wait ends at the latest.
        private(set) var end: ContinuousClock.Instant
        private let ownPinsWait: Duration
        private var heardOwnPins = false

        init(until end: ContinuousClock.Instant, ownPinsWait: Duration) {
            self.end = end
            self.ownPinsWait = ownPinsWait
        }

        /// Takes what one look at the connection heard at `now`; the wait's outcome if it ends.
        mutating func heard(_ wakeUp: WakeUp, at now: ContinuousClock.Instant) -> WakeUp? {
            switch wakeUp {
            case .changes:
                return .changes
            case .hunts:
                return heardOwnPins ? .changes : .hunts
            case .ownNewPins where !heardOwnPins:
                heardOwnPins = true
                end = min(end, now + ownPinsWait)
            case .ownNewPins, .none:
                break
            }
            return now >= end ? outcomeSoFar : nil
        }

        /// The outcome if the wait ended now, with nothing but the own pins heard (if any).
        var outcomeSoFar: WakeUp { heardOwnPins ? .ownNewPins : .none }
    }

    /// The ended sessions heard since the last call (``EndedSessions``), taken out.
    public func takeEndedSessions() -> [EndedSessions] {
        endedSessions.withLock { ended in
            defer { ended = [] }
            return ended
        }
    }

    /// A duration in whole milliseconds, rounded up, at least 0.
    private static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0, attoseconds >= 0 else { return 0 }
        return Int(seconds) * 1000 + Int((attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
    }

    /// What `notifications` call for, for the listener of the store whose writer is `writerID`.
    public static func wakeUp(_ notifications: [PostgresNotification], ownWriter writerID: String?) -> WakeUp {
        let hunts = notifications.contains { $0.channel == huntsChannel }
        let feed = notifications.filter { $0.channel != huntsChannel }
        if feed.contains(where: { $0.payload.isEmpty || $0.payload != writerID }) { return .changes }
        if hunts { return feed.isEmpty ? .hunts : .changes }
        return feed.isEmpty ? .none : .ownNewPins
    }
}

extension Database {
    /// Opens a ``ChangeListener`` on this store's database (blocking).
    public func listenForChanges() throws(StoreError) -> ChangeListener {
        try ChangeListener(configuration: pool.configuration)
    }
}
