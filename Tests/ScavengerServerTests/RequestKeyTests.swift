import Base64
import Foundation
import NIOCore
import Postgres
@testable import ScavengerBoard
import ScavengerCore
import ScavengerProtocol
import ScavengerStore
import ScavengerTestSupport
import Testing

/// How many rows `sql` counts (a `SELECT count(*) AS n …`).
func count(_ environment: TestEnvironment, _ sql: SQL) async throws -> Int {
    try await environment.pool.query(sql)[0].int("n")
}

extension Conversation {
    /// Sends `line REQUEST key` here, then the same on `retry` (another connection of the same
    /// user); both must answer `OK` with the very same line, which is returned.
    @discardableResult
    func keyed(_ line: String, key: String, retry: Conversation, sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
        let first = try await call("\(line) REQUEST \(key)")
        #expect(first.hasPrefix("OK "), "\(line): \(first)", sourceLocation: sourceLocation)
        let again = try await retry.call("\(line) REQUEST \(key)")
        #expect(again == first, "\(line): the retry answered \(again)", sourceLocation: sourceLocation)
        return first
    }
}

/// Sends `line` on both connections before reading either reply, so the daemon has both requests
/// at once; returns both replies.
func callBoth(_ one: Conversation, _ other: Conversation, _ line: String) async throws -> (String, String) {
    try await one.writer.send(line + "\n")
    try await other.writer.send(line + "\n")
    guard let first = try await one.reader.next(), let second = try await other.reader.next() else { throw ConnectionClosed(request: line) }
    return (first, second)
}

