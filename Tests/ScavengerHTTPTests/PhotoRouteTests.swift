import Foundation
import NIOCore
import NIOPosix
@testable import ScavengerBoard
import ScavengerTestSupport
import Synchronization
import Testing
import Vips

/// The JSON object of an `OK {…}` reply (empty for anything else).
private func okObject(_ reply: String?) -> [String: Any] {
    guard let reply, reply.hasPrefix("OK "),
          let value = try? JSONSerialization.jsonObject(with: Data(reply.dropFirst(3).utf8)) as? [String: Any]
    else { return [:] }
    return value
}

/// One GET on a connection of its own, its body as bytes: the status, the header fields by
/// lower-cased name, the body.
private func getBytes(_ address: SocketAddress, _ path: String, headers: [String] = []) async throws
    -> (status: Int, fields: [String: String], body: [UInt8])
{
    let channel = try await ClientBootstrap(group: clientGroup)
        .connect(host: "127.0.0.1", port: address.port!) { channel in
            channel.eventLoop.makeCompletedFuture { try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel) }
        }
    let bytes = try await channel.executeThenClose { inbound, outbound in
        try await outbound.write(ByteBuffer(string: "GET \(path) HTTP/1.1\r\nHost: localhost\r\n"
            + (headers + ["Connection: close"]).map { $0 + "\r\n" }.joined() + "\r\n"))
        var data: [UInt8] = []
        for try await chunk in inbound { data += chunk.readableBytesView }
        return data
    }
    let separator: [UInt8] = Array("\r\n\r\n".utf8)
    guard let end = (0 ..< max(bytes.count - 3, 0)).first(where: { bytes[$0 ..< $0 + 4].elementsEqual(separator) }) else {
        throw BadResponse(text: String(decoding: bytes, as: UTF8.self))
    }
    let lines = String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n")
    let parts = lines[0].split(separator: " ")
    guard parts.count >= 2, let status = Int(parts[1]) else { throw BadResponse(text: lines[0]) }
    var fields: [String: String] = [:]
    for line in lines.dropFirst() {
        guard let colon = line.firstIndex(of: ":") else { continue }
        fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    }
    return (status, fields, Array(bytes[(end + 4)...]))
}

