import Postgres
import ScavengerCore

// What the moderators' console shows beside the queue: one item, its reports with the
// reporters' account ages, its author's history; and handing a claim back.

extension Database {
    /// One queue item; nil when there is none with that id.
    public func moderationItem(_ item: String) async throws -> ModerationItem? {
        try await mappingErrors {
            let rows = try await pool.query("""
                SELECT \(unescaped: Self.itemColumns) FROM moderation_items m LEFT JOIN users c ON c.id = m.claimed_by
                WHERE m.item = \(item)
                """)
            return try rows.first.map(Self.item)
        }
    }

    /// The reports of an item, oldest first, each with its reporter's account age at the time.
    public func itemReports(_ item: String) async throws -> [ItemReport] {
        try await mappingErrors {
            let rows = try await pool.query("""
                SELECT u.name, extract(epoch FROM r.created_at - u.created_at)::bigint, r.reason, r.note,
                       (extract(epoch FROM r.created_at) * 1000000)::bigint
                FROM reports r JOIN users u ON u.id = r.reporter_id
                WHERE r.item = \(item)
                ORDER BY r.created_at, r.id
                """)
            return try rows.map { row in
                let reason: String = try row.string(2)
                return ItemReport(
                    reporter: try row.string(0), reporterAgeSeconds: max(0, try row.int(1)),
                    reason: ReportReason(rawValue: reason) ?? .other, note: try row.string(3),
                    at: Timestamp(microseconds: Int64(try row.int(4) as Int)))
            }
        }
    }

    /// The author of an item: account, latest `limit` pins and replies (hidden ones included),
    /// their other reported items, and the log entries naming them. Nil when the item is unknown
    /// or its author's account is gone.
    public func authorHistory(ofItem item: String, limit: Int = 10) async throws -> AuthorHistory? {
        try await mappingErrors {
            let authors = try await pool.query("""
                SELECT u.id, u.name, u.role, \(unescaped: Self.banColumn("u")),
                       (extract(epoch FROM u.created_at) * 1000000)::bigint
                FROM moderation_items m JOIN users u ON u.id = m.author_id WHERE m.item = \(item)
                """)
            guard let author = authors.first else { return nil }
            let account = try Self.account(author)
            let joined = Timestamp(microseconds: Int64(try author.int(4) as Int))
            let pins = try await pool.query("""
                SELECT id, body, (extract(epoch FROM created_at) * 1000000)::bigint, hidden, kind, lat, lon
                FROM pins WHERE author_id = \(account.id) ORDER BY created_at DESC, id LIMIT \(limit)
                """).map { row in
                    let kind: String = try row.string(4)
                    return AuthoredContent(
                        id: try row.string(0), text: try row.string(1), created: Timestamp(microseconds: Int64(try row.int(2) as Int)),
                        hidden: try row.bool(3), pinKind: PinKind(rawValue: kind), lat: try row.double(5), lon: try row.double(6))
                }
            let replies = try await pool.query("""
                SELECT id, body, (extract(epoch FROM created_at) * 1000000)::bigint, hidden, pin_id
                FROM replies WHERE author_id = \(account.id) ORDER BY created_at DESC, id LIMIT \(limit)
                """).map { row in
                    AuthoredContent(
                        id: try row.string(0), text: try row.string(1), created: Timestamp(microseconds: Int64(try row.int(2) as Int)),
                        hidden: try row.bool(3), pin: try row.string(4))
                }
            let reported = try await pool.query("""
                SELECT \(unescaped: Self.itemColumns) FROM moderation_items m LEFT JOIN users c ON c.id = m.claimed_by
                WHERE m.author_id = \(account.id) AND m.item <> \(item)
                ORDER BY m.first_reported DESC, m.item LIMIT \(limit)
                """).map(Self.item)
            let actions = try await pool.query("""
                SELECT l.id, (extract(epoch FROM l.at) * 1000000)::bigint, m.name, l.action, l.item, u.name, l.note
                FROM moderation_log l JOIN users m ON m.id = l.moderator_id JOIN users u ON u.id = l.user_id
                WHERE l.user_id = \(account.id)
                ORDER BY l.id DESC LIMIT \(limit)
                """).map(Self.logEntry)
            return AuthorHistory(
                name: account.user.name, role: account.user.role, joined: joined, ban: account.ban, pins: pins,
                replies: replies, reportedItems: reported, actions: actions)
        }
    }

    /// Hands back a claim the moderator holds, so the item is open for others at once.
    /// `conflict` when they hold no live claim on it; `notFound` when there is no such item.
    public func release(moderator: Account, item: String) async throws -> ModerationItem {
        try await moderation { connection in
            let rows = try connection.query("""
                SELECT status = 'claimed' AND claim_expires > now() AND claimed_by = \(moderator.id)
                FROM moderation_items WHERE item = \(item) FOR UPDATE
                """)
            guard let row = rows.first else { throw ModerationRefusal.notFound("no such item in the queue") }
            guard try row.bool(0) as Bool else { throw ModerationRefusal.conflict("you hold no claim on that item") }
            try connection.query("""
                UPDATE moderation_items SET status = 'open', claimed_by = NULL, claim_expires = NULL WHERE item = \(item)
                """)
            try Self.log(connection, moderator: moderator.id, action: "release", item: item, user: nil, note: nil)
            return try Self.loadItem(connection, item)
        }
    }
}
