import Foundation
import Logging
import NIOCore
import NIOPosix
import ScavengerProtocol
import ScavengerServer
import ScavengerTestSupport
import ServiceLifecycle
import Synchronization
import Testing

@Suite("Replies bounded and never cut", .serialized)
struct OutputBoundTests {
    /// How many BIG requests the server has answered so far.
    static let answered = Mutex(0)
    static let bigReply = String(repeating: "x", count: 256 * 1024)
    /// The reply's JSON, encoded once, so answering costs a copy and the server is quick.
    static let bigJSON = JSON.raw(Array("\"\(bigReply)\"".utf8))

    /// The standard table plus BIG, answered from memory with a 256 KiB reply (tests only), and
    /// SLOWBIG, the same after a short wait (a deferred command).
    static let table = CommandTable(CommandTable.standard.commands + [
        CommandSpec(
            "BIG", arity: 0 ... 0, syntax: "BIG", summary: "A 256 KiB reply (tests only).",
            parse: { _ in () },
            answer: { _, _ in
                answered.withLock { $0 += 1 }
                return CommandOutcome(.ok(bigJSON))
            }),
        CommandSpec(
            "SLOWBIG", arity: 0 ... 0, syntax: "SLOWBIG", summary: "A 256 KiB reply after 1 ms (tests only).",
            parse: { _ in () },
            execute: { _, _ in
                try await Task.sleep(for: .milliseconds(1))
                return CommandOutcome(.ok(bigJSON))
            }),
    ])

    @Test("a client that pipelines and does not read makes the server stop answering it, then every reply arrives")
    func unreadRepliesStopTheServer() async throws {
        let requests = 400  // 100 MiB of replies if the server answered them all
        try await withServer(ServerConfiguration(outputHighWaterBytes: 64 * 1024), table: Self.table) { address, _ in
            try await withTimeout(60) {
                Self.answered.withLock { $0 = 0 }
                try await TestConnection.talk(address) { writer, reader in
                    try await writer.send(String(repeating: "BIG\n", count: requests))
                    // Once it has begun answering, give the server time to answer more than it
                    // should. (A slow machine only makes it answer fewer: the bound cannot fail
                    // for that.)
                    try await eventually("the server has begun answering") { Self.answered.withLock { $0 } > 0 }
                    try await Task.sleep(for: .milliseconds(500))
                    // What the socket buffers on both sides and the client's own read-ahead hold,
                    // and no more: a few tens of replies, not thousands.
                    let early = Self.answered.withLock { $0 }
                    #expect(early < 100, "answered \(early) of \(requests) requests nobody read")
                    // Others are still served meanwhile.
                    #expect(try await transcript(address, "PING\n") == [#"OK "PONG""#])
                    writer.finish()
                    var received = 0
                    while let line = try await reader.next() {
                        #expect(line.utf8.count == Self.bigReply.utf8.count + 5)
                        received += 1
                    }
                    #expect(received == requests)
                }
            }
        }
    }

    @Test("after a half-close every pipelined request gets its whole reply", arguments: ["BIG", "SLOWBIG", "HELP"])
    func halfCloseKeepsReplies(command: String) async throws {
        let requests = 100
        try await withServer(ServerConfiguration(outputHighWaterBytes: 64 * 1024), table: Self.table) { address, _ in
            try await withTimeout(60) {
                let lines = try await transcript(address, String(repeating: "\(command)\nPING\n", count: requests))
                #expect(lines.count == 2 * requests)
                #expect(lines.last.map { $0 == #"OK "PONG""# } == true, "the last reply is not PING's")
                #expect(lines.allSatisfy { $0.hasPrefix("OK ") })
            }
        }
    }

    @Test("on graceful shutdown, requests already received get their whole replies")
    func shutdownKeepsReplies() async throws {
        let requests = 100
        try await withServer(ServerConfiguration(outputHighWaterBytes: 64 * 1024), table: Self.table) { address, group in
            try await withTimeout(60) {
                try await TestConnection.talk(address) { writer, reader in
                    try await writer.send(String(repeating: "BIG\n", count: requests) + "PING\n")
                    #expect(try await reader.next()?.utf8.count == Self.bigReply.utf8.count + 5)
                    await group.triggerGracefulShutdown()
                    let rest = try await reader.rest()
                    #expect(rest.count == requests)
                    #expect(rest.last.map { $0 == #"OK "PONG""# } == true, "the last reply is not PING's")
                }
            }
        }
    }
}

