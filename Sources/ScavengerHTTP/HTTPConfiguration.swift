import ScavengerProtocol

/// How the HTTP port listens and what it allows.
public struct HTTPConfiguration: Sendable {
    /// Address to listen on (the daemon passes `--host`).
    public var host: String
    /// Port to listen on; 0 picks a free one.
    public var port: Int
    /// WebSocket connections are admitted while the TCP port's and the WebSocket's open
    /// connections together are fewer than this (`--max-connections`).
    public var maxConnections: Int
    /// WebSocket connections from one client address at once (`--max-connections-per-address`).
    public var maxConnectionsPerAddress: Int
    /// Protocol limits: a message is one request line, under the same line limit as the TCP port.
    public var limits: ProtocolLimits
    /// How long a `/healthz` answer is reused before the database is asked again.
    public var healthCacheSeconds: Double
    /// How long `/healthz` (and `/metrics`' moderation count) waits for the database.
    public var databaseCheckTimeoutSeconds: Double
    /// Watch events waiting for a slow WebSocket before the watch at fault overflows
    /// (`--max-event-bytes`).
    public var maxEventBytes: Int

    public init(
        host: String = "127.0.0.1", port: Int, maxConnections: Int = 1024, maxConnectionsPerAddress: Int = 64,
        limits: ProtocolLimits = ProtocolLimits(), healthCacheSeconds: Double = 2, databaseCheckTimeoutSeconds: Double = 2,
        maxEventBytes: Int = 1 << 20
    ) {
        self.maxEventBytes = maxEventBytes
        self.host = host
        self.port = port
        self.maxConnections = maxConnections
        self.maxConnectionsPerAddress = maxConnectionsPerAddress
        self.limits = limits
        self.healthCacheSeconds = healthCacheSeconds
        self.databaseCheckTimeoutSeconds = databaseCheckTimeoutSeconds
    }
}
