import ProxyHeaders
import ScavengerProtocol
import ScavengerTLS

/// How the HTTP port listens and what it allows.
public struct HTTPConfiguration: Sendable {
    /// Address to listen on (the daemon passes `--host`).
    public var host: String
    /// Port to listen on; 0 picks a free one.
    public var port: Int
    /// Connections served at once, on every port (`--max-connections`): unless the daemon passes
    /// shared ``ConnectionLimits``, the port's own limits are made from this.
    public var maxConnections: Int
    /// Connections from one client address at once (`--max-connections-per-address`).
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
    /// How long a request line and a request head may be (`--max-http-request-line-bytes`,
    /// `--max-http-header-bytes`).
    public var head: HTTPHeadLimits
    /// Seconds a request head may take once its first byte arrived (`--line-timeout`); 0: no limit.
    public var headTimeoutSeconds: Int
    /// Seconds of silence from the client before a connection, plain HTTP or WebSocket, is closed
    /// (`--idle-timeout`); 0: never.
    public var idleTimeoutSeconds: Int
    /// The `Origin`s a `/ws` upgrade is accepted from (`--allowed-origins`); nil: any. A request
    /// with no `Origin` (not from a browser) is always accepted.
    public var allowedOrigins: Set<String>?
    /// Where Leaflet's files are read from for `/vendor/leaflet/` (`--leaflet-directory`): by
    /// default where Debian's `libjs-leaflet` installs them.
    public var leafletDirectory: String

    /// The proxies whose `Forwarded` or `X-Forwarded-For` is believed (`--trusted-proxies`): a
    /// request from one counts under the client it names, for every per-address limit; from
    /// anyone else both fields are ignored. Default: none.
    public var trustedProxies: TrustedProxies

    /// With a certificate, the port speaks HTTPS only (`--http-tls-cert`, `--http-tls-key`): every
    /// new connection is served with the certificate's context at the time it connects, so a
    /// reload reaches new connections while open ones keep theirs. Nil (the default): plain HTTP.
    public var tlsCertificate: ServerCertificate?
    /// Seconds a client has to finish the TLS handshake once connected; 0 never. Default 10.
    public var tlsHandshakeTimeoutSeconds: Int

    /// Debian's `libjs-leaflet` puts Leaflet here.
    public static let debianLeafletDirectory = "/usr/share/javascript/leaflet"

    public init(
        host: String = "127.0.0.1", port: Int, maxConnections: Int = 1024, maxConnectionsPerAddress: Int = 64,
        limits: ProtocolLimits = ProtocolLimits(), healthCacheSeconds: Double = 2, databaseCheckTimeoutSeconds: Double = 2,
        maxEventBytes: Int = 1 << 20, head: HTTPHeadLimits = HTTPHeadLimits(), headTimeoutSeconds: Int = 30,
        idleTimeoutSeconds: Int = 300, allowedOrigins: Set<String>? = nil,
        leafletDirectory: String = HTTPConfiguration.debianLeafletDirectory, trustedProxies: TrustedProxies = .none,
        tlsCertificate: ServerCertificate? = nil, tlsHandshakeTimeoutSeconds: Int = 10
    ) {
        self.tlsCertificate = tlsCertificate
        self.tlsHandshakeTimeoutSeconds = tlsHandshakeTimeoutSeconds
        self.trustedProxies = trustedProxies
        self.leafletDirectory = leafletDirectory
        self.maxEventBytes = maxEventBytes
        self.head = head
        self.headTimeoutSeconds = headTimeoutSeconds
        self.idleTimeoutSeconds = idleTimeoutSeconds
        self.allowedOrigins = allowedOrigins
        self.host = host
        self.port = port
        self.maxConnections = maxConnections
        self.maxConnectionsPerAddress = maxConnectionsPerAddress
        self.limits = limits
        self.healthCacheSeconds = healthCacheSeconds
        self.databaseCheckTimeoutSeconds = databaseCheckTimeoutSeconds
    }
}
