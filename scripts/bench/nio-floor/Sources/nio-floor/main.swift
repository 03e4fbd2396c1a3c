// nio-floor PORT [THREADS]: answers every line with scavengerd's PING reply, `OK "PONG"`, and
// does nothing else: no parsing, no per-line allocation, one flush per read. What it costs per
// request is the floor under any SwiftNIO line server on the same machine.
#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import NIOPosix

final class PongHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var reply: ByteBuffer?
    private var wrote = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = unwrapInboundIn(data)
        let reply = self.reply ?? context.channel.allocator.buffer(string: "OK \"PONG\"\n")
        self.reply = reply
        for byte in bytes.readableBytesView where byte == UInt8(ascii: "\n") {
            context.write(wrapOutboundOut(reply), promise: nil)
            wrote = true
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        guard wrote else { return }
        wrote = false
        context.flush()
    }
}

let arguments = CommandLine.arguments
guard arguments.count >= 2, let port = Int(arguments[1]) else {
    print("usage: nio-floor PORT [THREADS]")
    exit(2)
}
let threads = arguments.count >= 3 ? Int(arguments[2]) ?? System.coreCount : System.coreCount
let group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
let server = try ServerBootstrap(group: group)
    .serverChannelOption(.backlog, value: 256)
    .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
    .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
    .childChannelInitializer { channel in
        channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(PongHandler()) }
    }
    .bind(host: "127.0.0.1", port: port).wait()
try server.closeFuture.wait()
