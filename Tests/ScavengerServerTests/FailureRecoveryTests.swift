import Foundation
import NIOCore
import ScavengerCore
import ScavengerStore
import ScavengerTestSupport
import Sodium
import Testing

/// What a client sees when PostgreSQL is away, and what holds when it comes back (issue 15).
@Suite("Failures and recovery")
struct FailureRecoveryTests {
    /// The test database's URL, pointed at 127.0.0.1:`port` instead.
    static func databaseURL(_ environment: TestEnvironment, port: Int) throws -> String {
        var components = try #require(URLComponents(string: Executable.databaseURL(environment.configuration)))
        components.host = "127.0.0.1"
        components.port = port
        return try #require(components.string)
    }

    /// Where the test database really is.
    static func databaseAddress(_ environment: TestEnvironment) throws -> SocketAddress {
        let components = try #require(URLComponents(string: environment.configuration.connectionString))
        return try SocketAddress.makeAddressResolvingHost(components.host ?? "127.0.0.1", port: components.port ?? 5432)
    }

    @Test("the daemon serves while the database is down at start, and recovers by itself when it comes")
    func servesWhileTheDatabaseIsDown() async throws {
        try await TestEnvironment.make().use { environment in
            let port = try await TCPForwarder.freePort()
            let daemon = try await DaemonProcess(environment: environment, [], databaseURL: try Self.databaseURL(environment, port: port))
            let address = try daemon.address
            let down = try await transcript(address, "PING\nHELP PING\nNEARBY 0 0 100\nREGIONS\nLOGIN alice password1\nWHOAMI\n")
            #expect(down[0] == #"OK "PONG""#)
            #expect(down[1].hasPrefix(#"OK {"command":"PING""#))
            #expect(down[2].hasPrefix("ERR UNAVAILABLE "))
            #expect(down[3].hasPrefix("ERR UNAVAILABLE "))
            #expect(down[4].hasPrefix("ERR UNAVAILABLE "))
            #expect(down[5] == #"OK {"user":null}"#)
            let hello = try await transcript(address, "HELLO\n")
            #expect(hello[0].hasPrefix(#"OK {"server":"scavengerd""#))

            // The database appears at the address: the daemon loads its feed by itself.
            let forwarder = try await TCPForwarder.start(port: port, to: try Self.databaseAddress(environment))
            try await eventually("the feed is loaded") {
                try await transcript(address, "NEARBY 0 0 100\n") == [#"OK {"pins":[],"next":null}"#]
            }
            try await converse(address) { (client: Conversation) async throws in
                try await client.register("alice")
                let id = try await client.ok("POST 0 0 hello")["pin"]["id"].string
                #expect(try await client.ok("NEARBY 0 0 100")["pins"][0]["id"].string == id)
            }
            #expect(try await daemon.terminate())
            try await forwarder.stop()
        }
    }

    @Test("a group-commit retry cannot write a pin twice: a pin already stored is answered as written, and costs no token")
    func groupCommitIsIdempotent() async throws {
        try await withDatabaseServer { _, environment in
            let database = environment.database
            let author = try await database.register(
                name: "alice", email: "alice@example.org", passwordHash: "x", tokenHash: Digest.sha256("t"), sessionTTLSeconds: 60)
            let pin = NewPin(
                authorID: author.id, authorName: "alice", lat: 1, lon: 1, text: "once", ttlSeconds: 60, photo: nil,
                cell: Int64(Grid.cell(lat: 1, lon: 1, level: 0).rawValue), region: nil, sessionTokenHash: Digest.sha256("t"),
                rate: RateLimit(count: 1, seconds: 3600))
            let first = try await database.createPin(pin)
            // The same pin again, as a retry after a lost answer would send it.
            let again = try await database.createPin(pin)
            #expect(again.id == first.id && again.created == first.created)
            let rows = try await environment.pool.query("SELECT count(*) FROM pins")
            #expect(try rows[0].int(0) as Int == 1)
            let logged = try await environment.pool.query("SELECT count(*) FROM feed_changes")
            #expect(try logged[0].int(0) as Int == 1)
            // The bucket had one token: the first write took it, the retry took none, a new pin finds none.
            var next = pin
            next.id = Identifier.newPin()
            await #expect(throws: StoreError.self) { _ = try await database.createPin(next) }
        }
    }
}
