import Postgres
import ScavengerCore

/// A pin to be written.
public struct NewPin: Sendable {
    /// Fixed before the first attempt to write it, so that a retry cannot write it twice.
    public var id: String
    public var authorID: Int
    public var authorName: String
    public var lat: Double
    public var lon: Double
    public var text: String
    public var ttlSeconds: Int
    /// Present for a photo pin.
    public var photo: Photo?
    /// The finest grid cell of the location.
    public var cell: Int64
    /// The named region that contains the location, if any.
    public var region: String?
    /// When set, the pin is written only if this session is live, belongs to `authorID` and
    /// the user is not banned, checked in the writing statement itself; otherwise the write
    /// fails with ``StoreError/sessionRefused`` and nothing is stored.
    public var sessionTokenHash: [UInt8]?
    /// The author's rate for this kind of pin (``RateLimitedAction/post`` or ``RateLimitedAction/photo``):
    /// the pin is written only if a token can be taken from the author's bucket, in the writing
    /// statement itself. Nil: unlimited.
    public var rate: RateLimit?

    /// The bucket this pin draws from.
    var rateAction: RateLimitedAction { photo == nil ? .post : .photo }

    public init(
        authorID: Int, authorName: String, lat: Double, lon: Double, text: String, ttlSeconds: Int, photo: Photo?,
        cell: Int64, region: String?, sessionTokenHash: [UInt8]? = nil, rate: RateLimit? = nil, id: String = Identifier.newPin()
    ) {
        self.id = id
        self.sessionTokenHash = sessionTokenHash
        self.rate = rate
        self.authorID = authorID
        self.authorName = authorName
        self.lat = lat
        self.lon = lon
        self.text = text
        self.ttlSeconds = ttlSeconds
        self.photo = photo
        self.cell = cell
        self.region = region
    }
}

/// What a pin's delete is decided on: who wrote the pin.
public struct PinDeleteFacts: Sendable, Equatable {
    public var authorID: Int

    public init(authorID: Int) {
        self.authorID = authorID
    }
}

/// How a delete was decided: the author's own, or a moderator's of someone else's pin (audited).
public enum PinDeletion: Sendable, Equatable {
    case byAuthor
    case byModerator
}

extension Database {
    /// The columns every pin query selects, each named for ``PinColumns`` to find it in any
    /// statement that selects them (beside other columns, in any order): the pin as clients see
    /// it, then whether moderation hides it.
    static let pinColumns = """
        p.id AS pin_id, p.lat AS pin_lat, p.lon AS pin_lon, p.kind AS pin_kind, p.body AS pin_body, u.name AS pin_author,
        (extract(epoch FROM p.created_at) * 1000000)::bigint AS pin_created_us,
        (extract(epoch FROM p.expires_at) * 1000000)::bigint AS pin_expires_us,
        p.region AS pin_region, p.photo_mime AS pin_photo_mime, p.photo_bytes AS pin_photo_bytes,
        p.photo_width AS pin_photo_width, p.photo_height AS pin_photo_height,
        p.reply_count AS pin_replies, p.hidden AS pin_hidden
        """

    /// A live pin: not yet expired.
    static let livePin = "p.expires_at > now()"
    /// A pin anyone may see: live, and not hidden by moderation.
    static let visiblePin = "p.expires_at > now() AND NOT p.hidden"

    /// ``pinColumns`` found in one result, to read a pin from each of its rows.
    struct PinColumns {
        let id, lat, lon, kind, body, author, created, expires, region, photoMime, photoBytes, photoWidth, photoHeight, replies,
            hidden: PostgresColumn

        init(_ rows: PostgresRows) throws(PostgresError) {
            id = try rows.column("pin_id")
            lat = try rows.column("pin_lat")
            lon = try rows.column("pin_lon")
            kind = try rows.column("pin_kind")
            body = try rows.column("pin_body")
            author = try rows.column("pin_author")
            created = try rows.column("pin_created_us")
            expires = try rows.column("pin_expires_us")
            region = try rows.column("pin_region")
            photoMime = try rows.column("pin_photo_mime")
            photoBytes = try rows.column("pin_photo_bytes")
            photoWidth = try rows.column("pin_photo_width")
            photoHeight = try rows.column("pin_photo_height")
            replies = try rows.column("pin_replies")
            hidden = try rows.column("pin_hidden")
        }