/// Photos by URL (protocol 1.5): width and height read at the write, `/photos/ID` with its sizes
/// made in the background, validators and caching, hiding seen at once by every daemon, a
/// check-in's photo behind its bearer token, bombs refused. The time limit only guards against a
/// hang, and it counts the wait for a TestEnvironment.
@Suite("Photos by URL (protocol 1.5)", .timeLimit(.minutes(10)))
struct PhotoRouteTests {
    @Test("a photo pin: width, height and paths in its object; original, thumb and display over HTTP on two daemons, ETag and 304; hidden → 404 at once on both")
    func photoPin() async throws {
        try await TestEnvironment.make(prefix: "photos").use { environment in
            let second = environment.secondDaemon()
            try await withHTTPServer(board: environment.board) { http, _, _ in
                try await withHTTPServer(board: second) { other, _, _ in
                    let png = TestImages.png(width: 600, height: 300)
                    let reply = Mutex<String?>(nil)
                    try await withWebSocket(http) { alice in
                        #expect(try await alice.call("REGISTER alice alice@example.org password1")?.hasPrefix("OK ") == true)
                        let posted = try await alice.call("POSTPHOTO 48.85 2.35 \(Data(png).base64EncodedString()) CAPTION \"wide\"")
                        reply.withLock { $0 = posted }
                    }
                    let pin = try #require(okObject(reply.withLock { $0 })["pin"] as? [String: Any], "\(reply.withLock { $0 } ?? "")")
                    let id = try #require(pin["id"] as? String)
                    #expect(pin["width"] as? Int == 600)
                    #expect(pin["height"] as? Int == 300)
                    #expect(pin["url"] as? String == "/photos/\(id)")
                    #expect(pin["thumb"] as? String == "/photos/\(id)?size=thumb")

                    // The original at once (the stripped PNG), public and immutable.
                    let original = try await getBytes(http, "/photos/\(id)")
                    #expect(original.status == 200)
                    #expect(original.fields["content-type"] == "image/png")
                    #expect(original.fields["cache-control"] == "public, max-age=31536000, immutable")
                    #expect(original.fields["content-length"] == String(original.body.count))
                    let originalHeader = try Vips.header(of: original.body)
                    #expect((originalHeader.width, originalHeader.height) == (600, 300))

                    // The thumbnail: answered from the original until it is made, never an error.
                    var thumb = try await getBytes(http, "/photos/\(id)?size=thumb")
                    while thumb.fields["content-type"] != "image/jpeg" {
                        #expect(thumb.status == 200)
                        #expect(thumb.fields["content-type"] == "image/png")
                        #expect(thumb.fields["cache-control"] == "no-cache")
                        try await Task.sleep(for: .milliseconds(50))
                        thumb = try await getBytes(http, "/photos/\(id)?size=thumb")
                    }
                    #expect(thumb.status == 200)
                    #expect(thumb.fields["cache-control"] == "public, max-age=31536000, immutable")
                    let thumbHeader = try Vips.header(of: thumb.body)
                    #expect((thumbHeader.width, thumbHeader.height) == (256, 128))
                    let etag = try #require(thumb.fields["etag"])
                    let revalidated = try await getBytes(http, "/photos/\(id)?size=thumb", headers: ["If-None-Match: \(etag)"])
                    #expect(revalidated.status == 304)
                    #expect(revalidated.body.isEmpty)

                    // Display: never enlarged. WebP for a request whose Accept takes it.
                    let display = try await getBytes(http, "/photos/\(id)?size=display")
                    #expect(display.fields["content-type"] == "image/jpeg")
                    let displayHeader = try Vips.header(of: display.body)
                    #expect((displayHeader.width, displayHeader.height) == (600, 300))
                    let webp = try await getBytes(http, "/photos/\(id)?size=thumb", headers: ["Accept: image/avif,image/webp,*/*"])
                    #expect(webp.fields["content-type"] == "image/webp")
                    #expect(try Vips.header(of: webp.body).format == .webp)
                    #expect(!TestImages.contains(webp.body, "EXIF") && !TestImages.contains(webp.body, "Exif"))
                    #expect(try await getBytes(http, "/photos/\(id)?size=huge").status == 400)

                    // The second daemon serves the same bytes.
                    let elsewhere = try await getBytes(other, "/photos/\(id)?size=thumb")
                    #expect(elsewhere.status == 200)
                    #expect(elsewhere.fields["etag"] == etag)

                    // Hidden by moderation (its row, as a RESOLVE leaves it): 404 at once on both
                    // daemons, though both hold its bytes in memory.
                    _ = try await environment.pool.query("UPDATE pins SET hidden = true WHERE id = \(id)")
                    for address in [http, other] {
                        for path in ["/photos/\(id)", "/photos/\(id)?size=thumb"] {
                            #expect(try await getBytes(address, path).status == 404, "\(path)")
                        }
                    }
                }
            }
            await second.passwords.shutdown()
        }
    }

    @Test("sizes left unmade (by a restart, or a photo stored before 1.5) are made when the daemon resumes them, with width and height filled in; the original answers meanwhile")
    func resumesUnmadeSizes() async throws {
        try await TestEnvironment.make(prefix: "photos").use { environment in
            try await withHTTPServer(board: environment.board) { http, _, _ in
                let png = TestImages.png(width: 600, height: 300)
                let reply = Mutex<String?>(nil)
                try await withWebSocket(http) { alice in
                    #expect(try await alice.call("REGISTER alice alice@example.org password1")?.hasPrefix("OK ") == true)
                    let posted = try await alice.call("POSTPHOTO 48.85 2.35 \(Data(png).base64EncodedString())")
                    reply.withLock { $0 = posted }
                }
                let pin = try #require(okObject(reply.withLock { $0 })["pin"] as? [String: Any])
                let id = try #require(pin["id"] as? String)
                func state() async throws -> (sizes: String, width: Int?) {
                    let rows = try await environment.pool.query("""
                        SELECT ph.sizes, p.photo_width FROM photos ph JOIN pins p ON p.id = ph.pin_id WHERE ph.pin_id = \(id)
                        """)
                    let row = try #require(rows.first)
                    return (try row.string("sizes"), try row.int("photo_width"))
                }
                while try await state().sizes != "made" { try await Task.sleep(for: .milliseconds(50)) }
                // As a photo stored before 1.5 is, or one a daemon stopped before sizing.
                _ = try await environment.pool.query("""
                    UPDATE photos SET sizes = 'pending', thumb_jpeg = NULL, display_jpeg = NULL, thumb_webp = NULL,
                        display_webp = NULL WHERE pin_id = \(id)
                    """)
                _ = try await environment.pool.query("UPDATE pins SET photo_width = NULL, photo_height = NULL WHERE id = \(id)")
                let meanwhile = try await getBytes(http, "/photos/\(id)?size=thumb")
                #expect(meanwhile.status == 200)
                #expect(meanwhile.fields["content-type"] == "image/png")
                #expect(meanwhile.fields["cache-control"] == "no-cache")
                environment.board.resumePhotoSizes()
                while try await state().sizes != "made" { try await Task.sleep(for: .milliseconds(50)) }
                #expect(try await state().width == 600)
                let thumb = try await getBytes(http, "/photos/\(id)?size=thumb")
                #expect(thumb.fields["content-type"] == "image/jpeg")
                #expect(try Vips.header(of: thumb.body).width == 256)
            }
        }
    }

