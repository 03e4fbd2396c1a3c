import Postgres
import ScavengerCore
import ScavengerStore
import Sodium
import Testing

@Suite("Pin writes checked against their session in the writing statement")
struct SessionCheckedWriteTests {
    static func newPin(_ text: String, author: Account, tokenHash: [UInt8]?) -> NewPin {
        NewPin(
            authorID: author.id, authorName: author.user.name, lat: 1, lon: 2, text: text, ttlSeconds: 60, photo: nil,
            cell: Int64(Grid.cell(lat: 1, lon: 2, level: 0).rawValue), region: nil, sessionTokenHash: tokenHash)
    }

    static func storedTexts(_ pool: PostgresPool) async throws -> Set<String> {
        Set(try await pool.query("SELECT body FROM pins").map { try $0.string(0) as String })
    }

    @Test("a live session writes; an unknown, revoked or other user's session, or a ban, writes nothing")
    func refusals() async throws {
        try await withDatabaseServer { _, environment in
            let database = environment.database
            let aliceToken = Digest.sha256("alice-token")
            let bobToken = Digest.sha256("bob-token")
            let alice = try await database.register(
                name: "alice", email: "alice@example.org", passwordHash: "x", tokenHash: aliceToken, sessionTTLSeconds: 60)
            let bob = try await database.register(
                name: "bob", email: "bob@example.org", passwordHash: "x", tokenHash: bobToken, sessionTTLSeconds: 60)

            // Concurrent writers share group commits: the refused ones must not fail the others.
            let outcomes = await withTaskGroup(of: (String, Bool).self) { group in
                let cases: [(String, NewPin)] = [
                    ("live", Self.newPin("live", author: alice, tokenHash: aliceToken)),
                    ("unchecked", Self.newPin("unchecked", author: alice, tokenHash: nil)),
                    ("unknown", Self.newPin("unknown", author: alice, tokenHash: Digest.sha256("nobody"))),
                    ("other user's", Self.newPin("other user's", author: alice, tokenHash: bobToken)),
                ]
                for (name, pin) in cases {
                    group.addTask {
                        do {
                            _ = try await database.createPin(pin)
                            return (name, true)
                        } catch {
                            return (name, false)
                        }
                    }
                }
                return await group.reduce(into: [String: Bool]()) { $0[$1.0] = $1.1 }
            }
            #expect(outcomes == ["live": true, "unchecked": true, "unknown": false, "other user's": false])
            #expect(try await Self.storedTexts(environment.pool) == ["live", "unchecked"])

            await #expect(throws: StoreError.self) {
                try await database.deleteSession(tokenHash: aliceToken)
                _ = try await database.createPin(Self.newPin("after logout", author: alice, tokenHash: aliceToken))
            }
            try await environment.pool.query("UPDATE users SET banned_until = 'infinity' WHERE id = \(bob.id)", idempotent: false)
            await #expect(throws: StoreError.self) {
                _ = try await database.createPin(Self.newPin("while banned", author: bob, tokenHash: bobToken))
            }
            var photo = Self.newPin("photo while banned", author: bob, tokenHash: bobToken)
            photo.photo = Photo(mime: "image/png", data: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
            await #expect(throws: StoreError.self) { _ = try await database.createPin(photo) }
            try await environment.pool.query("UPDATE users SET banned_until = now() - interval '1 s' WHERE id = \(bob.id)", idempotent: false)
            _ = try await database.createPin(photo)
            #expect(try await Self.storedTexts(environment.pool) == ["live", "unchecked", "photo while banned"])
            #expect(try await environment.pool.query("SELECT count(*) FROM photos")[0].int(0) == 1)
        }
    }

    @Test("concurrent writers are all answered; a bad pin in a group fails alone",
          arguments: [1, 7, 40], [1, 3])
    func groupCommit(writers: Int, pinWriters: Int) async throws {
        try await withDatabaseServer { _, environment in
            let database = Database(pool: environment.pool, pinWriters: pinWriters)
            let token = Digest.sha256("writer-token")
            let author = try await database.register(
                name: "writer", email: "writer@example.org", passwordHash: "x", tokenHash: token, sessionTTLSeconds: 60)
            let outcomes = await withTaskGroup(of: (Int, Bool).self) { group in
                for index in 0 ..< writers {
                    group.addTask {
                        var pin = Self.newPin("pin \(index)", author: author, tokenHash: token)
                        // Every fifth names a region that does not exist: a foreign-key violation.
                        if index % 5 == 4 { pin.region = "nowhere" }
                        do {
                            let written = try await database.createPin(pin)
                            return (index, written.text == "pin \(index)")
                        } catch {
                            return (index, false)
                        }
                    }
                }
                return await group.reduce(into: [Int: Bool]()) { $0[$1.0] = $1.1 }
            }
            let expected = Dictionary(uniqueKeysWithValues: (0 ..< writers).map { ($0, $0 % 5 != 4) })
            #expect(outcomes == expected)
            let stored = try await Self.storedTexts(environment.pool)
            #expect(stored == Set((0 ..< writers).filter { $0 % 5 != 4 }.map { "pin \($0)" }))
        }
    }
}
