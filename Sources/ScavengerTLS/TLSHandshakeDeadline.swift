import NIOCore
import NIOTLS

/// Closes a TLS connection whose handshake has not finished within a deadline of connecting, so
/// a client that trickles its handshake (whose bytes the idle timeout never sees) cannot hold a
/// connection open. Sits right behind `NIOSSLServerHandler` and leaves once the handshake is done.
public final class TLSHandshakeDeadline: ChannelInboundHandler, RemovableChannelHandler {
    public typealias InboundIn = NIOAny

    private let seconds: Int64
    private var deadline: Scheduled<Void>?

    /// Closes the connection `seconds` after it became active unless its handshake is done.
    public init(seconds: Int) {
        self.seconds = Int64(seconds)
    }

    public func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { arm(context) }
    }

    public func handlerRemoved(context: ChannelHandlerContext) {
        cancel()
    }

    public func channelActive(context: ChannelHandlerContext) {
        arm(context)
        context.fireChannelActive()
    }

    public func channelInactive(context: ChannelHandlerContext) {
        cancel()
        context.fireChannelInactive()
    }

    public func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        let completed = if case .handshakeCompleted = event as? TLSUserEvent { true } else { false }
        context.fireUserInboundEventTriggered(event)
        if completed {
            cancel()
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
    }

    private func arm(_ context: ChannelHandlerContext) {
        guard deadline == nil else { return }
        deadline = context.eventLoop.assumeIsolated().scheduleTask(in: .seconds(seconds)) { [self] in
            deadline = nil
            context.close(promise: nil)
        }
    }

    private func cancel() {
        deadline?.cancel()
        deadline = nil
    }
}
