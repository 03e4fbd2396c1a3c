import Foundation
import NIOCore
import NIOPosix
@testable import ScavengerHTTP
import ScavengerTestSupport
import Testing

/// One GET on a connection of its own, read to its close: the header block and the body's bytes
/// (which `httpRequest` would decode as text).
func rawGet(_ address: SocketAddress, _ path: String, headers: [String] = []) async throws -> (status: Int, head: String, body: [UInt8]) {
    let channel = try await ClientBootstrap(group: clientGroup)
        .connect(host: "127.0.0.1", port: address.port!) { channel in
            channel.eventLoop.makeCompletedFuture { try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel) }
        }
    let bytes = try await channel.executeThenClose { inbound, outbound in
        try await outbound.write(ByteBuffer(string: "GET \(path) HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
            + headers.map { $0 + "\r\n" }.joined() + "\r\n"))
        var data = ByteBuffer()
        for try await var chunk in inbound { data.writeBuffer(&chunk) }
        return Array(data.readableBytesView)
    }
    let separator: [UInt8] = Array("\r\n\r\n".utf8)
    guard let end = (0 ..< max(0, bytes.count - 3)).first(where: { Array(bytes[$0 ..< $0 + 4]) == separator }) else {
        throw BadResponse(text: String(decoding: bytes, as: UTF8.self))
    }
    let head = String(decoding: bytes[..<end], as: UTF8.self)
    let status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
    return (status, head, Array(bytes[(end + 4)...]))
}

/// `bytes` decompressed by gzip(1).
func gunzip(_ bytes: [UInt8]) throws -> [UInt8] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/gzip")
    process.arguments = ["-dc"]
    let input = Pipe(), output = Pipe()
    process.standardInput = input
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    // Written from another thread, so that a large output cannot block the writer.
    let writer = Thread {
        input.fileHandleForWriting.write(Data(bytes))
        try? input.fileHandleForWriting.close()
    }
    writer.start()
    let data = readToEnd(output.fileHandleForReading)
    process.waitUntilExit()
    try #require(process.terminationStatus == 0, "gzip -dc failed")
    return Array(data)
}

@Suite("Static assets: compressed, validated, cached; the favicon", .timeLimit(.minutes(5)))
struct StaticAssetTests {
    static let paths = [
        "/", "/demo.js", "/demo.css", "/client.js", "/play", "/host", "/hunts.js", "/play.js", "/host.js", "/hunts.css", "/notices.js",
        "/play-scores.js", "/join-link.js", "/guest-join.js", "/basemap.js", "/pin-map.js", "/pin-map.css",
    ]

    @Test("each page, script and style sheet: gzip when accepted (the same bytes once decompressed), an ETag per form, 304 to a client that holds it", arguments: paths)
    func compressed(path: String) async throws {
        try await withHTTPServer(board: OfflineBoard.shared) { http, _, _ in
            let plain = try await rawGet(http, path)
            #expect(plain.status == 200)
            #expect(header("content-encoding", in: plain.head) == nil)
            #expect(header("cache-control", in: plain.head) == "no-cache")
            // The client module's answer also depends on the Origin (its CORS header).
            #expect(header("vary", in: plain.head) == (path == "/client.js" ? "Accept-Encoding, Origin" : "Accept-Encoding"))
            let tag = try #require(header("etag", in: plain.head))

            let packed = try await rawGet(http, path, headers: ["Accept-Encoding: gzip, deflate, br"])
            #expect(packed.status == 200)
            #expect(header("content-encoding", in: packed.head) == "gzip")
            #expect(header("content-type", in: packed.head) == header("content-type", in: plain.head))
            let packedTag = try #require(header("etag", in: packed.head))
            #expect(packedTag != tag && packedTag.hasSuffix("-gz\""))
            #expect(try gunzip(packed.body) == plain.body)
            #expect(packed.body.count < plain.body.count)
            // The page's own policy and the security headers are kept.
            #expect(header("content-security-policy", in: packed.head) == header("content-security-policy", in: plain.head))
            #expect(header("x-content-type-options", in: packed.head) == "nosniff")

            let held = try await rawGet(http, path, headers: ["Accept-Encoding: gzip", "If-None-Match: \(packedTag)"])
            #expect(held.status == 304 && held.body.isEmpty)
            #expect(header("etag", in: held.head) == packedTag)
            let heldPlain = try await rawGet(http, path, headers: ["If-None-Match: W/\(tag)"])
            #expect(heldPlain.status == 304)
            // A client that refuses gzip (q=0), or holds another version, gets the whole body.
            let refused = try await rawGet(http, path, headers: ["Accept-Encoding: gzip;q=0, identity"])
            #expect(header("content-encoding", in: refused.head) == nil && refused.body == plain.body)
            let stale = try await rawGet(http, path, headers: ["If-None-Match: \"0\""])
            #expect(stale.status == 200 && stale.body == plain.body)
        }
    }

