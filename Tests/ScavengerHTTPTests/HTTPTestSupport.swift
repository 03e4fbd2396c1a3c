import HummingbirdWSClient
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import Postgres
import Prometheus
@testable import ScavengerBoard
import ScavengerFeed
import ScavengerHTTP
import ScavengerProtocol
import ScavengerServer
import ScavengerStore
import ScavengerTestSupport
import ServiceLifecycle
import Sodium
import Synchronization
import Testing

/// The TCP server and the HTTP port side by side on ephemeral ports, sharing one measured
/// command table and a registry of their own, for the duration of `body`.
func withHTTPServer(
    board: Board,
    limits: ProtocolLimits = ProtocolLimits(),
    maxConnections: Int = 1024,
    maxConnectionsPerAddress: Int = 64,
    health: HealthCheck? = nil,
    metrics: DaemonMetrics = DaemonMetrics(registry: PrometheusCollectorRegistry()),
    configure: (inout HTTPConfiguration) -> Void = { _ in },
    _ body: (_ http: SocketAddress, _ tcp: SocketAddress, _ metrics: DaemonMetrics) async throws -> Void
) async throws {
    var logger = Logger(label: "test-http")
    logger.logLevel = .warning
    let table = CommandTable.standard.measured(by: metrics.requestMetrics(for: .standard))
    // One count of connections for both ports, as the daemon has.
    let connectionLimits = ConnectionLimits(maximum: maxConnections, maximumPerAddress: maxConnectionsPerAddress)
    let tcp = ScavengerServer(
        configuration: ServerConfiguration(
            host: "127.0.0.1", port: 0, maxConnections: maxConnections, maxConnectionsPerAddress: maxConnectionsPerAddress,
            limits: limits),
        board: board, table: table, limits: connectionLimits, logger: logger)
    var configuration = HTTPConfiguration(
        host: "127.0.0.1", port: 0, maxConnections: maxConnections, maxConnectionsPerAddress: maxConnectionsPerAddress,
        limits: limits, healthCacheSeconds: 0.2, databaseCheckTimeoutSeconds: 1)
    configure(&configuration)
    let http = ScavengerHTTPServer(
        configuration: configuration, board: board, table: table, metrics: metrics, health: health,
        limits: connectionLimits, logger: logger)
    let group = ServiceGroup(configuration: .init(services: [.init(service: tcp), .init(service: http)], logger: logger))
    try await withThrowingTaskGroup(of: Void.self) { tasks in
        tasks.addTask { try await group.run() }
        do {
            let httpAddress = try await http.listeningAddress
            let tcpAddress = try await tcp.listeningAddress
            try await body(httpAddress, tcpAddress, metrics)
        } catch {
            await group.triggerGracefulShutdown()
            throw error
        }
        await group.triggerGracefulShutdown()
        try await tasks.waitForAll()
    }
}

/// A WebSocket client speaking the protocol one request at a time.
final class WebSocketConversation: @unchecked Sendable {
    private let outbound: WebSocketOutboundWriter
    private var messages: WebSocketInboundMessageStream.AsyncIterator

    init(inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter) {
        self.outbound = outbound
        self.messages = inbound.messages(maxSize: 1 << 20).makeAsyncIterator()
    }

    /// Sends one message and returns the reply, or nil if the server closed instead.
    func call(_ message: String) async throws -> String? {
        try await send(message)
        return try await next()
    }

    func send(_ message: String) async throws {
        try await outbound.write(.text(message))
    }

    /// Sends one text message as several frames.
    func sendFragmented(_ parts: [String]) async throws {
        try await outbound.withTextMessageWriter { writer in
            for part in parts { try await writer(part) }
        }
    }

    /// The next message from the server, or nil once it has closed.
    func next() async throws -> String? {
        guard let message = try await messages.next() else { return nil }
        guard case .text(let text) = message else { Issue.record("a binary message"); return nil }
        return text
    }

    /// The value of `key` in an `OK {json}` reply (a crude read, enough for tokens).
    static func field(_ key: String, in reply: String) -> String? {
        guard let range = reply.range(of: "\"\(key)\":\"") else { return nil }
        let rest = reply[range.upperBound...]
        return rest.firstIndex(of: "\"").map { String(rest[..<$0]) }
    }
}