// Exactly-once writes (protocol 1.2, `REQUEST key`). Each retry goes on another connection (a
// client that lost its connection and came back), and every test counts in the database what the
// write did, so a retry that ran again would show.
@Suite("REQUEST keys: a retried write answers the same line and runs once", .timeLimit(.minutes(10)))
struct RequestKeyTests {
    @Test("every write of the contract takes REQUEST: retried on another connection it answers the same line and is not done again")
    func everyWrite() async throws {
        try await withDatabaseServer(listening: true) { address, environment in
            try await asUsers(["hana", "pete", "mona"], address, environment) { users in
                let (host, player, moderator) = (users[0], users[1], users[2])
                _ = try await environment.database.setRole(username: "mona", role: .moderator)
                try await asLoggedIn(["hana", "pete", "mona"], address) { again in
                    let (host2, player2, moderator2) = (again[0], again[1], again[2])
                    // Pins: POST, POSTPHOTO, REPLY, REPORT.
                    let post = try JSONObject(okLine: try await player.keyed("POST 10 20 \"once only\"", key: "post-0001", retry: player2))
                    let pin = try post["pin"]["id"].string
                    #expect(try await count(environment, "SELECT count(*) AS n FROM pins WHERE body = 'once only'") == 1)
                    try await player.keyed("POSTPHOTO 10 20 \(Base64.encode(PhotoFixtures.jpeg())) CAPTION photo1", key: "photo-001", retry: player2)
                    #expect(try await count(environment, "SELECT count(*) AS n FROM pins WHERE kind = 'photo'") == 1)
                    try await player.keyed("REPLY \(pin) \"a reply\"", key: "reply-001", retry: player2)
                    #expect(try await count(environment, "SELECT count(*) AS n FROM replies WHERE pin_id = \(pin)") == 1)
                    #expect(try await host.ok("GET \(pin)")["pin"]["replies"].int == 1)
                    try await host.keyed("REPORT \(pin) spam", key: "report-01", retry: host2)
                    #expect(try await count(environment, "SELECT count(*) AS n FROM reports") == 1)

                    // A hunt: CREATEHUNT, ADDSTOP, REMOVESTOP, STARTHUNT, EXTEND, HINT.
                    let created = try JSONObject(okLine: try await host.keyed("CREATEHUNT \"Keyed hunt\" PUBLIC", key: "hunt-0001", retry: host2))
                    let hunt = try created["hunt"]["id"].string
                    let code = try created["hunt"]["code"].string
                    #expect(try await count(environment, "SELECT count(*) AS n FROM hunts") == 1)
                    let place = StopPlan(title: "place").place
                    let placeStop = try JSONObject(okLine: try await host.keyed(
                        StopPlan(title: "place").line(hunt: hunt), key: "stop-0001", retry: host2))["stop"]["id"].string
                    let photoStop = try JSONObject(okLine: try await host.keyed(
                        StopPlan(north: 300, title: "photo", options: "PROOF photo").line(hunt: hunt), key: "stop-0002", retry: host2))["stop"]["id"]
                        .string
                    let spare = try JSONObject(okLine: try await host.keyed(
                        StopPlan(north: 600, title: "spare").line(hunt: hunt), key: "stop-0003", retry: host2))["stop"]["id"].string
                    #expect(try await host.keyed("REMOVESTOP \(spare)", key: "unstop-01", retry: host2) == "OK true")
                    #expect(try await count(environment, "SELECT count(*) AS n FROM hunt_stops WHERE hunt_id = \(hunt)") == 2)
                    try await host.keyed("STARTHUNT \(hunt)", key: "start-001", retry: host2)
                    let extended = try JSONObject(okLine: try await host.keyed("EXTEND \(hunt) 3600", key: "extend-01", retry: host2))
                    #expect(try await host.hunt(hunt)["hunt"]["ends"].string == extended["hunt"]["ends"].string)
                    #expect(try await host.keyed("HINT \(hunt) \"look up\"", key: "hint-0001", retry: host2) == "OK true")
                    #expect(try await count(environment, "SELECT count(*) AS n FROM hunt_hints WHERE hunt_id = \(hunt)") == 1)

                    // Playing: JOIN, CHECKIN, and the host's APPROVE and REJECT.
                    try await player.keyed("JOIN \(code)", key: "join-0001", retry: player2)
                    let checkIn = try JSONObject(okLine: try await player.keyed("CHECKIN \(placeStop) \(place)", key: "checkin-1", retry: player2))
                    #expect(checkIn["score"]["points"].int == 10)
                    #expect(checkIn["score"]["rank"].int == 1)
                    let pending = try await player.checkIn(photoStop, at: StopPlan(north: 300).place, photoOption)["checkin"]["id"].string
                    try await host.keyed("APPROVE \(pending) BONUS 5", key: "approve-1", retry: host2)
                    try await host.keyed("REJECT \(pending) NOTE blurry", key: "reject-01", retry: host2)
                    #expect(try await count(environment, "SELECT count(*) AS n FROM checkins WHERE user_id = (SELECT id FROM users WHERE name = 'pete')") == 2)
                    let board = try await host.leaderboard(hunt)
                    #expect(board.map { $0["points"].int } == [10], "the approval counted once, then taken back")
                    #expect(try await player.keyed("LEAVE \(hunt)", key: "leave-001", retry: player2) == "OK true")
                    try await host.keyed("ENDHUNT \(hunt)", key: "endhunt-1", retry: host2)

                    // Moderation: CLAIM, RESOLVE, BAN, UNBAN; then the author's DELETE.
                    let claimed = try JSONObject(okLine: try await moderator.keyed("CLAIM", key: "claim-001", retry: moderator2))
                    #expect(try claimed["item"]["item"].string == pin)
                    try await moderator.keyed("RESOLVE \(pin) dismiss", key: "resolve-1", retry: moderator2)
                    #expect(try await moderator.keyed("BAN pete 600", key: "ban-00001", retry: moderator2) == "OK true")
                    #expect(try await moderator.keyed("UNBAN pete", key: "unban-001", retry: moderator2) == "OK true")
                    #expect(try await count(environment, "SELECT count(*) AS n FROM moderation_log WHERE action IN ('ban', 'unban', 'claim', 'dismiss')") == 4)
                    #expect(try await player.keyed("DELETE \(pin)", key: "delete-01", retry: player2) == "OK true")
                    #expect(try await count(environment, "SELECT count(*) AS n FROM pins WHERE id = \(pin)") == 0)
                    #expect(try await count(environment, "SELECT count(*) AS n FROM request_keys") == 23, "one key for each write above")
                }
            }
        }
    }

