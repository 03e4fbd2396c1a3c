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
            return try rows.first.map(ItemColumns(rows).item)
        }
    }

    /// The reports of an item, oldest first, each with its reporter's account age at the time.
    public func itemReports(_ item: String) async throws -> [ItemReport] {
        try await mappingErrors {
            let rows = try await pool.query("""
                SELECT u.name AS reporter, extract(epoch FROM r.created_at - u.created_at)::bigint AS reporter_age_s,
                       r.reason, r.note, (extract(epoch FROM r.created_at) * 1000000)::bigint AS at_us
                FROM reports r JOIN users u ON u.id = r.reporter_id
                WHERE r.item = \(item)
                ORDER BY r.created_at, r.id
                """)
            let (reporter, age, reason, note, at) = try (
                rows.column("reporter"), rows.column("reporter_age_s"), rows.column("reason"), rows.column("note"),
                rows.column("at_us"))
            return try rows.map { row in
                let reasonText: String = try row.string(reason)
                return ItemReport(
                    reporter: try row.string(reporter), reporterAgeSeconds: max(0, try row.int(age)),
                    reason: ReportReason(rawValue: reasonText) ?? .other, note: try row.string(note),
                    at: Timestamp(microseconds: Int64(try row.int(at) as Int)))
            }
        }
    }

    /// The author of an item: account, latest `limit` pins and replies (hidden ones included),
    /// their other reported items, and the log entries naming them. Nil when the item is unknown
    /// or its author's account is gone.
    public func authorHistory(ofItem item: String, limit: Int = 10) async throws -> AuthorHistory? {
        try await mappingErrors {
            let authors = try await pool.query("""
                SELECT \(unescaped: Self.accountColumns("u")), (extract(epoch FROM u.created_at) * 1000000)::bigint AS joined_us
                FROM moderation_items m JOIN users u ON u.id = m.author_id WHERE m.item = \(item)
                """)
            guard let author = authors.first else { return nil }
            let account = try AccountColumns(authors).account(author)
            let joined = Timestamp(microseconds: Int64(try author.int("joined_us") as Int))
            let pinRows = try await pool.query("""
                SELECT id, body, (extract(epoch FROM created_at) * 1000000)::bigint AS created_us, hidden, kind, lat, lon
                FROM pins WHERE author_id = \(account.id) ORDER BY created_at DESC, id LIMIT \(limit)
                """)
            let content = try ContentColumns(pinRows)
            let (kind, lat, lon) = try (pinRows.column("kind"), pinRows.column("lat"), pinRows.column("lon"))
            let pins = try pinRows.map { row in
                let kindName: String = try row.string(kind)
                return AuthoredContent(
                    id: try row.string(content.id), text: try row.string(content.body),
                    created: Timestamp(microseconds: Int64(try row.int(content.created) as Int)), hidden: try row.bool(content.hidden),
                    pinKind: PinKind(rawValue: kindName), lat: try row.double(lat), lon: try row.double(lon))
            }
            let replyRows = try await pool.query("""
                SELECT id, body, (extract(epoch FROM created_at) * 1000000)::bigint AS created_us, hidden, pin_id
                FROM replies WHERE author_id = \(account.id) ORDER BY created_at DESC, id LIMIT \(limit)
                """)
            let reply = try ContentColumns(replyRows)
            let pin = try replyRows.column("pin_id")
            let replies = try replyRows.map { row in
                AuthoredContent(
                    id: try row.string(reply.id), text: try row.string(reply.body),
                    created: Timestamp(microseconds: Int64(try row.int(reply.created) as Int)), hidden: try row.bool(reply.hidden),
                    pin: try row.string(pin))
            }
            let reportedRows = try await pool.query("""
                SELECT \(unescaped: Self.itemColumns) FROM moderation_items m LEFT JOIN users c ON c.id = m.claimed_by
                WHERE m.author_id = \(account.id) AND m.item <> \(item)
                ORDER BY m.first_reported DESC, m.item LIMIT \(limit)
                """)
            let reported = try reportedRows.map(ItemColumns(reportedRows).item)
            let actionRows = try await pool.query("""
                SELECT \(unescaped: Self.logColumns)
                FROM moderation_log l JOIN users m ON m.id = l.moderator_id JOIN users u ON u.id = l.user_id
                WHERE l.user_id = \(account.id)
                ORDER BY l.id DESC LIMIT \(limit)
                """)
            let actions = try actionRows.map(LogColumns(actionRows).entry)
            return AuthorHistory(
                name: account.user.name, role: account.user.role, joined: joined, ban: account.ban, pins: pins,
                replies: replies, reportedItems: reported, actions: actions)
        }
    }

    /// What an author's pins and replies share in ``authorHistory(ofItem:limit:)``: `id`,
    /// `body`, `created_us`, `hidden`, found in one result.
    struct ContentColumns {
        let id, body, created, hidden: PostgresColumn

        init(_ rows: PostgresRows) throws(PostgresError) {
            id = try rows.column("id")
            body = try rows.column("body")
            created = try rows.column("created_us")
            hidden = try rows.column("hidden")
        }
    }

    /// Hands back a claim, so the item is open for others at once, as `decide` (the board's rule:
    /// only its live holder) decides from the item's facts (nil when it is not in the queue).
    public func release(
        moderator: Account, item: String, decide: @escaping @Sendable (QueueItemFacts?) throws -> Void
    ) async throws(StoreError) -> ModerationItem {
        try await moderation { connection in
            try decide(try Self.queueItemFacts(connection, item: item))
            try connection.query("""
                UPDATE moderation_items SET status = 'open', claimed_by = NULL, claim_expires = NULL WHERE item = \(item)
                """)
            try Self.log(connection, moderator: moderator.id, action: "release", item: item, user: nil, note: nil)
            return try Self.loadItem(connection, item)
        }
    }
}
