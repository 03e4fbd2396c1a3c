import Foundation
import NIOSSL
import ScavengerClient
import ScavengerTestSupport
import Testing

@Suite("ScavengerClient over TLS", .timeLimit(.minutes(10)))
struct TLSClientTests {
    /// A throwaway self-signed certificate for `localhost`, by openssl.
    static func certificate() throws -> (certificate: String, key: String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("scavenger-client-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let certificate = directory.appendingPathComponent("cert.pem").path
        let key = directory.appendingPathComponent("key.pem").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost",
            "-addext", "subjectAltName=DNS:localhost", "-days", "2", "-keyout", key, "-out", certificate,
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        return (certificate, key)
    }

    @Test("calls and a watch over TLS, trusting the server's certificate; an untrusted one fails to connect; the CLI's --tls")
    func tls() async throws {
        let files = try Self.certificate()
        // The daemon picks the TLS port (0) and logs it: a port found free beforehand may be
        // taken by another suite before the daemon binds it.
        try await Daemon.with(["--tls-port", "0", "--tls-cert", files.certificate, "--tls-key", files.key]) { daemon in
            let tlsPort = try #require(daemon.tlsPort)
            var settings = TLSConfiguration.makeClientConfiguration()
            settings.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(files.certificate))
            let client = try ScavengerClient(ScavengerClient.Configuration(host: "localhost", port: tlsPort, tls: settings))
            defer { Task { await client.close() } }
            #expect(try await client.ping())
            _ = try await client.register(username: "secure", email: "s@example.org", password: "password1")
            let events = Collected<WatchEvent>()
            let watching = Task { for try await event in client.watch(lat: 1, lon: 1, radiusMeters: 100) { events.append(event) } }
            try await eventually("ready") { events.all.contains { if case .ready = $0 { true } else { false } } }
            let pin = try await client.post(lat: 1, lon: 1, text: "over TLS")
            try await eventually("the pin arrives") { events.all.contains { if case let .pin(seen, _) = $0 { seen.id == pin.id } else { false } } }
            watching.cancel()

            // The system's roots do not hold a self-signed certificate.
            let untrusted = try ScavengerClient(ScavengerClient.Configuration(
                host: "localhost", port: tlsPort, tls: .makeClientConfiguration(), maximumRetries: 0))
            let error = await #expect(throws: ScavengerError.self) { try await untrusted.ping() }
            #expect(error?.code == .connectionLost)
            await untrusted.close()

            let cli = try CLI(port: tlsPort)
            let result = try cli.run(["--host", "localhost", "--tls", "--ca-file", files.certificate, "--json", "ping"])
            #expect(result.status == 0 && result.stdout == "\"PONG\"\n", "\(result.stderr)")
        }
    }
}
