import NIOCore
import NIOPosix

/// A TCP forwarder for tests: listens on a port and passes every connection's bytes to and
/// from a target, so a test can make the database appear (start) or vanish (stop) at an address.
final class TCPForwarder: Sendable {
    let channel: Channel

    /// Listens on 127.0.0.1:`port` (0: any free one) and forwards to `target`.
    static func start(port: Int, to target: SocketAddress) async throws -> TCPForwarder {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { inbound in
                ClientBootstrap(group: inbound.eventLoop).connect(to: target).flatMap { outbound in
                    let (toTarget, toClient) = Glue.pair()
                    // Both channels live on the inbound one's event loop.
                    return inbound.pipeline.addHandler(toTarget).flatMap { outbound.pipeline.addHandler(toClient) }
                }
            }
            .bind(host: "127.0.0.1", port: port).get()
        return TCPForwarder(channel: channel)
    }

    private init(channel: Channel) {
        self.channel = channel
    }

    var port: Int { channel.localAddress?.port ?? 0 }

    /// Stops listening (open connections go on until either side closes).
    func stop() async throws {
        try await channel.close()
    }

    /// A free port: bound, then released.
    static func freePort() async throws -> Int {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(host: "127.0.0.1", port: 0).get()
        let port = channel.localAddress?.port ?? 0
        try await channel.close()
        return port
    }
}

/// Passes what one channel reads to its partner, and closes the partner when it closes. Both
/// channels are on one event loop.
private final class Glue: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer

    private var partner: Glue?
    private var context: ChannelHandlerContext?

    static func pair() -> (Glue, Glue) {
        let first = Glue(), second = Glue()
        first.partner = second
        second.partner = first
        return (first, second)
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        partner = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        partner?.context?.writeAndFlush(data, promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        partner?.context?.close(promise: nil)
    }
}
