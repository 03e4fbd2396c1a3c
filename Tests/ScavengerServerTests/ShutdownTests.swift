import Logging
import NIOCore
import ScavengerProtocol
import ScavengerServer
import ServiceLifecycle
import Synchronization
import Testing

@Suite("Graceful shutdown")
struct ShutdownTests {
    /// How many SLOW requests have started.
    static let slowStarted = Mutex(0)

    /// The standard table plus SLOW, which takes a while: a request in flight during shutdown.
    static let slowTable = CommandTable(CommandTable.standard.commands + [
        CommandSpec(
            "SLOW", arity: 0 ... 0, syntax: "SLOW", summary: "Sleeps 300 ms (tests only).",
            parse: { _ in () },
            execute: { _, _ in
                slowStarted.withLock { $0 += 1 }
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
                    let before = Self.slowStarted.withLock { $0 }
                    try await writer.send("SLOW\n")
                    // Shut down once the server is running it (a fixed wait loses on a busy host).
                    while Self.slowStarted.withLock({ $0 }) == before { try await Task.sleep(for: .milliseconds(5)) }
                    await group.triggerGracefulShutdown()
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
                    let before = Self.slowStarted.withLock { $0 }
                    try await writer.send("PING\nSLOW\n")
                    writer.finish()
                    #expect(try await reader.next() == #"OK "PONG""#)
                    while Self.slowStarted.withLock({ $0 }) == before { try await Task.sleep(for: .milliseconds(5)) }
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