    @Test("a bad key, a key given twice or without a value is BAD_ARGUMENT and writes nothing", arguments: [
        ("POST 10 20 hello REQUEST short", "REQUEST key must be 8 to 64 characters long"),
        ("POST 10 20 hello REQUEST \(String(repeating: "k", count: 65))", "REQUEST key must be 8 to 64 characters long"),
        ("POST 10 20 hello REQUEST bad.key.dots", "REQUEST key may contain only letters"),
        ("POST 10 20 hello REQUEST \"with space\"", "REQUEST key may contain only letters"),
        ("POST 10 20 hello REQUEST", "option REQUEST needs a value"),
        ("POST 10 20 hello REQUEST key-00001 TTL 60 REQUEST key-00001", "wrong number of arguments"),
        ("POST 10 20 hello REQUEST key-00001 REQUEST key-00002", "option REQUEST given twice"),
        ("DELETE REQUEST key-00001", "unexpected argument 'key-00001'"),
        ("NEARBY 10 20 100 REQUEST key-00001", "unknown option 'REQUEST'"),
        ("WHOAMI REQUEST key-00001", "wrong number of arguments"),
    ])
    func badKeys(line: String, message: String) async throws {
        try await withDatabaseServer { address, environment in
            try await converse(address) { client in
                try await client.register("alice")
                let reply = try await client.call(line)
                #expect(reply.hasPrefix("ERR "), "\(line): \(reply)")
                #expect(reply.contains(message), "\(line): \(reply)")
                #expect(try await count(environment, "SELECT count(*) AS n FROM pins") == 0)
                #expect(try await count(environment, "SELECT count(*) AS n FROM request_keys") == 0)
            }
        }
    }

    @Test("the same key with another request is CONFLICT; options in another order are the same request; keys are per user")
    func sameRequest() async throws {
        try await withDatabaseServer { address, environment in
            try await asUsers(["alice", "bob"], address, environment) { users in
                let (alice, bob) = (users[0], users[1])
                let first = try await alice.call("POST 10 20 hello TTL 600 REQUEST same-key-1")
                #expect(first.hasPrefix("OK "))
                // Keywords in any case and order, wherever REQUEST stands.
                #expect(try await alice.call("post 10 20 hello request same-key-1 ttl 600") == first)
                for other in ["POST 10 20 hello TTL 601", "POST 10 20 hello", "POST 10 20 Hello TTL 600", "POST 10.0 20 hello TTL 600",
                              "REPLY p_x hello"] {
                    #expect(try await alice.call("\(other) REQUEST same-key-1") == "ERR CONFLICT this REQUEST key was used for a different request")
                }
                // Bob's key of the same name is his own.
                let bobs = try await bob.call("POST 10 20 hello TTL 600 REQUEST same-key-1")
                #expect(bobs.hasPrefix("OK ") && bobs != first)
                #expect(try await count(environment, "SELECT count(*) AS n FROM pins") == 2)
            }
        }
    }

    @Test("an ERR is not remembered: the same request with the key runs again once it can succeed")
    func errorsAreNotKept() async throws {
        try await withDatabaseServer(listening: true) { address, environment in
            try await asUsers(["hana", "pete"], address, environment) { users in
                let (host, player) = (users[0], users[1])
                let hunt = try await host.makeHunt(stops: [StopPlan()])
                #expect(try await player.call("LEAVE \(hunt.id) REQUEST leave-0001").hasPrefix("ERR NOT_FOUND"))
                try await player.join(hunt)
                #expect(try await player.call("LEAVE \(hunt.id) REQUEST leave-0001") == "OK true")
                #expect(try await player.call("LEAVE \(hunt.id) REQUEST leave-0001") == "OK true")
                #expect(try await count(environment, "SELECT count(*) AS n FROM hunt_players") == 0)
            }
        }
    }

