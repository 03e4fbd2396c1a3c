import Foundation
import NIOCore
import NIOPosix
import ScavengerBoard
@testable import ScavengerHTTP
import ScavengerTestSupport
import Synchronization
import Testing

/// The guard's state machine alone: bytes in, what to do out.
@Suite("The HTTP guard's state machine")
struct HTTPGuardStateMachineTests {
    static let limits = HTTPHeadLimits(maxRequestLineBytes: 64, maxHeaderBytes: 256)

    static func feed(_ chunks: [String], limits: HTTPHeadLimits = limits) -> (actions: [HTTPGuardStateMachine.ReadAction], machine: HTTPGuardStateMachine) {
        var machine = HTTPGuardStateMachine(limits: limits)
        var actions: [HTTPGuardStateMachine.ReadAction] = []
        for chunk in chunks {
            let buffer = ByteBuffer(string: chunk)
            actions.append(machine.read(buffer.readableBytesView))
        }
        return (actions, machine)
    }

    @Test("what a head within the limits, or over them, gets", arguments: [
        (["GET / HTTP/1.1\r\nHost: a\r\n\r\n"], HTTPGuardStateMachine.ReadAction.forward(headStarted: true, headEnded: true)),
        (["GET /" + String(repeating: "a", count: 80) + " HTTP/1.1\r\n"], .refuse(.requestLineTooLong)),
        (["GET / HTTP/1.1\r\n" + String(repeating: "X: y\r\n", count: 60)], .refuse(.headerTooLarge)),
        (["POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n"], .refuse(.badHead)),
        (["POST / HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n"], .refuse(.badHead)),
        (["\r\n\r\nGET / HTTP/1.1\n\n"], .forward(headStarted: true, headEnded: true)),
    ])
    func oneHead(chunks: [String], expected: HTTPGuardStateMachine.ReadAction) {
        #expect(Self.feed(chunks).actions.last == expected)
    }

    @Test("a body of Content-Length bytes is skipped, and the next head is read as a head")
    func bodySkipped() {
        let body = String(repeating: "z", count: 300)  // longer than a head may be: not counted as one
        let (actions, machine) = Self.feed([
            "POST /mod/x HTTP/1.1\r\nContent-Length: 300\r\n\r\n", body, "GET / HTTP/1.1\r\n",
        ])
        #expect(actions == [
            .forward(headStarted: true, headEnded: true), .forward(headStarted: false, headEnded: false),
            .forward(headStarted: true, headEnded: false),
        ])
        #expect(machine.isInsideHead)
    }

    @Test("a head split over many reads is counted whole")
    func splitHead() {
        let chunks = ["GET / HTTP/1.1\r\n"] + Array(repeating: "X-Long: " + String(repeating: "v", count: 20) + "\r\n", count: 9)
        let (actions, _) = Self.feed(chunks)
        #expect(actions.first == .forward(headStarted: true, headEnded: false))
        #expect(actions.last == .refuse(.headerTooLarge))
        #expect(actions.dropFirst().dropLast().allSatisfy { $0 == .forward(headStarted: false, headEnded: false) })
    }

    @Test("the head's deadline refuses only a head that is incomplete")
    func deadline() {
        var idle = HTTPGuardStateMachine(limits: Self.limits)
        #expect(idle.headDeadlinePassed() == nil)
        var partial = Self.feed(["GET / HTTP/1.1\r\nX: "]).machine
        #expect(partial.headDeadlinePassed() == .headerTimeout)
        #expect(partial.read(ByteBuffer(string: "y\r\n\r\n").readableBytesView) == .drop)
        var whole = Self.feed(["GET / HTTP/1.1\r\n\r\n"]).machine
        #expect(whole.headDeadlinePassed() == nil)
    }

    @Test("after an upgrade, or a chunked body, bytes are no longer read as heads")
    func opaque() {
        var upgraded = Self.feed(["GET /ws HTTP/1.1\r\nUpgrade: websocket\r\n\r\n"]).machine
        upgraded.upgraded()
        let frames = String(repeating: "\u{81}\u{05}hello", count: 100)
        #expect(upgraded.read(ByteBuffer(string: frames).readableBytesView) == .forward(headStarted: false, headEnded: false))
        var chunked = Self.feed(["POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"]).machine
        #expect(chunked.read(ByteBuffer(string: String(repeating: "x", count: 1000)).readableBytesView)
            == .forward(headStarted: false, headEnded: false))
    }
}

