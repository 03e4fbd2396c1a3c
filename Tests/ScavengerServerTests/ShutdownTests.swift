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
    /// The tags of the SLOW requests that have started: each test tags its own, since tests run
    /// in parallel.
    static let slowStarted = Mutex(Set<String>())

    /// The standard table plus SLOW, which takes a while: a request in flight during shutdown.
    static let slowTable = CommandTable(CommandTable.standard.commands + [
        CommandSpec(
            "SLOW", arity: 1 ... 1, syntax: "SLOW tag", summary: "Sleeps 300 ms (tests only).",
            parse: { arguments in try arguments.required("tag").text },
            execute: { tag, _ in
                _ = slowStarted.withLock { $0.insert(tag) }
                try await Task.sleep(for: .milliseconds(300))
                return CommandOutcome(.ok("DONE"))
            }),
    ])

    /// Returns once the server has started `SLOW tag`.
    static func waitForSlow(_ tag: String) async throws {
        while !slowStarted.withLock({ $0.contains(tag) }) { try await Task.sleep(for: .milliseconds(5)) }
    }

    @Test("requests in flight finish, then connections close and the server stops")
    func finishesInFlight() async throws {
        try await withServer(table: Self.slowTable) { address, group in
            try await withTimeout {
                try await TestConnection.talk(address) { writer, reader in
                    try await writer.send("PING\n")
                    #expect(try await reader.next() == #"OK "PONG""#)
                    try await writer.send("SLOW finishes\n")
                    // Shut down once the server is running it (a fixed wait loses on a busy host).
                    try await Self.waitForSlow("finishes")
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
                    try await writer.send("PING\nSLOW half-closed\n")
                    writer.finish()
                    #expect(try await reader.next() == #"OK "PONG""#)
                    try await Self.waitForSlow("half-closed")
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
