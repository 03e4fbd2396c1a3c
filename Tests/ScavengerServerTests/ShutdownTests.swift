import Logging
import NIOCore
import ScavengerProtocol
import ScavengerServer
import ServiceLifecycle
import Synchronization
import Testing

@Suite("Graceful shutdown")
struct ShutdownTests {
    /// The standard table plus SLOW, which takes a while: a request in flight during shutdown.
    static let slowTable = CommandTable(CommandTable.standard.commands + [
        CommandSpec(
            "SLOW", arity: 0 ... 0, syntax: "SLOW", summary: "Sleeps 300 ms (tests only).",
            parse: { _ in () },
            execute: { _, _ in
                try await Task.sleep(for: .milliseconds(300))
                return CommandOutcome(.ok("DONE"))
            }),
    ])

    @Test("requests in flight finish, then connections close and the server stops")
    func finishesInFlight() async throws {
        try await withServer(table: Self.slowTable) { address, group in
            try await withTimeout {
                try await TestConnection.talk(address) { writer, reader in
                    try await writer.send("PING\n")
                    #expect(try await reader.next() == #"OK "PONG""#)
                    try await writer.send("SLOW\n")
                    try await Task.sleep(for: .milliseconds(50))
                    await group.triggerGracefulShutdown()
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
