import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import Postgres
import ScavengerProtocol
import ScavengerServer
import ScavengerTLS
import ScavengerTestSupport
import ServiceLifecycle
import Synchronization
import Testing

/// A throwaway self-signed certificate for `localhost`, made once per test run by openssl.
enum TestCertificate {
    struct Files: Sendable {
        let certificate: String
        let privateKey: String
    }

    struct OpenSSLFailed: Error, CustomStringConvertible {
        let description: String
    }

    private static let generated: Result<Files, any Error> = Result {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("scavenger-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let files = Files(
            certificate: directory.appendingPathComponent("cert.pem").path,
            privateKey: directory.appendingPathComponent("key.pem").path)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = [
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost",
            "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-days", "1",
            "-keyout", files.privateKey, "-out", files.certificate,
        ]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let message = readToEnd(errors.fileHandleForReading)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw OpenSSLFailed(description: "openssl req failed: \(String(decoding: message, as: UTF8.self))")
        }
        return files
    }

    static var files: Files {
        get throws { try generated.get() }
    }

    /// The server's TLS settings on a free port.
    static func settings(handshakeTimeoutSeconds: Int = 10) throws -> TLSSettings {
        let files = try files
        return try TLSSettings(
            port: 0, certificateChainFile: files.certificate, privateKeyFile: files.privateKey,
            handshakeTimeoutSeconds: handshakeTimeoutSeconds)
    }

    /// A client that trusts only this certificate, within these versions.
    static func client(
        minimum: TLSVersion = .tlsv12, maximum: TLSVersion? = nil
    ) throws -> NIOSSLContext {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(try files.certificate))
        configuration.minimumTLSVersion = minimum
        configuration.maximumTLSVersion = maximum
        return try NIOSSLContext(configuration: configuration)
    }
}

/// Runs a server with a TLS listener; `body` gets the plain address and the TLS one.
func withTLSServer(
    _ configuration: ServerConfiguration = ServerConfiguration(host: "127.0.0.1", port: 0),
    tls: TLSSettings? = nil,
    table: CommandTable = .standard,
    _ body: (_ plain: SocketAddress, _ tls: SocketAddress, ServiceGroup) async throws -> Void
) async throws {
    var configuration = configuration
    configuration.tls = try tls ?? TestCertificate.settings()
    try await withRunningServer(configuration, table: table) { server, group in
        let plain = try await server.listeningAddress
        let secure = try #require(try await server.tlsListeningAddress)
        try await body(plain, secure, group)
    }
}

/// Reads what a connection sends until it closes; an error (reset, failed handshake) ends it too.
/// Returns the complete lines received and the error, if any.
func linesUntilClosed(_ reader: inout TestConnection.LineReader) async -> (lines: [String], error: (any Error)?) {
    var lines: [String] = []
    do {
        while let line = try await reader.next() { lines.append(line) }
        return (lines, nil)
    } catch {
        return (lines, error)
    }
}

@Suite("TLS listener")
struct TLSTests {
    static let hello = #"OK {"server":"scavengerd","version":"\#(ServerVersion.daemon)","protocol":1,"user":null}"#

    /// How many BIG requests the server has answered (this suite's own count: OutputBoundTests,
    /// running alongside, counts its own).
    static let answered = Mutex(0)

    /// The standard table plus BIG, a 256 KiB reply from memory (as in OutputBoundTests).
    static let bigTable = CommandTable(CommandTable.standard.commands + [
        CommandSpec(
            "BIG", arity: 0 ... 0, syntax: "BIG", summary: "A 256 KiB reply (tests only).",
            parse: { _ in () },
            answer: { _, _ in
                answered.withLock { $0 += 1 }
                return CommandOutcome(.ok(OutputBoundTests.bigJSON))
            }),
    ])

    @Test("a TLS client gets PING and HELLO answered, one at a time; the plain port still works alongside")
    func roundTrips() async throws {
        let client = try TestCertificate.client()
        try await withTLSServer { plain, tls, _ in
            try await withTimeout {
                #expect(try await transcript(plain, "PING\n") == [#"OK "PONG""#])
                try await TestConnection.talk(tls, tls: client) { writer, reader in
                    try await writer.send("PING\n")
                    #expect(try await reader.next() == #"OK "PONG""#)
                    try await writer.send("HELLO\n")
                    #expect(try await reader.next() == Self.hello)
                    try await writer.send("QUIT\n")
                    #expect(try await reader.next() == #"OK "BYE""#)
                    #expect(try await reader.next() == nil)
                }
            }
        }
    }