    @Test("a bomb (tiny file, huge dimensions), a truncated file and a non-image are refused with a clear ERR")
    func bombsRefused() async throws {
        try await TestEnvironment.make(prefix: "photos").use { environment in
            try await withHTTPServer(board: environment.board) { http, _, _ in
                let jpeg = try Vips.thumbnail(of: TestImages.png(width: 64, height: 64), longestEdge: 64, as: .jpeg)
                let lottapixel = TestImages.claiming(width: 64_250, height: 64_250, jpeg: jpeg)
                let wide = TestImages.claiming(width: 20_000, height: 10, jpeg: jpeg)
                let pngBomb = TestImages.png(width: 2, height: 2, headerWidth: 9_000, headerHeight: 9_000)
                let truncated = Array(jpeg.prefix(jpeg.count / 2))
                try await withWebSocket(http) { alice in
                    #expect(try await alice.call("REGISTER alice alice@example.org password1")?.hasPrefix("OK ") == true)
                    for (bomb, name) in [(lottapixel, "lottapixel"), (wide, "wide"), (pngBomb, "81 MP PNG")] {
                        let reply = try await alice.call("POSTPHOTO 1 1 \(Data(bomb).base64EncodedString())") ?? ""
                        #expect(reply.hasPrefix("ERR TOO_LARGE photo is "), "\(name): \(reply)")
                    }
                    let cut = try await alice.call("POSTPHOTO 1 1 \(Data(truncated).base64EncodedString())") ?? ""
                    #expect(cut.hasPrefix("ERR BAD_ARGUMENT "), "\(cut)")
                    let nearby = try await alice.call("NEARBY 1 1 1000") ?? ""
                    #expect(okObject(nearby)["pins"] as? [Any] != nil && (okObject(nearby)["pins"] as? [Any])?.isEmpty == true, "\(nearby)")
                }
            }
        }
    }

    @Test("a check-in's photo: its paths in the check-in; 401 without a bearer token, 404 for another player, 200 private for its player and the host")
    func checkInPhoto() async throws {
        try await TestEnvironment.make(prefix: "photos").use { environment in
            try await withHTTPServer(board: environment.board) { http, _, _ in
                let png = TestImages.png(width: 40, height: 80)
                let found = Mutex<(hostToken: String, playerToken: String, otherToken: String, checkIn: String)?>(nil)
                try await withWebSocket(http) { host in
                    let hostToken = try #require(WebSocketConversation.field("token", in: try await host.call("REGISTER host host@example.org password1") ?? ""))
                    let hunt = okObject(try await host.call("CREATEHUNT \"Photo hunt\" PUBLIC"))["hunt"] as? [String: Any] ?? [:]
                    let huntID = try #require(hunt["id"] as? String)
                    let code = try #require(hunt["code"] as? String)
                    let added = okObject(try await host.call("ADDSTOP \(huntID) 48.8566 2.3522 50 10 \"The bridge\" PROOF photo"))
                    let stop = try #require((added["stop"] as? [String: Any])?["id"] as? String, "\(added)")
                    #expect(try await host.call("STARTHUNT \(huntID)")?.hasPrefix("OK ") == true)
                    try await withWebSocket(http) { amy in
                        let amyToken = try #require(WebSocketConversation.field("token", in: try await amy.call("REGISTER amy amy@example.org password1") ?? ""))
                        #expect(try await amy.call("JOIN \(code)")?.hasPrefix("OK ") == true)
                        let reply = try await amy.call("CHECKIN \(stop) 48.8566 2.3522 PHOTO \(Data(png).base64EncodedString())")
                        let checkIn = try #require(okObject(reply)["checkin"] as? [String: Any], "\(reply ?? "")")
                        let id = try #require(checkIn["id"] as? String)
                        let photo = try #require(checkIn["photo"] as? [String: Any])
                        #expect(photo["width"] as? Int == 40)
                        #expect(photo["height"] as? Int == 80)
                        #expect(photo["url"] as? String == "/photos/\(id)")
                        #expect(photo["thumb"] as? String == "/photos/\(id)?size=thumb")
                        try await withWebSocket(http) { bob in
                            let bobToken = try #require(WebSocketConversation.field("token", in: try await bob.call("REGISTER bob bob@example.org password1") ?? ""))
                            found.withLock { $0 = (hostToken, amyToken, bobToken, id) }
                        }
                    }
                }
                let (hostToken, playerToken, otherToken, id) = try #require(found.withLock { $0 })
                let anonymous = try await getBytes(http, "/photos/\(id)")
                #expect(anonymous.status == 401)
                #expect(anonymous.fields["www-authenticate"] == "Bearer")
                #expect(try await getBytes(http, "/photos/\(id)", headers: ["Authorization: Bearer not-a-token"]).status == 401)
                #expect(try await getBytes(http, "/photos/\(id)", headers: ["Authorization: Bearer \(otherToken)"]).status == 404)
                for token in [playerToken, hostToken] {
                    let photo = try await getBytes(http, "/photos/\(id)?size=thumb", headers: ["Authorization: Bearer \(token)"])
                    #expect(photo.status == 200)
                    #expect(photo.fields["cache-control"] == "private")
                    let header = try Vips.header(of: photo.body)
                    #expect((header.width, header.height) == (40, 80))
                }
            }
        }
    }

