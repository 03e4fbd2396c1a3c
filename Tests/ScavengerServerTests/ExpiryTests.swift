import Base64
import Foundation
import ScavengerCore
import ScavengerStore
import ScavengerTestSupport
import Testing

@Suite("Pin expiry")
struct ExpiryTests {
    /// Counts rows of the pins, photos, replies and sessions tables.
    func counts(_ environment: TestEnvironment) async throws -> [Int] {
        let rows = try await environment.pool.query("""
            SELECT (SELECT count(*) FROM pins), (SELECT count(*) FROM photos), (SELECT count(*) FROM replies),
                   (SELECT count(*) FROM sessions)
            """)
        return try (0 ..< 4).map { try rows[0].int($0) as Int }
    }

    @Test("an expired pin is gone from every read path, then expire removes it with its replies and photo")
    func expireRemoves() async throws {
        try await withDatabaseServer { address, environment in
            try await converse(address) { client in
                try await client.register("alice")
                let live = try await client.ok("POST 1 1 stays TTL 600")["pin"]["id"].string
                _ = try await client.ok("REPLY \(live) kept")
                let doomed = try await client.ok("POSTPHOTO 1 1 \(Base64.encode(PhotoFixtures.jpeg()))")["pin"]["id"].string
                _ = try await client.ok("REPLY \(doomed) one")
                _ = try await client.ok("REPLY \(doomed) two")
                // It expires now (a short TTL could run out before the replies on a busy host), as
                // another process would change it: the feed reads it again and drops it.
                try await environment.pool.query(
                    "UPDATE pins SET created_at = now() - interval '2 seconds', expires_at = now() - interval '1 second' WHERE id = \(doomed)",
                    idempotent: false)
                try await environment.feed.catchUp()
                #expect(try await client.call("GET \(doomed)") == "ERR NOT_FOUND no such pin")
                #expect(try await client.ok("NEARBY 1 1 10")["pins"].array.count == 1)
                #expect(try await counts(environment) == [2, 1, 3, 1])

                let result = try Executable.run(["expire"], configuration: environment.configuration)
                #expect(result.status == 0, "\(result.stderr)")
                #expect(result.stdout.hasPrefix("expired 1 pins, 2 replies, \(PhotoFixtures.jpeg().count) photo bytes, 0 sessions, 0 change-log entries, 0 request keys, 0 mail rows in "))
                #expect(result.stdout.filter { $0 == "\n" }.count == 1)
                #expect(try await counts(environment) == [1, 0, 1, 1])
                #expect(try await client.ok("GET \(live)")["pin"]["replies"].int == 1)

                let again = try Executable.run(["expire"], configuration: environment.configuration)
                #expect(again.stdout.hasPrefix("expired 0 pins, 0 replies, 0 photo bytes, 0 sessions"))
            }
        }
    }

    @Test("two passes at once both succeed and remove each row once")
    func concurrentPasses() async throws {
        try await TestEnvironment.make().use { environment in
            let account = try await environment.database.register(
                name: "bulk", email: "bulk@example.org", passwordHash: "x", tokenHash: [UInt8](repeating: 2, count: 32),
                sessionTTLSeconds: 60)
            // 3,000 expired pins with a reply each, and 100 live ones, written straight to the table.
            try await environment.pool.query("""
                INSERT INTO pins (id, author_id, lat, lon, kind, body, created_at, expires_at, reply_count)
                SELECT 'p' || repeat('q', 16) || translate(lpad(to_hex(g), 8, '0'), '0189', 'wxyz'), \(account.id), 0, 0, 'text', 'old',
                       now() - interval '2 hours', now() - interval '1 hour', 1
                FROM generate_series(1, 3000) g
                """, idempotent: false)
            try await environment.pool.query("""
                INSERT INTO replies (id, pin_id, author_id, body)
                SELECT 'r' || substr(id, 2), id, \(account.id), 'x' FROM pins
                """, idempotent: false)
            try await environment.pool.query("""
                INSERT INTO pins (id, author_id, lat, lon, kind, body, expires_at)
                SELECT 'p' || repeat('s', 16) || translate(lpad(to_hex(g), 8, '0'), '0189', 'wxyz'), \(account.id), 0, 0, 'text', 'new', now() + interval '1 hour'
                FROM generate_series(1, 100) g
                """, idempotent: false)
            let configuration = environment.configuration
            async let first = Task.detached { try Executable.run(["expire", "--batch-size", "100"], configuration: configuration) }.value
            async let second = Task.detached { try Executable.run(["expire", "--batch-size", "100"], configuration: configuration) }.value
            let results = try await [first, second]
            var pins = 0, replies = 0
            for result in results {
                #expect(result.status == 0, "\(result.stderr)")
                let words = result.stdout.split(separator: " ")
                pins += Int(words[1]) ?? -1_000_000
                replies += Int(words[3]) ?? -1_000_000
            }
            #expect(pins == 3000)
            #expect(replies == 3000)
            let left = try await environment.pool.query("SELECT count(*), count(*) FILTER (WHERE expires_at > now()) FROM pins")
            #expect(try left[0].int(0) as Int == 100)
            #expect(try left[0].int(1) as Int == 100)
        }
    }

    @Test("expired sessions are swept too")
    func sessions() async throws {
        try await TestEnvironment.make().use { environment in
            _ = try await environment.database.register(
                name: "old", email: "old@example.org", passwordHash: "x", tokenHash: [UInt8](repeating: 3, count: 32),
                sessionTTLSeconds: 60)
            try await environment.pool.query("UPDATE sessions SET expires_at = now() - interval '1 second'", idempotent: false)
            let report = try await environment.database.expire()
            #expect(report.sessions == 1)
            #expect(report.pins == 0)
        }
    }
}

@Suite("Group commit of text pins")
struct GroupCommitTests {
    @Test("many concurrent writers: every pin is committed once, each caller gets its own")
    func concurrentWriters() async throws {
        try await TestEnvironment.make().use { environment in
            let account = try await environment.database.register(
                name: "many", email: "many@example.org", passwordHash: "x", tokenHash: [UInt8](repeating: 4, count: 32),
                sessionTTLSeconds: 60)
            let database = environment.database
            let pins = try await withThrowingTaskGroup(of: Pin.self) { group in
                for index in 0 ..< 200 {
                    group.addTask {
                        try await database.createPin(NewPin(
                            authorID: account.id, authorName: "many", lat: Double(index % 90), lon: 0, text: "pin \(index)",
                            ttlSeconds: 60 + index, photo: nil, cell: 0, region: nil))
                    }
                }
                return try await group.reduce(into: [Pin]()) { $0.append($1) }
            }
            #expect(Set(pins.map(\.id)).count == 200)
            #expect(Set(pins.map(\.text)).count == 200)
            let rows = try await environment.pool.query("""
                SELECT id, body, extract(epoch FROM expires_at - created_at)::int FROM pins
                """)
            #expect(rows.count == 200)
            var stored: [String: (String, Int)] = [:]
            for row in rows { stored[try row.string(0)] = (try row.string(1), try row.int(2)) }
            for pin in pins {
                let index = Int(pin.text.dropFirst(4))!
                #expect(stored[pin.id]?.0 == pin.text)
                #expect(stored[pin.id]?.1 == 60 + index)
            }
        }
    }
}