    @Test("pipelined requests, then the client's close_notify: every reply arrives, in order")
    func pipelinedThenCloseNotify() async throws {
        let client = try TestCertificate.client()
        let rounds = 100
        try await withTLSServer { _, tls, _ in
            try await withTimeout(60) {
                // HELP's reply is several KiB: the replies far outgrow one TLS record and the socket buffer.
                let lines = try await transcript(tls, tls: client, String(repeating: "PING\nHELLO\nHELP\n", count: rounds))
                #expect(lines.count == 3 * rounds)
                for round in 0 ..< min(rounds, lines.count / 3) {
                    #expect(lines[3 * round] == #"OK "PONG""#)
                    #expect(lines[3 * round + 1] == Self.hello)
                    #expect(lines[3 * round + 2].hasPrefix("OK ") && lines[3 * round + 2].count > 1000)
                }
            }
        }
    }

    @Test("a TLS client that pipelines and does not read makes the server stop answering it, then every reply arrives")
    func unreadRepliesStopTheServer() async throws {
        let client = try TestCertificate.client()
        let requests = 400  // 100 MiB of replies if the server answered them all
        try await withTLSServer(ServerConfiguration(outputHighWaterBytes: 64 * 1024), table: Self.bigTable) { _, tls, _ in
            try await withTimeout(60) {
                Self.answered.withLock { $0 = 0 }
                try await TestConnection.talk(tls, tls: client) { writer, reader in
                    try await writer.send(String(repeating: "BIG\n", count: requests))
                    // Once it has begun answering, give the server time to answer more than it
                    // should. (A slow machine only makes it answer fewer: the bound cannot fail
                    // for that.)
                    try await eventually("the server has begun answering") { Self.answered.withLock { $0 } > 0 }
                    try await Task.sleep(for: .milliseconds(500))
                    let early = Self.answered.withLock { $0 }
                    #expect(early < 100, "answered \(early) of \(requests) requests nobody read")
                    writer.finish()
                    var received = 0
                    while let line = try await reader.next() {
                        #expect(line.utf8.count == OutputBoundTests.bigReply.utf8.count + 5)
                        received += 1
                    }
                    #expect(received == requests)
                }
            }
        }
    }

    @Test("a TLS client that has sent close_notify still gets the reply in flight at shutdown")
    func closeNotifyThenShutdown() async throws {
        let client = try TestCertificate.client()
        try await withTLSServer(table: ShutdownTests.slowTable) { _, tls, group in
            try await withTimeout {
                try await TestConnection.talk(tls, tls: client) { writer, reader in
                    try await writer.send("PING\nSLOW tls-close-notify\n")
                    writer.finish()
                    #expect(try await reader.next() == #"OK "PONG""#)
                    try await ShutdownTests.waitForSlow("tls-close-notify")
                    await group.triggerGracefulShutdown()
                    try await ShutdownTests.finishSlowDuringShutdown("tls-close-notify", listener: tls)
                    #expect(try await reader.next() == #"OK "DONE""#)
                    #expect(try await reader.next() == nil)
                }
            }
        }
    }

    @Test("TLS and plain connections count against the same limits")
    func sharedLimits() async throws {
        let client = try TestCertificate.client()
        try await withTLSServer(ServerConfiguration(maxConnections: 1)) { plain, tls, _ in
            try await withTimeout {
                // One plain connection open: a TLS one is over the limit of one.
                try await TestConnection.talk(plain) { writer, reader in
                    try await writer.send("PING\n")
                    #expect(try await reader.next() == #"OK "PONG""#)
                    // The refusal is read as it comes: how the refused connection's TLS ends (a
                    // close_notify crossing the server's close may come back as a reset) is not
                    // what this test is about, the line before it is.
                    let refused = try await TestConnection.talk(tls, tls: client) { writer, reader in
                        try await writer.send("PING\n")
                        return await linesUntilClosed(&reader).lines
                    }
                    #expect(refused.count == 1, "\(refused)")
                    #expect(refused.first?.hasPrefix("ERR UNAVAILABLE the server is at its connection limit (1)") == true)
                }
            }
        }
    }

