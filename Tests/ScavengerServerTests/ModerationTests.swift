import Base64
import Foundation
import NIOCore
import ScavengerCore
import ScavengerStore
import ScavengerTestSupport
import Testing

/// Registers `name` on a new connection and keeps it open for `body`.
func asUser(
    _ name: String, role: Role = .user, _ address: SocketAddress, _ environment: TestEnvironment,
    _ body: (Conversation) async throws -> Void
) async throws {
    try await converse(address) { (client: Conversation) async throws in
        try await client.register(name)
        if role != .user { _ = try await environment.database.setRole(username: name, role: role) }
        try await body(client)
    }
}

@Suite("Reports and moderation over TCP with PostgreSQL")
struct ModerationTests {
    @Test("three distinct reporters (old enough) hide a pin from every feed; REPORT answers the report")
    func thresholdHides() async throws {
        try await withDatabaseServer { address, environment in
            try await asUser("author", address, environment) { (author: Conversation) async throws in
                let id = try await author.ok("POSTPHOTO 5 5 \(Base64.encode(PhotoFixtures.jpeg())) CAPTION spam")["pin"]["id"].string
                for (index, name) in ["rep1", "rep2", "rep3"].enumerated() {
                    try await asUser(name, address, environment) { (reporter: Conversation) async throws in
                        // Reports of accounts younger than a day queue but do not hide.
                        try await ageAccounts([name], environment)
                        let reply = try await reporter.ok("REPORT \(id) spam NOTE \(quoted("buy now"))")["report"]
                        #expect(try reply["item"].string == id)
                        #expect(try reply["status"].string == "open")
                        #expect(try reply["id"].string.hasPrefix("q"))
                        let visible = try await reporter.ok("NEARBY 5 5 10")["pins"].array.count
                        #expect(visible == (index < 2 ? 1 : 0))
                    }
                }
                #expect(try await author.call("GET \(id)") == "ERR NOT_FOUND no such pin")
                #expect(try await author.call("PHOTO \(id)") == "ERR NOT_FOUND no such photo pin")
                #expect(try await author.call("REPLY \(id) hello") == "ERR NOT_FOUND no such pin")
                #expect(try await author.ok("NEARBY 5 5 10")["pins"].array.isEmpty)
            }
        }
    }

    @Test("REPORT's refusals", arguments: [
        ("own", "ERR FORBIDDEN you cannot report your own content"),
        ("twice", "ERR CONFLICT you have already reported this"),
        ("unknown", "ERR NOT_FOUND no such pin, reply, hunt or stop"),
        ("reason", "ERR BAD_ARGUMENT reason must be one of spam harassment hate sexual violence illegal other"),
        ("rate", "ERR RATE_LIMITED 1800 too many REPORT requests (at most 2 per 3600 s); wait 1800 s"),
    ])
    func reportRefusals(scenario: String, expected: String) async throws {
        try await withDatabaseServer(configure: { $0.writeRates.report = RateLimit(count: 2, seconds: 3600) }) { address, environment in
            try await asUser("author", address, environment) { (author: Conversation) async throws in
                let ids = [try await author.ok("POST 1 1 a")["pin"]["id"].string,
                           try await author.ok("POST 1 1 b")["pin"]["id"].string,
                           try await author.ok("POST 1 1 c")["pin"]["id"].string]
                try await asUser("reporter", address, environment) { (reporter: Conversation) async throws in
                    let reply: String
                    switch scenario {
                    case "own": reply = try await author.call("REPORT \(ids[0]) spam")
                    case "twice":
                        _ = try await reporter.ok("REPORT \(ids[0]) spam")
                        reply = try await reporter.call("REPORT \(ids[0]) hate")
                    case "unknown": reply = try await reporter.call("REPORT pzzzzzzzzzzzzzzzzzzzzzzzz spam")
                    case "reason": reply = try await reporter.call("REPORT \(ids[0]) rude")
                    default:
                        _ = try await reporter.ok("REPORT \(ids[0]) spam")
                        _ = try await reporter.ok("REPORT \(ids[1]) spam")
                        reply = try await reporter.call("REPORT \(ids[2]) spam")
                    }
                    if scenario == "rate" {
                        expectRateLimited(reply, near: 1800, "too many REPORT requests (at most 2 per 3600 s)")
                    } else {
                        #expect(reply == expected)
                    }
                }
            }
        }
    }

