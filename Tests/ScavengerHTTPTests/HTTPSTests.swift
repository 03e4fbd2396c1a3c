import Foundation
import HummingbirdWSClient
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import ProxyHeaders
import ScavengerHTTP
import ScavengerTLS
import ScavengerTestSupport
import Testing

/// Self-signed certificates for localhost made by openssl, for the HTTPS tests.
enum HTTPSCertificates {
    struct Files: Sendable {
        let certificate: String
        let key: String
    }

    /// A new certificate and key named `name` in `directory` (made if missing).
    static func make(in directory: URL, name: String) throws -> Files {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let files = Files(
            certificate: directory.appendingPathComponent("\(name)-cert.pem").path,
            key: directory.appendingPathComponent("\(name)-key.pem").path)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = [
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost \(name)",
            "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-days", "1",
            "-keyout", files.key, "-out", files.certificate,
        ]
        process.standardError = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "openssl req failed")
        return files
    }

    /// A fresh directory for one test's files, removed after `body`.
    static func withDirectory<T>(_ body: (URL) async throws -> T) async throws -> T {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("scavenger-https-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        return try await body(directory)
    }

    /// A client configuration that trusts only the certificate in `file`.
    static func clientConfiguration(trusting file: String) throws -> TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(file))
        return configuration
    }

    static func client(trusting file: String) throws -> NIOSSLContext {
        try NIOSSLContext(configuration: clientConfiguration(trusting: file))
    }
}

/// `--http-tls-cert` and `--http-tls-key`: the HTTP port over TLS, with its guard, its headers,
/// its trusted proxies and its certificate replaced while it serves.
@Suite("The HTTP port over TLS", .timeLimit(.minutes(5)))
struct HTTPSTests {
    /// Whether an HTTPS GET of `/` trusting only `file` is answered `200`.
    static func answers(_ http: SocketAddress, trusting file: String) async -> Bool {
        do {
            return try await httpRequest(http, "GET", "/", tls: HTTPSCertificates.client(trusting: file)).status == 200
        } catch {
            return false
        }
    }

    /// A WebSocket to `wss://localhost:port/ws` trusting only `file`.
    static func secureWebSocket(
        _ http: SocketAddress, trusting file: String, _ body: @escaping @Sendable (WebSocketConversation) async throws -> Void
    ) async throws {
        var logger = Logger(label: "test-wss-client")
        logger.logLevel = .critical
        _ = try await WebSocketClient.connect(
            url: "wss://localhost:\(http.port!)/ws", configuration: .init(maxFrameSize: 1 << 20),
            tlsConfiguration: try HTTPSCertificates.clientConfiguration(trusting: file), eventLoopGroup: clientGroup, logger: logger
        ) { inbound, outbound, _ in
            try await body(WebSocketConversation(inbound: inbound, outbound: outbound))
        }
    }

    @Test("pages, /metrics, /healthz and /ws over HTTPS, with the security headers and no HSTS; plain HTTP gets no answer")
    func servesOverTLS() async throws {
        try await HTTPSCertificates.withDirectory { directory in
            let files = try HTTPSCertificates.make(in: directory, name: "only")
            let certificate = try ServerCertificate(certificateChainFile: files.certificate, privateKeyFile: files.key)
            try await withHTTPServer(board: OfflineBoard.shared, configure: { $0.tlsCertificate = certificate }) { http, _, _ in
                let client = try HTTPSCertificates.client(trusting: files.certificate)
                for path in ["/", "/play", "/play.js"] {
                    let page = try await httpRequest(http, "GET", path, tls: client)
                    #expect(page.status == 200, "\(path)")
                    #expect(header("content-security-policy", in: page.head) != nil, "\(path)")
                    #expect(header("x-frame-options", in: page.head) == "DENY", "\(path)")
                    #expect(header("strict-transport-security", in: page.head) == nil, "\(path)")
                }
                #expect(try await httpRequest(http, "GET", "/metrics", tls: client).status == 200)
                // The offline board has no database: unhealthy, but answered.
                let health = try await httpRequest(http, "GET", "/healthz", tls: client)
                #expect([200, 503].contains(health.status))
                try await Self.secureWebSocket(http, trusting: files.certificate) { socket in
                    let pong = try await socket.call("PING")
                    #expect(pong == #"OK "PONG""#)
                }
                // Plain text on the HTTPS port: the handshake fails, no HTTP response comes back.
                let plain = try? await httpRequest(http, "GET", "/")
                #expect(plain == nil)
            }
        }
    }