    @Test("a refused TLS client slow to shake hands still gets the refusal: the linger starts once it is sent")
    func slowHandshakeRefused() async throws {
        let client = try TestCertificate.client()
        try await withTLSServer(ServerConfiguration(maxConnections: 1)) { plain, tls, _ in
            try await withTimeout {
                try await TestConnection.talk(plain) { writer, reader in
                    try await writer.send("PING\n")
                    #expect(try await reader.next() == #"OK "PONG""#)
                    // The ClientHello leaves after more than the linger (2 s): the server's refusal
                    // waits in its TLS handler for the handshake all that time.
                    let channel = try await ClientBootstrap(group: TestConnection.clientGroup)
                        .channelOption(.allowRemoteHalfClosure, value: true)
                        .connect(to: tls) { channel in
                            channel.eventLoop.makeCompletedFuture {
                                try channel.pipeline.syncOperations.addHandler(HeldOutput(for: .seconds(3)))
                                try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: client, serverHostname: "localhost"))
                                return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(
                                    wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
                            }
                        }
                    let refused = try await channel.executeThenClose { inbound, _ in
                        var reader = TestConnection.LineReader(iterator: inbound.makeAsyncIterator())
                        return await linesUntilClosed(&reader)
                    }
                    #expect(refused.lines.count == 1, "\(refused)")
                    #expect(refused.lines.first?.hasPrefix("ERR UNAVAILABLE the server is at its connection limit (1)") == true)
                }
            }
        }
    }

    @Test("a plain-text client on the TLS port gets no reply, and the connection ends")
    func plainTextOnTLSPort() async throws {
        try await withTLSServer { _, tls, _ in
            try await withTimeout {
                try await TestConnection.talk(tls) { writer, reader in
                    try await writer.send("PING\nHELLO\n")
                    let (lines, _) = await linesUntilClosed(&reader)
                    #expect(lines.allSatisfy { !$0.contains("OK") }, "\(lines)")
                }
            }
        }
    }

    @Test("a client that offers at most TLS 1.1 is refused")
    func tls11Refused() async throws {
        let old = try TestCertificate.client(minimum: .tlsv1, maximum: .tlsv11)
        try await withTLSServer { _, tls, _ in
            try await withTimeout {
                try await TestConnection.talk(tls, tls: old) { writer, reader in
                    try? await writer.send("PING\n")
                    let (lines, error) = await linesUntilClosed(&reader)
                    #expect(lines.isEmpty)
                    guard case .some(.handshakeFailed) = error as? NIOSSLError else {
                        Issue.record("expected a failed handshake, got \(error.map { "\($0)" } ?? "a clean close")")
                        return
                    }
                }
            }
        }
    }

    @Test("a client that connects and never finishes the handshake is closed at the deadline")
    func handshakeDeadline() async throws {
        // No idle timeout and no line deadline: the handshake deadline is the only thing that can
        // close this connection, so its closing at all (before the hang guard) is the proof.
        let configuration = ServerConfiguration(host: "127.0.0.1", port: 0, idleTimeoutSeconds: 0, lineTimeoutSeconds: 0)
        try await withTLSServer(configuration, tls: try TestCertificate.settings(handshakeTimeoutSeconds: 1)) { _, tls, _ in
            try await withTimeout {
                try await TestConnection.talk(tls) { writer, reader in
                    // Half a TLS record header: a handshake begun and never finished.
                    try await writer.send(bytes: [0x16, 0x03])
                    let (lines, _) = await linesUntilClosed(&reader)
                    #expect(lines.isEmpty)
                }
            }
        }
    }

    @Test("graceful shutdown: a TLS request in flight gets its reply, then both listeners are gone")
    func shutdownStopsBoth() async throws {
        let client = try TestCertificate.client()
        var addresses: (plain: SocketAddress, tls: SocketAddress)?
        try await withTLSServer(table: ShutdownTests.slowTable) { plain, tls, group in
            addresses = (plain, tls)
            try await withTimeout {
                try await TestConnection.talk(tls, tls: client) { writer, reader in
                    try await writer.send("PING\n")
                    #expect(try await reader.next() == #"OK "PONG""#)
                    try await writer.send("SLOW tls-shutdown\n")
                    try await ShutdownTests.waitForSlow("tls-shutdown")
                    await group.triggerGracefulShutdown()
                    try await ShutdownTests.finishSlowDuringShutdown("tls-shutdown", listener: tls)
                    #expect(try await reader.next() == #"OK "DONE""#)
                    #expect(try await reader.next() == nil)
                }
            }
        }
        // withTLSServer returns once the server has stopped: nothing listens on either port.
        let (plain, tls) = try #require(addresses)
        await #expect(throws: (any Error).self) { _ = try await TestConnection.open(plain) }
        await #expect(throws: (any Error).self) { _ = try await TestConnection.open(tls, tls: client) }
    }

    @Test("when the TLS port cannot be bound, run() fails and says so")
    func tlsBindFailure() async throws {
        // Something else holds the port.
        let squatter = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(host: "127.0.0.1", port: 0).get()
        let port = try #require(squatter.localAddress?.port)
        var tls = try TestCertificate.settings()
        tls.port = port
        var logger = Logger(label: "test-server")
        logger.logLevel = .critical
        let server = ScavengerServer(
            configuration: ServerConfiguration(host: "127.0.0.1", port: 0, tls: tls), board: OfflineBoard.shared, logger: logger)
        do {
            try await server.run()
            Issue.record("run() returned although the TLS port is taken")
        } catch let error as ListenError {
            #expect(error.tls)
            #expect(error.port == port)
            #expect(error.description.hasPrefix("cannot listen with TLS on 127.0.0.1 port \(port): "))
        }
        await #expect(throws: ListenError.self) { _ = try await server.tlsListeningAddress }
        try await squatter.close()
    }

    @Test("TLS settings from PEM files: a missing or wrong file is one clear error")
    func settingsFromFiles() throws {
        let files = try TestCertificate.files
        #expect(throws: Never.self) {
            _ = try TLSSettings(port: 0, certificateChainFile: files.certificate, privateKeyFile: files.privateKey)
        }
        let missing = "/nonexistent/cert.pem"
        let noFile = #expect(throws: TLSSettingsError.self) {
            _ = try TLSSettings(port: 0, certificateChainFile: missing, privateKeyFile: files.privateKey)
        }
        #expect(noFile?.description.hasPrefix("cannot read a PEM certificate chain from \(missing)") == true)
        // The key where the certificate should be, and the reverse.
        let keyAsCertificate = #expect(throws: TLSSettingsError.self) {
            _ = try TLSSettings(port: 0, certificateChainFile: files.privateKey, privateKeyFile: files.privateKey)
        }
        #expect(keyAsCertificate?.description.contains(files.privateKey) == true, "\(String(describing: keyAsCertificate))")
        let certificateAsKey = #expect(throws: TLSSettingsError.self) {
            _ = try TLSSettings(port: 0, certificateChainFile: files.certificate, privateKeyFile: files.certificate)
        }
        #expect(certificateAsKey?.description.hasPrefix("cannot read a PEM private key from \(files.certificate)") == true)
    }

    @Test("serve: the TLS flags go together, and an unreadable certificate is one line on stderr")
    func commandLine() throws {
        // The database is never reached: both failures come first.
        let nowhere = PostgresConfiguration(connectionString: "postgresql://127.0.0.1:1/none")
        let partial = try Executable.run(["serve", "--port", "0", "--tls-port", "0", "--tls-cert", "c.pem"], configuration: nowhere)
        #expect(partial.status != 0)
        #expect(partial.stderr.contains("--tls-port, --tls-cert and --tls-key go together"))

        let files = try TestCertificate.files
        let missing = "/nonexistent/cert.pem"
        let bad = try Executable.run(
            ["serve", "--port", "0", "--tls-port", "0", "--tls-cert", missing, "--tls-key", files.privateKey],
            configuration: nowhere)
        #expect(bad.status == 1)
        let lines = bad.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(bad.stderr)")
        #expect(lines.first?.hasPrefix("scavengerd: cannot read a PEM certificate chain from \(missing)") == true)
    }
}

/// Holds a connection's output back for a while after it opens, then sends it all in order: a
/// client on a slow network, as its server sees it.
final class HeldOutput: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let delay: TimeAmount
    private var held: [(NIOAny, EventLoopPromise<Void>?)] = []
    private var released = false

    init(for delay: TimeAmount) { self.delay = delay }

    func handlerAdded(context: ChannelHandlerContext) {
        context.eventLoop.assumeIsolated().scheduleTask(in: delay) { [self] in
            released = true
            for (data, promise) in held { context.write(data, promise: promise) }
            held.removeAll()
            context.flush()
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard released else { return held.append((data, promise)) }
        context.write(data, promise: promise)
    }

    func flush(context: ChannelHandlerContext) {
        if released { context.flush() }
    }
}