        func pin(_ row: PostgresRow) throws -> IndexedPin {
            let kindName: String = try row.string(kind)
            guard let kind = PinKind(rawValue: kindName) else { throw StoreError.unexpected("unknown pin kind \(kindName)") }
            var photo: PhotoInfo?
            if let mime: String = try row.string(photoMime), let bytes: Int = try row.int(photoBytes) {
                photo = PhotoInfo(
                    mime: mime, bytes: bytes, width: try row.int(photoWidth) ?? 0, height: try row.int(photoHeight) ?? 0)
            }
            return IndexedPin(
                id: try row.string(id), lat: try row.double(lat), lon: try row.double(lon), kind: kind,
                text: try row.string(body), author: try row.string(author),
                created: Timestamp(microseconds: Int64(try row.int(created) as Int)),
                expires: Timestamp(microseconds: Int64(try row.int(expires) as Int)), region: try row.string(region),
                photo: photo, replies: try row.int(replies), hidden: try row.bool(hidden))
        }
    }

    /// Writes a pin (and its photo) in one statement, so both or neither are stored. Text pins
    /// are grouped with other writers' into one transaction, keyed ones (`request`) with their
    /// keys in it; either way the answer comes after the commit. A keyed photo pin is written
    /// alone, with its key in its transaction.
    public func createPin(_ new: NewPin, request: KeyedWrite<Pin>? = nil) async throws(StoreError) -> Pin {
        // Numbered soon after the commit (or a failure that may have committed): see LogNumbering.
        defer { feedNumbering.number() }
        if new.photo == nil {
            return try await textPinWriter.write(new, request: request)
        }
        if let request { return try await insertKeyedPin(new, request: request) }
        return try await insertPins([new])[0].get()
    }

    /// A live pin by id.
    public func pin(id: String) async throws(StoreError) -> Pin? {
        try await mappingErrors {
            let rows = try await pool.query("""
                SELECT \(unescaped: Self.pinColumns) FROM pins p JOIN users u ON u.id = p.author_id
                WHERE p.id = \(id) AND \(unescaped: Self.visiblePin)
                """)
            return try rows.first.map(PinColumns(rows).pin)?.pin
        }
    }

    /// A live pin's photo.
    public func photo(pinID: String) async throws(StoreError) -> Photo? {
        try await mappingErrors {
            let rows = try await pool.query("""
                SELECT p.photo_mime, ph.data FROM pins p JOIN photos ph ON ph.pin_id = p.id
                WHERE p.id = \(pinID) AND \(unescaped: Self.visiblePin)
                """, binaryResults: true)
            guard let row = rows.first, let mime = try row.bytes("photo_mime"), let data = try row.bytes("data") else { return nil }
            return Photo(mime: String(decoding: mime, as: UTF8.self), data: data)
        }
    }

    /// Deletes a live pin with its replies and photo, by `userID`, as `decide` (the board's rule)
    /// decides from the pin's facts, read under its row lock; false when there is no live pin.
    /// A moderator's delete of someone else's pin is audited in the same transaction (evidence
    /// snapshot, resolved queue item, `delete` log entry); an author's own delete is not.
    public func deletePin(
        id: String, by userID: Int, request: KeyedWrite<Bool>? = nil,
        decide: @escaping @Sendable (PinDeleteFacts) throws -> PinDeletion
    ) async throws(StoreError) -> Bool {
        // Numbered soon after the commit (or a failure that may have committed): see LogNumbering.
        defer { feedNumbering.number() }
        return try await mappingErrors {
            try await pool.transaction { connection in
                let rows = try connection.query("""
                    SELECT p.author_id FROM pins p WHERE p.id = \(id) AND \(unescaped: Self.livePin) FOR UPDATE
                    """)
                guard let row = rows.first else { return false }
                let authorID: Int = try row.int("author_id")
                if try decide(PinDeleteFacts(authorID: authorID)) == .byModerator {
                    try Self.auditDelete(connection, pin: id, moderator: userID, author: authorID)
                }
                try connection.query("DELETE FROM pins WHERE id = \(id)")
                try request.record(true, on: connection)
                return true
            }
        }
    }