/// A raw client: sends `text` (in pieces, `gap` apart, when `pieces` is given), then reads until
/// the server closes; what it read, or nil when the server did not close within `hangGuard` (a
/// bound that only catches a hang).
func sendAndReadUntilClosed(
    _ address: SocketAddress, _ text: String, pieces: Int = 1, gap: Duration = .zero, hangGuard: Double = 60
) async throws -> String? {
    let channel = try await ClientBootstrap(group: clientGroup)
        .connect(host: "127.0.0.1", port: address.port!) { channel in
            channel.eventLoop.makeCompletedFuture {
                try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
            }
        }
    return try await channel.executeThenClose { inbound, outbound in
        let received = Mutex(ByteBuffer())
        let closed = Mutex(false)
        let bytes = Array(text.utf8)
        let size = max(1, (bytes.count + pieces - 1) / pieces)
        let writer = Task {
            for start in stride(from: 0, to: bytes.count, by: size) {
                try await outbound.write(ByteBuffer(bytes: bytes[start ..< min(bytes.count, start + size)]))
                if gap > .zero { try await Task.sleep(for: gap) }
            }
        }
        defer { writer.cancel() }
        _ = try? await withTimeout(hangGuard) {
            do {
                for try await var chunk in inbound { _ = received.withLock { $0.writeBuffer(&chunk) } }
            } catch {}
            closed.withLock { $0 = true }
        }
        guard closed.withLock({ $0 }) else { return nil }
        return String(decoding: received.withLock { $0 }.readableBytesView, as: UTF8.self)
    }
}

@Suite("The HTTP port's defences, over real sockets")
struct HTTPGuardTests {
    @Test("a header over the limit gets 431 and the connection closes; one under it is served")
    func oversizedHeader() async throws {
        try await withHTTPServer(board: OfflineBoard.shared) { http, _, _ in
            let huge = "GET / HTTP/1.1\r\nHost: a\r\nX-Big: " + String(repeating: "a", count: 82_000) + "\r\n\r\n"
            let refused = try #require(try await sendAndReadUntilClosed(http, huge), "the connection was left open")
            #expect(refused.hasPrefix("HTTP/1.1 431 Request Header Fields Too Large\r\n"))
            #expect(refused.contains("Connection: close"))
            let fine = try await httpGet(http, "/healthz", headers: ["X-Big: " + String(repeating: "a", count: 30_000)])
            #expect(fine.status != 431)
        }
    }

    @Test("a request line over the limit gets 414 and the connection closes")
    func longRequestLine() async throws {
        try await withHTTPServer(board: OfflineBoard.shared) { http, _, _ in
            let long = "GET /" + String(repeating: "a", count: 10_000) + " HTTP/1.1\r\nHost: a\r\n\r\n"
            let refused = try #require(try await sendAndReadUntilClosed(http, long), "the connection was left open")
            #expect(refused.hasPrefix("HTTP/1.1 414 URI Too Long\r\n"))
        }
    }

