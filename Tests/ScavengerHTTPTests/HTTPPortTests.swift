import Foundation
import HummingbirdWSClient
import NIOCore
import NIOPosix
import Prometheus
@testable import ScavengerBoard
import ScavengerHTTP
import ScavengerProtocol
import ScavengerTestSupport
import Synchronization
import Testing

// The time limit only guards against a hang, and it counts the wait for a TestEnvironment.
@Suite("The HTTP port", .timeLimit(.minutes(10)))
struct HTTPPortTests {
    @Test("over a WebSocket: PING, REGISTER, POST and NEARBY against PostgreSQL; AUTH on a second socket")
    func webSocketRoundTrips() async throws {
        try await TestEnvironment.make(prefix: "http").use { environment in
            try await withHTTPServer(board: environment.board) { http, tcp, _ in
                let token = Mutex<String?>(nil)
                try await withWebSocket(http) { ws in
                    #expect(try await ws.call("PING") == "OK \"PONG\"")
                    let registered = try #require(try await ws.call("REGISTER alice alice@example.org password1"))
                    #expect(registered.hasPrefix("OK "))
                    token.withLock { $0 = WebSocketConversation.field("token", in: registered) }
                    let posted = try #require(try await ws.call("POST 48.85 2.35 hello-from-a-socket"))
                    #expect(posted.hasPrefix("OK "), "\(posted)")
                    let nearby = try #require(try await ws.call("NEARBY 48.85 2.35 1000"))
                    #expect(nearby.hasPrefix("OK ") && nearby.contains("hello-from-a-socket"), "\(nearby)")
                }
                let saved = try #require(token.withLock { $0 })
                try await withWebSocket(http) { ws in
                    let auth = try #require(try await ws.call("AUTH \(saved)"))
                    #expect(auth == #"OK {"user":{"name":"alice","role":"user"}}"#)
                    #expect(try await ws.call("WHOAMI")?.contains("alice") == true)
                }
                // The same board behind the TCP port sees the pin.
                let reply = try await tcpCall(tcp, "NEARBY 48.85 2.35 1000")
                #expect(reply.contains("hello-from-a-socket"))
            }
        }
    }

