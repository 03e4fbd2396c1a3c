import Foundation
import Logging
import NIOCore
import Postgres
import ScavengerBoard
import ScavengerCore
import ScavengerProtocol
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
                // The pool reconnects by itself too (after its back-off: a loaded machine has
                // seen one more UNAVAILABLE here): a write goes through.
                try await eventually("a write goes through") {
                    let reply = try await client.call("REGISTER alice alice@example.org password1")
                    guard reply.hasPrefix("ERR UNAVAILABLE ") else {
                        #expect(reply.hasPrefix("OK "), "\(reply)")
                        return true
                    }
                    return false
                }
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

    @Test("a group-commit retry after a lost answer cannot bring back a pin deleted in between: it is answered as written and stays deleted")
    func groupCommitRetryCannotResurrect() async throws {
        let (proxied, proxy) = try TestDatabase.proxiedConfiguration(prefix: "resurrect")
        defer { proxy.stop() }
        var direct = proxied
        direct.connectionString = try TestDatabase.url()
        try await TestEnvironment.make(configuration: proxied).use { environment in
            let side = PostgresPool(configuration: direct, maxConnections: 2)
            do {
                let database = environment.database
                let author = try await database.register(
                    name: "alice", email: "alice@example.org", passwordHash: "x", tokenHash: Digest.sha256("t"), sessionTTLSeconds: 60)
                // The insert's COMMIT is held, so the connection can be cut after PostgreSQL has
                // the COMMIT and before its answer comes back. (The group insert is known by its
                // start: pg_stat_activity keeps only the first 1 kB.)
                try await Self.holdPinCommits(side)
                let pin = NewPin(
                    authorID: author.id, authorName: "alice", lat: 1, lon: 1, text: "deleted in between", ttlSeconds: 600, photo: nil,
                    cell: Int64(Grid.cell(lat: 1, lon: 1, level: 0).rawValue), region: nil, sessionTokenHash: Digest.sha256("t"), rate: nil)
                let write = Task { try await database.createPin(pin) }
                try await eventually("the insert is held in its COMMIT") {
                    let rows = try await side.query("""
                        SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND query LIKE 'WITH batch (n, id, author_id,%'
                        """)
                    return try rows[0].int("n") as Int > 0
                }
                // The answer is lost, and the retry waits on the stopped connection.
                proxy.blackhole()
                proxy.cutAll()
                try await Self.openCommitGate(side)
                try await eventually("the first attempt committed") {
                    try await side.query("SELECT count(*) AS n FROM pins WHERE id = \(pin.id)")[0].int("n") as Int == 1
                }
                // A moderator (or expiry) deletes the pin before the retry runs.
                try await side.query("DELETE FROM pins WHERE id = \(pin.id)", idempotent: false)
                proxy.resume()
                let answered = try await write.value
                #expect(answered.id == pin.id && answered.text == "deleted in between")
                // Written once, deleted once, never written again.
                #expect(try await side.query("SELECT count(*) AS n FROM pins WHERE id = \(pin.id)")[0].int("n") as Int == 0)
                let log = try await side.query("""
                    SELECT count(*) AS n, (extract(epoch FROM min(at)) * 1000000)::bigint AS first_us
                    FROM feed_changes WHERE subject = \(pin.id)
                    """)
                #expect(try log[0].int("n") as Int == 2, "the insert and the delete, nothing more")
                #expect(try Int64(log[0].int("first_us") as Int) == answered.created.microseconds, "answered with the time it was written")
                #expect(answered.expires.microseconds == answered.created.microseconds + 600_000_000)
            } catch {
                // A COMMIT still held would hold its locks for ever.
                try? await Self.openCommitGate(side)
                await side.shutdown()
                throw error
            }
            await side.shutdown()
        }
    }

    /// Holds every COMMIT that inserted pins, in the schema `pool` works in, until
    /// ``openCommitGate(_:)``: a deferred constraint trigger waits for a row of its own to say
    /// open. So a test can cut the connection after PostgreSQL has the COMMIT and before its
    /// answer comes back, however slowly it notices the COMMIT.
    static func holdPinCommits(_ pool: PostgresPool) async throws {
        try await pool.query("CREATE TABLE commit_gate (open boolean NOT NULL)", idempotent: false)
        try await pool.query("INSERT INTO commit_gate VALUES (false)", idempotent: false)
        try await pool.query("""
            CREATE FUNCTION held_pin_commit() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                WHILE NOT (SELECT open FROM commit_gate) LOOP PERFORM pg_sleep(0.02); END LOOP;
                RETURN NULL;
            END $$
            """, idempotent: false)
        try await pool.query("""
            CREATE CONSTRAINT TRIGGER pins_held_commit AFTER INSERT ON pins
            DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION held_pin_commit()
            """, idempotent: false)
    }

    /// Lets the COMMITs ``holdPinCommits(_:)`` holds go on.
    static func openCommitGate(_ pool: PostgresPool) async throws {
        try await pool.query("UPDATE commit_gate SET open = true", idempotent: false)
    }

    @Test("a keyed POST whose commit answer was lost, its pin deleted before the retry: the retry answers the first's line and writes nothing")
    func keyedRetryAfterLostCommit() async throws {
        var (proxied, proxy) = try TestDatabase.proxiedConfiguration(prefix: "keyedlost")
        defer { proxy.stop() }
        // Tests run side by side on the cluster: this one's COMMIT is known by its name.
        let applicationName = "keyedlost-\(UInt32.random(in: 0 ... .max))"
        proxied.applicationName = applicationName
        var direct = proxied
        direct.connectionString = try TestDatabase.url()
        direct.applicationName = "scavenger-tests"
        try await TestEnvironment.make(configuration: proxied).use { environment in
            let side = PostgresPool(configuration: direct, maxConnections: 2)
            do {
                let account = try await environment.database.register(
                    name: "alice", email: "alice@example.org", passwordHash: "x", tokenHash: Digest.sha256("t"), sessionTTLSeconds: 60)
                let session = Session(connectionID: 1)
                session.logIn(user: account.user, userID: account.id, tokenHash: Digest.sha256("t"))
                let context = CommandContext(session: session, board: environment.board, logger: Logger(label: "test"))
                // The keyed write's COMMIT is held, so the connection can be cut after PostgreSQL
                // has the COMMIT and before its answer comes back.
                try await Self.holdPinCommits(side)
                let line = "POST 1 1 \"lost answer\" REQUEST lost-answer-1"
                let write = Task { await CommandTable.standard.execute(line: line, context: context) }
                try await eventually("the keyed insert is held in its COMMIT") {
                    try await side.query("""
                        SELECT count(*) AS n FROM pg_stat_activity
                        WHERE application_name = \(applicationName) AND wait_event = 'PgSleep' AND query = 'COMMIT'
                        """)[0].int("n") as Int > 0
                }
                proxy.blackhole()
                proxy.cutAll()
                try await Self.openCommitGate(side)
                try await eventually("the first attempt committed, with its key") {
                    try await side.query("SELECT count(*) AS n FROM request_keys WHERE key = 'lost-answer-1'")[0].int("n") as Int == 1
                }
                #expect(try await side.query("SELECT count(*) AS n FROM pins WHERE body = 'lost answer'")[0].int("n") as Int == 1)
                try await side.query("DELETE FROM pins WHERE body = 'lost answer'", idempotent: false)
                proxy.resume()
                let answered = try #require(await write.value).reply.line
                let keyRow = try #require(try await side.query("SELECT result FROM request_keys WHERE key = 'lost-answer-1'").first)
                let stored: String = try keyRow.string("result")
                let storedPin = try #require(try JSONSerialization.jsonObject(with: Data(stored.utf8)) as? [String: Any])
                let id = try #require(storedPin["id"] as? String)
                #expect(answered.hasPrefix("OK {\"pin\":{\"id\":\"\(id)\""), "the answer is the stored pin's: \(answered)")
                #expect(answered.contains("lost answer"))
                #expect(try await side.query("SELECT count(*) AS n FROM pins WHERE body = 'lost answer'")[0].int("n") as Int == 0, "stays deleted")
                // And a later retry from the client gets the same line.
                #expect(await CommandTable.standard.execute(line: line, context: context)?.reply.line == answered)
            } catch {
                // A COMMIT still held would hold its locks for ever.
                try? await Self.openCommitGate(side)
                await side.shutdown()
                throw error
            }
            await side.shutdown()
        }
    }
}
