import Foundation
import ScavengerTestSupport
import Testing

/// Rolling restarts behind a load balancer: `--drain-seconds`.
@Suite("The daemon as a process: draining before it stops")
struct DrainTests {
    /// Waits (a guard against a hang, not a measure) until the daemon's process has ended.
    static func ended(_ daemon: DaemonProcess) async throws -> Bool {
        try await eventually("the daemon ends") { !daemon.process.isRunning }
    }

    @Test("with --drain-seconds, SIGTERM turns /healthz to 503 while the daemon still serves, then it stops by itself; a SIGINT during a drain stops it at once", arguments: [
        ("2", false), ("600", true),
    ])
    func drain(seconds: String, interrupt: Bool) async throws {
        try await TestEnvironment.make().use { environment in
            let daemon = try await DaemonProcess(environment: environment, ["--http-port", "0", "--drain-seconds", seconds])
            try await eventually("the HTTP port listens") { daemon.httpPort != nil }
            let port = try #require(daemon.httpPort)
            #expect(try await eventually("healthy") { await HTTPStormTests.statusLine(port, hold: .zero) == "HTTP/1.1 200" })
            kill(daemon.process.processIdentifier, SIGTERM)
            #expect(try await eventually("draining") { await HTTPStormTests.statusLine(port, hold: .zero) == "HTTP/1.1 503" })
            if interrupt {
                // Still serving while it drains.
                #expect(daemon.process.isRunning)
                #expect(try await transcript(daemon.address, "PING\n") == [#"OK "PONG""#])
                kill(daemon.process.processIdentifier, SIGINT)
            }
            #expect(try await Self.ended(daemon), "\(daemon.stderr.suffix(2000))")
            #expect(daemon.process.terminationReason == .exit && daemon.process.terminationStatus == 0, "\(daemon.stderr.suffix(2000))")
            #expect(daemon.stderr.contains("SIGTERM: draining"))
            #expect(daemon.stderr.contains("drained: stopping"))
        }
    }

    @Test("without --drain-seconds, SIGTERM stops the daemon at once, as before")
    func noDrain() async throws {
        try await TestEnvironment.make().use { environment in
            let daemon = try await DaemonProcess(environment: environment, ["--http-port", "0"])
            try await eventually("the HTTP port listens") { daemon.httpPort != nil }
            kill(daemon.process.processIdentifier, SIGTERM)
            #expect(try await Self.ended(daemon), "\(daemon.stderr.suffix(2000))")
            #expect(!daemon.stderr.contains("draining"))
        }
    }
}