    @Test("WATCH over a WebSocket: a pin posted on the TCP port arrives as an EVENT message, gone when deleted")
    func watchOverWebSocket() async throws {
        try await TestEnvironment.make(prefix: "http").use { environment in
            try await withHTTPServer(board: environment.board) { http, tcp, _ in
                try await withWebSocket(http) { ws in
                    let watch = try #require(try await ws.call("WATCH 48.85 2.35 500"))
                    #expect(watch.hasPrefix(#"OK {"watch":"#), "\(watch)")
                    let id = try #require(WebSocketConversation.field("watch", in: watch))
                    let token = try #require(WebSocketConversation.field(
                        "token", in: try await tcpCall(tcp, "REGISTER bob bob@example.org password1")))
                    let posted = try await tcpCall(tcp, "AUTH \(token)\nPOST 48.851 2.351 \"seen live\"", replies: 2)
                    let pin = try #require(WebSocketConversation.field("id", in: posted))
                    let event = try #require(try await ws.next())
                    #expect(event.hasPrefix("EVENT {\"watch\":\"\(id)\",\"type\":\"pin\""), "\(event)")
                    #expect(event.contains("seen live") && event.contains("distance_m") && !event.hasSuffix("\n"))
                    // A request still gets its reply, and events never split it.
                    #expect(try await ws.call("PING") == "OK \"PONG\"")
                    _ = try await tcpCall(tcp, "AUTH \(token)\nDELETE \(pin)", replies: 2)
                    let gone = try #require(try await ws.next())
                    #expect(gone.hasPrefix("EVENT {\"watch\":\"\(id)\",\"type\":\"gone\",\"seq\":") && gone.hasSuffix(",\"id\":\"\(pin)\"}"), "\(gone)")
                    #expect(try await ws.call("UNWATCH \(id)") == "OK true")
                }
            }
        }
    }

    @Test("WATCH … SINCE over a WebSocket: the reply, then the replay of what was missed, then live events")
    func resumeOverWebSocket() async throws {
        try await TestEnvironment.make(prefix: "http").use { environment in
            try await withHTTPServer(board: environment.board) { http, tcp, _ in
                let token = try #require(WebSocketConversation.field(
                    "token", in: try await tcpCall(tcp, "REGISTER bob bob@example.org password1")))
                let saved = Mutex<Int?>(nil)
                try await withWebSocket(http) { ws in
                    let reply = try #require(try await ws.call("WATCH 48.85 2.35 500"))
                    #expect(reply.hasPrefix(#"OK {"watch":"#) && reply.hasSuffix(#""resumed":false}"#), "\(reply)")
                    let seq = try #require(reply.range(of: #""seq":"#).map { reply[$0.upperBound...].prefix { $0.isNumber } })
                    saved.withLock { $0 = Int(seq) }
                }
                let seq = try #require(saved.withLock { $0 })
                let missed = try #require(WebSocketConversation.field(
                    "id", in: try await tcpCall(tcp, "AUTH \(token)\nPOST 48.851 2.351 \"missed\"", replies: 2)))
                try await withWebSocket(http) { ws in
                    let reply = try #require(try await ws.call("WATCH 48.85 2.35 500 SINCE \(seq)"))
                    #expect(reply.hasPrefix(#"OK {"watch":"#) && reply.hasSuffix(#""resumed":true}"#), "\(reply)")
                    let replayed = try #require(try await ws.next())
                    #expect(replayed.contains(#""type":"pin""#) && replayed.contains(missed), "\(replayed)")
                    let live = try #require(WebSocketConversation.field(
                        "id", in: try await tcpCall(tcp, "AUTH \(token)\nPOST 48.851 2.351 \"live\"", replies: 2)))
                    let event = try #require(try await ws.next())
                    #expect(event.contains(#""type":"pin""#) && event.contains(live), "\(event)")
                }
            }
        }
    }

    @Test("REQUEST over a WebSocket: a keyed POST retried on a new WebSocket and over TCP answers the same line; one pin is stored")
    func requestKeyOverWebSocket() async throws {
        try await TestEnvironment.make(prefix: "http").use { environment in
            try await withHTTPServer(board: environment.board) { http, tcp, _ in
                let token = try #require(WebSocketConversation.field(
                    "token", in: try await tcpCall(tcp, "REGISTER bob bob@example.org password1")))
                let line = "POST 48.85 2.35 \"keyed\" REQUEST ws-key-0001"
                let replies = Mutex<[String]>([])
                for _ in 0 ..< 2 {
                    try await withWebSocket(http) { ws in
                        _ = try await ws.call("AUTH \(token)")
                        let reply = try #require(try await ws.call(line))
                        replies.withLock { $0.append(reply) }
                    }
                }
                let overTCP = try await tcpCall(tcp, "AUTH \(token)\n\(line)", replies: 2)
                let seen = replies.withLock { $0 }
                #expect(seen[0].hasPrefix(#"OK {"pin":"#) && seen[1] == seen[0], "\(seen)")
                #expect(overTCP == seen[0])
                #expect(try await environment.pool.query("SELECT count(*) AS n FROM pins")[0].int("n") as Int == 1)
            }
        }
    }

    @Test("requests sent back to back are answered in order")
    func pipelinedInOrder() async throws {
        try await withHTTPServer(board: OfflineBoard.shared) { http, _, _ in
            try await withWebSocket(http) { ws in
                let requests = (0 ..< 20).map { $0 % 2 == 0 ? "PING" : "NOSUCH\($0)" }
                for request in requests { try await ws.call(request, waitingForReply: false) }
                for request in requests {
                    let reply = try #require(try await ws.next())
                    if request == "PING" {
                        #expect(reply == "OK \"PONG\"")
                    } else {
                        #expect(reply.hasPrefix("ERR UNKNOWN_COMMAND unknown command '\(request)'"), "\(reply)")
                    }
                }
            }
        }
    }

    @Test("a message holding a newline is BAD_REQUEST and the socket stays open")
    func newlineIsBadRequest() async throws {
        try await withHTTPServer(board: OfflineBoard.shared) { http, _, _ in
            try await withWebSocket(http) { ws in
                let reply = try #require(try await ws.call("PING\nPING"))
                #expect(reply.hasPrefix("ERR BAD_REQUEST "))
                #expect(!reply.hasSuffix("\n"))
                #expect(try await ws.call("PING") == "OK \"PONG\"")
            }
        }
    }

    @Test("a message over the line limit gets LINE_TOO_LONG, then the socket closes")
    func tooLongCloses() async throws {
        try await withHTTPServer(board: OfflineBoard.shared, limits: ProtocolLimits(maxLineBytes: 1024)) { http, _, _ in
            try await withWebSocket(http) { ws in
                // At the limit: answered, whatever the answer.
                let within = try #require(try await ws.call("ECHO " + String(repeating: "x", count: 1019)))
                #expect(!within.hasPrefix("ERR LINE_TOO_LONG"))
                let reply = try #require(try await ws.call("PING " + String(repeating: "x", count: 2000)))
                #expect(reply == "ERR LINE_TOO_LONG request line longer than 1024 bytes; closing")
                #expect(try await ws.next() == nil)
            }
            // In fragments, past the limit as soon as the fragments add up to it.
            try await withWebSocket(http) { ws in
                try await ws.sendFragmented(Array(repeating: String(repeating: "y", count: 600), count: 3))
                #expect(try await ws.next() == "ERR LINE_TOO_LONG request line longer than 1024 bytes; closing")
                #expect(try await ws.next() == nil)
            }
            // A single frame over twice the limit is refused by the frame decoder: closed, no ERR line.
            try await withWebSocket(http) { ws in
                try await ws.send(String(repeating: "z", count: 4096))
                #expect(try await ws.next() == nil)
            }
            let metrics = try await httpGet(http, "/metrics").body
            #expect(sample(#"scavenger_requests_total{command="OTHER",code="LINE_TOO_LONG"}"#, in: metrics) == 2)
        }
    }

    @Test("/metrics after traffic on both ports: counters by command and code, latency, gauges")
    func metricsAfterTraffic() async throws {
        // The store records into the same registry the port serves.
        let metrics = DaemonMetrics(registry: PrometheusCollectorRegistry())
        try await TestEnvironment.make(prefix: "http", metrics: metrics.factory).use { environment in
            try await withHTTPServer(board: environment.board, metrics: metrics) { http, tcp, _ in
                let before = try await httpGet(http, "/metrics")
                #expect(before.status == 200)
                // Every port's connections are counted, the one asking for /metrics among them.
                #expect(sample("scavenger_connections", in: before.body) == 1)
                for name in [
                    "scavenger_feed_pins", "scavenger_watches", "scavenger_events_total",
                    "scavenger_rate_limited_total", "scavenger_moderation_open_items", "scavenger_db_pool_waits_total",
                    "scavenger_db_pool_wait_seconds_total", "scavenger_db_pool_waiting",
                    "scavenger_ranked_users", "scavenger_ranked_users_this_week",
                ] {
                    #expect(sample(name, in: before.body) == 0, "\(name)")
                }
                try await withWebSocket(http) { ws in
                    for _ in 0 ..< 3 { _ = try await ws.call("PING") }
                    _ = try await ws.call("FROB")
                    _ = try await ws.call("REGISTER bob bob@example.org password1")
                    _ = try await ws.call("POST 1 2 a-pin")
                    // While this socket is open it is counted, beside the one asking.
                    let during = try await httpGet(http, "/metrics")
                    #expect(sample("scavenger_connections", in: during.body) == 2)
                    #expect(sample("scavenger_feed_pins", in: during.body) == 1)
                }
                _ = try await tcpCall(tcp, "PING")
                let after = try await httpGet(http, "/metrics").body
                #expect(sample(#"scavenger_requests_total{command="PING",code="OK"}"#, in: after) == 4)
                #expect(sample(#"scavenger_requests_total{command="OTHER",code="UNKNOWN_COMMAND"}"#, in: after) == 1)
                #expect(sample(#"scavenger_requests_total{command="REGISTER",code="OK"}"#, in: after) == 1)
                #expect(sample(#"scavenger_requests_total{command="POST",code="OK"}"#, in: after) == 1)
                #expect(sample(#"scavenger_request_duration_seconds_count{command="PING"}"#, in: after) == 4)
                #expect(sample(#"scavenger_request_duration_seconds_count{command="POST"}"#, in: after) == 1)
                #expect((sample(#"scavenger_request_duration_seconds_sum{command="POST"}"#, in: after) ?? 0) > 0)
                #expect(after.contains("# TYPE scavenger_request_duration_seconds histogram"))
                // The server notices the closed sockets a moment after the clients close them.
                try await eventually("both closed connections are uncounted") {
                    sample("scavenger_connections", in: try await httpGet(http, "/metrics").body) == 1
                }
                // The one POST was a group of one pin.
                #expect(sample("scavenger_group_commit_pins_count", in: after) == 1)
                #expect(sample("scavenger_group_commit_pins_sum", in: after) == 1)
                #expect(sample(#"scavenger_group_commit_pins_bucket{le="1.0"}"#, in: after) == 1)
            }
        }
    }

    @Test("/healthz is 200 when the database answers and the feed is loaded, 503 while the database is away")
    func healthzFollowsTheDatabase() async throws {
        let (configuration, proxy) = try TestDatabase.proxiedConfiguration(prefix: "http")
        defer { proxy.stop() }
        try await TestEnvironment.make(configuration: configuration, commandTimeout: .seconds(2)).use { environment in
            try await withHTTPServer(board: environment.board) { http, _, _ in
                let fine = try await httpGet(http, "/healthz")
                #expect(fine.status == 200)
                #expect(fine.body == "ok\n")
                proxy.blackhole()
                proxy.cutAll()
                // Once the cached answer (0.2 s) has gone, the check finds the database away.
                var down = (status: 0, body: "")
                try await eventually("/healthz says the database is away") {
                    down = try await httpGet(http, "/healthz")
                    return down.status != 200
                }
                #expect(down.status == 503)
                #expect(down.body.contains("database"))
                proxy.resume()
                try await eventually("/healthz is 200 again") { try await httpGet(http, "/healthz").status == 200 }
            }
        }
    }

    @Test("/healthz is 503 before the feed is loaded, 200 once it is")
    func healthzWaitsForTheFeed() async throws {
        try await TestEnvironment.make(prefix: "http", loadFeed: false).use { environment in
            try await withHTTPServer(board: environment.board) { http, _, _ in
                let before = try await httpGet(http, "/healthz")
                #expect(before.status == 503)
                #expect(before.body == "feed not loaded\n")
                _ = try await environment.board.feed.load()
                // Once the cached answer (0.2 s) has gone.
                try await eventually("/healthz is 200") { try await httpGet(http, "/healthz").status == 200 }
            }
        }
    }

    @Test("/healthz is 503 with no database at all; / is the demo page; other paths are 404")
    func offlineAndNotFound() async throws {
        try await withHTTPServer(board: OfflineBoard.shared) { http, _, _ in
            let health = try await httpGet(http, "/healthz")
            #expect(health.status == 503)
            let demo = try await httpGet(http, "/")
            #expect(demo.status == 200)
            #expect(demo.body.contains("<title>Scavenger demo</title>") && demo.body.contains("/ws"))
            // Nothing is fetched from elsewhere: it works offline.
            #expect(!demo.body.contains("http://") && !demo.body.contains("https://"))
            for path in ["/nope", "/metrics/x", "/wss", "/modx", "/index.html"] {
                #expect(try await httpGet(http, path).status == 404, "\(path)")
            }
        }
    }

    @Test("HTTP connections count against --max-connections with the TCP port's: one past it gets 503 and a close")
    func connectionLimit() async throws {
        try await withHTTPServer(board: OfflineBoard.shared, maxConnections: 1) { http, tcp, _ in
            try await withWebSocket(http) { first in
                #expect(try await first.call("PING") == "OK \"PONG\"")
                let refused = try await rawUpgrade(http)
                #expect(refused.hasPrefix("HTTP/1.1 503 "))
                #expect(refused.contains("the server is at its connection limit (1); retry later"))
            }
            // A TCP client holds the place now, and the WebSocket is refused. The WebSocket's
            // place is given back once the server has seen it close: a TCP client that comes
            // before is refused (closed unanswered), so one is tried until it is let in.
            try await eventually("a TCP client is let in once the WebSocket's place is free") {
                let channel = try await ClientBootstrap(group: clientGroup)
                    .connect(host: "127.0.0.1", port: tcp.port!) { channel in
                        channel.eventLoop.makeCompletedFuture {
                            try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                        }
                    }
                return try await channel.executeThenClose { inbound, outbound in
                    var replies = inbound.makeAsyncIterator()
                    do {
                        try await outbound.write(ByteBuffer(string: "PING\n"))
                        // Refused: `ERR UNAVAILABLE …` and a close.
                        guard let reply = try await replies.next(), String(buffer: reply).hasPrefix("OK ") else { return false }
                    } catch {
                        return false
                    }
                    let refused = try await rawUpgrade(http)
                    #expect(refused.hasPrefix("HTTP/1.1 503 "))
                    #expect(refused.contains("the server is at its connection limit (1); retry later"))
                    return true
                }
            }
        }
    }
}