    @Test("the same keyed write sent on two connections at once runs once; both get the same line", arguments: [false, true])
    func concurrentRetries(twoDaemons: Bool) async throws {
        let rounds = 25
        try await withTwoDaemons { first, second, environment in
            try await converse(first) { setup in try await setup.register("alice") }
            try await asLoggedIn(["alice"], first) { one in
                try await asLoggedIn(["alice"], twoDaemons ? second : first) { other in
                    for round in 0 ..< rounds {
                        let line = "POST 10 20 \"race \(round)\" REQUEST race-key-\(round)"
                        let (ra, rb) = try await callBoth(one[0], other[0], line)
                        #expect(ra.hasPrefix("OK ") && ra == rb, "round \(round): \(ra) / \(rb)")
                    }
                }
            }
            #expect(try await count(environment, "SELECT count(*) AS n FROM pins") == rounds)
            #expect(try await count(environment, "SELECT count(DISTINCT body) AS n FROM pins") == rounds)
        }
    }

    @Test("a keyed check-in retried at once on two connections is one check-in, with the same score and rank in both replies")
    func concurrentCheckIns() async throws {
        try await withDatabaseServer(listening: true) { address, environment in
            try await asUsers(["hana", "pete"], address, environment) { users in
                let hunt = try await users[0].makeHunt(stops: [StopPlan(), StopPlan(north: 200)])
                try await users[1].join(hunt)
                try await asLoggedIn(["pete"], address) { again in
                    for (index, stop) in hunt.stops.enumerated() {
                        let line = "CHECKIN \(stop) \(hunt.places[index]) REQUEST check-in-\(index)"
                        let (ra, rb) = try await callBoth(users[1], again[0], line)
                        #expect(ra.hasPrefix("OK ") && ra == rb, "\(ra) / \(rb)")
                        #expect(try JSONObject(okLine: ra)["score"]["points"].int == 10 * (index + 1))
                    }
                }
                #expect(try await count(environment, "SELECT count(*) AS n FROM checkins") == 2)
                #expect(try await users[0].leaderboard(hunt.id).map { $0["points"].int } == [20])
            }
        }
    }

    @Test("a write answered on one daemon is answered from its key on another")
    func otherDaemon() async throws {
        try await withTwoDaemons { first, second, environment in
            try await converse(first) { client in
                try await client.register("alice")
                let reply = try await client.call("POST 10 20 hello REQUEST cross-001")
                try await asLoggedIn(["alice"], second) { (other: [Conversation]) async throws in
                    #expect(try await other[0].call("POST 10 20 hello REQUEST cross-001") == reply)
                }
            }
            #expect(try await count(environment, "SELECT count(*) AS n FROM pins") == 1)
        }
    }