    @Test("every moderator command needs the role", arguments: [
        "MODQUEUE", "CLAIM", "RELEASE pabcdefghijklmnopqrstuvwx", "RESOLVE pabcdefghijklmnopqrstuvwx dismiss", "BAN someone 60",
        "UNBAN someone", "MODLOG",
    ])
    func roleChecks(line: String) async throws {
        try await withDatabaseServer { address, environment in
            try await asUser("plain", address, environment) { (client: Conversation) async throws in
                #expect(try await client.call(line) == "ERR FORBIDDEN moderators only")
            }
            let anonymous = try await converseReturning(address) { try await $0.call(line) }
            #expect(anonymous.hasPrefix("ERR UNAUTHORIZED "))
        }
    }

    @Test("the queue: one item per content, reasons counted, most-reported first, evidence kept")
    func queue() async throws {
        try await withDatabaseServer { address, environment in
            try await asUser("author", address, environment) { (author: Conversation) async throws in
                let once = try await author.ok("POST 1 2 \(quoted("reported once"))")["pin"]["id"].string
                let twice = try await author.ok("POST 3 4 \(quoted("reported twice"))")["pin"]["id"].string
                let reply = try await author.ok("REPLY \(twice) \(quoted("a rude reply"))")["reply"]["id"].string
                try await asUser("rep1", address, environment) { (first: Conversation) async throws in
                    _ = try await first.ok("REPORT \(once) spam")
                    _ = try await first.ok("REPORT \(twice) hate")
                    _ = try await first.ok("REPORT \(reply) harassment")
                }
                try await asUser("rep2", address, environment) { (second: Conversation) async throws in
                    _ = try await second.ok("REPORT \(twice) hate")
                }
                try await asUser("mod", role: .moderator, address, environment) { (mod: Conversation) async throws in
                    let items = try await mod.ok("MODQUEUE")["items"].array
                    #expect(try items.map { try $0["item"].string } == [twice, once, reply])
                    let first = items[0]
                    #expect(try first["kind"].string == "pin")
                    #expect(first["reports"].int == 2)
                    #expect(first["reasons"]["hate"].int == 2)
                    #expect(try first["status"].string == "open")
                    #expect(first["claimed_by"].isNull)
                    #expect(first["hidden"].bool == false)
                    #expect(try first["content"]["text"].string == "reported twice")
                    #expect(try first["content"]["author"].string == "author")
                    #expect(first["content"]["lat"].double == 3)
                    #expect(try items[2]["kind"].string == "reply")
                    #expect(try items[2]["content"]["pin"].string == twice)
                    #expect(try await mod.ok("MODQUEUE LIMIT 1")["items"].array.count == 1)
                    #expect(try await mod.ok("MODQUEUE STATUS claimed")["items"].array.isEmpty)
                    #expect(try await mod.call("MODQUEUE STATUS maybe") == "ERR BAD_ARGUMENT STATUS must be open, claimed, resolved or all")
                }
            }
        }
    }

