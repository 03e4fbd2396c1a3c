import Postgres

/// A connection of its own that `LISTEN`s for the wake-ups the change log sends (see
/// ``FeedChange``): some process committed changes that affect feeds. What changed is read from
/// the log, not from the notification. Its calls block: make them on a thread of their own,
/// never on an event loop or Swift's cooperative pool. One thread at a time.
public final class ChangeListener: Sendable {
    private let connection: PostgresConnection

    /// The channel the change log's trigger notifies.
    public static let channel = "scavenger_feed"

    /// Opens a connection and starts listening (blocking).
    public init(configuration: PostgresConfiguration) throws(StoreError) {
        do {
            connection = try PostgresConnection.connect(configuration)
            try connection.query("LISTEN \(unescaped: Self.channel)")
        } catch {
            throw StoreError(error)
        }
    }

    /// What woke a listener.
    public enum WakeUp: Sendable, Equatable {
        /// Nothing, within the timeout.
        case none
        /// Only new pins written by the store whose ``Database/writerID`` was given: that
        /// daemon has put them into its feed itself, so its catch-up can wait a little.
        case ownNewPins
        /// Changes by anyone else, or of any other kind.
        case changes
    }

    /// Waits (blocking) until a wake-up arrives or the timeout passes.
    public func waitForChanges(timeoutMilliseconds: Int, ownWriter writerID: String? = nil) throws(StoreError) -> WakeUp {
        do {
            return Self.wakeUp(try connection.waitForNotifications(timeoutMilliseconds: timeoutMilliseconds), ownWriter: writerID)
        } catch {
            throw StoreError(error)
        }
    }

    /// What `notifications` call for, for the listener of the store whose writer is `writerID`.
    public static func wakeUp(_ notifications: [PostgresNotification], ownWriter writerID: String?) -> WakeUp {
        if notifications.contains(where: { $0.payload.isEmpty || $0.payload != writerID }) { return .changes }
        return notifications.isEmpty ? .none : .ownNewPins
    }
}

extension Database {
    /// Opens a ``ChangeListener`` on this store's database (blocking).
    public func listenForChanges() throws(StoreError) -> ChangeListener {
        try ChangeListener(configuration: pool.configuration)
    }
}
