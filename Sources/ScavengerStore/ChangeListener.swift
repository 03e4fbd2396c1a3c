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

    /// Waits (blocking) until a wake-up arrives (true) or the timeout passes (false).
    public func waitForChanges(timeoutMilliseconds: Int) throws(StoreError) -> Bool {
        do {
            return !(try connection.waitForNotifications(timeoutMilliseconds: timeoutMilliseconds)).isEmpty
        } catch {
            throw StoreError(error)
        }
    }
}

extension Database {
    /// Opens a ``ChangeListener`` on this store's database (blocking).
    public func listenForChanges() throws(StoreError) -> ChangeListener {
        try ChangeListener(configuration: pool.configuration)
    }
}