    @Test("claims: conflicts, concurrent CLAIMs never collide, leases expire")
    func claims() async throws {
        try await withDatabaseServer { address, environment in
            try await asUser("author", address, environment) { (author: Conversation) async throws in
                var ids: [String] = []
                for index in 0 ..< 6 { ids.append(try await author.ok("POST 1 1 \(quoted("item \(index)"))")["pin"]["id"].string) }
                try await asUser("reporter", address, environment) { (reporter: Conversation) async throws in
                    for id in ids { _ = try await reporter.ok("REPORT \(id) other") }
                }
            }
            try await asUser("moda", role: .moderator, address, environment) { (a: Conversation) async throws in
                try await asUser("modb", role: .moderator, address, environment) { (b: Conversation) async throws in
                    let held = try await a.ok("CLAIM")["item"]
                    #expect(try held["status"].string == "claimed")
                    #expect(try held["claimed_by"].string == "moda")
                    let id = try held["item"].string
                    #expect(try await b.call("CLAIM \(id)") == "ERR CONFLICT another moderator holds that item")
                    #expect(try await b.call("CLAIM pzzzzzzzzzzzzzzzzzzzzzzzz") == "ERR NOT_FOUND no such item in the queue")
                    // RELEASE: only a live claim of one's own; then the item is open to anyone.
                    #expect(try await b.call("RELEASE \(id)") == "ERR CONFLICT you hold no claim on that item")
                    #expect(try await b.call("RELEASE pzzzzzzzzzzzzzzzzzzzzzzzz") == "ERR NOT_FOUND no such item in the queue")
                    let released = try await a.ok("RELEASE \(id)")["item"]
                    #expect(try released["status"].string == "open" && released["claimed_by"].value is NSNull)
                    #expect(try await a.call("RELEASE \(id)") == "ERR CONFLICT you hold no claim on that item")
                    #expect(try await b.ok("CLAIM \(id)")["item"]["claimed_by"].string == "modb")
                    #expect(try await b.ok("RELEASE \(id)")["item"]["status"].string == "open")
                    #expect(try await a.ok("CLAIM \(id)")["item"]["claimed_by"].string == "moda")
                    let actions = try await a.ok("MODLOG LIMIT 3")["entries"].array.map { try $0["action"].string }
                    #expect(actions == ["claim", "release", "claim"])
                    // Two moderators claiming at once get different items, every time.
                    let tokens = [try await a.ok("LOGIN moda password1")["token"].string,
                                  try await b.ok("LOGIN modb password1")["token"].string]
                    for _ in 0 ..< 2 {
                        let claimed = try await withThrowingTaskGroup(of: String.self) { group in
                            for token in tokens {
                                group.addTask {
                                    try await converseReturning(address) { client in
                                        _ = try await client.ok("AUTH \(token)")
                                        return try await client.ok("CLAIM")["item"]["item"].string
                                    }
                                }
                            }
                            return try await group.reduce(into: [String]()) { $0.append($1) }
                        }
                        #expect(Set(claimed).count == 2)
                    }
                    #expect(try await b.ok("MODQUEUE STATUS claimed")["items"].array.count == 5)
                    // The leases run out (in SQL: a 1 s lease could lapse before the checks above on
                    // a busy host): the items are open again and anyone may claim them.
                    try await environment.pool.query(
                        "UPDATE moderation_items SET claim_expires = now() - interval '1 second' WHERE status = 'claimed'",
                        idempotent: false)
                    #expect(try await b.ok("MODQUEUE")["items"].array.count == 6)
                    #expect(try await b.ok("CLAIM \(id)")["item"]["claimed_by"].string == "modb")
                }
            }
        }
    }

