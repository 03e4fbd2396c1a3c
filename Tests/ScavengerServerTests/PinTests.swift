import Base64
import Foundation
import Postgres
import ScavengerCore
import ScavengerTestSupport
import Testing

@Suite("Pins and replies over TCP with PostgreSQL")
struct PinTests {
    @Test("writing needs a login; reading does not")
    func loginNeeded() async throws {
        try await withDatabaseServer { address, _ in
            try await converse(address) { (client: Conversation) async throws in
                for line in ["POST 1 2 hi", "POSTPHOTO 1 2 iVBORw0KGgo=", "REPLY pabcdefghijklmnopqrstuvwx hi", "DELETE pabcdefghijklmnopqrstuvwx"] {
                    #expect(try await client.call(line) == "ERR UNAUTHORIZED log in first (REGISTER, LOGIN or AUTH)")
                }
                #expect(try await client.call("GET pabcdefghijklmnopqrstuvwx") == "ERR NOT_FOUND no such pin")
            }
        }
    }

    @Test("POST answers the pin; GET returns the same", arguments: [
        "plain",
        "emoji 😀🏳️‍🌈 and accents éü",
        #"quotes " and 'single' and backslashes \ \\ \n"#,
        "line one\nline two\tafter a tab",
        "'); DROP TABLE pins; --",
        "$1 $$ %s %d {}",
        String(repeating: "é", count: 500),
    ])
    func postAndGet(text: String) async throws {
        try await withDatabaseServer { address, _ in
            try await converse(address) { client in
                try await client.register("alice")
                let pin = try await client.ok("POST 52.520008 -13.404954 \(quoted(text)) TTL 3600")["pin"]
                #expect(try pin["text"].string == text)
                #expect(pin["lat"].double == 52.520008)
                #expect(pin["lon"].double == -13.404954)
                #expect(try pin["kind"].string == "text")
                #expect(try pin["author"].string == "alice")
                #expect(pin["region"].isNull)
                #expect(pin["photo"].isNull)
                #expect(pin["replies"].int == 0)
                #expect(pin.keys == ["author", "created", "expires", "id", "kind", "lat", "lon", "photo", "region", "replies", "text"])
                let id = try pin["id"].string
                let fetched = try await client.call("GET \(id)")
                #expect(fetched == "OK " + #"{"pin":"# + (try await client.call("GET \(id)")).dropFirst(3).dropFirst(7))
                #expect(try JSONObject(okLine: fetched)["pin"]["text"].string == text)
                let created = try pin["created"].string
                #expect(created.hasSuffix("Z") && created.count == 20)
            }
        }
    }