@Suite("The HTTP port's shutdown", .timeLimit(.minutes(2)))
struct HTTPShutdownTests {
    @Test("shutdown closes a WebSocket whose client never reads nor answers the close handshake")
    func shutdownClosesWebSockets() async throws {
        let held = Mutex<(any Channel)?>(nil)
        // Without its close timeout (2 s) the server would wait for this client for ever: the
        // shutdown finishing at all, well inside the guard, is what is checked, not how fast.
        try await withTimeout {
            try await withHTTPServer(board: OfflineBoard.shared) { http, _, _ in
                // A client that upgrades, then never reads nor answers anything.
                let upgraded = Gate()
                let channel = try await ClientBootstrap(group: clientGroup)
                    .channelInitializer { channel in
                        channel.pipeline.addHandler(FirstReadSignal(upgraded))
                    }
                    .connect(host: "127.0.0.1", port: http.port!).get()
                try await channel.writeAndFlush(ByteBuffer(string: "GET /ws HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\n"
                    + "Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"))
                held.withLock { $0 = channel }
                // The 101 came back: the socket is a WebSocket now, and its session is running.
                await upgraded.wait()
            }
            // The server has stopped, and it closed the client's socket.
            let channel = held.withLock { $0 }
            try await channel?.closeFuture.get()
        }
    }
}

