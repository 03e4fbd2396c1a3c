import Postgres

/// A change another process announced, as the live feed must apply it.
public enum AnnouncedChange: Sendable, Equatable {
    /// Pins written, changed or deleted.
    case pins([PinChange])
    /// The region of this name was defined, replaced or deleted.
    case region(String)
}

/// A connection of its own that `LISTEN`s for the changes other processes announce (other
/// daemons, the command line). Its calls block: make them on a thread of their own, never on an
/// event loop or Swift's cooperative pool. One thread at a time.
public final class ChangeListener: Sendable {
    private let connection: PostgresConnection
    /// This process's name in announcements: its own are dropped.
    public let origin: String

    /// Opens a connection and starts listening (blocking).
    public init(configuration: PostgresConfiguration, origin: String) throws(StoreError) {
        do {
            connection = try PostgresConnection.connect(configuration)
            try connection.query("LISTEN \(unescaped: PinChange.channel)")
            try connection.query("LISTEN \(unescaped: PinChange.regionsChannel)")
        } catch {
            throw StoreError(error)
        }
        self.origin = origin
    }

    /// Waits (blocking) until a change this process did not make arrives, or the timeout
    /// passes (then the result is empty). This process's own pin announcements are dropped here,
    /// on the listener's thread: its feed already holds those pins, and every group commit
    /// sends one. Malformed payloads are skipped.
    public func waitForChanges(timeoutMilliseconds: Int) throws(StoreError) -> [AnnouncedChange] {
        let deadline = ContinuousClock.now + .milliseconds(timeoutMilliseconds)
        while true {
            let left = deadline - .now
            guard left > .zero else { return [] }
            let received: [PostgresNotification]
            do {
                received = try connection.waitForNotifications(timeoutMilliseconds: Int((left / .milliseconds(1)).rounded(.up)))
            } catch {
                throw StoreError(error)
            }
            let foreign = received.compactMap { Self.change(in: $0, notMadeBy: origin) }
            if !foreign.isEmpty || received.isEmpty { return foreign }
        }
    }

    /// The change a notification announces, unless `origin` made it or it is malformed.
    static func change(in notification: PostgresNotification, notMadeBy origin: String) -> AnnouncedChange? {
        switch notification.channel {
        case PinChange.channel:
            guard !PinChange.isAnnouncement(notification, madeBy: origin),
                  let (_, changes) = PinChange.parse(notification.payload)
            else { return nil }
            return .pins(changes)
        case PinChange.regionsChannel:
            let parts = notification.payload.split(separator: " ")
            guard parts.count == 2 else { return nil }
            return .region(String(parts[1]))
        default:
            return nil
        }
    }
}

extension Database {
    /// Opens a ``ChangeListener`` on this store's database, named as this process (blocking).
    public func listenForChanges() throws(StoreError) -> ChangeListener {
        try ChangeListener(configuration: pool.configuration, origin: instanceID)
    }
}
