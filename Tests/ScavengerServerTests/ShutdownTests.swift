import Logging
import NIOCore
import ScavengerProtocol
import ScavengerServer
import ScavengerTestSupport
import ServiceLifecycle
import Synchronization
import Testing

@Suite("Graceful shutdown")
struct ShutdownTests {
    /// The SLOW requests that have started, by tag, and what lets each finish: each test tags
    /// its own, since tests run in parallel.
    static let slowStarted = Mutex<[String: Gate]>([:])

    /// The standard table plus SLOW, which runs until the test lets it finish: a request surely
    /// in flight during shutdown, however slow or fast the machine.
    static let slowTable = CommandTable(CommandTable.standard.commands + [
        CommandSpec(
            "SLOW", arity: 1 ... 1, syntax: "SLOW tag", summary: "Waits until the test lets it finish (tests only).",
            parse: { arguments in try arguments.required("tag").text },
            execute: { tag, _ in
                let gate = Gate()
                slowStarted.withLock { $0[tag] = gate }
                await gate.wait()
                return CommandOutcome(.ok("DONE"))
            }),
    ])

    /// Returns once the server has started `SLOW tag`.
    static func waitForSlow(_ tag: String) async throws {
        try await eventually("SLOW \(tag) has started") { slowStarted.withLock { $0[tag] != nil } }
    }

    /// Once the shutdown is under way (the listener at `address` refuses connections), lets
    /// `SLOW tag` finish.
    static func finishSlowDuringShutdown(_ tag: String, listener address: SocketAddress) async throws {
        try await eventually("the listener is closed") {
            guard let connection = try? await TestConnection.open(address) else { return true }
            try? await connection.channel.channel.close()
            return false
        }
        slowStarted.withLock { $0[tag] }?.open()
    }

    @Test("requests in flight finish, then connections close and the server stops")
    func finishesInFlight() async throws {
        try await withServer(table: Self.slowTable) { address, group in
            try await withTimeout {
                try await TestConnection.talk(address) { writer, reader in
                    try await writer.send("PING\n")
                    #expect(try await reader.next() == #"OK "PONG""#)
                    try await writer.send("SLOW finishes\n")
                    // Shut down once the server is running it; it finishes once the shutdown is under way.
                    try await Self.waitForSlow("finishes")
                    await group.triggerGracefulShutdown()
                    try await Self.finishSlowDuringShutdown("finishes", listener: address)
                    #expect(try await reader.next() == #"OK "DONE""#)
                    #expect(try await reader.next() == nil)
                }
            }
        }
    }

    @Test("a client that has half-closed still gets the reply in flight at shutdown")
    func halfClosedFinishesInFlight() async throws {
        try await withServer(table: Self.slowTable) { address, group in
            try await withTimeout {
                try await TestConnection.talk(address) { writer, reader in
                    try await writer.send("PING\nSLOW half-closed\n")
                    writer.finish()
                    #expect(try await reader.next() == #"OK "PONG""#)
                    try await Self.waitForSlow("half-closed")
                    await group.triggerGracefulShutdown()
                    try await Self.finishSlowDuringShutdown("half-closed", listener: address)
                    #expect(try await reader.next() == #"OK "DONE""#)
                    #expect(try await reader.next() == nil)
                }
            }
        }
    }

    @Test("idle connections are closed on shutdown")
    func closesIdle() async throws {
        try await withServer { address, group in
            try await withTimeout {
                try await TestConnection.talk(address) { writer, reader in
                    try await writer.send("PING\n")
                    #expect(try await reader.next() == #"OK "PONG""#)
                    await group.triggerGracefulShutdown()
                    #expect(try await reader.next() == nil)
                }
            }
        }
    }
}
