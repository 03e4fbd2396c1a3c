import NIOCore
import ScavengerProtocol
import ScavengerServer
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
