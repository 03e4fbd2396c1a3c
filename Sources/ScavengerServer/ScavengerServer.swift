import Logging
import NIOCore
import NIOPosix
import NIOSSL
import ProxyHeaders
import ScavengerBoard
import ScavengerProtocol
import ScavengerTLS
import ServiceLifecycle
import Synchronization

/// The TCP server: accepts connections, frames lines, runs each through the command table and
/// writes the replies in order. With ``ServerConfiguration/tls`` set it also listens with TLS on a
/// second port, serving the same protocol under the same limits. On graceful shutdown it stops
/// accepting on every port, lets every connection finish the requests it has received, then
/// closes them.
public final class ScavengerServer: Service, Sendable {
    public let configuration: ServerConfiguration
    private let board: Board
    private let table: CommandTable
    private let group: any EventLoopGroup
    private let logger: Logger
    private let bound: EventLoopPromise<SocketAddress>
    private let tlsBound: EventLoopPromise<SocketAddress?>
    private let connections: ConnectionRegistry

    /// - Parameters:
    ///   - limits: the connection limits this port counts against; pass the HTTP port's too, so
    ///     that both count every connection. By default, limits of its own from `configuration`.
    public init(
        configuration: ServerConfiguration,
        board: Board,
        table: CommandTable = .standard,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        limits: ConnectionLimits? = nil,
        logger: Logger
    ) {
        self.connections = ConnectionRegistry(limits: limits ?? ConnectionLimits(
            maximum: configuration.maxConnections, maximumPerAddress: configuration.maxConnectionsPerAddress))
        self.configuration = configuration
        self.board = board
        self.table = table
        self.group = group
        self.logger = logger
        self.bound = group.next().makePromise(of: SocketAddress.self)
        self.tlsBound = group.next().makePromise(of: SocketAddress?.self)
    }

    /// The address the server listens on, once it does (useful with port 0).
    public var listeningAddress: SocketAddress {
        get async throws { try await bound.futureResult.get() }
    }

    /// The address the server listens on with TLS, once it does; nil when it has no TLS listener.
    public var tlsListeningAddress: SocketAddress? {
        get async throws { try await tlsBound.futureResult.get() }
    }

    /// Connections open now on this server's ports (the line port and its TLS port).
    public var openConnections: Int { connections.count }

    public func run() async throws {
        let listeners: [any Channel]
        do {
            listeners = try await bindListeners()
        } catch {
            bound.fail(error)
            tlsBound.fail(error)
            throw error
        }
        bound.succeed(listeners[0].localAddress!)
        tlsBound.succeed(listeners.count > 1 ? listeners[1].localAddress! : nil)
        logger.info("listening", metadata: ["address": "\(listeners[0].localAddress!)"])
        if listeners.count > 1 {
            logger.info("listening with TLS", metadata: ["address": "\(listeners[1].localAddress!)"])
        }

        let closeListeners = { @Sendable in listeners.forEach { $0.close(promise: nil) } }
        await withGracefulShutdownHandler {
            await withTaskCancellationHandler {
                // Should one listener fail, the server stops listening on the other too.
                for listener in listeners { listener.closeFuture.whenComplete { _ in closeListeners() } }
                for listener in listeners { try? await listener.closeFuture.get() }
            } onCancel: {
                closeListeners()
                self.connections.closeAll()
            }
            await connections.waitUntilAllClosed()
        } onGracefulShutdown: {
            self.logger.info("shutting down: no new connections, finishing requests in flight")
            closeListeners()
            self.connections.shutDown()
        }
        logger.info("stopped")
    }

    /// The plain listener, then the TLS one if configured; none if either fails.
    private func bindListeners() async throws -> [any Channel] {
        let plain = try await bind(host: configuration.host, port: configuration.port, tls: nil)
        guard let tls = configuration.tls else { return [plain] }
        do {
            return [plain, try await bind(host: tls.host ?? configuration.host, port: tls.port, tls: tls)]
        } catch {
            try? await plain.close()
            throw error
        }
    }

    /// Listens on `host:port`, with TLS when `tls` is given. A failure names the address.
    private func bind(host: String, port: Int, tls: TLSSettings?) async throws -> any Channel {
        let configuration = self.configuration
        let (table, board, connections, logger) = (self.table, self.board, self.connections, self.logger)
        do {
            return try await ServerBootstrap(group: group)
                .serverChannelOption(.backlog, value: 256)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
                .childChannelOption(.allowRemoteHalfClosure, value: true)
                .childChannelOption(
                    .writeBufferWaterMark,
                    value: .init(low: configuration.outputHighWaterBytes / 2, high: configuration.outputHighWaterBytes))
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try Self.initializeConnection(
                            channel, tls: tls, configuration: configuration, table: table, board: board,
                            connections: connections, logger: logger)
                    }
                }
                .bind(host: host, port: port)
                .get()
        } catch {
            throw ListenError(host: host, port: port, tls: tls != nil, underlying: error)
        }
    }

    /// One connection's pipeline, the same on both ports except that a TLS connection first goes
    /// through TLS (and its handshake deadline): everything behind sees the plain text.
    private static func initializeConnection(
        _ channel: any Channel, tls: TLSSettings?, configuration: ServerConfiguration, table: CommandTable,
        board: Board, connections: ConnectionRegistry, logger: Logger
    ) throws {
        let pipeline = channel.pipeline.syncOperations
        // A trusted proxy's PROXY header comes first, before TLS.
        let proxied = configuration.trustedProxies.contains(channel.remoteAddress?.ipAddress)
        if proxied {
            try pipeline.addHandler(ProxyHeaderHandler(timeoutSeconds: configuration.lineTimeoutSeconds, logger: logger))
        }
        if let tls {
            try pipeline.addHandler(NIOSSLServerHandler(context: tls.context))
            if tls.handshakeTimeoutSeconds > 0 {
                try pipeline.addHandler(TLSHandshakeDeadline(seconds: tls.handshakeTimeoutSeconds))
            }
            try pipeline.addHandler(TLSCloseAdapter())
        }
        // Framing, the idle timeout and the line deadline are the connection handler's own.
        try pipeline.addHandler(ConnectionHandler(
            table: table, board: board, registry: connections, configuration: configuration, awaitsProxyHeader: proxied,
            logger: logger))
    }
}

