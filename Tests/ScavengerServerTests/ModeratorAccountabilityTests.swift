import Base64
import Postgres
import ScavengerCore
import ScavengerTestSupport
import Testing

/// Two days pass for these accounts, in SQL (never by waiting): they and the reports they filed
/// are two days older. Their reports from now on count toward hiding under the default minimum
/// reporter age of 24 hours; the ones they filed before still do not.
func ageAccounts(_ names: [String], _ environment: TestEnvironment) async throws {
    for name in names {
        try await environment.pool.query(
            "UPDATE users SET created_at = created_at - interval '2 days' WHERE name = \(name)", idempotent: false)
        try await environment.pool.query("""
            UPDATE reports SET created_at = created_at - interval '2 days'
            WHERE reporter_id = (SELECT id FROM users WHERE name = \(name))
            """, idempotent: false)
    }
}

@Suite("Moderator accountability over TCP with PostgreSQL (issue 14)")
struct ModeratorAccountabilityTests {
    @Test("only reports of accounts old enough, and not banned, count toward hiding; the rest are queued")
    func sockPuppets() async throws {
        // The default rules: 3 reporters hide, each at least 24 hours old when reporting.
        try await withDatabaseServer { address, environment in
            try await asUser("author", address, environment) { (author: Conversation) async throws in
                let brigaded = try await author.ok("POST 3 3 \(quoted("brigaded"))")["pin"]["id"].string
                let second = try await author.ok("POST 3 3 \(quoted("reported again"))")["pin"]["id"].string
                for name in ["young1", "young2", "young3", "young4"] {
                    try await asUser(name, address, environment) { (puppet: Conversation) async throws in
                        #expect(try await puppet.ok("REPORT \(brigaded) hate")["report"]["status"].string == "open")
                    }
                }
                #expect(try await author.ok("GET \(brigaded)")["pin"]["text"].string == "brigaded")
                // Reports filed while young never count, even once the accounts are old.
                try await ageAccounts(["young1", "young2", "young3", "young4"], environment)
                for (index, name) in ["old1", "old2", "old3"].enumerated() {
                    try await asUser(name, address, environment) { (reporter: Conversation) async throws in
                        try await ageAccounts([name], environment)
                        _ = try await reporter.ok("REPORT \(brigaded) spam")
                        #expect(try await reporter.ok("NEARBY 3 3 10")["pins"].array.count == (index < 2 ? 2 : 1))
                    }
                }
                #expect(try await author.call("GET \(brigaded)") == "ERR NOT_FOUND no such pin")

                // A reporter banned since stops counting.
                try await asUser("mod", role: .moderator, address, environment) { (mod: Conversation) async throws in
                    for name in ["early", "late1", "late2", "late3"] {
                        try await asUser(name, address, environment) { (reporter: Conversation) async throws in
                            try await ageAccounts([name], environment)
                            _ = try await reporter.ok("REPORT \(second) other")
                            if name == "early" { #expect(try await mod.call("BAN early 3600") == "OK true") }
                            let hidden = try await author.call("GET \(second)") == "ERR NOT_FOUND no such pin"
                            #expect(hidden == (name == "late3"), "\(name)")
                        }
                    }
                    let items = try await mod.ok("MODQUEUE")["items"].array
                    try #require(try items.map { try $0["item"].string } == [brigaded, second])
                    #expect(items[0]["reports"].int == 7)
                    #expect(items[0]["reasons"]["hate"].int == 4)
                    #expect(items[0]["reasons"]["spam"].int == 3)
                    #expect(items[0]["hidden"].bool == true)
                    #expect(items[1]["reports"].int == 4)
                    #expect(items[1]["hidden"].bool == true)
                }
            }
        }
    }

    @Test("serve refuses a negative or absurd --report-min-account-age", arguments: ["-1", "315360001"])
    func minimumAgeFlag(value: String) throws {
        // The check runs before anything else: the unreachable database and the missing TLS
        // files would only make serve fail (rather than wait for the database) if it did not.
        let nowhere = PostgresConfiguration(connectionString: "postgresql://127.0.0.1:1/nowhere")
        let result = try Executable.run(
            [
                "serve", "--port", "0", "--tls-port", "0", "--tls-cert", "/nonexistent/cert.pem", "--tls-key",
                "/nonexistent/key.pem", "--report-min-account-age=\(value)",
            ], configuration: nowhere)
        #expect(result.status != 0)
        #expect(result.stderr.contains("--report-min-account-age must be within 0…315360000 seconds"), "\(result.stderr)")
    }

    @Test("a banned moderator or admin has no moderator powers while banned")
    func bannedModerator() async throws {
        let rules = ModerationRules(hideThreshold: 1, minimumReporterAgeSeconds: 0)
        try await withDatabaseServer(moderationRules: rules) { address, environment in
            try await asUser("author", address, environment) { (author: Conversation) async throws in
                let text = try await author.ok("POST 4 4 \(quoted("rude words"))")["pin"]["id"].string
                let photo = try await author.ok("POSTPHOTO 4 4 \(Base64.encode(PhotoFixtures.jpeg()))")["pin"]["id"].string
                try await asUser("reporter", address, environment) { (reporter: Conversation) async throws in
                    _ = try await reporter.ok("REPORT \(photo) sexual")
                }
                try await asUser("mod", role: .moderator, address, environment) { (mod: Conversation) async throws in
                    try await asUser("boss", role: .admin, address, environment) { (boss: Conversation) async throws in
                        #expect(try await mod.ok("MODQUEUE")["items"].array.count == 1)
                        #expect(try await mod.ok("PHOTO \(photo)")["mime"].string == "image/jpeg")
                        #expect(try await boss.call("BAN mod permanent") == "OK true")
                        for line in [
                            "MODQUEUE", "MODQUEUE STATUS all", "CLAIM", "CLAIM \(photo)", "RESOLVE \(photo) remove",
                            "BAN author 60", "UNBAN author", "MODLOG", "DELETE \(text)", "PHOTO \(photo)",
                        ] {
                            #expect(try await mod.call(line) == "ERR BANNED permanent", "\(line)")
                        }
                        // Nothing changed, and reading still works.
                        #expect(try await author.ok("GET \(text)")["pin"]["text"].string == "rude words")
                        #expect(try await author.call("POST 4 4 fine").hasPrefix("OK "))
                        #expect(try await mod.ok("NEARBY 4 4 10")["pins"].array.count == 2)
                        let queue = try await boss.ok("MODQUEUE")["items"].array
                        #expect(try queue.map { try $0["status"].string } == ["open"])
                        // A timed ban says until when.
                        #expect(try await boss.call("BAN mod 3600") == "OK true")
                        let until = try await mod.call("MODQUEUE")
                        #expect(until.hasPrefix("ERR BANNED 20") && until.hasSuffix("Z"), "\(until)")
                        // An admin too, by another admin.
                        try await asUser("chief", role: .admin, address, environment) { (chief: Conversation) async throws in
                            #expect(try await chief.call("BAN boss permanent") == "OK true")
                            #expect(try await boss.call("RESOLVE \(photo) remove") == "ERR BANNED permanent")
                            #expect(try await boss.call("UNBAN mod") == "ERR BANNED permanent")
                            #expect(try await boss.call("PHOTO \(photo)") == "ERR BANNED permanent")
                            // Unbanned, the powers are back.
                            #expect(try await chief.call("UNBAN mod") == "OK true")
                            #expect(try await mod.ok("MODQUEUE")["items"].array.count == 1)
                            #expect(try await mod.ok("PHOTO \(photo)")["mime"].string == "image/jpeg")
                        }
                    }
                }
            }
        }
    }

    @Test("nobody claims or resolves their own content, CLAIM skips it, nobody bans or unbans themselves")
    func noSelfModeration() async throws {
        try await withDatabaseServer { address, environment in
            try await asUser("mod", role: .moderator, address, environment) { (mod: Conversation) async throws in
                try await asUser("boss", role: .admin, address, environment) { (boss: Conversation) async throws in
                    try await asUser("author", address, environment) { (author: Conversation) async throws in
                        let mine = try await mod.ok("POST 6 6 \(quoted("the moderator's own"))")["pin"]["id"].string
                        let bosses = try await boss.ok("POST 6 6 \(quoted("the admin's own"))")["pin"]["id"].string
                        let theirs = try await author.ok("POST 6 6 \(quoted("someone else's"))")["pin"]["id"].string
                        // The moderator's own item heads the queue (most reports), the admin's next.
                        for name in ["rep1", "rep2"] {
                            try await asUser(name, address, environment) { (reporter: Conversation) async throws in
                                _ = try await reporter.ok("REPORT \(mine) spam")
                                if name == "rep1" {
                                    _ = try await reporter.ok("REPORT \(bosses) spam")
                                    _ = try await reporter.ok("REPORT \(theirs) spam")
                                }
                            }
                        }
                        let own = "ERR FORBIDDEN you cannot moderate your own content"
                        #expect(try await mod.call("CLAIM \(mine)") == own)
                        // The next open item skips the moderator's own, without an error.
                        #expect(try await mod.ok("CLAIM")["item"]["item"].string == bosses)
                        #expect(try await mod.ok("CLAIM")["item"]["item"].string == theirs)
                        #expect(try await mod.call("CLAIM") == "OK null")
                        #expect(try await mod.call("RESOLVE \(mine) dismiss") == own)
                        #expect(try await mod.call("RESOLVE \(mine) ban") == own)
                        // Admins neither, although they may resolve without a claim.
                        #expect(try await boss.call("RESOLVE \(bosses) remove") == own)
                        #expect(try await boss.call("CLAIM \(bosses)") == own)
                        #expect(try await boss.ok("RESOLVE \(mine) dismiss")["item"]["status"].string == "resolved")
                        #expect(try await mod.ok("RESOLVE \(bosses) dismiss")["item"]["status"].string == "resolved")
                        let claimed = try await boss.ok("MODQUEUE STATUS claimed")["items"].array
                        #expect(try claimed.map { try $0["item"].string } == [theirs])

                        let yourself = "ERR FORBIDDEN you cannot ban or unban yourself"
                        #expect(try await mod.call("BAN mod 60") == yourself)
                        #expect(try await mod.call("UNBAN MOD") == yourself)
                        #expect(try await boss.call("BAN boss permanent") == yourself)
                        #expect(try await mod.call("POST 6 6 still").hasPrefix("OK "))
                    }
                }
            }
        }
    }

    @Test("a ban an admin set is lifted, shortened or replaced only by an admin")
    func adminBans() async throws {
        try await withDatabaseServer { address, environment in
            try await asUser("troll", address, environment) { (troll: Conversation) async throws in
                let old = try await troll.ok("POST 8 8 \(quoted("from before the ban"))")["pin"]["id"].string
                try await asUser("reporter", address, environment) { (reporter: Conversation) async throws in
                    _ = try await reporter.ok("REPORT \(old) harassment")
                }
                try await asUser("mod", role: .moderator, address, environment) { (mod: Conversation) async throws in
                    try await asUser("boss", role: .admin, address, environment) { (boss: Conversation) async throws in
                        #expect(try await boss.call("BAN troll 86400") == "OK true")
                        let adminBan = "ERR FORBIDDEN an admin banned this user; only an admin may lift or change that ban"
                        #expect(try await mod.call("UNBAN troll") == adminBan)
                        #expect(try await mod.call("BAN troll 60") == adminBan)
                        #expect(try await mod.call("BAN troll permanent") == adminBan)
                        // RESOLVE … ban cannot touch it either; remove still takes the content down.
                        _ = try await mod.ok("CLAIM \(old)")
                        #expect(try await mod.call("RESOLVE \(old) ban DURATION 60") == adminBan)
                        #expect(try await mod.ok("RESOLVE \(old) remove")["item"]["resolution"].string == "remove")
                        #expect(try await troll.call("POST 8 8 hi").hasPrefix("ERR BANNED 20"))
                        // The admin's ban stands as the admin set it.
                        let rows = try await environment.pool.query("""
                            SELECT banned_until > now() + interval '23 hours', banned_by_role FROM users WHERE name = 'troll'
                            """)
                        let row = try #require(rows.first)
                        let long: Bool = try row.bool(0)
                        let setBy: String = try row.string(1)
                        #expect(long && setBy == "admin")

                        #expect(try await boss.call("BAN troll 60") == "OK true")
                        #expect(try await boss.call("UNBAN troll") == "OK true")
                        #expect(try await troll.call("POST 8 8 hi").hasPrefix("OK "))
                        // A moderator's own ban stays the moderators' to change.
                        #expect(try await mod.call("BAN troll permanent") == "OK true")
                        #expect(try await mod.call("BAN troll 60") == "OK true")
                        #expect(try await mod.call("UNBAN troll") == "OK true")
                        // Once an admin's ban is over, a moderator may ban again.
                        #expect(try await boss.call("BAN troll 3600") == "OK true")
                        try await environment.pool.query(
                            "UPDATE users SET banned_until = now() - interval '1 second' WHERE name = 'troll'", idempotent: false)
                        #expect(try await mod.call("BAN troll 60") == "OK true")
                        #expect(try await troll.call("POST 8 8 hi").hasPrefix("ERR BANNED 20"))
                    }
                }
            }
        }
    }

    @Test("a moderator's DELETE of someone else's pin is logged with its evidence; an author's own is not")
    func auditedDelete() async throws {
        try await withDatabaseServer { address, environment in
            try await asUser("author", address, environment) { (author: Conversation) async throws in
                let photo = try await author.ok(
                    "POSTPHOTO 9 9 \(Base64.encode(PhotoFixtures.jpeg())) CAPTION \(quoted("awful caption"))")["pin"]["id"].string
                let reported = try await author.ok("POST 9 9 \(quoted("reported first"))")["pin"]["id"].string
                let own = try await author.ok("POST 9 9 \(quoted("my own to delete"))")["pin"]["id"].string
                try await asUser("reporter", address, environment) { (reporter: Conversation) async throws in
                    _ = try await reporter.ok("REPORT \(reported) spam")
                }
                try await asUser("mod", role: .moderator, address, environment) { (mod: Conversation) async throws in
                    try await asUser("boss", role: .admin, address, environment) { (boss: Conversation) async throws in
                        #expect(try await author.call("DELETE \(own)") == "OK true")
                        #expect(try await mod.call("DELETE \(photo)") == "OK true")
                        _ = try await mod.ok("CLAIM \(reported)")
                        #expect(try await boss.call("DELETE \(reported)") == "OK true")
                        #expect(try await author.call("GET \(photo)") == "ERR NOT_FOUND no such pin")

                        let entries = try await mod.ok("MODLOG")["entries"].array
                        try #require(try entries.map { try $0["action"].string } == ["delete", "claim", "delete"])
                        #expect(try entries.map { try $0["item"].string } == [reported, reported, photo])
                        #expect(try entries[0]["moderator"].string == "boss")
                        #expect(try entries[0]["user"].string == "author")
                        #expect(try entries[2]["moderator"].string == "mod")
                        #expect(try entries[2]["user"].string == "author")

                        let resolved = try await mod.ok("MODQUEUE STATUS resolved")["items"].array
                        try #require(try resolved.map { try $0["item"].string } == [reported, photo])
                        let first = resolved[0]
                        #expect(try first["resolution"].string == "remove")
                        #expect(first["reports"].int == 1)
                        #expect(first["claimed_by"].isNull)
                        #expect(try first["content"]["text"].string == "reported first")
                        let evidence = resolved[1]
                        #expect(try evidence["status"].string == "resolved")
                        #expect(try evidence["resolution"].string == "remove")
                        #expect(evidence["reports"].int == 0)
                        #expect(try evidence["content"]["text"].string == "awful caption")
                        #expect(try evidence["content"]["author"].string == "author")
                        #expect(evidence["content"]["lat"].double == 9)
                        #expect(try evidence["content"]["kind"].string == "photo")
                        #expect(try evidence["content"]["photo"]["mime"].string == "image/jpeg")
                        #expect(evidence["content"]["photo"]["bytes"].int == PhotoFixtures.jpeg().count)
                        let all = try await mod.ok("MODQUEUE STATUS all")["items"].array
                        #expect(try !all.map { try $0["item"].string }.contains(own))
                    }
                }
            }
        }
    }
}
