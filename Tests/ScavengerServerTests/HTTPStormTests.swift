import Foundation
import NIOCore
import ScavengerTestSupport
import Testing

/// The HTTP port under the daemon's connection limits, as a process with few descriptors.
@Suite("The HTTP port as a process")
struct HTTPStormTests {
    /// One plain request on a connection of its own: the status line, "closed" when the server
    /// closed without one, "failed" when the connection could not be made.
    /// With `until`, the connection is held (after its status line) until the gate opens.
    /// With `webSocket`, the request is a WebSocket upgrade of `/ws`.
    static func statusLine(
        _ port: Int, hold: Duration, webSocket: Bool = false, until gate: (arrived: @Sendable () -> Void, gate: Gate)? = nil
    ) async -> String {
        let request = webSocket
            ? "GET /ws HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
            : "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n"
        do {
            let address = try SocketAddress(ipAddress: "127.0.0.1", port: port)
            return try await TestConnection.talk(address) { writer, reader in
                try? await writer.send(request)
                let line = try await reader.next() ?? "closed"
                // Everyone holds on a moment, refused or not: descriptors run out.
                try await Task.sleep(for: hold)
                if let gate {
                    gate.arrived()
                    await gate.gate.wait()
                }
                return String(line.prefix(12))
            }
        } catch {
            gate?.arrived()
            return "failed"
        }
    }

    @Test("a storm of HTTP connections from one address under a low open-file limit: answered or refused with 503, none left hanging; then served again")
    func descriptorStorm() async throws {
        try await TestEnvironment.make().use { environment in
        let daemon = try await DaemonProcess(
            environment: environment, openFiles: 256,
            ["--http-port", "0", "--max-connections", "1000", "--max-connections-per-address", "1000", "--database-connections", "2"])
        try await eventually("the daemon logs its HTTP port") { daemon.httpPort != nil }
        let httpPort = daemon.httpPort
        let port = try #require(httpPort, "no HTTP port in \(daemon.stderr.suffix(2000))")
        let seen = try await DaemonProcess.storm(300) { index in
            await Self.statusLine(port, hold: .seconds(index < 100 ? 2 : 1))
        }
        #expect(seen["hung"] == nil, "\(seen)")
        #expect((seen["HTTP/1.1 200"] ?? 0) + (seen["HTTP/1.1 503"] ?? 0) > 0, "\(seen)")
        #expect((seen["HTTP/1.1 503"] ?? 0) > 0, "\(seen)")
        #expect(Set(seen.keys).isSubset(of: ["HTTP/1.1 200", "HTTP/1.1 503", "closed", "failed"]), "\(seen)")
        // Served again once the storm is over (the wait only guards against a hang).
        let servedAgain = try await eventually("the HTTP port serves again") {
            await Self.statusLine(port, hold: .zero) == "HTTP/1.1 200"
        }
        if !servedAgain { Issue.record("after the storm: \(daemon.stderr.suffix(2000))") }
        #expect(try await daemon.terminate(), "\(daemon.stderr.suffix(2000))")
        }
    }

    @Test("200 WebSockets from one address: the per-address limit's worth are upgraded, the rest get 503 and a close")
    func perAddress() async throws {
        try await TestEnvironment.make().use { environment in
        let daemon = try await DaemonProcess(
            environment: environment, ["--http-port", "0", "--max-connections-per-address", "64", "--database-connections", "2"])
        try await eventually("the daemon logs its HTTP port") { daemon.httpPort != nil }
        let httpPort = daemon.httpPort
        let port = try #require(httpPort)
        let outcomes = DaemonProcess.Tally()
        try await withTimeout(120) {
            try await withThrowingTaskGroup(of: Void.self) { group in
                // Each holds its connection until all 200 have their answer: served ones keep
                // their places meanwhile, so exactly the limit's worth can be served.
                let gate = Gate()
                let arrivals = DaemonProcess.Tally()
                for _ in 0 ..< 200 {
                    group.addTask {
                        let outcome = await Self.statusLine(port, hold: .zero, webSocket: true, until: ({
                            let arrived = arrivals.counts.withLock { counts -> Int in
                                counts["arrived", default: 0] += 1
                                return counts["arrived", default: 0]
                            }
                            if arrived == 200 { gate.open() }
                        }, gate))
                        outcomes.counts.withLock { $0[outcome, default: 0] += 1 }
                    }
                }
                try await group.waitForAll()
            }
        }
        let seen = outcomes.counts.withLock { $0 }
        #expect(seen == ["HTTP/1.1 101": 64, "HTTP/1.1 503": 136], "\(seen)")
        #expect(try await daemon.terminate(), "\(daemon.stderr.suffix(2000))")
        }
    }
}
