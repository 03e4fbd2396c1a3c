import Logging
import NIOCore
import NIOPosix
import NIOSSL
import ScavengerBoard
import ScavengerProtocol
import ScavengerServer
import ScavengerTestSupport
import ServiceLifecycle
import Testing

/// Runs a real server on an ephemeral port for the duration of `body`, then shuts it down
/// gracefully and waits until it has stopped.
func withServer(
    _ configuration: ServerConfiguration = ServerConfiguration(host: "127.0.0.1", port: 0),
    board: Board = OfflineBoard.shared,
    table: CommandTable = .standard,
    alongside extraServices: [any Service] = [],
    _ body: (SocketAddress, ServiceGroup) async throws -> Void
) async throws {
    try await withRunningServer(configuration, board: board, table: table, alongside: extraServices) { server, group in
        try await body(try await server.listeningAddress, group)
    }
}

/// ``withServer(_:board:table:alongside:_:)`` for a body that needs the server itself (its TLS
/// address, say).
func withRunningServer(
    _ configuration: ServerConfiguration = ServerConfiguration(host: "127.0.0.1", port: 0),
    board: Board = OfflineBoard.shared,
    table: CommandTable = .standard,
    alongside extraServices: [any Service] = [],
    _ body: (ScavengerServer, ServiceGroup) async throws -> Void
) async throws {
    var configuration = configuration
    configuration.port = 0
    var logger = Logger(label: "test-server")
    logger.logLevel = .warning
    let server = ScavengerServer(configuration: configuration, board: board, table: table, logger: logger)
    let group = ServiceGroup(
        configuration: .init(services: extraServices.map { .init(service: $0) } + [.init(service: server)], logger: logger))
    try await withThrowingTaskGroup(of: Void.self) { tasks in
        tasks.addTask { try await group.run() }
        _ = try await server.listeningAddress
        do {
            try await body(server, group)
        } catch {
            await group.triggerGracefulShutdown()
            throw error
        }
        await group.triggerGracefulShutdown()
        try await tasks.waitForAll()
    }
}

/// A raw TCP client, or a TLS one given a client context: sends bytes, reads reply lines.
struct TestConnection {
    let channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>

    /// The clients' event loops, apart from the servers' (`MultiThreadedEventLoopGroup.singleton`):
    /// a client's write or read then never waits behind another test's server work.
    static let clientGroup = MultiThreadedEventLoopGroup(numberOfThreads: 2)

    /// Connects; with `tls`, speaks TLS to a server that must prove it is `localhost`. With
    /// `source`, from that local address (any of 127.0.0.0/8 works on Linux), so a test can be
    /// several clients.
    static func open(_ address: SocketAddress, tls: NIOSSLContext? = nil, from source: String? = nil) async throws -> TestConnection {
        var bootstrap = ClientBootstrap(group: clientGroup)
            .channelOption(.allowRemoteHalfClosure, value: true)
        if let source { bootstrap = bootstrap.bind(to: try SocketAddress(ipAddress: source, port: 0)) }
        let channel = try await bootstrap
            .connect(to: address) { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tls {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: tls, serverHostname: "localhost"))
                    }
                    return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(
                        wrappingChannelSynchronously: channel,
                        configuration: .init(isOutboundHalfClosureEnabled: true))
                }
            }
        return TestConnection(channel: channel)
    }

    /// Runs a conversation: `body` gets a writer and a line reader; the connection closes after.
    static func talk<T: Sendable>(
        _ address: SocketAddress, tls: NIOSSLContext? = nil, from source: String? = nil,
        _ body: (Writer, inout LineReader) async throws -> T
    ) async throws -> T {
        let connection = try await open(address, tls: tls, from: source)
        return try await connection.channel.executeThenClose { inbound, outbound in
            var reader = LineReader(iterator: inbound.makeAsyncIterator())
            return try await body(Writer(outbound: outbound), &reader)
        }
    }

    struct Writer {
        let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>

        func send(_ text: String) async throws {
            try await outbound.write(ByteBuffer(string: text))
        }

        func send(bytes: [UInt8]) async throws {
            try await outbound.write(ByteBuffer(bytes: bytes))
        }

        /// Half-closes: the server sees end of input (over TLS, a close_notify, then FIN).
        func finish() {
            outbound.finish()
        }
    }

    struct LineReader {
        var iterator: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator
        var pending: [UInt8] = []
        /// How much of `pending` is known to hold no newline: a long line arriving in many reads
        /// is scanned once, not again from its start after each (which made reading the 100 MiB
        /// of the output tests quadratic, and slow enough in a debug build to hit their guard).
        var scanned = 0

        /// The next line without its `\n`, or nil once the server has closed.
        mutating func next() async throws -> String? {
            while true {
                if let newline = pending[scanned...].firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[..<newline], as: UTF8.self)
                    pending.removeSubrange(...newline)
                    scanned = 0
                    return line
                }
                scanned = pending.count
                guard let buffer = try await iterator.next() else { return nil }
                pending.append(contentsOf: buffer.readableBytesView)
            }
        }

        /// Reads lines until the server closes.
        mutating func rest() async throws -> [String] {
            var lines: [String] = []
            while let line = try await next() { lines.append(line) }
            return lines
        }
    }
}

/// Sends `request` on a fresh connection, half-closes, and returns every reply line.
func transcript(
    _ address: SocketAddress, tls: NIOSSLContext? = nil, from source: String? = nil, _ request: String
) async throws -> [String] {
    try await TestConnection.talk(address, tls: tls, from: source) { writer, reader in
        try await writer.send(request)
        writer.finish()
        return try await reader.rest()
    }
}
