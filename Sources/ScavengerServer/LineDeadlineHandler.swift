import NIOCore

/// Closes a connection whose request line is not finished within a deadline of its first byte,
/// so a client trickling a byte at a time cannot hold a connection open (the idle timeout alone
/// restarts on every byte). Only time the server spends waiting for the client counts: while
/// the connection handler holds reads back (its queue is full, or the client is not reading its
/// replies), the deadline is pushed back.
final class LineDeadlineHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let seconds: Int64
    private var deadline: Scheduled<Void>?
    /// A read was asked of the socket and no data has come since: the server is waiting.
    private var waitingForClient = false

    init(seconds: Int) {
        self.seconds = Int64(seconds)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        waitingForClient = false
        let view = unwrapInboundIn(data).readableBytesView
        if let newline = view.lastIndex(of: UInt8(ascii: "\n")) {
            // The line in progress, if any, starts after the last newline.
            cancel()
            if newline != view.index(before: view.endIndex) { arm(context) }
        } else if deadline == nil, !view.isEmpty {
            arm(context)
        }
        context.fireChannelRead(data)
    }

    func read(context: ChannelHandlerContext) {
        waitingForClient = true
        context.read()
    }

    func channelInactive(context: ChannelHandlerContext) {
        cancel()
        context.fireChannelInactive()
    }

    private func arm(_ context: ChannelHandlerContext) {
        deadline = context.eventLoop.assumeIsolated().scheduleTask(in: .seconds(seconds)) { [self] in
            deadline = nil
            guard waitingForClient else {
                // Reads are held back by the server: the client is not the one making us wait.
                arm(context)
                return
            }
            var reply = context.channel.allocator.buffer(capacity: 96)
            reply.writeString("ERR BAD_REQUEST request line not finished within \(seconds) s; closing\n")
            context.writeAndFlush(wrapOutboundOut(reply)).assumeIsolated().whenComplete { _ in
                context.close(promise: nil)
            }
        }
    }

    private func cancel() {
        deadline?.cancel()
        deadline = nil
    }
}
