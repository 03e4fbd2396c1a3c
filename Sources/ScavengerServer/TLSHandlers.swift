import NIOCore

/// Makes closing a TLS connection behave as the handlers behind expect of a TCP one. Sits right
/// behind `NIOSSLServerHandler`, whose remote half-closure is on: a client's close_notify after
/// pipelined requests then arrives as `ChannelEvent.inputClosed`, and every request before it
/// still gets its reply (without it, `NIOSSLServerHandler` would answer the close_notify with its
/// own and close, cutting those replies).
///
/// - Input: `NIOSSLServerHandler` fails `close(mode: .input)`, which graceful shutdown asks of every
///   connection. Here it ends the input instead: what the client sends afterwards is dropped, and
///   the handlers behind see `ChannelEvent.inputClosed` as if the client had half-closed, so each
///   finishes the requests it has and then closes. The TLS session goes on meanwhile, so those
///   replies still reach the client.
/// - All: with remote half-closure on, `NIOSSLServerHandler` closing first sends its close_notify
///   but does not finish when the client's close_notify or FIN comes back: it would hold the
///   connection for its shutdown timeout (5 s). So a full close starts with an output close
///   (close_notify, then FIN); once the client's FIN meets it the socket closes at once, and the
///   shutdown timeout is left for a client that never answers. When the client's close_notify
///   came first, the close is immediate either way.
/// - Both output and full closes run on the next tick, after a flush. A close asked for when a
///   write completes runs inside the socket's flush, which holds back what is written meanwhile
///   (the close_notify); if the socket closed in the same call, as it does once the client's
///   close_notify is in, it would drop it. And `NIOSSLServerHandler` drops writes still buffered
///   in it on a full close (a reply written during the handshake, when the client's close_notify
///   comes with its Finished), where a socket would have sent them.
final class TLSCloseAdapter: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = NIOAny
    typealias OutboundOut = NIOAny

    private var inputClosed = false
    private var removed = false

    func handlerRemoved(context: ChannelHandlerContext) {
        removed = true
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !inputClosed else { return }
        context.fireChannelRead(data)
    }

    /// The client's close_notify arrives as `inputClosed`: pass it on once, whichever side closed
    /// the input first.
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .some(.inputClosed) = event as? ChannelEvent {
            guard !inputClosed else { return }
            inputClosed = true
        }
        context.fireUserInboundEventTriggered(event)
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        switch mode {
        case .output:
            nextTick(context, orFail: promise) {
                context.flush()
                context.close(mode: .output, promise: promise)
            }
        case .all:
            nextTick(context, orFail: nil) {
                context.flush()
                context.close(mode: .output, promise: nil)
                context.close(mode: .all, promise: nil)
            }
            promise.map(context.channel.closeFuture.cascade(to:))
        case .input:
            // As a socket does: closing a closed input fails.
            guard !inputClosed else {
                promise?.fail(ChannelError.inputClosed)
                return
            }
            inputClosed = true
            promise?.succeed(())
            context.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        }
    }

    /// Runs `body` on the next tick of the event loop, unless the channel has closed by then.
    private func nextTick(_ context: ChannelHandlerContext, orFail promise: EventLoopPromise<Void>?, _ body: @escaping () -> Void) {
        context.eventLoop.assumeIsolated().execute { [self] in
            guard !removed else {
                promise?.fail(ChannelError.alreadyClosed)
                return
            }
            body()
        }
    }
}
