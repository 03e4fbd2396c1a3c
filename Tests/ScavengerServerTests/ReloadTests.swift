import Foundation
import NIOCore
import NIOSSL
import Postgres
import ScavengerTestSupport
import Testing

/// `systemctl reload scavengerd`: SIGHUP reads the TLS certificate and key again.
// The limit guards against a hang. The suite takes its TestEnvironment place before its tests start
// (`.environmentPlaces()`), so the limit does not count a full run's queue for one.
@Suite("SIGHUP reloads the TLS certificate", .timeLimit(.minutes(5)), .environmentPlaces())
struct ReloadTests {
    /// A new self-signed certificate for localhost, and its key, in `directory`.
    static func certificate(in directory: URL) throws -> (certificate: URL, key: URL) {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let files = (directory.appendingPathComponent("cert.pem"), directory.appendingPathComponent("key.pem"))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = [
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost",
            "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-days", "1",
            "-keyout", files.1.path, "-out", files.0.path,
        ]
        process.standardError = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "openssl req failed")
        return files
    }

    /// A TLS client that trusts only the certificate in `file`.
    static func client(trusting file: URL) throws -> NIOSSLContext {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(file.path))
        return try NIOSSLContext(configuration: configuration)
    }

    /// Whether a TLS client trusting only `file` gets PING answered on `port`.
    static func answers(_ port: Int, trusting file: URL) async -> Bool {
        do {
            let address = try SocketAddress(ipAddress: "127.0.0.1", port: port)
            return try await TestConnection.talk(address, tls: try client(trusting: file)) { writer, reader in
                try await writer.send("PING\n")
                return try await reader.next() == #"OK "PONG""#
            }
        } catch {
            return false
        }
    }

    @Test("new TLS connections get the certificate in the files after SIGHUP, open ones keep going; unreadable files keep the one in use")
    func reloadsCertificate() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("scavenger-reload-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let first = try Self.certificate(in: root.appendingPathComponent("first"))
        let second = try Self.certificate(in: root.appendingPathComponent("second"))
        let live = root.appendingPathComponent("live")
        try FileManager.default.createDirectory(at: live, withIntermediateDirectories: true)
        let certificate = live.appendingPathComponent("fullchain.pem"), key = live.appendingPathComponent("privkey.pem")
        try FileManager.default.copyItem(at: first.certificate, to: certificate)
        try FileManager.default.copyItem(at: first.key, to: key)

        try await TestEnvironment.make().use { environment in
            let daemon = try await DaemonProcess(
                environment: environment, ["--tls-port", "0", "--tls-cert", certificate.path, "--tls-key", key.path])
            var tlsPort: Int? {
                guard let line = daemon.stderr.split(separator: "\n").first(where: { $0.contains("listening with TLS") }),
                      let colon = line.range(of: ":", options: .backwards)
                else { return nil }
                return Int(line[colon.upperBound...].prefix { $0.isNumber })
            }
            try await eventually("the TLS port listens") { tlsPort != nil }
            let port = try #require(tlsPort)
            #expect(await Self.answers(port, trusting: first.certificate))
            #expect(await !Self.answers(port, trusting: second.certificate))

            // A connection made with the first certificate, open across the reload.
            let address = try SocketAddress(ipAddress: "127.0.0.1", port: port)
            try await TestConnection.talk(address, tls: try Self.client(trusting: first.certificate)) { writer, reader in
                try await writer.send("PING\n")
                #expect(try await reader.next() == #"OK "PONG""#)

                // certbot renews: new files in the same place, then `systemctl reload`.
                try Data(contentsOf: second.certificate).write(to: certificate)
                try Data(contentsOf: second.key).write(to: key)
                kill(daemon.process.processIdentifier, SIGHUP)
                try await eventually("the reload is logged") { daemon.stderr.contains("reloaded the TLS certificate") }
                #expect(await Self.answers(port, trusting: second.certificate))
                #expect(await !Self.answers(port, trusting: first.certificate))

                try await writer.send("PING\n")
                #expect(try await reader.next() == #"OK "PONG""#, "the open connection goes on")
            }

            // A key that does not fit: logged, and the certificate in use stays.
            try Data(contentsOf: first.key).write(to: key)
            kill(daemon.process.processIdentifier, SIGHUP)
            try await eventually("the refusal is logged") { daemon.stderr.contains("kept the TLS certificate in use") }
            #expect(daemon.process.isRunning)
            #expect(await Self.answers(port, trusting: second.certificate))
            #expect(try await daemon.terminate())
        }
    }

    /// Whether an HTTPS client trusting only `file` gets `GET /healthz` answered on `port`.
    static func answersHTTPS(_ port: Int, trusting file: URL) async -> Bool {
        do {
            let address = try SocketAddress(ipAddress: "127.0.0.1", port: port)
            return try await TestConnection.talk(address, tls: try client(trusting: file)) { writer, reader in
                try await writer.send("GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
                return try await reader.next()?.hasPrefix("HTTP/1.1 ") == true
            }
        } catch {
            return false
        }
    }

    @Test("SIGHUP reloads both ports' certificates: new HTTPS and TLS connections get the new files, an open HTTPS connection goes on")
    func reloadsBothPorts() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("scavenger-reload-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let first = try Self.certificate(in: root.appendingPathComponent("first"))
        let second = try Self.certificate(in: root.appendingPathComponent("second"))
        let live = root.appendingPathComponent("live")
        try FileManager.default.createDirectory(at: live, withIntermediateDirectories: true)
        let certificate = live.appendingPathComponent("fullchain.pem"), key = live.appendingPathComponent("privkey.pem")
        try FileManager.default.copyItem(at: first.certificate, to: certificate)
        try FileManager.default.copyItem(at: first.key, to: key)

        try await TestEnvironment.make().use { environment in
            let daemon = try await DaemonProcess(environment: environment, [
                "--tls-port", "0", "--tls-cert", certificate.path, "--tls-key", key.path,
                "--http-port", "0", "--http-tls-cert", certificate.path, "--http-tls-key", key.path,
            ])
            try await eventually("the HTTPS port listens") { daemon.httpPort != nil }
            let httpPort = try #require(daemon.httpPort)
            #expect(daemon.stderr.contains("HTTP port listening with TLS"))
            #expect(await Self.answersHTTPS(httpPort, trusting: first.certificate))
            #expect(await !Self.answersHTTPS(httpPort, trusting: second.certificate))

            // A keep-alive HTTPS connection made with the first certificate, open across the reload.
            let address = try SocketAddress(ipAddress: "127.0.0.1", port: httpPort)
            try await TestConnection.talk(address, tls: try Self.client(trusting: first.certificate)) { writer, reader in
                try await writer.send("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
                #expect(try await reader.next()?.hasPrefix("HTTP/1.1 ") == true)

                try Data(contentsOf: second.certificate).write(to: certificate)
                try Data(contentsOf: second.key).write(to: key)
                kill(daemon.process.processIdentifier, SIGHUP)
                try await eventually("both reloads are logged") {
                    daemon.stderr.contains("reloaded the TLS certificate and key for --http-port")
                        && daemon.stderr.contains("reloaded the TLS certificate and key for --tls-port")
                }
                #expect(await Self.answersHTTPS(httpPort, trusting: second.certificate))
                #expect(await !Self.answersHTTPS(httpPort, trusting: first.certificate))

                // The rest of the first response, then a second request on the same connection.
                while let line = try await reader.next(), !line.isEmpty, line != "\r" {}
                try await writer.send("GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
                var lines: [String] = []
                while let line = try? await reader.next() { lines.append(line) }
                #expect(lines.contains { $0.hasPrefix("HTTP/1.1 ") }, "the open connection goes on: \(lines)")
            }
            #expect(try await daemon.terminate())
        }
    }

    @Test("serve: --http-tls-cert and --http-tls-key go together on an --http-port; a missing file is one line naming it")
    func httpTLSCommandLine() throws {
        let nowhere = PostgresConfiguration(connectionString: "postgresql://127.0.0.1:1/none")
        let partial = try Executable.run(["serve", "--port", "0", "--http-port", "0", "--http-tls-cert", "c.pem"], configuration: nowhere)
        #expect(partial.status != 0)
        #expect(partial.stderr.contains("--http-tls-cert and --http-tls-key go together"), "\(partial.stderr)")
        let noPort = try Executable.run(["serve", "--port", "0", "--http-tls-cert", "c.pem", "--http-tls-key", "k.pem"], configuration: nowhere)
        #expect(noPort.status != 0)
        #expect(noPort.stderr.contains("need --http-port"), "\(noPort.stderr)")

        let missing = "/nonexistent/https-cert.pem"
        let bad = try Executable.run(
            ["serve", "--port", "0", "--http-port", "0", "--http-tls-cert", missing, "--http-tls-key", "/nonexistent/key.pem"],
            configuration: nowhere)
        #expect(bad.status == 1)
        let lines = bad.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(bad.stderr)")
        #expect(lines.first?.contains("--http-tls-cert") == true && lines.first?.contains(missing) == true, "\(bad.stderr)")
    }

    @Test("without TLS, SIGHUP says there is nothing to reload and the daemon serves on")
    func nothingToReload() async throws {
        try await TestEnvironment.make().use { environment in
            let daemon = try await DaemonProcess(environment: environment, [])
            kill(daemon.process.processIdentifier, SIGHUP)
            try await eventually("the notice is logged") { daemon.stderr.contains("SIGHUP: nothing to reload") }
            #expect(daemon.process.isRunning)
            #expect(try await transcript(try daemon.address, "PING\n") == [#"OK "PONG""#])
            #expect(try await daemon.terminate())
        }
    }
}
