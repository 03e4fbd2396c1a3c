import ScavengerStore

/// Limits of the protocol that operators can configure.
public struct ProtocolLimits: Sendable {
    /// Longest request line in bytes (the line ending not counted); default 8 MiB.
    public var maxLineBytes: Int

    public init(maxLineBytes: Int = 8 * 1024 * 1024) {
        self.maxLineBytes = maxLineBytes
    }
}

/// Everything the command handlers share: the store, the limits, the version.
public struct Services: Sendable {
    /// The daemon's version, as `HELLO` reports it.
    public static let version = "0.1.0"
    /// The protocol version of `../shared/protocol.md` this daemon speaks.
    public static let protocolVersion = 1

    public var database: Database?
    public var limits: ProtocolLimits

    public init(database: Database?, limits: ProtocolLimits = ProtocolLimits()) {
        self.database = database
        self.limits = limits
    }

    /// The store, or `UNAVAILABLE` when the daemon runs without one.
    public func requireDatabase() throws(CommandError) -> Database {
        guard let database else { throw CommandError(.unavailable, "no database is configured") }
        return database
    }
}
