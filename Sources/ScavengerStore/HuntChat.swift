import Postgres
import ScavengerCore

// A hunt's chat.
extension Database {
    /// Adds a message to a hunt's chat; `check` sees the hunt under a share lock and whether the
    /// author is its host or a player. With a `rate`, the author's reply bucket gives a token in
    /// the same transaction. Nil when no such hunt.
    public func createHuntReply(
        huntID: String, authorID: Int, authorName: String, text: String, rate: RateLimit?, request: KeyedWrite<PinReply?>? = nil,
        check: @escaping @Sendable (HuntRecord, Bool) throws -> Void
    ) async throws(StoreError) -> PinReply? {
        let id = Identifier.newReply()
        return try await huntTransaction(request: request) { connection, log in
            guard let hunt = try Self.hunt(connection, id: huntID, lock: "FOR SHARE OF h") else { return nil }
            let member = try hunt.hostID == authorID
                || !connection.query("SELECT 1 FROM hunt_players WHERE hunt_id = \(huntID) AND user_id = \(authorID)").isEmpty
            try check(hunt, member)
            try Self.takeRateToken(connection, userID: authorID, action: .reply, rate: rate)
            let rows = try connection.query("""
                INSERT INTO replies (id, hunt_id, author_id, body) VALUES (\(id), \(huntID), \(authorID), \(text))
                RETURNING (extract(epoch FROM created_at) * 1000000)::bigint AS created_us
                """)
            let reply = PinReply(
                id: id, pin: huntID, text: text, author: authorName,
                created: Timestamp(microseconds: Int64(try rows[0].int("created_us") as Int)))
            log.append(hunt: huntID, .reply(reply))
            return reply
        }
    }

    /// A page of a hunt's chat, oldest first, after `cursor` (hidden messages left out).
    public func huntReplies(huntID: String, after cursor: ReplyCursor?, limit: Int) async throws(StoreError)
        -> (replies: [PinReply], next: ReplyCursor?)
    {
        try await mappingErrors {
            var sql: SQL = """
                SELECT r.id, r.body, u.name AS author, (extract(epoch FROM r.created_at) * 1000000)::bigint AS created_us
                FROM replies r JOIN users u ON u.id = r.author_id
                WHERE r.hunt_id = \(huntID) AND NOT r.hidden
                """
            if let cursor {
                sql.append("""
                     AND (r.created_at, r.id) > ('epoch'::timestamptz + \(cursor.created.microseconds)::bigint * interval '1 microsecond', \(cursor.id))
                    """)
            }
            sql.append(" ORDER BY r.created_at, r.id LIMIT \(limit + 1)")
            let rows = try await pool.query(sql)
            let (id, body, author, created) = try (rows.column("id"), rows.column("body"), rows.column("author"), rows.column("created_us"))
            var replies: [PinReply] = []
            for row in rows.prefix(limit) {
                replies.append(PinReply(
                    id: try row.string(id), pin: huntID, text: try row.string(body), author: try row.string(author),
                    created: Timestamp(microseconds: Int64(try row.int(created) as Int))))
            }
            let next = rows.count > limit ? replies.last.map { ReplyCursor(pinID: huntID, created: $0.created, id: $0.id) } : nil
            return (replies, next)
        }
    }
}