/// Opens a gate on the first bytes a channel receives (and reads nothing more).
final class FirstReadSignal: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    let gate: Gate
    init(_ gate: Gate) { self.gate = gate }
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        gate.open()
    }
}

extension WebSocketConversation {
    /// Sends a message without waiting for its reply.
    func call(_ message: String, waitingForReply: Bool) async throws {
        precondition(!waitingForReply)
        try await send(message)
    }
}

/// Sends `line` (one request, or several joined by newlines) on a new TCP connection; returns the
/// last of the first `replies` reply lines.
func tcpCall(_ address: SocketAddress, _ line: String, replies: Int = 1) async throws -> String {
    let channel = try await ClientBootstrap(group: clientGroup)
        .connect(host: "127.0.0.1", port: address.port!) { channel in
            channel.eventLoop.makeCompletedFuture {
                try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
            }
        }
    return try await channel.executeThenClose { inbound, outbound in
        try await outbound.write(ByteBuffer(string: line + "\n"))
        var data = ByteBuffer()
        for try await var chunk in inbound {
            data.writeBuffer(&chunk)
            if data.readableBytesView.filter({ $0 == UInt8(ascii: "\n") }).count >= replies { break }
        }
        return String(String(buffer: data).split(separator: "\n")[replies - 1])
    }
}

/// Upgrades to a WebSocket by hand and returns everything the server sends (the 101 response
/// and its frames, unmasked as servers send them) until the refusal has come, it closes, or a
/// hang guard of 60 s passes: for refusals, which the server sends right after the upgrade.
func rawUpgrade(_ address: SocketAddress) async throws -> String {
    let channel = try await ClientBootstrap(group: clientGroup)
        .connect(host: "127.0.0.1", port: address.port!) { channel in
            channel.eventLoop.makeCompletedFuture {
                try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
            }
        }
    return try await channel.executeThenClose { inbound, outbound in
        // A refused connection may be closed before this is written: what matters is what it read.
        try? await outbound.write(ByteBuffer(string: "GET /ws HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\n"
            + "Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"))
        let received = Mutex(ByteBuffer())
        // Only a hang guard: the refusal normally comes at once, but other suites share the machine.
        _ = try? await withTimeout {
            for try await var chunk in inbound {
                _ = received.withLock { $0.writeBuffer(&chunk) }
                if String(buffer: received.withLock { $0 }).contains("retry later") { break }
            }
        }
        return String(decoding: received.withLock { $0 }.readableBytesView, as: UTF8.self)
    }
}