    @Test("a head trickled a byte at a time past the head deadline gets 408 and the connection closes")
    func headerTrickle() async throws {
        try await withHTTPServer(board: OfflineBoard.shared, configure: { $0.headTimeoutSeconds = 1 }) { http, _, _ in
            // 400 pieces 50 ms apart: 20 s of trickling, far past the 1 s deadline.
            let head = "GET / HTTP/1.1\r\nHost: a\r\nX-Slow: " + String(repeating: "s", count: 360) + "\r\n\r\n"
            let refused = try #require(
                try await sendAndReadUntilClosed(http, head, pieces: 400, gap: .milliseconds(50)), "the connection was left open")
            #expect(refused.hasPrefix("HTTP/1.1 408 Request Timeout\r\n"))
        }
    }

    @Test("a connection that sends nothing is closed after the idle timeout, without a reply")
    func idleClosed() async throws {
        try await withHTTPServer(board: OfflineBoard.shared, configure: { $0.idleTimeoutSeconds = 1 }) { http, _, _ in
            let read = try #require(try await sendAndReadUntilClosed(http, ""), "the idle connection was left open")
            #expect(read.isEmpty)
        }
    }

    @Test("connections from one address past the per-address limit get 503 and a close; a closed one frees its place")
    func perAddressStorm() async throws {
        try await withHTTPServer(board: OfflineBoard.shared, maxConnectionsPerAddress: 5) { http, _, _ in
            // Five WebSockets hold their places; the sixth connection, plain HTTP, is refused.
            try await withWebSockets(http, count: 5) {
                let refused = try #require(try await sendAndReadUntilClosed(http, "GET / HTTP/1.1\r\nHost: a\r\n\r\n"))
                #expect(refused.hasPrefix("HTTP/1.1 503 Service Unavailable\r\n"))
                #expect(refused.contains("Retry-After: 1"))
                #expect(refused.contains("too many connections from your address (at most 5); retry later"))
            }
            // Their places are free again (each leaves when it closes; the wait only guards against a hang).
            try await eventually("a new connection is served") { try await httpGet(http, "/").status == 200 }
        }
    }

    @Test("every page the HTTP port serves sends the security headers", arguments: ["/", "/demo.js", "/client.js", "/healthz", "/metrics", "/nope", "/mod/", "/play", "/host", "/hunts.js", "/vendor/leaflet/nope.js"])
    func securityHeaders(path: String) async throws {
        try await withHTTPServer(board: OfflineBoard.shared) { http, _, _ in
            let response = try await httpRequest(http, "GET", path)
            let head = response.head.lowercased()
            #expect(head.contains("x-content-type-options: nosniff"), "\(path)")
            #expect(head.contains("referrer-policy: "), "\(path)")
            #expect(head.contains("x-frame-options: deny"), "\(path)")
            #expect(head.contains("content-security-policy: "), "\(path)")
            #expect(head.contains("frame-ancestors 'none'"), "\(path)")
            let csp = try #require(head.split(separator: "\r\n").first { $0.hasPrefix("content-security-policy:") })
            #expect(!csp.contains("unsafe-inline"), "\(path)")
            #expect(!csp.contains("unsafe-eval"), "\(path)")
        }
    }

    @Test("the demo page has no inline script (its script is /demo.js)")
    func demoPageScriptIsExternal() async throws {
        try await withHTTPServer(board: OfflineBoard.shared) { http, _, _ in
            let page = try await httpGet(http, "/")
            #expect(page.body.contains("<script type=\"module\" src=\"/demo.js\"></script>"))
            #expect(!page.body.contains("<script>"))
            // Its map: Leaflet from the daemon, images from OpenStreetMap's tiles only besides its own.
            #expect(page.body.contains("<script src=\"/vendor/leaflet/leaflet.min.js\"></script>\n<script type=\"module\" src=\"/demo.js\"></script>"))
            let headers = try await httpRequest(http, "GET", "/")
            #expect(header("content-security-policy", in: headers.head)?.contains("img-src 'self' data: https://tile.openstreetmap.org;") == true)
            let script = try await httpRequest(http, "GET", "/demo.js")
            #expect(script.status == 200)
            #expect(script.head.lowercased().contains("content-type: text/javascript"))
        }
    }

    @Test("--allowed-origins: a WebSocket from another origin is refused with 403; a listed one and one with no Origin are served")
    func allowedOrigins() async throws {
        try await withHTTPServer(board: OfflineBoard.shared, configure: { $0.allowedOrigins = ["https://app.example.org"] }) { http, _, _ in
            let upgrade = "GET /ws HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            let evil = try await firstResponseLine(http, upgrade + "Origin: https://evil.example\r\n\r\n")
            #expect(evil.hasPrefix("HTTP/1.1 403"))
            let listed = try await firstResponseLine(http, upgrade + "Origin: https://app.example.org\r\n\r\n")
            #expect(listed.hasPrefix("HTTP/1.1 101"))
            let none = try await firstResponseLine(http, upgrade + "\r\n")
            #expect(none.hasPrefix("HTTP/1.1 101"))
        }
    }
}

/// Opens `count` WebSockets, each answering a PING, and holds them open for `body`.
func withWebSockets(_ address: SocketAddress, count: Int, _ body: @escaping @Sendable () async throws -> Void) async throws {
    if count == 0 { return try await body() }
    try await withWebSocket(address) { socket in
        #expect(try await socket.call("PING") == "OK \"PONG\"")
        try await withWebSockets(address, count: count - 1, body)
    }
}

/// Sends `request` and returns the response's status line.
func firstResponseLine(_ address: SocketAddress, _ request: String) async throws -> String {
    let channel = try await ClientBootstrap(group: clientGroup)
        .connect(host: "127.0.0.1", port: address.port!) { channel in
            channel.eventLoop.makeCompletedFuture {
                try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
            }
        }
    return try await channel.executeThenClose { inbound, outbound in
        try await outbound.write(ByteBuffer(string: request))
        var data = ByteBuffer()
        for try await var chunk in inbound {
            data.writeBuffer(&chunk)
            if String(buffer: data).contains("\r\n") { break }
        }
        return String(String(buffer: data).prefix { $0 != "\r" })
    }
}
