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

    /// Waits (blocking) until a wake-up arrives (true) or the timeout passes (false). Wake-ups
    /// from new pins written by the store whose ``Database/writerID`` is `ignoring` do not
    /// count: that daemon has put them into its feed itself.
    public func waitForChanges(timeoutMilliseconds: Int, ignoring writerID: String? = nil) throws(StoreError) -> Bool {
        do {
            return Self.wakes(try connection.waitForNotifications(timeoutMilliseconds: timeoutMilliseconds), ignoring: writerID)
        } catch {
            throw StoreError(error)
        }
    }

    /// Whether any of `notifications` calls for a catch-up: one that does not name `writerID`.
    public static func wakes(_ notifications: [PostgresNotification], ignoring writerID: String?) -> Bool {
        notifications.contains { $0.payload.isEmpty || $0.payload != writerID }
    }
}

extension Database {
    /// Opens a ``ChangeListener`` on this store's database (blocking).
    public func listenForChanges() throws(StoreError) -> ChangeListener {
        try ChangeListener(configuration: pool.configuration)
    }
}
