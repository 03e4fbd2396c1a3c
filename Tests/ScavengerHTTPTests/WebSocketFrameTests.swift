import Foundation
import NIOCore
import NIOPosix
import ScavengerHTTP
import ScavengerTestSupport
import Synchronization
import Testing

/// A WebSocket client of raw frames, for what a polite client never sends: binary messages,
/// invalid UTF-8, fragments, ping floods.
struct RawWebSocket {
    let inbound: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator
    let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>

    /// One client frame (masked, as clients must): opcode, payload, whether it ends its message.
    static func frame(opcode: UInt8, _ payload: [UInt8], fin: Bool = true) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.writeInteger(UInt8(fin ? 0x80 : 0) | opcode)
        precondition(payload.count < 126)
        buffer.writeInteger(UInt8(0x80) | UInt8(payload.count))
        let mask: [UInt8] = [0x12, 0x34, 0x56, 0x78]
        buffer.writeBytes(mask)
        buffer.writeBytes(payload.enumerated().map { $0.element ^ mask[$0.offset % 4] })
        return buffer
    }
}

/// Opens `/ws`, completes the handshake, and runs `body` with a way to send raw bytes and to
/// read the server's frames (opcode and payload) one by one.
func withRawWebSocket<T: Sendable>(
    _ address: SocketAddress,
    _ body: (_ send: (ByteBuffer) async throws -> Void, _ next: () async throws -> (opcode: UInt8, payload: [UInt8])?) async throws -> T
) async throws -> T {
    let channel = try await ClientBootstrap(group: clientGroup)
        .connect(host: "127.0.0.1", port: address.port!) { channel in
            channel.eventLoop.makeCompletedFuture {
                try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
            }
        }
    return try await channel.executeThenClose { inbound, outbound in
        try await outbound.write(ByteBuffer(string: "GET /ws HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\n"
            + "Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"))
        var iterator = inbound.makeAsyncIterator()
        var pending: [UInt8] = []
        // The handshake's response.
        while !pending.containsSubsequence(Array("\r\n\r\n".utf8)) {
            guard let chunk = try await iterator.next() else { throw BadResponse(text: String(decoding: pending, as: UTF8.self)) }
            pending += chunk.readableBytesView
        }
        let end = pending.firstRange(of: Array("\r\n\r\n".utf8))!.upperBound
        #expect(String(decoding: pending[..<end], as: UTF8.self).hasPrefix("HTTP/1.1 101"))
        pending.removeFirst(end)
        let buffered = Mutex(pending)
        nonisolated(unsafe) var frames = iterator
        return try await body({ try await outbound.write($0) }, {
            // Server frames are unmasked: opcode, length (7 bits, or 16 after 126), payload.
            while true {
                let parsed = buffered.withLock { bytes -> (UInt8, [UInt8])? in
                    guard bytes.count >= 2 else { return nil }
                    var length = Int(bytes[1] & 0x7F)
                    var start = 2
                    if length == 126 {
                        guard bytes.count >= 4 else { return nil }
                        length = Int(bytes[2]) << 8 | Int(bytes[3])
                        start = 4
                    }
                    guard bytes.count >= start + length else { return nil }
                    let frame = (bytes[0] & 0x0F, Array(bytes[start ..< start + length]))
                    bytes.removeFirst(start + length)
                    return frame
                }
                if let parsed { return (opcode: parsed.0, payload: parsed.1) }
                guard let chunk = try await frames.next() else { return nil }
                buffered.withLock { $0 += chunk.readableBytesView }
            }
        })
    }
}

extension Array where Element == UInt8 {
    fileprivate func containsSubsequence(_ other: [UInt8]) -> Bool { firstRange(of: other) != nil }
}

@Suite("WebSocket frames a polite client never sends")
struct WebSocketFrameTests {
    /// The next text frame's text, skipping pongs.
    static func nextText(_ next: () async throws -> (opcode: UInt8, payload: [UInt8])?) async throws -> String? {
        while let frame = try await next() {
            if frame.opcode == 0x1 { return String(decoding: frame.payload, as: UTF8.self) }
            if frame.opcode == 0x8 { return nil }
        }
        return nil
    }

