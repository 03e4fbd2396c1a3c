import CoreMetrics
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOPosix
import Prometheus
import ScavengerBoard
import ScavengerConsole
import ScavengerCore
import ScavengerProtocol
import Synchronization
import ServiceLifecycle

/// A request's context on the HTTP port: Hummingbird's, plus the client's address.
struct HTTPRequestContext: RequestContext, WebSocketRequestContext {
    var coreContext: CoreRequestContextStorage
    let webSocket: WebSocketHandlerReference<Self>
    /// The connection's own peer address.
    let peerAddress: String?
    /// The client's address as the rate limits and throttles key it (``ClientAddress``): the
    /// peer's, or from a trusted proxy the client it names (``ForwardedClientMiddleware``).
    var clientAddress: String?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        webSocket = .init()
        peerAddress = source.channel.remoteAddress?.ipAddress
        clientAddress = peerAddress.flatMap(ClientAddress.key)
    }
}

/// The HTTP port (Hummingbird), a service beside the TCP server: `GET /ws` serves the line
/// protocol over a WebSocket through the same command table and board; `GET /` is the demo web
/// client; `/play` and `/host` are the hunt pages (with Leaflet under `/vendor/leaflet/` and
/// `POST /qr`); `GET /healthz` and `GET /metrics` are for operators; anything else is 404.
public final class ScavengerHTTPServer: Service, Sendable {
    public let configuration: HTTPConfiguration
    private let board: Board
    private let table: CommandTable
    private let metrics: DaemonMetrics
    private let health: HealthCheck
    /// Counts every connection, with the line port's when the daemon shares them.
    private let limits: ConnectionLimits
    private let logger: Logger
    private let connections = WebSocketConnections()
    private let bound: EventLoopPromise<SocketAddress>

    /// - Parameters:
    ///   - table: the table the TCP server uses (with its ``RequestMetrics``).
    ///   - health: by default asks the board (the database pinged, the feed loaded).
    ///   - limits: the connection limits this port counts against; pass the line port's, so that
    ///     both count every connection. By default, limits of its own from `configuration`.
    public init(
        configuration: HTTPConfiguration, board: Board, table: CommandTable, metrics: DaemonMetrics,
        health: HealthCheck? = nil, limits: ConnectionLimits? = nil, logger: Logger
    ) {
        self.limits = limits ?? ConnectionLimits(
            maximum: configuration.maxConnections, maximumPerAddress: configuration.maxConnectionsPerAddress)
        self.configuration = configuration
        self.board = board
        self.table = table
        self.metrics = metrics
        self.health = health ?? HealthCheck(
            board: board, cacheSeconds: configuration.healthCacheSeconds,
            timeoutSeconds: configuration.databaseCheckTimeoutSeconds)
        self.logger = logger
        bound = MultiThreadedEventLoopGroup.singleton.next().makePromise(of: SocketAddress.self)
    }

    /// The address it listens on, once it does (useful with port 0).
    public var listeningAddress: SocketAddress {
        get async throws { try await bound.futureResult.get() }
    }

