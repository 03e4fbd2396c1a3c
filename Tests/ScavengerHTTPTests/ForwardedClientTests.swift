import HTTPTypes
import HummingbirdWSClient
import Logging
import NIOCore
import NIOPosix
import ProxyHeaders
import ScavengerBoard
import ScavengerCore
import ScavengerTestSupport
import Testing

/// `--trusted-proxies` on the HTTP port: a trusted peer's `Forwarded` or `X-Forwarded-For` names
/// the client that every per-address limit counts (the connections per address, and the
/// throttles of the WebSocket's commands); from any other peer both are ignored.
@Suite("Forwarded and X-Forwarded-For from trusted proxies on the HTTP port")
struct ForwardedClientTests {
    static let trusted = try! TrustedProxies(parsing: "127.0.0.1/32")

    /// Sends a keep-alive GET with `headers` from `source` and runs `body` with the response's
    /// status line while the connection stays open.
    func holding(
        _ address: SocketAddress, from source: String = "127.0.0.1", headers: [String], _ body: (String) async throws -> Void
    ) async throws {
        let channel = try await ClientBootstrap(group: clientGroup)
            .channelOption(.allowRemoteHalfClosure, value: true)
            .bind(to: try SocketAddress(ipAddress: source, port: 0))
            .connect(host: "127.0.0.1", port: address.port!) { channel in
                channel.eventLoop.makeCompletedFuture { try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel) }
            }
        try await channel.executeThenClose { inbound, outbound in
            do {
                try await outbound.write(ByteBuffer(string: "GET / HTTP/1.1\r\nHost: a\r\n" + headers.map { $0 + "\r\n" }.joined() + "\r\n"))
            } catch {
                // A connection refused as it opens gets its 503 and the close before the request
                // may even leave (a busy machine's scheduling): the response is still to be read.
            }
            var data = ByteBuffer()
            do {
                for try await var chunk in inbound {
                    data.writeBuffer(&chunk)
                    if String(buffer: data).contains("\r\n\r\n") { break }
                }
            } catch {
                // A reset behind the response (the request reached a closed socket) ends the read.
            }
            // The status line ("\r\n" is one Character: split on it, not on "\r").
            try await body(String(String(buffer: data).split(separator: "\r\n", maxSplits: 1).first ?? ""))
        }
    }

    /// A status line of a response that was served, not refused.
    static func served(_ status: String) -> Bool {
        status.hasPrefix("HTTP/1.1 ") && !status.hasPrefix(refused)
    }

    static let refused = "HTTP/1.1 503 Service Unavailable"

    @Test("two connections naming different clients count under separate addresses; a third naming the first is refused", arguments: [
        ["X-Forwarded-For: 198.51.100.1"], ["Forwarded: for=198.51.100.1;proto=http"],
        // The right-most untrusted hop: 127.0.0.1 is itself a trusted proxy.
        ["X-Forwarded-For: 203.0.113.9, 198.51.100.1, 127.0.0.1"],
        [#"Forwarded: for="[2001:db8::1]:4711""#],
    ])
    func separateLimits(first: [String]) async throws {
        try await withHTTPServer(board: OfflineBoard.shared, maxConnectionsPerAddress: 1, configure: {
            $0.trustedProxies = Self.trusted
        }) { http, _, _ in
            try await holding(http, headers: first) { status in
                #expect(Self.served(status), "\(status)")
                try await holding(http, headers: ["X-Forwarded-For: 198.51.100.2"]) { status in
                    #expect(Self.served(status), "\(status)")
                    try await holding(http, headers: first) { status in #expect(status == Self.refused) }
                    // With no field at all, the proxy's own address: a place of its own.
                    try await holding(http, headers: []) { status in #expect(Self.served(status), "\(status)") }
                }
            }
        }
    }

    @Test("from an untrusted peer both fields are ignored: the limit is the peer's own", arguments: [
        (TrustedProxies.none, "127.0.0.1"), (ForwardedClientTests.trusted, "127.0.0.2"),
    ])
    func untrustedSpoof(trusted: TrustedProxies, source: String) async throws {
        try await withHTTPServer(board: OfflineBoard.shared, maxConnectionsPerAddress: 1, configure: {
            $0.trustedProxies = trusted
        }) { http, _, _ in
            try await holding(http, from: source, headers: ["X-Forwarded-For: 198.51.100.1"]) { status in
                #expect(Self.served(status), "\(status)")
                try await holding(http, from: source, headers: ["X-Forwarded-For: 198.51.100.2"]) { status in
                    #expect(status == Self.refused)
                }
                try await holding(http, from: source, headers: ["Forwarded: for=198.51.100.3"]) { status in
                    #expect(status == Self.refused)
                }
            }
        }
    }

    /// Opens `/ws` with `headers` and runs `body` with it.
    func webSocket(_ http: SocketAddress, headers: HTTPFields, _ body: @escaping @Sendable (WebSocketConversation) async throws -> Void) async throws {
        _ = try await WebSocketClient.connect(
            url: "ws://127.0.0.1:\(http.port!)/ws", configuration: .init(maxFrameSize: 1 << 20, additionalHeaders: headers),
            eventLoopGroup: clientGroup, logger: .init(label: "test-ws-client")
        ) { inbound, outbound, _ in
            try await body(WebSocketConversation(inbound: inbound, outbound: outbound))
        }
    }

    @Test("with PostgreSQL: a WebSocket's REGISTERs count under the client its upgrade named, from a trusted peer only")
    func webSocketBuckets() async throws {
        let xForwardedFor = HTTPField.Name("X-Forwarded-For")!
        let forwarded = HTTPField.Name("Forwarded")!
        try await TestEnvironment.make(prefix: "http", configure: {
            $0.registrationRate = RateLimit(count: 1, seconds: 3600)
        }).use { environment in
            try await withHTTPServer(board: environment.board, configure: { $0.trustedProxies = Self.trusted }) { http, _, _ in
                try await webSocket(http, headers: [xForwardedFor: "198.51.100.21"]) { socket in
                    let reply1 = try await socket.call("REGISTER first first@example.org password1")
                    #expect(reply1?.hasPrefix("OK ") == true, "\(reply1 ?? "closed")")
                    let reply2 = try await socket.call("REGISTER again again@example.org password1")
                    #expect(reply2?.hasPrefix("ERR RATE_LIMITED ") == true, "\(reply2 ?? "closed")")
                }
                try await webSocket(http, headers: [forwarded: #"for="[2001:db8::22]:443""#]) { socket in
                    let reply3 = try await socket.call("REGISTER second second@example.org password1")
                    #expect(reply3?.hasPrefix("OK ") == true, "\(reply3 ?? "closed")")
                }
            }
            // A daemon that trusts no one: the same fields, one bucket (the peer's).
            try await withHTTPServer(board: environment.board) { http, _, _ in
                try await webSocket(http, headers: [xForwardedFor: "198.51.100.23"]) { socket in
                    let reply4 = try await socket.call("REGISTER third third@example.org password1")
                    #expect(reply4?.hasPrefix("OK ") == true, "\(reply4 ?? "closed")")
                }
                try await webSocket(http, headers: [xForwardedFor: "198.51.100.24"]) { socket in
                    let reply5 = try await socket.call("REGISTER fourth fourth@example.org password1")
                    #expect(reply5?.hasPrefix("ERR RATE_LIMITED ") == true, "\(reply5 ?? "closed")")
                }
            }
            let rows = try await environment.pool.query("SELECT count(*) FROM users")
            #expect(try rows[0].int(0) as Int == 3)
        }
    }
}