    @Test("the key is stored by the write's own transaction: a write that fails stores no key, a taken key undoes the write")
    func sameTransaction() async throws {
        try await TestEnvironment.make(prefix: "keys").use { environment in
            let alice = try await registerAlice(in: environment.database)
            let store = environment.database
            struct Boom: Error {}
            func new(_ text: String) -> NewPin {
                NewPin(authorID: alice.id, authorName: "alice", lat: 1, lon: 2, text: text, ttlSeconds: 600, photo: nil, cell: 0, region: nil)
            }
            func keyed(_ key: String, digest: UInt8 = 1, _ encode: @escaping @Sendable (Pin) throws -> String?) -> KeyedWrite<Pin> {
                KeyedWrite(userID: alice.id, key: key, digest: [digest], retentionSeconds: 3600, encode: encode)
            }
            // The result cannot be encoded: the pin goes with it.
            await #expect(throws: (any Error).self) { try await store.createPin(new("boom"), request: keyed("key-boom") { _ in throw Boom() }) }
            #expect(try await count(environment, "SELECT count(*) AS n FROM pins") == 0)
            #expect(try await count(environment, "SELECT count(*) AS n FROM request_keys") == 0)
            // Stored together; a second write under the key is undone, whatever it was.
            let pin = try await store.createPin(new("first"), request: keyed("key-0001") { "\"\($0.id)\"" })
            await #expect(throws: StoreError.self) { try await store.createPin(new("second"), request: keyed("key-0001", digest: 2) { _ in "x" }) }
            #expect(try await count(environment, "SELECT count(*) AS n FROM pins") == 1)
            let stored = try await store.requestReply(userID: alice.id, key: "key-0001", digest: [1], retentionSeconds: 3600)
            #expect(stored?.result == "\"\(pin.id)\"" && stored?.sameRequest == true)
            #expect(try await store.requestReply(userID: alice.id, key: "key-0001", digest: [2], retentionSeconds: 3600)?.sameRequest == false)
        }
    }

    @Test("the key keeps the board's result, not a reply line; a key kept by an older daemon (a line, no result) is CONFLICT and the write does not run again")
    func storesResults() async throws {
        try await withDatabaseServer { address, environment in
            try await converse(address) { client in
                try await client.register("alice")
                let first = try await client.call("POST 10 20 \"kept as a result\" REQUEST result-01")
                let stored: String = try await environment.pool.query("SELECT result FROM request_keys WHERE key = 'result-01'")[0].string("result")
                let pin = try JSONDecoder().decode(Pin.self, from: Data(stored.utf8))
                #expect(pin.text == "kept as a result" && first.contains(pin.id))
                #expect(try await client.call("POST 10 20 \"kept as a result\" REQUEST result-01") == first)

                // As a daemon before db/0025 left it: the line only.
                try await environment.pool.query("""
                    UPDATE request_keys SET reply = substr(\(first), 4), result = NULL WHERE key = 'result-01'
                    """, idempotent: false)
                let legacy = try await client.call("POST 10 20 \"kept as a result\" REQUEST result-01")
                #expect(legacy.hasPrefix("ERR CONFLICT "), "\(legacy)")
                #expect(try await count(environment, "SELECT count(*) AS n FROM pins WHERE body = 'kept as a result'") == 1)
            }
        }
    }

    @Test("a key older than the retention no longer answers (the request runs again), and the expiry sweep deletes it")
    func retention() async throws {
        try await withDatabaseServer(configure: { $0.requestKeySeconds = 1800 }) { address, environment in
            try await converse(address) { client in
                try await client.register("alice")
                let first = try await client.call("POST 10 20 hello REQUEST old-key-1")
                _ = try await client.call("POST 10 20 other REQUEST new-key-1")
                #expect(try await client.call("POST 10 20 hello REQUEST old-key-1") == first)
                try await environment.pool.query("UPDATE request_keys SET created_at = now() - interval '31 minutes' WHERE key = 'old-key-1'")
                let again = try await client.call("POST 10 20 hello REQUEST old-key-1")
                #expect(again.hasPrefix("OK ") && again != first, "past the retention the request runs again")
                #expect(try await count(environment, "SELECT count(*) AS n FROM pins WHERE body = 'hello'") == 2)
                try await environment.pool.query("UPDATE request_keys SET created_at = now() - interval '31 minutes' WHERE key = 'old-key-1'")
                let report = try await environment.database.expire(keepRequestKeysSeconds: 1800)
                #expect(report.requestKeys == 1)
                #expect(try await count(environment, "SELECT count(*) AS n FROM request_keys") == 1)
            }
        }
    }
}