@Suite("Fair turns on an event loop")
struct FairnessTests {
    /// The order TICK requests ran in, by their argument.
    static let ticks = Mutex<[String]>([])
    /// HOLD has begun holding the event loop; it holds it until `released`.
    static let holding = Atomic<Bool>(false)
    static let released = Atomic<Bool>(false)

    /// The standard table plus TICK name, which records its name, and HOLD, which keeps the event
    /// loop until the test releases it (tests only).
    static let table = CommandTable(CommandTable.standard.commands + [
        CommandSpec(
            "TICK", arity: 1 ... 1, syntax: "TICK name", summary: "Records name (tests only).",
            parse: { arguments in try arguments.required("name").text },
            answer: { name, _ in
                ticks.withLock { $0.append(name) }
                return CommandOutcome(.ok("TOCK"))
            }),
        CommandSpec(
            "HOLD", arity: 0 ... 0, syntax: "HOLD", summary: "Keeps the event loop until released (tests only).",
            parse: { _ in () },
            answer: { _, _ in
                holding.store(true, ordering: .sequentiallyConsistent)
                while !released.load(ordering: .sequentiallyConsistent) { usleep(1000) }
                return CommandOutcome(.ok("HELD"))
            }),
    ])

    @Test("a connection pipelining a long burst does not make another on its event loop wait for all of it")
    func otherConnectionsGetTurns() async throws {
        let loop = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        var logger = Logger(label: "fairness")
        logger.logLevel = .critical
        let server = ScavengerServer(
            configuration: ServerConfiguration(host: "127.0.0.1", port: 0), board: OfflineBoard.shared, table: Self.table,
            group: loop, logger: logger)
        let group = ServiceGroup(configuration: .init(services: [.init(service: server)], logger: logger))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            let port = try #require(try await server.listeningAddress.port)
            defer { Self.released.store(true, ordering: .sequentiallyConsistent) }
            // A guard against a hang only: the outcome is the order in `ticks`.
            try await withTimeout(300) {
                // Blocking sockets, so the test can see when its bytes are in the server's hands.
                let greedy = try BlockingLineClient(port: port)
                let polite = try BlockingLineClient(port: port)
                // Both are open (on the one loop) before the burst.
                #expect(try await polite.call("PING") == #"OK "PONG""#)
                Self.ticks.withLock { $0 = [] }
                Self.holding.store(false, ordering: .sequentiallyConsistent)
                Self.released.store(false, ordering: .sequentiallyConsistent)
                // The loop is held while greedy's burst, then polite's line, reach the server: when
                // it is let go, both wait to be read, and the burst came first. No clock decides
                // anything: the positions in `ticks` are the outcome.
                try await greedy.write("HOLD\n")
                try await eventually("HOLD holds the loop") { Self.holding.load(ordering: .sequentiallyConsistent) }
                try await greedy.write(String(repeating: "TICK greedy\n", count: 3000))
                try await eventually("greedy's burst is in the server's receive buffer") { try greedy.unacknowledgedBytes == 0 }
                try await polite.write("TICK polite\n")
                try await eventually("polite's line is in the server's receive buffer") { try polite.unacknowledgedBytes == 0 }
                Self.released.store(true, ordering: .sequentiallyConsistent)
                #expect(try await polite.readLine() == #"OK "TOCK""#)
                #expect(try await greedy.readLine() == #"OK "HELD""#)
                // One thread reads the whole burst's replies (a thread per line took minutes on a
                // loaded machine).
                #expect(try await greedy.readLines(3000) == Array(repeating: #"OK "TOCK""#, count: 3000))
                let ran = Self.ticks.withLock { $0 }
                #expect(ran.count == 3001)
                // Turns of 64 lines: polite runs after a turn of greedy's (a few, should the loop
                // thread be held up between turns), where a server with no turns runs the whole
                // burst first. The bound is half the burst: far from both.
                let position = ran.firstIndex(of: "polite") ?? -1
                #expect(position >= 0 && position < 1500, "polite ran after \(position) of greedy's ticks")
            }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        try await loop.shutdownGracefully()
    }
}