    @Test("binary messages, whole or fragmented, get ERR BAD_REQUEST and the socket goes on")
    func binary() async throws {
        try await withHTTPServer(board: OfflineBoard.shared) { http, _, _ in
            try await withRawWebSocket(http) { send, next in
                try await send(RawWebSocket.frame(opcode: 0x2, Array("PING".utf8)))
                #expect(try await Self.nextText(next) == "ERR BAD_REQUEST send requests as text messages")
                try await send(RawWebSocket.frame(opcode: 0x2, Array("PI".utf8), fin: false))
                try await send(RawWebSocket.frame(opcode: 0x0, Array("NG".utf8)))
                #expect(try await Self.nextText(next) == "ERR BAD_REQUEST send requests as text messages")
                try await send(RawWebSocket.frame(opcode: 0x1, Array("PING".utf8)))
                #expect(try await Self.nextText(next) == #"OK "PONG""#)
            }
        }
    }

    @Test("a text message of invalid UTF-8 gets ERR BAD_REQUEST or a close, never a reply to a command")
    func invalidUTF8() async throws {
        try await withHTTPServer(board: OfflineBoard.shared) { http, _, _ in
            try await withRawWebSocket(http) { send, next in
                try await send(RawWebSocket.frame(opcode: 0x1, [0x50, 0xFF, 0xFE, 0x47]))
                let answer = try await Self.nextText(next)
                #expect(answer == nil || answer == "ERR BAD_REQUEST request line is not valid UTF-8", "\(answer ?? "closed")")
            }
        }
    }

    @Test("a text message in fragments is one request")
    func fragments() async throws {
        try await withHTTPServer(board: OfflineBoard.shared) { http, _, _ in
            try await withRawWebSocket(http) { send, next in
                try await send(RawWebSocket.frame(opcode: 0x1, Array("PI".utf8), fin: false))
                try await send(RawWebSocket.frame(opcode: 0x9, Array("between".utf8)))  // a ping between fragments
                try await send(RawWebSocket.frame(opcode: 0x0, Array("N".utf8), fin: false))
                try await send(RawWebSocket.frame(opcode: 0x0, Array("G".utf8)))
                #expect(try await Self.nextText(next) == #"OK "PONG""#)
            }
        }
    }

    @Test("a flood of pings is answered with pongs, and requests after it still are")
    func pingFlood() async throws {
        try await withHTTPServer(board: OfflineBoard.shared) { http, _, _ in
            try await withRawWebSocket(http) { send, next in
                var flood = ByteBuffer()
                for index in 0 ..< 2000 {
                    var frame = RawWebSocket.frame(opcode: 0x9, Array("\(index)".utf8))
                    flood.writeBuffer(&frame)
                }
                try await send(flood)
                try await send(RawWebSocket.frame(opcode: 0x1, Array("PING".utf8)))
                var pongs = 0
                var reply: String?
                while let frame = try await next() {
                    if frame.opcode == 0xA { pongs += 1 }
                    if frame.opcode == 0x1 { reply = String(decoding: frame.payload, as: UTF8.self); break }
                }
                #expect(reply == #"OK "PONG""#)
                #expect(pongs > 0)
            }
        }
    }

    @Test("paths that climb out of the site are 404", arguments: [
        "/../etc/passwd", "/mod/../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/mod/%2e%2e%2f%2e%2e%2fetc%2fpasswd", "//etc/passwd",
    ])
    func traversal(path: String) async throws {
        try await withHTTPServer(board: OfflineBoard.shared) { http, _, _ in
            let response = try await httpRequest(http, "GET", path)
            #expect(response.status == 404 || response.status == 400, "\(path): \(response.status)")
            #expect(!response.body.contains("root:"))
        }
    }
}