    @Test("the Accept-Encoding and If-None-Match fields as browsers and proxies write them")
    func fields() {
        #expect(StaticAsset.acceptsGzip("gzip"))
        #expect(StaticAsset.acceptsGzip("deflate, GZIP;q=0.5"))
        #expect(StaticAsset.acceptsGzip("*"))
        #expect(!StaticAsset.acceptsGzip(nil))
        #expect(!StaticAsset.acceptsGzip("br, deflate"))
        #expect(!StaticAsset.acceptsGzip("gzip;q=0"))
        #expect(!StaticAsset.acceptsGzip("gzip; q=0.0"))
        #expect(StaticAsset.matches("\"a\", \"b\"", "\"b\""))
        #expect(StaticAsset.matches("*", "\"b\""))
        #expect(StaticAsset.matches("W/\"b\"", "\"b\""))
        #expect(!StaticAsset.matches("\"bb\"", "\"b\""))
        #expect(!StaticAsset.matches(nil, "\"b\""))
    }

    @Test("/favicon.ico is an icon (a PNG inside an ICO), cached for a day, so no page gets a 404 for it")
    func favicon() async throws {
        try await withHTTPServer(board: OfflineBoard.shared) { http, _, _ in
            let icon = try await rawGet(http, "/favicon.ico")
            #expect(icon.status == 200)
            #expect(header("content-type", in: icon.head) == "image/x-icon")
            #expect(header("cache-control", in: icon.head) == "public, max-age=86400")
            #expect(Array(icon.body.prefix(4)) == [0, 0, 1, 0], "an ICO header")
            #expect(Array(icon.body[22 ..< 26]) == [0x89, 0x50, 0x4E, 0x47], "a PNG inside")
            #expect(icon.body.count == Favicon.bytes.count)
        }
    }

    @Test("Leaflet's files: the package's .gz beside a file is sent to a client that accepts gzip, with an ETag of its own; a day's caching; 304")
    func vendorCompressed() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("leaflet-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data("/* leaflet.min.js of the test */".utf8).write(to: directory.appendingPathComponent("leaflet.min.js"))
        try Data("GZIP-OF-THE-TEST".utf8).write(to: directory.appendingPathComponent("leaflet.min.js.gz"))
        try Data(".leaflet-container {}".utf8).write(to: directory.appendingPathComponent("leaflet.css"))
        try await withHTTPServer(board: OfflineBoard.shared, configure: { $0.leafletDirectory = directory.path }) { http, _, _ in
            let plain = try await rawGet(http, "/vendor/leaflet/leaflet.min.js")
            #expect(plain.status == 200 && plain.body == Array("/* leaflet.min.js of the test */".utf8))
            #expect(header("content-encoding", in: plain.head) == nil)
            #expect(header("cache-control", in: plain.head) == "public, max-age=86400")
            #expect(header("vary", in: plain.head) == "Accept-Encoding")
            let tag = try #require(header("etag", in: plain.head))
            let packed = try await rawGet(http, "/vendor/leaflet/leaflet.min.js", headers: ["Accept-Encoding: gzip"])
            #expect(packed.body == Array("GZIP-OF-THE-TEST".utf8))
            #expect(header("content-encoding", in: packed.head) == "gzip")
            #expect(header("content-type", in: packed.head) == "text/javascript; charset=utf-8")
            let packedTag = try #require(header("etag", in: packed.head))
            #expect(packedTag != tag)
            let held = try await rawGet(http, "/vendor/leaflet/leaflet.min.js", headers: ["Accept-Encoding: gzip", "If-None-Match: \(packedTag)"])
            #expect(held.status == 304 && held.body.isEmpty)
            // No .gz beside it: the file itself, to every client.
            let style = try await rawGet(http, "/vendor/leaflet/leaflet.css", headers: ["Accept-Encoding: gzip"])
            #expect(style.status == 200 && header("content-encoding", in: style.head) == nil)
            // The .gz itself is not a file the pages use: never served by its own name.
            #expect(try await rawGet(http, "/vendor/leaflet/leaflet.min.js.gz").status == 404)
        }
    }
}