/// Opens a WebSocket to `/ws`, runs `body` with it, and returns the close frame the server sent.
@discardableResult
func withWebSocket(
    _ address: SocketAddress, path: String = "/ws", _ body: @escaping @Sendable (WebSocketConversation) async throws -> Void
) async throws -> WebSocketCloseFrame? {
    var logger = Logger(label: "test-ws-client")
    logger.logLevel = .critical
    let failure = Mutex<(any Error)?>(nil)
    let close = try await WebSocketClient.connect(
        url: "ws://127.0.0.1:\(address.port!)\(path)", configuration: .init(maxFrameSize: 1 << 20), eventLoopGroup: clientGroup,
        logger: logger
    ) { inbound, outbound, _ in
        do {
            try await body(WebSocketConversation(inbound: inbound, outbound: outbound))
        } catch {
            failure.withLock { $0 = error }
        }
    }
    if let error = failure.withLock({ $0 }) { throw error }
    return close
}

/// A plain HTTP/1.1 GET (`Connection: close`): the status code and the body.
func httpGet(_ address: SocketAddress, _ path: String, headers: [String] = []) async throws -> (status: Int, body: String) {
    let response = try await httpRequest(address, "GET", path, headers: headers)
    return (response.status, response.body)
}

/// The test clients' event loops, apart from the servers' (`MultiThreadedEventLoopGroup.singleton`):
/// a client never waits behind another test's server work.
let clientGroup = MultiThreadedEventLoopGroup(numberOfThreads: 2)

/// One HTTP/1.1 request on a connection of its own: the status, the header block (lower-cased
/// names as sent) and the body. With `tls`, over HTTPS (the server's name checked as localhost).
func httpRequest(
    _ address: SocketAddress, _ method: String, _ path: String, headers: [String] = [], body: String = "",
    tls: NIOSSLContext? = nil
) async throws -> (status: Int, head: String, body: String) {
    let channel = try await ClientBootstrap(group: clientGroup)
        .connect(host: "127.0.0.1", port: address.port!) { channel in
            channel.eventLoop.makeCompletedFuture {
                if let tls {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: tls, serverHostname: "localhost"))
                }
                return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
            }
        }
    var lines = headers
    if method != "GET" { lines.append("Content-Length: \(body.utf8.count)") }
    if !lines.contains(where: { $0.lowercased().hasPrefix("connection:") }) { lines.append("Connection: close") }
    let response = try await channel.executeThenClose { inbound, outbound in
        try await outbound.write(ByteBuffer(string: "\(method) \(path) HTTP/1.1\r\nHost: localhost\r\n"
            + lines.map { $0 + "\r\n" }.joined() + "\r\n" + body))
        var data = ByteBuffer()
        for try await var chunk in inbound {
            data.writeBuffer(&chunk)
            if isComplete(String(buffer: data)) { break }
        }
        return String(buffer: data)
    }
    guard let headEnd = response.range(of: "\r\n\r\n") else { throw BadResponse(text: response) }
    let head = String(response[..<headEnd.lowerBound])
    let statusLine = head.prefix { $0 != "\r" }
    let parts = statusLine.split(separator: " ")
    guard parts.count >= 2, let status = Int(parts[1]) else { throw BadResponse(text: response) }
    return (status, head, String(response[headEnd.upperBound...]))
}

/// Whether a response has all the body its Content-Length announces.
private func isComplete(_ response: String) -> Bool {
    guard let headEnd = response.range(of: "\r\n\r\n") else { return false }
    let head = response[..<headEnd.lowerBound].lowercased()
    guard let field = head.range(of: "content-length: ") else { return false }
    let length = Int(head[field.upperBound...].prefix { $0.isNumber }) ?? 0
    return response[headEnd.upperBound...].utf8.count >= length
}

struct BadResponse: Error {
    let text: String
}

/// Prometheus text: the value of the sample whose name and labels are exactly `series`
/// (e.g. `scavenger_requests_total{command="PING",code="OK"}`); labels in any order.
func sample(_ series: String, in text: String) -> Double? {
    func normalize(_ s: Substring) -> String {
        guard let open = s.firstIndex(of: "{"), let close = s.lastIndex(of: "}") else { return String(s) }
        let labels = s[s.index(after: open)..<close].split(separator: ",").map(String.init).sorted()
        return String(s[..<open]) + "{" + labels.joined(separator: ",") + "}"
    }
    let wanted = normalize(Substring(series))
    for line in text.split(separator: "\n") where !line.hasPrefix("#") {
        guard let space = line.lastIndex(of: " ") else { continue }
        if normalize(line[..<space]) == wanted { return Double(line[line.index(after: space)...]) }
    }
    return nil
}

/// The header field `name` (lower-case) of a response head, or nil.
func header(_ name: String, in head: String) -> String? {
    for line in head.split(separator: "\r\n") {
        let parts = line.split(separator: ":", maxSplits: 1)
        if parts.count == 2, parts[0].lowercased() == name { return String(parts[1].drop { $0 == " " || $0 == "\t" }) }
    }
    return nil
}
