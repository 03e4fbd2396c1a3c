import Logging
import NIOCore
import ProxyHeaders

/// Who a connection from a trusted proxy is for, told once to the handlers behind
/// ``ProxyHeaderHandler`` (as a user event) before any of the connection's bytes.
struct ProxiedClient: Sendable, Equatable {
    /// The address every per-address limit counts the connection under: the one its PROXY header
    /// named, else the connection's own (nil when it has none).
    let address: String?
    /// Whether a header named it.
    let named: Bool
}

/// The first handler of a line-port connection (plain or TLS) whose peer is a trusted proxy
/// (`--trusted-proxies`): it reads a PROXY protocol header (``ProxyHeader``, v1 or v2) off the
/// front of the stream, before TLS, tells the handlers behind the client it names
/// (``ProxiedClient``), passes on the bytes after it and leaves the pipeline.
///
/// A connection that does not begin with a header keeps its own address, and all its bytes go
/// on as they came. A malformed or oversized header closes the connection, with a log line. The
/// header is bounded (107 bytes for v1, 16 + 2,048 for v2), read as it arrives like any other
/// input (no other connection waits for it), and must be finished within the line deadline of
/// its first byte (`--line-timeout`); a silent connection falls under the idle timeout as usual.
final class ProxyHeaderHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let timeoutSeconds: Int
    private let logger: Logger
    private var buffered: ByteBuffer?
    private var deadline: Scheduled<Void>?
    private var decided = false

    /// - Parameter timeoutSeconds: how long a header may take from its first byte; 0: no limit.
    init(timeoutSeconds: Int, logger: Logger) {
        self.timeoutSeconds = timeoutSeconds
        self.logger = logger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !decided else { return context.fireChannelRead(data) }
        var bytes = unwrapInboundIn(data)
        if buffered == nil {
            buffered = bytes
        } else {
            buffered!.writeBuffer(&bytes)
        }
        switch ProxyHeader.parse(buffered!.readableBytesView) {
        case .incomplete:
            armDeadline(context)
        case .none:
            decide(context, client: nil)
        case .header(let client, let length):
            buffered!.moveReaderIndex(forwardBy: length)
            decide(context, client: client)
        case .invalid(let reason):
            decided = true
            buffered = nil
            deadline?.cancel()
            logger.warning("closing: a malformed PROXY header from a trusted proxy", metadata: [
                "peer": "\(context.channel.remoteAddress.map { "\($0)" } ?? "?")", "reason": "\(reason)",
            ])
            context.close(promise: nil)
        }
    }

    /// The client went away, or the server is shutting down, before a header was complete: the
    /// connection keeps its own address, and what came goes on (an unfinished line, dropped).
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if !decided, case .some(.inputClosed) = event as? ChannelEvent { decide(context, client: nil) }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        context.fireChannelInactive()
    }

    /// Tells the handlers behind whom the connection is for, passes on the bytes after the
    /// header, and leaves.
    private func decide(_ context: ChannelHandlerContext, client: IPAddress?) {
        decided = true
        deadline?.cancel()
        deadline = nil
        let own = context.channel.remoteAddress?.ipAddress
        context.fireUserInboundEventTriggered(ProxiedClient(address: client?.description ?? own, named: client != nil))
        if let rest = buffered, rest.readableBytes > 0 { context.fireChannelRead(wrapInboundOut(rest)) }
        buffered = nil
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    /// Starts the header's deadline at its first byte.
    private func armDeadline(_ context: ChannelHandlerContext) {
        guard deadline == nil, timeoutSeconds > 0 else { return }
        deadline = context.eventLoop.assumeIsolated().scheduleTask(in: .seconds(Int64(timeoutSeconds))) { [self] in
            deadline = nil
            guard !decided else { return }
            decided = true
            buffered = nil
            logger.info("closing: a PROXY header not finished within the line deadline", metadata: [
                "peer": "\(context.channel.remoteAddress.map { "\($0)" } ?? "?")",
            ])
            context.close(promise: nil)
        }
    }
}
