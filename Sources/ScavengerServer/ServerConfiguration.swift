import ScavengerProtocol

/// How the daemon listens and what it allows each client.
public struct ServerConfiguration: Sendable {
    /// Address to listen on; default `127.0.0.1`.
    public var host: String
    /// Port to listen on; default 7467 (PINS on a phone keypad). 0 picks a free port.
    public var port: Int
    /// Connections served at once; more are refused with `ERR UNAVAILABLE`. Default 1024.
    public var maxConnections: Int
    /// Seconds a connection may stay silent before it is closed; 0 never. Default 300.
    public var idleTimeoutSeconds: Int
    /// Protocol limits (line length, …).
    public var limits: ProtocolLimits

    public init(
        host: String = "127.0.0.1",
        port: Int = 7467,
        maxConnections: Int = 1024,
        idleTimeoutSeconds: Int = 300,
        limits: ProtocolLimits = ProtocolLimits()
    ) {
        self.host = host
        self.port = port
        self.maxConnections = maxConnections
        self.idleTimeoutSeconds = idleTimeoutSeconds
        self.limits = limits
    }
}