    /// A keep-alive HTTPS GET of `/` with `headers` from 127.0.0.1; `body` gets the response's
    /// status line while the connection stays open.
    static func holding(
        _ address: SocketAddress, trusting file: String, headers: [String], _ body: (String) async throws -> Void
    ) async throws {
        let tls = try HTTPSCertificates.client(trusting: file)
        let channel = try await ClientBootstrap(group: clientGroup)
            .connect(host: "127.0.0.1", port: address.port!) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: tls, serverHostname: "localhost"))
                    return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        try await channel.executeThenClose { inbound, outbound in
            try? await outbound.write(ByteBuffer(string: "GET / HTTP/1.1\r\nHost: a\r\n" + headers.map { $0 + "\r\n" }.joined() + "\r\n"))
            var data = ByteBuffer()
            do {
                for try await var chunk in inbound {
                    data.writeBuffer(&chunk)
                    if String(buffer: data).contains("\r\n\r\n") { break }
                }
            } catch {
                // The end of a refused connection's TLS may come back as an error behind its 503.
            }
            try await body(String(String(buffer: data).split(separator: "\r\n", maxSplits: 1).first ?? ""))
        }
    }

    @Test("over TLS the guard counts connections per client, as a trusted proxy's X-Forwarded-For names it")
    func guardAndProxiesOverTLS() async throws {
        try await HTTPSCertificates.withDirectory { directory in
            let files = try HTTPSCertificates.make(in: directory, name: "guard")
            let certificate = try ServerCertificate(certificateChainFile: files.certificate, privateKeyFile: files.key)
            let trusted = try TrustedProxies(parsing: "127.0.0.1/32")
            try await withHTTPServer(board: OfflineBoard.shared, maxConnectionsPerAddress: 1, configure: {
                $0.tlsCertificate = certificate
                $0.trustedProxies = trusted
            }) { http, _, _ in
                let refused = "HTTP/1.1 503 Service Unavailable"
                try await Self.holding(http, trusting: files.certificate, headers: ["X-Forwarded-For: 198.51.100.1"]) { status in
                    #expect(status.hasPrefix("HTTP/1.1 200"), "\(status)")
                    try await Self.holding(http, trusting: files.certificate, headers: ["X-Forwarded-For: 198.51.100.1"]) { status in
                        #expect(status == refused)
                    }
                    try await Self.holding(http, trusting: files.certificate, headers: ["X-Forwarded-For: 198.51.100.2"]) { status in
                        #expect(status.hasPrefix("HTTP/1.1 200"), "\(status)")
                    }
                }
            }
        }
    }

    /// Copies `files` over `live`, as a renewal does.
    static func install(_ files: HTTPSCertificates.Files, as live: HTTPSCertificates.Files) throws {
        try Data(contentsOf: URL(fileURLWithPath: files.certificate)).write(to: URL(fileURLWithPath: live.certificate))
        try Data(contentsOf: URL(fileURLWithPath: files.key)).write(to: URL(fileURLWithPath: live.key))
    }

    @Test("a reload serves new connections the new certificate, an open WebSocket goes on; bad files keep the old one")
    func reload() async throws {
        try await HTTPSCertificates.withDirectory { directory in
            let first = try HTTPSCertificates.make(in: directory, name: "first")
            let second = try HTTPSCertificates.make(in: directory, name: "second")
            let live = HTTPSCertificates.Files(
                certificate: directory.appendingPathComponent("fullchain.pem").path,
                key: directory.appendingPathComponent("privkey.pem").path)
            try Self.install(first, as: live)
            let certificate = try ServerCertificate(certificateChainFile: live.certificate, privateKeyFile: live.key)
            try await withHTTPServer(board: OfflineBoard.shared, configure: { $0.tlsCertificate = certificate }) { http, _, _ in
                #expect(await Self.answers(http, trusting: first.certificate))
                #expect(await !Self.answers(http, trusting: second.certificate))

                try await Self.secureWebSocket(http, trusting: first.certificate) { socket in
                    let before = try await socket.call("PING")
                    #expect(before == #"OK "PONG""#)
                    // Renewed files, then the reload that SIGHUP does.
                    try Self.install(second, as: live)
                    try certificate.reload()
                    #expect(await Self.answers(http, trusting: second.certificate))
                    #expect(await !Self.answers(http, trusting: first.certificate))
                    let after = try await socket.call("PING")
                    #expect(after == #"OK "PONG""#, "the open connection goes on")
                }

                // A key that does not fit the certificate: an error naming both files, and the
                // certificate in use stays.
                try Data(contentsOf: URL(fileURLWithPath: first.key)).write(to: URL(fileURLWithPath: live.key))
                let error = #expect(throws: TLSSettingsError.self) { try certificate.reload() }
                #expect(error?.description.contains(live.key) == true, "\(String(describing: error))")
                // A missing file: named.
                try FileManager.default.removeItem(atPath: live.certificate)
                let missing = #expect(throws: TLSSettingsError.self) { try certificate.reload() }
                #expect(missing?.description.hasPrefix("cannot read a PEM certificate chain from \(live.certificate)") == true)
                #expect(await Self.answers(http, trusting: second.certificate))
            }
        }
    }
}