    @Test("the console shows a reported photo as a 256 px thumbnail made on the spot, the item page the kept copy; a stranger gets neither")
    func consoleThumbnail() async throws {
        try await TestEnvironment.make(prefix: "photos").use { environment in
            try await withHTTPServer(board: environment.board) { http, _, _ in
                let png = TestImages.png(width: 600, height: 300)
                let posted = Mutex<String?>(nil)
                try await withWebSocket(http) { mallory async throws in
                    #expect(try await mallory.call("REGISTER mallory mallory@example.org password1")?.hasPrefix("OK ") == true)
                    let reply = try await mallory.call("POSTPHOTO 48.85 2.35 \(Data(png).base64EncodedString())")
                    posted.withLock { $0 = reply }
                }
                let pin = try #require((okObject(posted.withLock { $0 })["pin"] as? [String: Any])?["id"] as? String)
                try await withWebSocket(http) { reporter async throws in
                    #expect(try await reporter.call("REGISTER reporter reporter@example.org password1")?.hasPrefix("OK ") == true)
                    #expect(try await reporter.call("REPORT \(pin) spam")?.hasPrefix("OK ") == true)
                }
                try await withWebSocket(http) { moderna async throws in
                    #expect(try await moderna.call("REGISTER moderna moderna@example.org password1")?.hasPrefix("OK ") == true)
                }
                #expect(try await environment.board.store.setRole(username: "moderna", role: .moderator))

                let stranger = try await getBytes(http, "/mod/photo/\(pin)?size=thumb")
                #expect(stranger.fields["content-type"]?.hasPrefix("text/html") == true, "the sign-in form, never the photo")
                let signedIn = try await ConsoleTests.signIn(http, "moderna", "password1")
                let session = try #require(ConsoleTests.setCookie("scavenger_mod", in: signedIn.head))
                let cookie = "Cookie: scavenger_mod=\(ConsoleTests.value(of: session))"
                let queue = try await httpRequest(http, "GET", "/mod/", headers: [cookie])
                #expect(queue.body.contains("src=\"/mod/photo/\(pin)?size=thumb\""))
                let thumb = try await getBytes(http, "/mod/photo/\(pin)?size=thumb", headers: [cookie])
                #expect(thumb.status == 200 && thumb.fields["content-type"] == "image/jpeg")
                #expect(thumb.fields["cache-control"] == "private, no-store")
                let thumbHeader = try Vips.header(of: thumb.body)
                #expect(thumbHeader.width == 256 && thumbHeader.height == 128)
                let copy = try await getBytes(http, "/mod/photo/\(pin)", headers: [cookie])
                #expect(copy.status == 200 && copy.fields["content-type"] == "image/png")
                #expect(try Vips.header(of: copy.body).width == 600)
            }
        }
    }
}