    /// Adds a reply under a live pin and counts it; nil when the pin is not live. With a `rate`,
    /// the author's reply bucket must give a token (``StoreError/rateLimited(retryAfterSeconds:)``
    /// otherwise), taken in the same transaction, so a reply that is not written costs none.
    public func createReply(
        pinID: String, authorID: Int, authorName: String, text: String, rate: RateLimit? = nil, request: KeyedWrite<PinReply>? = nil
    ) async throws(StoreError) -> PinReply? {
        let id = Identifier.newReply()
        return try await mappingErrors {
            try await pool.transaction { connection -> PinReply? in
                // The pin's count first (its row lock, and whether it is live: nothing else is
                // written when it is not), then the token, then the reply.
                let live = try connection.query("""
                    UPDATE pins p SET reply_count = reply_count + 1
                    WHERE p.id = \(pinID) AND \(unescaped: Self.visiblePin)
                    RETURNING p.id
                    """)
                guard !live.isEmpty else { return nil }
                try Self.takeRateToken(connection, userID: authorID, action: .reply, rate: rate)
                let rows = try connection.query("""
                    INSERT INTO replies (id, pin_id, author_id, body) VALUES (\(id), \(pinID), \(authorID), \(text))
                    RETURNING (extract(epoch FROM created_at) * 1000000)::bigint AS created_us
                    """)
                let reply = PinReply(
                    id: id, pin: pinID, text: text, author: authorName,
                    created: Timestamp(microseconds: Int64(try rows[0].int("created_us") as Int)))
                try request.record(reply, on: connection)
                return reply
            }
        }
    }

    /// Takes a token from the user's bucket for `action` (nothing when `rate` is nil), or throws
    /// ``StoreError/rateLimited(retryAfterSeconds:)``. Runs in the caller's transaction, so a write
    /// that fails later gives the token back.
    static func takeRateToken(_ connection: PostgresConnection, userID: Int, action: RateLimitedAction, rate: RateLimit?) throws {
        guard let rate else { return }
        let rows = try connection.query("""
            SELECT take_rate_token(\(userID)::bigint, \(action.rawValue)::text, \(Double(rate.count))::float8, \(rate.perSecond)::float8)
                AS wait
            """)
        let wait: Double = try rows[0].double("wait")
        if wait > 0 { throw StoreError.rateLimited(waiting: wait) }
    }

    /// A page of a live pin's replies, oldest first, after `cursor`; nil when the pin is not live.
    public func replies(pinID: String, after cursor: ReplyCursor?, limit: Int) async throws(StoreError)
        -> (replies: [PinReply], next: ReplyCursor?)?
    {
        try await mappingErrors {
            var sql: SQL = """
                SELECT r.id, r.body, u.name AS author, (extract(epoch FROM r.created_at) * 1000000)::bigint AS created_us
                FROM replies r JOIN users u ON u.id = r.author_id
                WHERE r.pin_id = \(pinID) AND NOT r.hidden
                  AND EXISTS (SELECT 1 FROM pins p WHERE p.id = \(pinID) AND \(unescaped: Self.visiblePin))
                """
            if let cursor {
                sql.append("""
                     AND (r.created_at, r.id) > ('epoch'::timestamptz + \(cursor.created.microseconds)::bigint * interval '1 microsecond', \(cursor.id))
                    """)
            }
            sql.append(" ORDER BY r.created_at, r.id LIMIT \(limit + 1)")
            let rows = try await pool.query(sql)
            if rows.isEmpty {
                let live = try await pool.query("SELECT 1 FROM pins p WHERE p.id = \(pinID) AND \(unescaped: Self.visiblePin)")
                if live.isEmpty { return nil }
            }
            var replies: [PinReply] = []
            let (id, body, author, created) = try (
                rows.column("id"), rows.column("body"), rows.column("author"), rows.column("created_us"))
            for row in rows.prefix(limit) {
                replies.append(PinReply(
                    id: try row.string(id), pin: pinID, text: try row.string(body), author: try row.string(author),
                    created: Timestamp(microseconds: Int64(try row.int(created) as Int))))
            }
            let next = rows.count > limit ? replies.last.map { ReplyCursor(pinID: pinID, created: $0.created, id: $0.id) } : nil
            return (replies, next)
        }
    }
}
