import Postgres

/// A change to a pin, announced with `NOTIFY` so that every daemon on the database keeps its
/// in-memory feed in step. Payload: `<origin> u <id> [<id> …]` or `<origin> d <id> [<id> …]`
/// (a group of pins written in one transaction is announced in one notification).
public enum PinChange: Sendable, Equatable {
    /// The pin was written or changed: reload it.
    case upserted(String)
    /// The pin is gone.
    case deleted(String)

    /// The channel pin changes go to.
    public static let channel = "scavenger_pins"
    /// The channel region changes go to; the payload is the region's name.
    public static let regionsChannel = "scavenger_regions"

    public var id: String {
        switch self {
        case .upserted(let id), .deleted(let id): return id
        }
    }

    /// The notification text, naming the process that made the change.
    public func payload(origin: String) -> String {
        switch self {
        case .upserted(let id): return "\(origin) u \(id)"
        case .deleted(let id): return "\(origin) d \(id)"
        }
    }

    /// Whether `notification` announces pin changes made by the process `origin`.
    public static func isAnnouncement(_ notification: PostgresNotification, madeBy origin: String) -> Bool {
        notification.channel == channel && notification.payload.utf8.starts(with: origin.utf8)
            && notification.payload.utf8.dropFirst(origin.utf8.count).first == UInt8(ascii: " ")
    }

    /// Parses a payload; nil for anything malformed.
    public static func parse(_ payload: String) -> (origin: String, changes: [PinChange])? {
        let parts = payload.split(separator: " ")
        guard parts.count >= 3 else { return nil }
        let ids = parts.dropFirst(2).map(String.init)
        switch parts[1] {
        case "u": return (String(parts[0]), ids.map(PinChange.upserted))
        case "d": return (String(parts[0]), ids.map(PinChange.deleted))
        default: return nil
        }
    }
}

extension Database {
    /// Announces a change, delivered when the surrounding transaction commits.
    func notify(_ connection: PostgresConnection, _ change: PinChange) throws {
        try Self.notify(connection, change, origin: instanceID)
    }

    /// Announces a change made by `origin`, delivered when the surrounding transaction commits.
    static func notify(_ connection: PostgresConnection, _ change: PinChange, origin: String) throws {
        try connection.query("SELECT pg_notify(\(PinChange.channel), \(change.payload(origin: origin)))")
    }
}