/// The server could not listen on an address; the description is one line fit for an operator.
public struct ListenError: Error, CustomStringConvertible {
    public let host: String
    public let port: Int
    public let tls: Bool
    public let underlying: any Error

    public var description: String {
        "cannot listen\(tls ? " with TLS" : "") on \(host) port \(port): \(underlying)"
    }
}


/// The open connections: counts them against the limits (in all, and per client address) and, on
/// shutdown, stops their input so each finishes what it has already received and then closes.
final class ConnectionRegistry: Sendable {
    struct ID {
        let number: Int
        /// Nil when admitted; else why the connection was refused.
        let refusal: Refusal?

        var admitted: Bool { refusal == nil }
    }

    typealias Refusal = ConnectionLimits.Refusal

    private struct State {
        var nextNumber = 1
        var channels: [Int: (channel: any Channel, admission: ConnectionLimits.Admission)] = [:]
        var shuttingDown = false
    }

    /// Counts every connection against the limits, with the other ports' that share them.
    let limits: ConnectionLimits
    private let state = Mutex(State())

    init(limits: ConnectionLimits) {
        self.limits = limits
    }

    /// Connections open now.
    var count: Int { state.withLock { $0.channels.count } }

    /// Admits a connection unless the limits are reached (in all, or from `address`: nil counts
    /// it in all only, as for a trusted proxy's connection until it has named its client).
    func register(_ channel: any Channel, address: String?) -> ID {
        let (id, stopInput) = state.withLock { state -> (ID, Bool) in
            let number = state.nextNumber
            state.nextNumber += 1
            switch limits.admit(address: address) {
            case .failure(let refusal):
                return (ID(number: number, refusal: refusal), false)
            case .success(let admission):
                state.channels[number] = (channel, admission)
                return (ID(number: number, refusal: nil), state.shuttingDown)
            }
        }
        if id.admitted {
            // Leaves the registry when it closes, whatever its handlers saw.
            channel.closeFuture.whenComplete { _ in self.unregister(id) }
        }
        if stopInput { Self.stopInput(channel) }
        return id
    }

    /// Counts a refused connection; returns how many to report in one log line, at most once a
    /// second (a storm of refusals must not become a storm of log lines), else nil.
    func noteRefusal(every interval: Duration = .seconds(1)) -> Int? {
        limits.noteRefusal(every: interval)
    }

    /// Counts an admitted connection under `address` from now on; the refusal when that address
    /// is at its limit (the connection is then to be refused, and still leaves as it closes).
    func readdress(_ id: ID, to address: String?) -> Refusal? {
        guard id.admitted else { return id.refusal }
        return state.withLock { state -> Refusal? in
            guard let entry = state.channels[id.number] else { return nil }
            switch limits.readdress(entry.admission, to: address) {
            case .failure(let refusal):
                return refusal
            case .success(let admission):
                state.channels[id.number] = (entry.channel, admission)
                return nil
            }
        }
    }

    /// Forgets a connection and frees its place in the limits; calling it again changes nothing.
    func unregister(_ id: ID) {
        guard id.admitted else { return }
        if let entry = state.withLock({ $0.channels.removeValue(forKey: id.number) }) {
            limits.leave(entry.admission)
        }
    }

    /// Closes every connection at once (the server task was cancelled).
    func closeAll() {
        markShuttingDown().forEach { $0.close(promise: nil) }
    }

    /// Returns once no connection is open.
    func waitUntilAllClosed() async {
        while let (number, entry) = state.withLock({ $0.channels.first.map { ($0.key, $0.value) } }) {
            try? await entry.channel.closeFuture.get()
            // Its own close callback removes it too; doing it here as well guarantees progress.
            unregister(ID(number: number, refusal: nil))
        }
    }

    /// Stops every connection's input: each finishes what it has received, then closes.
    func shutDown() {
        markShuttingDown().forEach(Self.stopInput)
    }

    /// From now on new connections are stopped at once; returns the open ones.
    private func markShuttingDown() -> [any Channel] {
        state.withLock { state in
            state.shuttingDown = true
            return state.channels.values.map(\.channel)
        }
    }

    private static func stopInput(_ channel: any Channel) {
        channel.close(mode: .input).whenFailure { error in
            // A client that has half-closed: its connection is already finishing what it sent.
            if let error = error as? ChannelError, error == .inputClosed { return }
            channel.close(promise: nil)
        }
    }
}