    @Test("POST rejects bad input and stores nothing", arguments: [
        ("POST 91 0 hi", "ERR BAD_ARGUMENT latitude must be within [-90, 90]"),
        ("POST 0 180.1 hi", "ERR BAD_ARGUMENT longitude must be within [-180, 180]"),
        ("POST nan 0 hi", "ERR BAD_ARGUMENT latitude must be a plain decimal number, got 'nan'"),
        ("POST +1 0 hi", "ERR BAD_ARGUMENT latitude must be a plain decimal number, got '+1'"),
        ("POST 1. 0 hi", "ERR BAD_ARGUMENT latitude must be a plain decimal number, got '1.'"),
        (#"POST 0 0 """#, "ERR BAD_ARGUMENT text must not be empty"),
        ("POST 0 0 \(String(repeating: "x", count: 501))", "ERR BAD_ARGUMENT text must be at most 500 characters long"),
        (#"POST 0 0 "bell\u0007""#, "ERR BAD_ARGUMENT text must not contain control characters other than newline and tab"),
        (#"POST 0 0 "cr\r""#, "ERR BAD_ARGUMENT text must not contain control characters other than newline and tab"),
        ("POST 0 0 hi TTL 0", "ERR BAD_ARGUMENT TTL must be between 1 and 2592000, got 0"),
        ("POST 0 0 hi TTL 1.5", "ERR BAD_ARGUMENT TTL must be a whole number, got '1.5'"),
        ("POST 0 0 hi TTL 2592001", "ERR BAD_ARGUMENT TTL must be between 1 and 2592000, got 2592001"),
        ("POST 0 0 hi TTL", "ERR BAD_ARGUMENT option TTL needs a value"),
        ("POST 0 0 hi COLOR red", "ERR BAD_ARGUMENT unknown option 'COLOR' for POST (expected TTL)"),
        ("POST 0 0 hi TTL 5 TTL 6", "ERR BAD_ARGUMENT option TTL given twice"),
    ])
    func postRejects(line: String, expected: String) async throws {
        try await withDatabaseServer { address, environment in
            try await converse(address) { client in
                try await client.register("alice")
                #expect(try await client.call(line) == expected)
            }
            let pins = try await environment.pool.query("SELECT count(*) FROM pins")
            #expect(try pins[0].int(0) as Int == 0)
        }
    }

    @Test("TTL defaults to 48 hours and is honoured")
    func ttl() async throws {
        try await withDatabaseServer { address, environment in
            try await converse(address) { client in
                try await client.register("alice")
                let defaulted = try await client.ok("POST 0 0 hi")["pin"]
                let custom = try await client.ok("POST 0 0 hi ttl 90")["pin"]
                let rows = try await environment.pool.query("""
                    SELECT id, extract(epoch FROM expires_at - created_at)::bigint FROM pins ORDER BY created_at
                    """)
                let lifetimes = try Dictionary(uniqueKeysWithValues: rows.map { (try $0.string(0) as String, try $0.int(1) as Int) })
                #expect(lifetimes[try defaulted["id"].string] == 48 * 3600)
                #expect(lifetimes[try custom["id"].string] == 90)
            }
        }
    }

    @Test("a 4 MiB photo round-trips byte-exact, stored once as bytes")
    func photoRoundTrip() async throws {
        try await withDatabaseServer { address, environment in
            var generator = SystemRandomNumberGenerator()
            let random = (0 ..< 4 * 1024 * 1024).map { _ in UInt8.random(in: 0 ... 255, using: &generator) }
            let photo = PhotoFixtures.png([PhotoFixtures.pngChunk("IDAT", random)])
            try await converse(address) { client in
                try await client.register("alice")
                let pin = try await client.ok("POSTPHOTO 10 20 \(Base64.encode(photo)) CAPTION \(quoted("sunset 🌅")) TTL 600")["pin"]
                #expect(try pin["kind"].string == "photo")
                #expect(try pin["text"].string == "sunset 🌅")
                #expect(try pin["photo"]["mime"].string == "image/png")
                #expect(pin["photo"]["bytes"].int == photo.count)
                let id = try pin["id"].string
                let fetched = try await client.ok("PHOTO \(id)")
                #expect(try fetched["id"].string == id)
                #expect(try fetched["mime"].string == "image/png")
                #expect(try Base64.decode(fetched["data"].string) == photo)
                let stored = try await environment.pool.query("SELECT octet_length(data) FROM photos WHERE pin_id = \(id)")
                #expect(try stored[0].int(0) as Int == photo.count)
            }
        }
    }

    @Test("each image type is recognised by its magic bytes", arguments: [
        (PhotoFixtures.jpeg(), "image/jpeg"),
        (PhotoFixtures.png(), "image/png"),
        (PhotoFixtures.gif(), "image/gif"),
        (Array("GIF87a".utf8) + PhotoFixtures.gif().dropFirst(6), "image/gif"),
        (PhotoFixtures.webp(), "image/webp"),
    ])
    func imageTypes(bytes: [UInt8], mime: String) async throws {
        try await withDatabaseServer { address, _ in
            try await converse(address) { client in
                try await client.register("alice")
                let pin = try await client.ok("POSTPHOTO 1 1 \(Base64.encode(bytes))")["pin"]
                #expect(try pin["photo"]["mime"].string == mime)
                #expect(try pin["text"].string == "")
            }
        }
    }

    @Test("POSTPHOTO rejects bad photos and stores nothing", arguments: [
        ("aGV*sb!G8=", "ERR BAD_ARGUMENT photo: invalid base64"),
        ("iVBORw0KGgo", "ERR BAD_ARGUMENT photo: invalid base64"),
        (Base64.encode(Array("just some text".utf8)), "ERR BAD_ARGUMENT photo must be a JPEG, PNG, GIF or WebP image"),
        (#""""#, "ERR BAD_ARGUMENT photo must not be empty"),
        (Base64.encode([0xFF, 0xD8, 0xFF] + [UInt8](repeating: 0, count: 2000)), "ERR TOO_LARGE photo is larger than 1024 bytes"),
        (Base64.encode([0xFF, 0xD8, 0xFF, 1]), "ERR BAD_ARGUMENT the photo is not a well-formed JPEG ("),
        (Base64.encode(PhotoFixtures.png().dropLast(12)), "ERR BAD_ARGUMENT the photo is not a well-formed PNG (it ends without IEND)"),
    ])
    func photoRejects(data: String, expected: String) async throws {
        try await withDatabaseServer(pinRules: PinRules(maximumPhotoBytes: 1024)) { address, environment in
            try await converse(address) { client in
                try await client.register("alice")
                let reply = try await client.call("POSTPHOTO 1 1 \(data)")
                #expect(reply.hasPrefix(expected), "\(reply)")
            }
            let counts = try await environment.pool.query("SELECT (SELECT count(*) FROM pins), (SELECT count(*) FROM photos)")
            #expect(try counts[0].int(0) as Int == 0)
            #expect(try counts[0].int(1) as Int == 0)
        }
    }

    @Test("GET and PHOTO of what is not there are NOT_FOUND")
    func notFound() async throws {
        try await withDatabaseServer { address, _ in
            try await converse(address) { client in
                try await client.register("alice")
                let id = try await client.ok("POST 1 1 text")["pin"]["id"].string
                #expect(try await client.call("PHOTO \(id)") == "ERR NOT_FOUND no such photo pin")
                #expect(try await client.call("GET pzzzzzzzzzzzzzzzzzzzzzzzz") == "ERR NOT_FOUND no such pin")
                #expect(try await client.call("GET nonsense") == "ERR NOT_FOUND no such pin")
                #expect(try await client.call(#"GET "'; SELECT 1; --""#) == "ERR NOT_FOUND no such pin")
            }
        }
    }

    @Test("DELETE: only the author or a moderator; replies and photo go with the pin")
    func delete() async throws {
        try await withDatabaseServer { address, environment in
            try await converse(address) { author in
                try await author.register("alice")
                let id = try await author.ok("POSTPHOTO 1 1 \(Base64.encode(PhotoFixtures.jpeg()))")["pin"]["id"].string
                _ = try await author.ok("REPLY \(id) first")
                try await converse(address) { other in
                    try await other.register("bob")
                    #expect(try await other.call("DELETE \(id)") == "ERR FORBIDDEN only the author or a moderator may delete this pin")
                    #expect(try await other.call("GET \(id)").hasPrefix("OK "))
                    _ = try await environment.database.setRole(username: "bob", role: .moderator)
                    #expect(try await other.call("DELETE \(id)") == "OK true")
                    #expect(try await other.call("DELETE \(id)") == "ERR NOT_FOUND no such pin")
                }
                #expect(try await author.call("GET \(id)") == "ERR NOT_FOUND no such pin")
                let own = try await author.ok("POST 1 1 mine")["pin"]["id"].string
                #expect(try await author.call("DELETE \(own)") == "OK true")
            }
            let counts = try await environment.pool.query("""
                SELECT (SELECT count(*) FROM pins), (SELECT count(*) FROM photos), (SELECT count(*) FROM replies)
                """)
            #expect(try counts[0].int(0) as Int == 0)
            #expect(try counts[0].int(1) as Int == 0)
            #expect(try counts[0].int(2) as Int == 0)
        }
    }

    @Test("REPLIES pages oldest first; following next lists every reply once")
    func replies() async throws {
        try await withDatabaseServer { address, _ in
            try await converse(address) { client in
                try await client.register("alice")
                let id = try await client.ok("POST 1 1 chat")["pin"]["id"].string
                var written: [String] = []
                for index in 0 ..< 7 {
                    let reply = try await client.ok("REPLY \(id) \(quoted("message \(index) 💬"))")["reply"]
                    #expect(try reply["pin"].string == id)
                    #expect(try reply["author"].string == "alice")
                    #expect(try reply["text"].string == "message \(index) 💬")
                    written.append(try reply["id"].string)
                }
                var seen: [String] = []
                var cursor: String?
                repeat {
                    let page = try await client.ok("REPLIES \(id) LIMIT 3" + (cursor.map { " CURSOR \($0)" } ?? ""))
                    #expect(page["replies"].array.count <= 3)
                    seen += try page["replies"].array.map { try $0["id"].string }
                    cursor = page["next"].isNull ? nil : try page["next"].string
                } while cursor != nil
                #expect(seen == written)
                #expect(try await client.ok("GET \(id)")["pin"]["replies"].int == 7)
                #expect(try await client.ok("REPLIES \(id)")["replies"].array.count == 7)
                #expect(try await client.call("REPLIES \(id) LIMIT 0") == "ERR BAD_ARGUMENT LIMIT must be between 1 and 200, got 0")
                #expect(try await client.call("REPLIES \(id) LIMIT 201") == "ERR BAD_ARGUMENT LIMIT must be between 1 and 200, got 201")
                #expect(try await client.call("REPLIES \(id) CURSOR bogus") == "ERR BAD_ARGUMENT CURSOR is not a cursor this command returned")
                #expect(try await client.call("REPLIES pzzzzzzzzzzzzzzzzzzzzzzzz") == "ERR NOT_FOUND no such pin")
                #expect(try await client.call("REPLY pzzzzzzzzzzzzzzzzzzzzzzzz hi") == "ERR NOT_FOUND no such pin")
                #expect(try await client.call(#"REPLY \#(id) """#) == "ERR BAD_ARGUMENT text must not be empty")
            }
        }
    }

    @Test("an expired pin is gone from every read path at once")
    func expiry() async throws {
        try await withDatabaseServer { address, environment in
            try await converse(address) { client in
                try await client.register("alice")
                let id = try await client.ok("POSTPHOTO 1 1 \(Base64.encode(PhotoFixtures.webp()))")["pin"]["id"].string
                _ = try await client.ok("REPLY \(id) quick")
                // It expires now (a short TTL could run out before the REPLY on a busy host).
                try await environment.pool.query(
                    "UPDATE pins SET created_at = now() - interval '2 seconds', expires_at = now() - interval '1 second' WHERE id = \(id)",
                    idempotent: false)
                #expect(try await client.call("GET \(id)") == "ERR NOT_FOUND no such pin")
                #expect(try await client.call("PHOTO \(id)") == "ERR NOT_FOUND no such photo pin")
                #expect(try await client.call("REPLIES \(id)") == "ERR NOT_FOUND no such pin")
                #expect(try await client.call("REPLY \(id) late") == "ERR NOT_FOUND no such pin")
                #expect(try await client.call("DELETE \(id)") == "ERR NOT_FOUND no such pin")
            }
        }
    }
}
