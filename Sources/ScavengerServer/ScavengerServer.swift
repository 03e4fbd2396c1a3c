import Logging
import NIOCore
import NIOPosix
import ScavengerProtocol
import ServiceLifecycle
import Synchronization

/// The TCP server: accepts connections, frames lines, runs each through the command table and
/// writes the replies in order. On graceful shutdown it stops accepting, lets every connection
/// finish the requests it has received, then closes them.
public final class ScavengerServer: Service, Sendable {
    public let configuration: ServerConfiguration
    private let services: Services
    private let table: CommandTable
    private let group: any EventLoopGroup
    private let logger: Logger
    private let bound: EventLoopPromise<SocketAddress>
    private let connections = ConnectionRegistry()

    public init(
        configuration: ServerConfiguration,
        services: Services,
        table: CommandTable = .standard,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger
    ) {
        self.configuration = configuration
        self.services = services
        self.table = table
        self.group = group
        self.logger = logger
        self.bound = group.next().makePromise(of: SocketAddress.self)
    }

    /// The address the server listens on, once it does (useful with port 0).
    public var listeningAddress: SocketAddress {
        get async throws { try await bound.futureResult.get() }
    }

    public func run() async throws {
        let channel: NIOAsyncChannel<NIOAsyncChannel<InboundFrame, ByteBuffer>, Never>
        do {
            channel = try await bind()
        } catch {
            bound.fail(error)
            throw error
        }
        let address = channel.channel.localAddress!
        bound.succeed(address)
        logger.info("listening", metadata: ["address": "\(address)"])

        try await withGracefulShutdownHandler {
            try await channel.executeThenClose { inbound in
                try await withThrowingDiscardingTaskGroup { group in
                    for try await connection in inbound {
                        let executor = EventLoopExecutor(connection.channel.eventLoop)
                        group.addTask(executorPreference: executor) { await self.serve(connection) }
                    }
                }
            }
        } onGracefulShutdown: {
            self.logger.info("shutting down: no new connections, finishing requests in flight")
            channel.channel.close(promise: nil)
            self.connections.shutDown()
        }
        logger.info("stopped")
    }

    private func bind() async throws -> NIOAsyncChannel<NIOAsyncChannel<InboundFrame, ByteBuffer>, Never> {
        let maxLineBytes = configuration.limits.maxLineBytes
        let idleTimeout = configuration.idleTimeoutSeconds
        return try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            .bind(host: configuration.host, port: configuration.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    if idleTimeout > 0 {
                        try channel.pipeline.syncOperations.addHandler(
                            IdleStateHandler(readTimeout: .seconds(Int64(idleTimeout))))
                        try channel.pipeline.syncOperations.addHandler(IdleConnectionCloser())
                    }
                    try channel.pipeline.syncOperations.addHandler(
                        ByteToMessageHandler(LineFrameDecoder(maxLineBytes: maxLineBytes)))
                    return try NIOAsyncChannel<InboundFrame, ByteBuffer>(
                        wrappingChannelSynchronously: channel,
                        configuration: .init(isOutboundHalfClosureEnabled: true))
                }
            }
    }

    /// Serves one connection until it ends. Never throws: one client cannot hurt another.
    private func serve(_ connection: NIOAsyncChannel<InboundFrame, ByteBuffer>) async {
        let id = connections.register(connection.channel, limit: configuration.maxConnections)
        var logger = self.logger
        logger[metadataKey: "connection.id"] = "\(id.number)"
        defer { connections.unregister(id) }
        do {
            try await connection.executeThenClose { inbound, outbound in
                guard id.admitted else {
                    logger.warning("connection refused: at the connection limit")
                    let reply = Reply.error(
                        .unavailable, "the server is at its connection limit (\(configuration.maxConnections)); retry later")
                    try await outbound.write(ByteBuffer(bytes: reply.lineBytes))
                    return
                }
                logger.debug("connection opened", metadata: ["peer": "\(connection.channel.remoteAddress.map { "\($0)" } ?? "?")"])
                let context = CommandContext(session: Session(connectionID: id.number), services: services, logger: logger)
                var frames = inbound.makeAsyncIterator()
                while let frame = try await frames.next() {
                    switch frame {
                    case .line(let line):
                        guard let outcome = await handle(line, context: context) else { continue }
                        try await outbound.write(ByteBuffer(bytes: outcome.reply.lineBytes))
                        if outcome.closesConnection { return }
                    case .lineTooLong:
                        let reply = Reply.error(
                            .lineTooLong, "request line longer than \(configuration.limits.maxLineBytes) bytes; closing")
                        try await outbound.write(ByteBuffer(bytes: reply.lineBytes))
                        logger.info("closing: line too long")
                        try await lingeringClose(connection.channel, outbound: outbound, frames: &frames)
                        return
                    }
                }
            }
        } catch {
            logger.debug("connection ended with an error", metadata: ["error": "\(error)"])
        }
        logger.debug("connection closed")
    }

    /// Sends FIN after the last reply but keeps reading (and discarding) for a moment, so the
    /// client's unread upload does not turn the close into a reset that destroys that reply.
    private func lingeringClose(
        _ channel: any Channel,
        outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>,
        frames: inout NIOAsyncChannelInboundStream<InboundFrame>.AsyncIterator
    ) async throws {
        outbound.finish()
        let deadline = channel.eventLoop.scheduleTask(in: .seconds(2)) { channel.close(promise: nil) }
        defer { deadline.cancel() }
        while try await frames.next() != nil {}
    }

    /// One line: UTF-8 check, then the command table. Nil for a blank line.
    private func handle(_ line: ByteBuffer, context: CommandContext) async -> CommandOutcome? {
        guard let text = String(validating: line.readableBytesView, as: UTF8.self) else {
            return CommandOutcome(.error(.badRequest, "request line is not valid UTF-8"))
        }
        return await table.execute(line: text, context: context)
    }
}

/// Closes a connection that has sent nothing for the idle timeout.
final class IdleConnectionCloser: ChannelInboundHandler, Sendable {
    typealias InboundIn = NIOAny

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let idle = event as? IdleStateHandler.IdleStateEvent, idle == .read {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }
}

/// The open connections: counts them against the limit and, on shutdown, stops their input so
/// each finishes what it has already received and then closes.
final class ConnectionRegistry: Sendable {
    struct ID {
        let number: Int
        let admitted: Bool
    }

    private struct State {
        var nextNumber = 1
        var channels: [Int: any Channel] = [:]
        var shuttingDown = false
    }

    private let state = Mutex(State())

    func register(_ channel: any Channel, limit: Int) -> ID {
        let (id, stopInput) = state.withLock { state -> (ID, Bool) in
            let number = state.nextNumber
            state.nextNumber += 1
            guard state.channels.count < limit else { return (ID(number: number, admitted: false), false) }
            state.channels[number] = channel
            return (ID(number: number, admitted: true), state.shuttingDown)
        }
        if stopInput { Self.stopInput(channel) }
        return id
    }

    func unregister(_ id: ID) {
        guard id.admitted else { return }
        state.withLock { _ = $0.channels.removeValue(forKey: id.number) }
    }

    func shutDown() {
        let channels = state.withLock { state in
            state.shuttingDown = true
            return Array(state.channels.values)
        }
        channels.forEach(Self.stopInput)
    }

    private static func stopInput(_ channel: any Channel) {
        channel.close(mode: .input).whenFailure { _ in channel.close(promise: nil) }
    }
}
