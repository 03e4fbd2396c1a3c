import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import ScavengerTestSupport
import Testing

/// The reverse proxy configurations of `scripts/proxies/`, run for real: nginx.conf in front of a
/// daemon (HTTPS, a WebSocket upgrade, the line port over TLS with a PROXY header), the Caddyfile
/// validated by caddy. Each runs only where its program is installed (scripts/test.sh installs them).
// The limit guards against a hang. The suite takes its TestEnvironment place before its tests start
// (`.environmentPlaces()`), so the limit does not count a full run's queue for one.
@Suite("scripts/proxies/", .timeLimit(.minutes(5)), .environmentPlaces())
struct ProxyConfigTests {
    static let proxies = RunScriptTests.root.appendingPathComponent("scripts/proxies")

    /// A port nothing listens on now.
    static func freePort() throws -> Int {
        let channel = try ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).wait()
        defer { try? channel.close().wait() }
        return channel.localAddress!.port!
    }

    /// Runs `executable arguments…` to its end: its status and what it printed.
    static func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = readToEnd(output.fileHandleForReading)
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    @Test("nginx.conf in front of a daemon: HTTPS, /ws upgraded, the line port over TLS with its PROXY header read",
          .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/sbin/nginx")))
    func nginx() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("scavenger-proxy-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let files = try ReloadTests.certificate(in: directory)
        try await TestEnvironment.make().use { environment in
            let daemon = try await DaemonProcess(environment: environment, ["--http-port", "0", "--trusted-proxies", "127.0.0.1"])
            try await eventually("the HTTP port listens") { daemon.httpPort != nil }
            let (line, http) = (try #require(daemon.port), try #require(daemon.httpPort))
            let (https, lineTLS) = (try Self.freePort(), try Self.freePort())
            // The configuration as shipped, on this test's ports, files and temporary paths.
            var configuration = try String(contentsOf: Self.proxies.appendingPathComponent("nginx.conf"), encoding: .utf8)
            for (from, to) in [
                ("listen 443 ssl", "listen 127.0.0.1:\(https) ssl"), ("listen 7443 ssl", "listen 127.0.0.1:\(lineTLS) ssl"),
                ("127.0.0.1:7468", "127.0.0.1:\(http)"), ("127.0.0.1:7467", "127.0.0.1:\(line)"),
                ("/etc/scavengerd/tls/fullchain.pem", files.certificate.path), ("/etc/scavengerd/tls/privkey.pem", files.key.path),
                ("/tmp/scavenger-nginx", directory.appendingPathComponent("nginx").path),
            ] {
                #expect(configuration.contains(from), "nginx.conf no longer has \(from)")
                configuration = configuration.replacingOccurrences(of: from, with: to)
            }
            let file = directory.appendingPathComponent("nginx.conf")
            try configuration.write(to: file, atomically: true, encoding: .utf8)
            let checked = try Self.run("/usr/sbin/nginx", ["-t", "-c", file.path])
            try #require(checked.0 == 0, "nginx -t: \(checked.1)")

            let nginx = Process()
            nginx.executableURL = URL(fileURLWithPath: "/usr/sbin/nginx")
            nginx.arguments = ["-c", file.path, "-g", "daemon off;"]
            nginx.standardOutput = FileHandle.nullDevice
            nginx.standardError = FileHandle.nullDevice
            try nginx.run()
            defer {
                nginx.terminate()
                nginx.waitUntilExit()
            }
            let client = try ReloadTests.client(trusting: files.certificate)
            let proxied = try SocketAddress(ipAddress: "127.0.0.1", port: https)
            try await eventually("nginx answers /healthz over HTTPS") { await ReloadTests.answersHTTPS(https, trusting: files.certificate) }
            // A WebSocket upgrade passes through.
            let upgrade = try await TestConnection.talk(proxied, tls: client) { writer, reader in
                try await writer.send("GET /ws HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
                return try await reader.next() ?? ""
            }
            #expect(upgrade.hasPrefix("HTTP/1.1 101"), "\(upgrade)")
            // The line port: nginx opens each connection with a PROXY header, which the daemon
            // reads from a trusted peer (else its first reply would be an error for that line).
            let reply = try await TestConnection.talk(try SocketAddress(ipAddress: "127.0.0.1", port: lineTLS), tls: client) { writer, reader in
                try await writer.send("PING\n")
                return try await reader.next()
            }
            #expect(reply == #"OK "PONG""#)
            #expect(try await daemon.terminate())
        }
    }

    @Test("caddy validates the Caddyfile", .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/caddy")))
    func caddy() throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("scavenger-caddy-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: home) }
        let (status, output) = try Self.run(
            "/usr/bin/caddy", ["validate", "--adapter", "caddyfile", "--config", Self.proxies.appendingPathComponent("Caddyfile").path],
            environment: ["SCAVENGER_SITE": "localhost", "HOME": home.path, "XDG_DATA_HOME": home.path, "XDG_CONFIG_HOME": home.path])
        #expect(status == 0, "\(output)")
        #expect(output.contains("Valid configuration"), "\(output)")
    }
}