    @Test("resolve: dismiss shows it again and reports no longer hide it; remove and ban")
    func resolve() async throws {
        try await withDatabaseServer(moderationRules: ModerationRules(hideThreshold: 1, minimumReporterAgeSeconds: 0)) { address, environment in
            try await asUser("author", address, environment) { (author: Conversation) async throws in
                let keep = try await author.ok("POST 7 7 fine")["pin"]["id"].string
                let drop = try await author.ok("POST 7 7 bad")["pin"]["id"].string
                let worst = try await author.ok("POSTPHOTO 7 7 \(Base64.encode(PhotoFixtures.jpeg([]))) CAPTION worst")["pin"]["id"].string
                try await asUser("reporter", address, environment) { (reporter: Conversation) async throws in
                    for id in [keep, drop, worst] { _ = try await reporter.ok("REPORT \(id) violence") }
                    #expect(try await reporter.ok("NEARBY 7 7 10")["pins"].array.isEmpty)
                }
                try await asUser("mod", role: .moderator, address, environment) { (mod: Conversation) async throws in
                    try await asUser("other", role: .moderator, address, environment) { (other: Conversation) async throws in
                        _ = try await mod.ok("CLAIM \(keep)")
                        #expect(try await other.call("RESOLVE \(keep) dismiss")
                            == "ERR FORBIDDEN only the moderator holding the claim, or an admin, may resolve it")
                        // Evidence: the photo copy is there while the item is open.
                        #expect(try await mod.ok("PHOTO \(worst)")["mime"].string == "image/jpeg")
                        let dismissed = try await mod.ok("RESOLVE \(keep) dismiss NOTE \(quoted("satire"))")["item"]
                        #expect(try dismissed["status"].string == "resolved")
                        #expect(dismissed["hidden"].bool == false)
                        #expect(try await author.ok("GET \(keep)")["pin"]["text"].string == "fine")
                        #expect(try await mod.call("RESOLVE \(keep) remove") == "ERR CONFLICT that item is already resolved")
                        // A brigade cannot undo the decision: a new report queues it, but it stays visible.
                        try await asUser("brigade", address, environment) { (brigade: Conversation) async throws in
                            _ = try await brigade.ok("REPORT \(keep) spam")
                        }
                        #expect(try await author.ok("GET \(keep)")["pin"]["id"].string == keep)
                        let requeued = try await mod.ok("MODQUEUE")["items"].array.map { try $0["item"].string }
                        #expect(requeued.contains(keep))

                        _ = try await mod.ok("CLAIM \(drop)")
                        let removed = try await mod.ok("RESOLVE \(drop) remove")["item"]
                        #expect(try removed["resolution"].string == "remove")
                        #expect(try await author.call("GET \(drop)") == "ERR NOT_FOUND no such pin")
                        #expect(try await author.call("DELETE \(drop)") == "ERR NOT_FOUND no such pin")

                        _ = try await mod.ok("CLAIM \(worst)")
                        let banned = try await mod.ok("RESOLVE \(worst) ban DURATION 3600")["item"]
                        #expect(try banned["content"]["text"].string == "worst")
                        #expect(banned["content"]["photo"]["kept"].bool == false)
                        let refused = try await author.call("POST 7 7 again")
                        #expect(refused.hasPrefix("ERR BANNED 20"))
                        #expect(try await author.ok("NEARBY 7 7 10")["pins"].array.count == 1)
                        // Evidence survives removal.
                        let resolved = try await mod.ok("MODQUEUE STATUS resolved")["items"].array
                        #expect(try resolved.map { try $0["content"]["text"].string }.sorted() == ["bad", "worst"])
                    }
                }
                // An admin may resolve without holding the claim.
                try await asUser("boss", role: .admin, address, environment) { (boss: Conversation) async throws in
                    #expect(try await boss.ok("RESOLVE \(keep) dismiss")["item"]["status"].string == "resolved")
                }
            }
        }
    }

    @Test("BAN and UNBAN; bans end by themselves; moderators cannot ban admins; MODLOG pages every action")
    func bansAndLog() async throws {
        try await withDatabaseServer { address, environment in
            try await asUser("troll", address, environment) { (troll: Conversation) async throws in
                try await asUser("mod", role: .moderator, address, environment) { (mod: Conversation) async throws in
                    try await asUser("boss", role: .admin, address, environment) { (boss: Conversation) async throws in
                        #expect(try await mod.call("BAN troll permanent NOTE \(quoted("spam wave"))") == "OK true")
                        #expect(try await troll.call("POST 1 1 hi") == "ERR BANNED permanent")
                        #expect(try await troll.call("REPORT pabcdefghijklmnopqrstuvwx spam") == "ERR BANNED permanent")
                        #expect(try await troll.ok("WHOAMI")["user"]["name"].string == "troll")
                        #expect(try await mod.call("UNBAN troll") == "OK true")
                        #expect(try await troll.call("POST 1 1 hi").hasPrefix("OK "))
                        #expect(try await mod.call("BAN troll 3600") == "OK true")
                        #expect(try await troll.call("POST 1 1 hi").hasPrefix("ERR BANNED "))
                        // The hour passes (in SQL: a 1 s ban could end before the POST above on a
                        // busy host): the ban ends by itself.
                        try await environment.pool.query(
                            "UPDATE users SET banned_until = now() - interval '1 second' WHERE name = 'troll'",
                            idempotent: false)
                        #expect(try await troll.call("POST 1 1 hi").hasPrefix("OK "))
                        #expect(try await mod.call("BAN boss 60") == "ERR FORBIDDEN only an admin may ban a moderator or an admin")
                        #expect(try await mod.call("BAN nobody 60") == "ERR NOT_FOUND no such user")
                        #expect(try await mod.call("BAN troll 0").hasPrefix("ERR BAD_ARGUMENT "))
                        #expect(try await boss.call("BAN mod 60") == "OK true")

                        let page = try await boss.ok("MODLOG LIMIT 3")
                        let entries = page["entries"].array
                        #expect(try entries.map { try $0["action"].string } == ["ban", "ban", "unban"])
                        #expect(try entries[0]["moderator"].string == "boss")
                        #expect(try entries[0]["user"].string == "mod")
                        let rest = try await boss.ok("MODLOG CURSOR \(try page["next"].string)")
                        let older = rest["entries"].array
                        #expect(try older.map { try $0["action"].string } == ["ban"])
                        #expect(try older[0]["note"].string == "spam wave")
                        #expect(rest["next"].isNull)
                    }
                }
            }
            // The log is append-only.
            await #expect(throws: (any Error).self) {
                try await environment.pool.query("UPDATE moderation_log SET note = 'edited'", idempotent: false)
            }
            await #expect(throws: (any Error).self) {
                try await environment.pool.query("DELETE FROM moderation_log", idempotent: false)
            }
        }
    }

    @Test("hidden replies leave the chat; evidence of an expired pin survives the sweep")
    func repliesAndExpiry() async throws {
        try await withDatabaseServer(moderationRules: ModerationRules(hideThreshold: 1, minimumReporterAgeSeconds: 0)) { address, environment in
            try await asUser("author", address, environment) { (author: Conversation) async throws in
                let pin = try await author.ok("POST 2 2 chat")["pin"]["id"].string
                let reply = try await author.ok("REPLY \(pin) \(quoted("nasty"))")["reply"]["id"].string
                _ = try await author.ok("REPLY \(pin) \(quoted("nice"))")
                try await asUser("reporter", address, environment) { (reporter: Conversation) async throws in
                    _ = try await reporter.ok("REPORT \(reply) harassment")
                    let chat = try await reporter.ok("REPLIES \(pin)")["replies"].array
                    #expect(try chat.map { try $0["text"].string } == ["nice"])
                    #expect(try await reporter.ok("GET \(pin)")["pin"]["replies"].int == 1)
                    _ = try await reporter.ok("REPORT \(pin) spam")
                }
                // The pin expires now (a TTL of a second could run out before the reports on a busy host).
                try await environment.pool.query(
                    "UPDATE pins SET created_at = now() - interval '2 seconds', expires_at = now() - interval '1 second' WHERE id = \(pin)", idempotent: false)
                let swept = try await environment.database.expire()
                #expect(swept.pins == 1)
                try await asUser("mod", role: .moderator, address, environment) { (mod: Conversation) async throws in
                    let items = try await mod.ok("MODQUEUE")["items"].array
                    #expect(try items.map { try $0["content"]["text"].string }.sorted() == ["chat", "nasty"])
                    let resolved = try await mod.ok("CLAIM \(reply)")
                    #expect(try resolved["item"]["content"]["pin"].string == pin)
                    #expect(try await mod.ok("RESOLVE \(reply) remove")["item"]["status"].string == "resolved")
                }
            }
        }
    }
}
