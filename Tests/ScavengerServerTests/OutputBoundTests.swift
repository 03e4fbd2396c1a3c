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
                        #expect(line.count == Self.bigReply.count + 5)
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
                    #expect(try await reader.next()?.count == Self.bigReply.count + 5)
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

    /// The standard table plus TICK name, answered from memory after 1 ms of work (tests only).
    static let table = CommandTable(CommandTable.standard.commands + [
        CommandSpec(
            "TICK", arity: 1 ... 1, syntax: "TICK name", summary: "Records name after 1 ms of work (tests only).",
            parse: { arguments in try arguments.required("name").text },
            answer: { name, _ in
                let until = ContinuousClock.now + .milliseconds(1)
                while ContinuousClock.now < until {}
                ticks.withLock { $0.append(name) }
                return CommandOutcome(.ok("TOCK"))
            }),
    ])

    @Test("a connection pipelining seconds of work does not make another on its event loop wait for all of it")
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
            let address = try await server.listeningAddress
            try await withTimeout(60) {
                try await TestConnection.talk(address) { greedy, greedyReader in
                    try await TestConnection.talk(address) { polite, politeReader in
                        // Both are open (on the one loop) before the burst starts.
                        try await polite.send("PING\n")
                        #expect(try await politeReader.next() == #"OK "PONG""#)
                        Self.ticks.withLock { $0 = [] }
                        try await greedy.send(String(repeating: "TICK greedy\n", count: 3000))
                        try await Task.sleep(for: .milliseconds(100))
                        // Counted from when polite's line is handed to the client, not from the
                        // burst's start: a busy test run can hold this task up while the server
                        // ticks on. The clients' event loops are shared with every other test's
                        // clients, so the line may still take a moment to leave: the bound
                        // is half the burst, where a server with no turns would run all of it first.
                        let sentAfter = Self.ticks.withLock { $0.count }
                        try await polite.send("TICK polite\n")
                        #expect(try await politeReader.next() == #"OK "TOCK""#)
                        let position = Self.ticks.withLock { $0.firstIndex(of: "polite") } ?? -1
                        #expect(sentAfter < 1500, "this test was held up until greedy's ticks were half done (\(sentAfter))")
                        #expect(position >= sentAfter && position - sentAfter < 1500,
                                "polite ran \(position - sentAfter) of greedy's ticks after it was sent (after \(sentAfter))")
                        for _ in 0 ..< 3000 { _ = try await greedyReader.next() }
                    }
                }
            }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        try await loop.shutdownGracefully()
    }
}
