import ProxyHeaders
import ScavengerProtocol
import ScavengerTLS

/// How the daemon listens and what it allows each client.
public struct ServerConfiguration: Sendable {
    /// Address to listen on; default `127.0.0.1`.
    public var host: String
    /// Port to listen on; default 7467 (PINS on a phone keypad). 0 picks a free port.
    public var port: Int
    /// A second listener, with TLS, serving the same protocol; nil (the default) for none. Its
    /// connections count against the same limits as the plain ones.
    public var tls: TLSSettings?
    /// Connections served at once; more are refused with `ERR UNAVAILABLE`. Default 1024.
    public var maxConnections: Int
    /// Connections from one client address at once; more are refused with `ERR UNAVAILABLE`.
    /// Default 64.
    public var maxConnectionsPerAddress: Int
    /// Seconds a connection may stay silent before it is closed; 0 never. Default 300.
    public var idleTimeoutSeconds: Int
    /// Seconds a client has to finish a request line once it has sent its first byte; 0 never.
    /// Default 30.
    public var lineTimeoutSeconds: Int
    /// Unsent reply bytes per connection above which the server stops answering and reading
    /// that connection until the client has read down to half of it. Default 256 KiB; one reply
    /// may go past it (a photo is up to about 7 MB).
    public var outputHighWaterBytes: Int
    /// Unsent watch event bytes per connection (beyond what the output high-water mark lets
    /// into the channel) above which a watch gets `EVENT … overflow` and ends. Default 1 MiB.
    public var maxEventBytes: Int
    /// Protocol limits (line length, …).
    public var limits: ProtocolLimits
    /// The proxies whose connections may begin with a PROXY protocol header naming the client
    /// (`--trusted-proxies`), on the plain and the TLS listener; that client's address is then the
    /// connection's for every per-address limit and in the logs. Default: none.
    public var trustedProxies: TrustedProxies

    public init(
        host: String = "127.0.0.1",
        port: Int = 7467,
        maxConnections: Int = 1024,
        maxConnectionsPerAddress: Int = 64,
        idleTimeoutSeconds: Int = 300,
        lineTimeoutSeconds: Int = 30,
        outputHighWaterBytes: Int = 256 * 1024,
        maxEventBytes: Int = 1 << 20,
        limits: ProtocolLimits = ProtocolLimits(),
        tls: TLSSettings? = nil,
        trustedProxies: TrustedProxies = .none
    ) {
        self.trustedProxies = trustedProxies
        self.outputHighWaterBytes = outputHighWaterBytes
        self.maxEventBytes = maxEventBytes
        self.lineTimeoutSeconds = lineTimeoutSeconds
        self.host = host
        self.port = port
        self.maxConnections = maxConnections
        self.maxConnectionsPerAddress = maxConnectionsPerAddress
        self.idleTimeoutSeconds = idleTimeoutSeconds
        self.limits = limits
        self.tls = tls
    }
}