    public func run() async throws {
        let router = Router(context: HTTPRequestContext.self)
        // First, so that every route's response and every error passes through it.
        router.add(middleware: SecurityHeadersMiddleware())
        // Before every route: the client's address behind a trusted proxy.
        router.add(middleware: ForwardedClientMiddleware(trusted: configuration.trustedProxies))
        // What the daemon serves from memory: the demo page, the client module the pages import
        // (scavenger.js), the hunt pages with their scripts and style sheet, and the favicon.
        // Each is compressed once (gzip, for the browsers that accept it) and sent with an ETag
        // and `Cache-Control: no-cache`: a browser keeps it and revalidates it, `304` while it
        // holds this daemon's version.
        let mapPolicy = SecurityHeadersMiddleware<HTTPRequestContext>.mapPagePolicy
        // The hunt pages say whether this daemon sends mail (its account recovery forms show only then).
        let mail = board.rules.recovery.mailEnabled
        let assets: [(path: String, asset: StaticAsset)] = [
            ("/", StaticAsset(DemoPage.html, contentType: "text/html; charset=utf-8", policy: mapPolicy)),
            ("/demo.js", StaticAsset(DemoPage.script, contentType: "text/javascript; charset=utf-8")),
            ("/demo.css", StaticAsset(DemoPage.style, contentType: "text/css; charset=utf-8")),
            ("/play", StaticAsset(HuntPages.page(HuntPages.playHTML, mail: mail), contentType: "text/html; charset=utf-8", policy: mapPolicy)),
            ("/host", StaticAsset(HuntPages.page(HuntPages.hostHTML, mail: mail), contentType: "text/html; charset=utf-8", policy: mapPolicy)),
            ("/notices.js", StaticAsset(HuntPages.noticesScript, contentType: "text/javascript; charset=utf-8")),
            ("/play-scores.js", StaticAsset(HuntPages.playScoresScript, contentType: "text/javascript; charset=utf-8")),
            ("/join-link.js", StaticAsset(HuntPages.joinLinkScript, contentType: "text/javascript; charset=utf-8")),
            ("/guest-join.js", StaticAsset(HuntPages.guestJoinScript, contentType: "text/javascript; charset=utf-8")),
            ("/hunts.js", StaticAsset(HuntPages.commonScript, contentType: "text/javascript; charset=utf-8")),
            ("/play.js", StaticAsset(HuntPages.playScript, contentType: "text/javascript; charset=utf-8")),
            ("/host.js", StaticAsset(HuntPages.hostScript, contentType: "text/javascript; charset=utf-8")),
            ("/location.js", StaticAsset(HuntPages.locationScript, contentType: "text/javascript; charset=utf-8")),
            ("/basemap.js", StaticAsset(HuntPages.basemapScript, contentType: "text/javascript; charset=utf-8")),
            ("/pin-map.js", StaticAsset(HuntPages.pinMapScript, contentType: "text/javascript; charset=utf-8")),
            ("/pin-map.css", StaticAsset(HuntPages.pinMapStyle, contentType: "text/css; charset=utf-8")),
            ("/hunts.css", StaticAsset(HuntPages.style, contentType: "text/css; charset=utf-8")),
            // It changes only with the daemon: a day before asking again.
            ("/favicon.ico", StaticAsset(Favicon.bytes, contentType: "image/x-icon", cacheControl: "public, max-age=86400")),
        ]
        for (path, asset) in assets {
            router.get(RouterPath(path)) { request, _ -> Response in asset.response(to: request) }
        }
        // The client module, which other sites' pages may import: cross-origin reads allowed to
        // the origins --allowed-origins lists (to any without it), as /ws upgrades are.
        let clientModule = StaticAsset(ClientModule.script, contentType: "text/javascript; charset=utf-8")
        let allowedOrigins = configuration.allowedOrigins
        router.get("/client.js") { request, _ -> Response in
            var response = clientModule.response(to: request)
            CrossOrigin.allow(&response.headers, origin: request.headers[.origin], allowed: allowedOrigins)
            return response
        }
        VendorFiles.leaflet(directory: configuration.leafletDirectory).addRoutes(to: router)
        MapGeoJSON.addRoutes(to: router, board: board, allowed: allowedOrigins)
        QRCodeRoute.addRoutes(to: router)
        PhotoRoutes.addRoutes(to: router, board: board)
        // The moderators' console, /mod/…; sign-ins throttled by the client's address like LOGIN.
        try ModeratorConsole(board: board, logger: logger).addRoutes(to: router) { $0.clientAddress }
        router.get("/healthz") { _, _ -> Response in
            let status = await self.health.status()
            return Self.text(status.detail + "\n", status: status.healthy ? .ok : .serviceUnavailable)
        }
        router.get("/metrics") { _, _ -> Response in
            await self.refreshGauges()
            var response = Self.text(self.metrics.registry.emitToString(), status: .ok)
            response.headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
            return response
        }
        let session = WebSocketSession(
            table: table, board: board, maxLineBytes: configuration.limits.maxLineBytes,
            maxEventBytes: configuration.maxEventBytes, logger: logger)
        // Every connection was admitted under the daemon's connection limits before its first
        // byte was read (HTTPGuardHandler): one past them got `503` and was closed.
        // An upgrade from an origin --allowed-origins does not list got `403` there too.
        router.ws("/ws") { inbound, outbound, context in
            let address = context.requestContext.clientAddress
            let number = self.connections.opened()
            defer { self.connections.closed() }
            // On shutdown the session ends at once (a reply being prepared is lost), and the
            // close handshake waits at most `closeTimeout` for the client.
            try await cancelWhenGracefulShutdown {
                try await session.serve(inbound: inbound, outbound: outbound, connectionID: number, address: address)
            }
        }
        let maxLineBytes = configuration.limits.maxLineBytes
        let webSocketResponder = router.buildResponder()
        // A frame may be up to twice the line limit, so a message somewhat over the limit is
        // read, answered LINE_TOO_LONG and closed. Longer frames are refused from their header by
        // the frame decoder (close code 1009, no ERR line): the decoder buffers a whole frame, and
        // this bounds what one socket can make it hold.
        let webSocket = WebSocketServerConfiguration(maxFrameSize: 2 * maxLineBytes, closeTimeout: .seconds(2))
        let guardSettings = HTTPGuardHandler.Settings(
            limits: limits, head: configuration.head, headTimeoutSeconds: configuration.headTimeoutSeconds,
            idleTimeoutSeconds: configuration.idleTimeoutSeconds, allowedOrigins: configuration.allowedOrigins,
            trustedProxies: configuration.trustedProxies)
        // Each connection reads the certificate's context as it connects: a reload reaches new ones.
        let (tlsCertificate, tlsHandshakeTimeoutSeconds) = (configuration.tlsCertificate, configuration.tlsHandshakeTimeoutSeconds)
        let app = Application(
            router: router,
            server: HTTPServerBuilder { responder in
                GuardedChildChannel(
                    inner: HTTP1WebSocketUpgradeChannel(
                        responder: responder, webSocketResponder: webSocketResponder,
                        configuration: .init(ws: webSocket)),
                    settings: guardSettings, tls: tlsCertificate, tlsHandshakeTimeoutSeconds: tlsHandshakeTimeoutSeconds)
            },
            configuration: ApplicationConfiguration(address: .hostname(configuration.host, port: configuration.port)),
            onServerRunning: { channel in
                if let address = channel.localAddress { self.bound.succeed(address) }
                self.logger.info(self.configuration.tlsCertificate == nil ? "HTTP port listening" : "HTTP port listening with TLS (HTTPS)", metadata: [
                    "address": "\(channel.localAddress.map { "\($0)" } ?? "?")",
                ])
            },
            logger: logger)
        do {
            try await app.run()
        } catch {
            bound.fail(error)
            throw error
        }
        bound.fail(CancellationError())
    }

    /// Reads the state gauges: connections, pins in the feed, and the moderation queue (a count
    /// query with a timeout; on failure the last value stays).
    private func refreshGauges() async {
        metrics.connections.record(limits.count)
        metrics.record(board.statistics())
        if let open = await board.openModerationItems(timeoutSeconds: configuration.databaseCheckTimeoutSeconds) {
            metrics.moderationOpenItems.record(open)
        }
    }

    private static func text(_ body: String, status: HTTPResponse.Status) -> Response {
        var buffer = ByteBuffer()
        buffer.writeString(body)
        return Response(
            status: status, headers: [.contentType: "text/plain; charset=utf-8"], body: ResponseBody(byteBuffer: buffer))
    }
}
