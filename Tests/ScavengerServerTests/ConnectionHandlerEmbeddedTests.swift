import Foundation
import Logging
import NIOCore
import NIOEmbedded
import Postgres
import ScavengerBoard
import ScavengerCore
import ScavengerFeed
import ScavengerProtocol
import ScavengerStore
import ScavengerTestSupport
import Sodium
import Testing

@testable import ScavengerServer

/// The connection handler on an `EmbeddedChannel`: no sockets, time advanced by hand.
///
/// The tests are synchronous: an `EmbeddedEventLoop` may only be used from the thread that made it,
/// and a deferred command's task runs on it (the test opens the command's gate on that thread too).
@Suite("Connection handler on an embedded channel")
struct ConnectionHandlerEmbeddedTests {
    /// Stands where the socket would: counts the reads asked of it and notes an output close, which
    /// it does not pass on (an `EmbeddedChannel` would close both sides).
    final class Socket: ChannelOutboundHandler {
        typealias OutboundIn = NIOAny
        var reads = 0
        var outputClosed = false

        func read(context: ChannelHandlerContext) {
            reads += 1
            context.read()
        }

        func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
            guard mode == .output else { return context.close(mode: mode, promise: promise) }
            outputClosed = true
            promise?.succeed(())
        }
    }

    /// One connection: a handler behind a ``Socket`` on an active embedded channel.
    final class Connection {
        let channel = EmbeddedChannel()
        let socket = Socket()
        var loop: EmbeddedEventLoop { channel.embeddedEventLoop }

        init(
            _ configuration: ServerConfiguration = ServerConfiguration(), table: CommandTable = .standard,
            board: Board = OfflineBoard.shared,
            registry: ConnectionRegistry? = nil
        ) throws {
            var logger = Logger(label: "embedded-connection")
            logger.logLevel = .critical
            // By default the connection limits are the configuration's, as the server makes them.
            let registry = registry ?? ConnectionRegistry(limits: ConnectionLimits(
                maximum: configuration.maxConnections, maximumPerAddress: configuration.maxConnectionsPerAddress))
            let handler = ConnectionHandler(
                table: table, board: board, registry: registry, configuration: configuration, logger: logger)
            try channel.pipeline.syncOperations.addHandler(socket)
            try channel.pipeline.syncOperations.addHandler(handler)
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 7467)).wait()
            channel.read()
        }

        /// The client sends `text`: one read, then, as NIO does after a read, a request for the next.
        func send(_ text: String) throws {
            try channel.writeInbound(ByteBuffer(string: text))
            channel.read()
        }

        /// The client closes its side.
        func finish() {
            channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        }

        /// The output goes above its high-water mark, or back below it.
        func writable(_ writable: Bool) {
            channel.isWritable = writable
            channel.pipeline.fireChannelWritabilityChanged()
        }

        /// The lines flushed to the client since the last call.
        func lines() throws -> [String] {
            var text = ""
            while let buffer = try channel.readOutbound(as: ByteBuffer.self) { text += String(buffer: buffer) }
            var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            #expect(lines.removeLast() == "", "a reply line was cut")
            return lines
        }

        var isOpen: Bool { channel.isActive }

        /// Closes what is still open and runs or cancels every timer left.
        func end() throws {
            _ = try channel.finish(acceptAlreadyClosed: true)
            try loop.syncShutdownGracefully()
        }
    }

    static let pong = #"OK "PONG""#

    /// The standard table plus WAIT, a command that awaits until the test opens its gate.
    static func table(_ gate: Gate) -> CommandTable {
        CommandTable(CommandTable.standard.commands + [
            CommandSpec(
                "WAIT", arity: 0 ... 0, syntax: "WAIT", summary: "Answers once the test lets it (tests only).",
                parse: { _ in () },
                execute: { _, _ in
                    await gate.wait()
                    return CommandOutcome(.ok("DONE"))
                }),
        ])
    }

    @Test("pipelined lines get their replies byte for byte, in order; QUIT's reply is the last, then the close")
    func pipelined() throws {
        let connection = try Connection()
        try connection.send("PING\n\nHELP PING\nNOPE\nQUIT\nPING\n")
        let lines = try connection.lines()
        #expect(lines == [
            Self.pong,
            #"OK {"command":"PING","syntax":"PING","summary":"Answers \"PONG\".","flags":["readonly"]}"#,
            "ERR UNKNOWN_COMMAND unknown command 'NOPE'; HELP lists the commands",
            #"OK "BYE""#,
        ])
        #expect(!connection.isOpen)
        try connection.end()
    }

    @Test("lines behind a command wait for its reply; reading stops once 64 wait, and resumes")
    func commandInFlight() throws {
        let gate = Gate()
        let connection = try Connection(table: Self.table(gate))
        try connection.send("WAIT\n" + String(repeating: "PING\n", count: ConnectionHandler.maximumQueuedLines))
        connection.loop.run()
        #expect(try connection.lines() == [])
        // The read after that one was held back: the queue is full.
        #expect(connection.socket.reads == 1)
        gate.open()
        connection.loop.run()
        #expect(try connection.lines() == [#"OK "DONE""#] + Array(repeating: Self.pong, count: ConnectionHandler.maximumQueuedLines))
        #expect(connection.socket.reads == 2)
        #expect(connection.isOpen)
        try connection.end()
    }

    @Test("above the output's mark nothing is answered and nothing read; below it, both resume")
    func heldBackByOutput() throws {
        let connection = try Connection()
        try connection.send("PING\n")
        #expect(try connection.lines() == [Self.pong])
        connection.writable(false)
        let reads = connection.socket.reads
        try connection.send("PING\nPING\n")
        #expect(try connection.lines() == [])
        #expect(connection.socket.reads == reads)
        connection.writable(true)
        #expect(try connection.lines() == [Self.pong, Self.pong])
        #expect(connection.socket.reads == reads + 1)
        try connection.end()
    }

    @Test("a connection answers 64 lines in a row, then the rest after the turn gap")
    func turns() throws {
        let connection = try Connection()
        try connection.send(String(repeating: "PING\n", count: 100))
        #expect(try connection.lines().count == ConnectionHandler.linesPerTurn)
        connection.loop.advanceTime(by: ConnectionHandler.turnGap)
        #expect(try connection.lines().count == 100 - ConnectionHandler.linesPerTurn)
        try connection.end()
    }

    @Test("after the client's FIN, lines received are answered, an unfinished one dropped, then the connection closes")
    func halfClosed() throws {
        let gate = Gate()
        let connection = try Connection(table: Self.table(gate))
        try connection.send("WAIT\nPING\nPI")
        connection.finish()
        connection.loop.run()
        #expect(try connection.lines() == [])
        #expect(connection.isOpen)
        gate.open()
        connection.loop.run()
        #expect(try connection.lines() == [#"OK "DONE""#, Self.pong])
        #expect(!connection.isOpen)
        try connection.end()
    }

    @Test("LINE_TOO_LONG: the error, our side shut, input dropped for the linger, then the close")
    func lineTooLong() throws {
        let connection = try Connection(ServerConfiguration(limits: ProtocolLimits(maxLineBytes: 16)))
        try connection.send("PING\n" + String(repeating: "x", count: 40))
        #expect(try connection.lines() == [Self.pong, "ERR LINE_TOO_LONG request line longer than 16 bytes; closing"])
        #expect(connection.socket.outputClosed)
        try connection.send("PING\n")
        #expect(try connection.lines() == [])
        connection.loop.advanceTime(by: .seconds(ConnectionHandler.lingerSeconds) - .nanoseconds(1))
        #expect(connection.isOpen)
        connection.loop.advanceTime(by: .nanoseconds(1))
        #expect(!connection.isOpen)
        try connection.end()
    }

    @Test("while lingering, the client's FIN closes at once")
    func lingerEndsAtFIN() throws {
        let connection = try Connection(ServerConfiguration(limits: ProtocolLimits(maxLineBytes: 16)))
        try connection.send(String(repeating: "x", count: 40))
        #expect(try connection.lines() == ["ERR LINE_TOO_LONG request line longer than 16 bytes; closing"])
        #expect(connection.isOpen)
        connection.finish()
        #expect(!connection.isOpen)
        try connection.end()
    }

    @Test("LINE_TOO_LONG behind a command after the client's FIN: the replies, the error, then the close at once")
    func lineTooLongAfterFIN() throws {
        let gate = Gate()
        let connection = try Connection(ServerConfiguration(limits: ProtocolLimits(maxLineBytes: 16)), table: Self.table(gate))
        try connection.send("WAIT\nPING\n" + String(repeating: "x", count: 40))
        connection.finish()
        connection.loop.run()
        #expect(connection.isOpen)
        gate.open()
        connection.loop.run()
        #expect(try connection.lines() == [
            #"OK "DONE""#, Self.pong, "ERR LINE_TOO_LONG request line longer than 16 bytes; closing",
        ])
        #expect(!connection.isOpen)
        try connection.end()
    }

    @Test("an unfinished line gets its error at the line deadline, then the connection lingers")
    func lineDeadline() throws {
        let connection = try Connection(ServerConfiguration(lineTimeoutSeconds: 1))
        try connection.send("PING\nPI")
        connection.loop.advanceTime(by: .milliseconds(999))
        #expect(try connection.lines() == [Self.pong])
        connection.loop.advanceTime(by: .milliseconds(1))
        #expect(try connection.lines() == ["ERR BAD_REQUEST request line not finished within 1 s; closing"])
        #expect(connection.socket.outputClosed)
        connection.loop.advanceTime(by: .seconds(ConnectionHandler.lingerSeconds))
        #expect(!connection.isOpen)
        try connection.end()
    }

    @Test("only time spent waiting for the client counts toward the line deadline")
    func lineDeadlineWhileHeldBack() throws {
        let connection = try Connection(ServerConfiguration(lineTimeoutSeconds: 1))
        // The read after the line's first bytes is held back: the client is not the one we wait for.
        connection.writable(false)
        try connection.send("PI")
        connection.loop.advanceTime(by: .seconds(5))
        #expect(try connection.lines() == [])
        #expect(connection.isOpen)
        connection.writable(true)
        connection.loop.advanceTime(by: .seconds(1))
        #expect(try connection.lines() == ["ERR BAD_REQUEST request line not finished within 1 s; closing"])
        try connection.end()
    }

    @Test("the line deadline's error comes after the replies owed")
    func lineDeadlineAfterReplies() throws {
        let gate = Gate()
        let connection = try Connection(ServerConfiguration(lineTimeoutSeconds: 1), table: Self.table(gate))
        try connection.send("WAIT\nPING\nPI")
        connection.loop.advanceTime(by: .seconds(1))
        // Input after the deadline is dropped.
        try connection.send("NG\n")
        #expect(try connection.lines() == [])
        gate.open()
        connection.loop.run()
        #expect(try connection.lines() == [
            #"OK "DONE""#, Self.pong, "ERR BAD_REQUEST request line not finished within 1 s; closing",
        ])
        #expect(connection.socket.outputClosed)
        try connection.end()
    }

    @Test("a connection that reads nothing for the idle timeout is closed; each read puts it off")
    func idleTimeout() throws {
        let connection = try Connection(ServerConfiguration(idleTimeoutSeconds: 5))
        connection.loop.advanceTime(by: .seconds(4))
        try connection.send("PING\n")
        connection.loop.advanceTime(by: .seconds(4))
        #expect(connection.isOpen)
        connection.loop.advanceTime(by: .seconds(1))
        #expect(!connection.isOpen)
        try connection.end()
    }

    @Test("a connection over the limit gets UNAVAILABLE, then lingers")
    func refused() throws {
        let connection = try Connection(ServerConfiguration(maxConnections: 0))
        #expect(try connection.lines() == ["ERR UNAVAILABLE the server is at its connection limit (0); retry later"])
        #expect(connection.socket.outputClosed)
        try connection.send("PING\n")
        #expect(try connection.lines() == [])
        connection.loop.advanceTime(by: .seconds(ConnectionHandler.lingerSeconds))
        #expect(!connection.isOpen)
        try connection.end()
    }

    @Test("past the refusals being answered, a refused connection is closed unanswered; each answered one frees its place as it closes")
    func refusalsHoldDescriptors() throws {
        let limits = ConnectionLimits(maximum: 0, maximumPerAddress: 1, maximumRefusing: 2)
        let registry = ConnectionRegistry(limits: limits)
        let configuration = ServerConfiguration(maxConnections: 0)
        let first = try Connection(configuration, registry: registry)
        let second = try Connection(configuration, registry: registry)
        #expect(limits.refusing == 2)
        let third = try Connection(configuration, registry: registry)
        #expect(try third.lines() == [])
        #expect(!third.isOpen)
        #expect(limits.refusing == 2)
        for refused in [first, second] {
            #expect(try refused.lines() == ["ERR UNAVAILABLE the server is at its connection limit (0); retry later"])
            refused.loop.advanceTime(by: .seconds(ConnectionHandler.lingerSeconds))
            #expect(!refused.isOpen)
        }
        #expect(limits.refusing == 0)
        let fourth = try Connection(configuration, registry: registry)
        #expect(try fourth.lines() == ["ERR UNAVAILABLE the server is at its connection limit (0); retry later"])
        for connection in [first, second, third, fourth] { try? connection.end() }
    }

    /// A real board on an empty feed of its own, whose watch hub the test can reach.
    static func boardWithHub(pins: [IndexedPin] = [], place: Int64 = 0) -> (Board, WatchHub) {
        let configuration = PostgresConfiguration(connectionString: "postgresql://127.0.0.1:1/unreachable?connect_timeout=2")
        var logger = Logger(label: "embedded-board")
        logger.logLevel = .critical
        let feed = Feed(database: Database(pool: PostgresPool(configuration: configuration, maxConnections: 1)), logger: logger)
        feed.loadOffline(pins, place: place)
        return (Board(feed: feed, passwords: PasswordHasher(parameters: .minimum)), feed.watches)
    }

    @Test("watch events wait while the output is above its mark, then come between replies; none once closing")
    func events() throws {
        let (board, hub) = Self.boardWithHub()
        let connection = try Connection(board: board)
        try connection.send("WATCH 10 20 1000\n")
        #expect(try connection.lines() == [#"OK {"watch":"w1","seq":0,"resumed":false}"#])
        connection.writable(false)
        hub.overflowAll()
        connection.loop.run()
        #expect(try connection.lines() == [])
        connection.writable(true)
        #expect(try connection.lines() == [#"EVENT {"watch":"w1","type":"overflow"}"#])
        try connection.send("WATCH 10 20 1000\nQUIT\n")
        #expect(try connection.lines() == [#"OK {"watch":"w2","seq":0,"resumed":false}"#, #"OK "BYE""#])
        hub.overflowAll()
        connection.loop.run()
        #expect(try connection.lines() == [])
        try connection.end()
    }

    @Test("WATCH … SNAPSHOT: the OK first, then the pins inside at the reply's seq, then ready; nothing from outside")
    func snapshotAfterTheReply() throws {
        let far = Timestamp(microseconds: Int64(Date().timeIntervalSince1970 * 1_000_000) + 3_600_000_000)
        let inside = "p" + String(repeating: "a", count: 24), outside = "p" + String(repeating: "b", count: 24)
        let pins = [(inside, 10.0), (outside, 11.0)].map { id, lat in
            IndexedPin(id: id, lat: lat, lon: 20, kind: .text, text: id, author: "a", created: Timestamp(microseconds: 0), expires: far)
        }
        let (board, _) = Self.boardWithHub(pins: pins, place: 7)
        let connection = try Connection(board: board)
        try connection.send("WATCH 10 20 1000 SNAPSHOT\n")
        // The events come through the event loop, after the reply.
        var lines = try connection.lines()
        #expect(lines == [#"OK {"watch":"w1","seq":7,"resumed":false}"#])
        connection.loop.run()
        lines += try connection.lines()
        #expect(lines.count == 3)
        #expect(lines.first == #"OK {"watch":"w1","seq":7,"resumed":false}"#)
        #expect(lines.dropFirst().first?.hasPrefix(#"EVENT {"watch":"w1","type":"pin","seq":7,"pin":{"id":"\#(inside)""#) == true, "\(lines)")
        #expect(lines.last == #"EVENT {"watch":"w1","type":"ready","seq":7}"#)
        try connection.end()
    }
}
