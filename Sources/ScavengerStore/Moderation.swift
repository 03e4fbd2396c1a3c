// Over 400 lines on purpose: every moderation transaction (report, claim, resolve, ban) shares
// the content locking, snapshot and log helpers below; split, they would be spread over files.

import Postgres
import ScavengerCore

/// What a report is decided on, read under the content's row lock: who wrote the content, and
/// whether this reporter has reported it already.
public struct ReportFacts: Sendable, Equatable {
    public var authorID: Int
    public var alreadyReported: Bool
    /// The hunt the content belongs to (the hunt itself, a stop's, a chat reply's); nil for a pin
    /// and a reply under a pin.
    public var hunt: String?

    public init(authorID: Int, alreadyReported: Bool, hunt: String? = nil) {
        self.authorID = authorID
        self.alreadyReported = alreadyReported
        self.hunt = hunt
    }
}

/// A queue item as `CLAIM`, `RESOLVE` and `RELEASE` are decided on, read under its row lock.
public struct QueueItemFacts: Sendable, Equatable {
    /// Who wrote the content (nil when the account is gone).
    public var authorID: Int?
    public var status: ItemStatus
    /// Who claimed it, and whether that claim still runs.
    public var holderID: Int?
    public var claimLive: Bool

    public init(authorID: Int?, status: ItemStatus, holderID: Int?, claimLive: Bool) {
        self.authorID = authorID
        self.status = status
        self.holderID = holderID
        self.claimLive = claimLive
    }
}

/// The user a ban or an unban would touch, read under their row lock.
public struct BanTargetFacts: Sendable, Equatable {
    public var userID: Int
    public var role: Role
    /// Whether an admin's ban on them still runs.
    public var bannedByAdmin: Bool

    public init(userID: Int, role: Role, bannedByAdmin: Bool) {
        self.userID = userID
        self.role = role
        self.bannedByAdmin = bannedByAdmin
    }
}

/// What REPORT did.
public struct ReportReceipt: Sendable, Equatable {
    public var reportID: String
    public var item: String
    /// The pin whose feed entry changed (hidden, or its reply count), to refresh in memory.
    public var changedPin: String?
    /// Whether this report hid the item.
    public var hidNow: Bool
}

/// What RESOLVE changed besides the item.
public struct ResolveOutcome: Sendable, Equatable {
    public var item: ModerationItem
    /// A pin to reload into the feed, or one that is gone from it.
    public var refreshPin: String?
    public var removedPin: String?
}

extension Database {
    /// Runs a moderation transaction; a refusal of the caller's rules rolls it back and comes
    /// back as ``StoreError/refused(_:)``.
    func moderation<T: Sendable>(
        request: KeyedWrite<T>? = nil, _ body: @escaping @Sendable (PostgresConnection) throws -> T
    ) async throws(StoreError) -> T {
        try await mappingErrors {
            try await pool.transaction { connection in
                let result = try body(connection)
                try request.record(result, on: connection)
                return result
            }
        }
    }

    // MARK: Reports

    /// Files a report, as `decide` (the board's rule) decides from the content's facts (nil when
    /// nothing reportable has that id); hides the item when its distinct qualifying reporters
    /// (old enough, not banned) reach `rules.hideThreshold` (unless a moderator dismissed it
    /// before). With a `rate`, the reporter's bucket must give a token
    /// (``StoreError/rateLimited(retryAfterSeconds:)`` otherwise).
    public func report(
        reporter: Account, item: String, reason: ReportReason, note: String?, rules: ModerationRules, rate: RateLimit?,
        request: KeyedWrite<ReportReceipt>? = nil, decide: @escaping @Sendable (ReportFacts?) throws -> Void
    ) async throws(StoreError) -> ReportReceipt {
        let reportID = Identifier.newReport()
        return try await moderation(request: request) { connection in
            // A token for this report, taken under the bucket's row lock: concurrent reports by
            // one user wait in turn, so the limit holds; a report refused below gives it back.
            try Self.takeRateToken(connection, userID: reporter.id, action: .report, rate: rate)
            // Reports of one item wait on its row, so "already reported" is exact.
            let content = try Self.lockContent(connection, item: item)
            var facts: ReportFacts?
            if let content {
                let earlier = try connection.query("SELECT 1 FROM reports WHERE item = \(item) AND reporter_id = \(reporter.id)")
                facts = ReportFacts(authorID: content.authorID, alreadyReported: !earlier.isEmpty, hunt: content.hunt)
            }
            try decide(facts)
            guard let content else { throw StoreError.unexpected("a report was decided on content that is not there") }
            try connection.query(Self.snapshotInsert(item: item))
            try connection.query("""
                INSERT INTO reports (id, item, reporter_id, reason, note) VALUES (\(reportID), \(item), \(reporter.id), \(reason.rawValue), \(note))
                """)
            // A resolved (dismissed) item goes back in the queue; the hide rule never overrides
            // a dismissal. Every report counts in `reports`, but only qualifying reporters count
            // toward hiding: accounts that were at least `minimumReporterAgeSeconds` old when
            // they reported (sock puppets made for a brigade never count, even once older) and
            // are not banned now. One report per reporter and item: count(*) is distinct reporters.
            let minimumAge = rules.minimumReporterAgeSeconds
            let updated = try connection.query("""
                UPDATE moderation_items SET
                    reports = reports + 1, last_reported = now(),
                    status = CASE WHEN status = 'resolved' THEN 'open' ELSE status END,
                    resolution = CASE WHEN status = 'resolved' THEN NULL ELSE resolution END,
                    hidden = hidden OR (NOT dismissed AND (
                        SELECT count(*) FROM reports r JOIN users u ON u.id = r.reporter_id
                        WHERE r.item = \(item)
                          AND (\(minimumAge) <= 0 OR r.created_at >= u.created_at + make_interval(secs => \(minimumAge)))
                          AND (u.banned_until IS NULL OR u.banned_until <= now())
                    ) >= \(rules.hideThreshold))
                WHERE item = \(item)
                RETURNING hidden
                """)
            let hidden: Bool = try updated[0].bool("hidden")
            var changedPin: String?
            var hidNow = false
            if hidden && !content.hidden {
                hidNow = true
                changedPin = try Self.setContentHidden(connection, item: item, hidden: true)
            }
            return ReportReceipt(reportID: reportID, item: item, changedPin: changedPin, hidNow: hidNow)
        }
    }

    struct LockedContent {
        var authorID: Int
        var hidden: Bool
        /// For a reply, its pin; the hunt it belongs to, if any.
        var pin: String? = nil, hunt: String? = nil
    }

    /// Locks what can be reported: a live pin, a reply under a live pin or in a hunt's chat, a
    /// hunt or a stop that was not removed; nil otherwise. A stop's author is its host.
    static func lockContent(_ connection: PostgresConnection, item: String) throws -> LockedContent? {
        if Identifier.isPin(item) {
            let rows = try connection.query("""
                SELECT author_id, hidden FROM pins WHERE id = \(item) AND expires_at > now() FOR UPDATE
                """)
            guard let row = rows.first else { return nil }
            return LockedContent(authorID: try row.int("author_id"), hidden: try row.bool("hidden"), pin: nil)
        }
        if Identifier.isReply(item) {
            let rows = try connection.query("""
                SELECT r.author_id, r.hidden, r.pin_id, r.hunt_id FROM replies r
                LEFT JOIN pins p ON p.id = r.pin_id LEFT JOIN hunts h ON h.id = r.hunt_id
                WHERE r.id = \(item) AND (p.expires_at > now() OR NOT h.removed) FOR UPDATE OF r
                """)
            guard let row = rows.first else { return nil }
            return LockedContent(
                authorID: try row.int("author_id"), hidden: try row.bool("hidden"), pin: try row.string("pin_id"), hunt: try row.string("hunt_id"))
        }
        if Identifier.isHunt(item) {
            let rows = try connection.query("SELECT host_id, moderation_hidden FROM hunts WHERE id = \(item) AND NOT removed FOR UPDATE")
            guard let row = rows.first else { return nil }
            return LockedContent(authorID: try row.int("host_id"), hidden: try row.bool("moderation_hidden"), hunt: item)
        }
        if Identifier.isStop(item) {
            let rows = try connection.query("""
                SELECT h.host_id, s.moderation_hidden, s.hunt_id FROM hunt_stops s JOIN hunts h ON h.id = s.hunt_id
                WHERE s.id = \(item) AND NOT s.removed AND NOT h.removed FOR UPDATE OF s
                """)
            guard let row = rows.first else { return nil }
            return LockedContent(authorID: try row.int("host_id"), hidden: try row.bool("moderation_hidden"), hunt: try row.string("hunt_id"))
        }
        return nil
    }

    /// Creates the queue item with its evidence snapshot, unless it exists.
    static func snapshotInsert(item: String) -> SQL {
        if Identifier.isPin(item) {
            return """
                INSERT INTO moderation_items (item, kind, author_id, snap_author, snap_text, snap_lat, snap_lon, snap_pin_kind,
                    snap_created, snap_expires, snap_photo_mime, snap_photo_bytes, photo)
                SELECT p.id, 'pin', p.author_id, u.name, p.body, p.lat, p.lon, p.kind, p.created_at, p.expires_at,
                       p.photo_mime, p.photo_bytes, (SELECT data FROM photos WHERE pin_id = p.id)
                FROM pins p JOIN users u ON u.id = p.author_id WHERE p.id = \(item)
                ON CONFLICT (item) DO NOTHING
                """
        }
        if Identifier.isHunt(item) {
            // The text: name, description, its own badge's name, its teams' names and the stops'
            // titles; the place: its first stop's.
            return """
                INSERT INTO moderation_items (item, kind, author_id, snap_author, snap_text, snap_lat, snap_lon, snap_created)
                SELECT h.id, 'hunt', h.host_id, u.name,
                       h.name || E'\n\n' || h.description || coalesce(E'\n\nBadge: ' || h.badge_name, '') ||
                           coalesce(E'\n\nTeams: ' || (SELECT string_agg(t.name, ', ' ORDER BY t.id) FROM hunt_teams t WHERE t.hunt_id = h.id), '') ||
                           coalesce(E'\n\nStops: ' ||
                           (SELECT string_agg(s.n || '. ' || s.title, ', ' ORDER BY s.n) FROM hunt_stops s WHERE s.hunt_id = h.id), ''),
                       coalesce((SELECT s.lat FROM hunt_stops s WHERE s.hunt_id = h.id ORDER BY s.n LIMIT 1), 0),
                       coalesce((SELECT s.lon FROM hunt_stops s WHERE s.hunt_id = h.id ORDER BY s.n LIMIT 1), 0),
                       h.created_at
                FROM hunts h JOIN users u ON u.id = h.host_id WHERE h.id = \(item)
                ON CONFLICT (item) DO NOTHING
                """
        }
        if Identifier.isStop(item) {
            return """
                INSERT INTO moderation_items (item, kind, author_id, snap_author, snap_text, snap_pin, snap_lat, snap_lon, snap_created)
                SELECT s.id, 'stop', h.host_id, u.name, s.title || E'\n\n' || s.clue, s.hunt_id, s.lat, s.lon, h.created_at
                FROM hunt_stops s JOIN hunts h ON h.id = s.hunt_id JOIN users u ON u.id = h.host_id WHERE s.id = \(item)
                ON CONFLICT (item) DO NOTHING
                """
        }
        // A reply: under a pin (its place), or in a hunt's chat (the hunt's first stop's place).
        return """
            INSERT INTO moderation_items (item, kind, author_id, snap_author, snap_text, snap_pin, snap_lat, snap_lon, snap_created)
            SELECT r.id, 'reply', r.author_id, u.name, r.body, coalesce(r.pin_id, r.hunt_id),
                   coalesce(p.lat, (SELECT s.lat FROM hunt_stops s WHERE s.hunt_id = r.hunt_id ORDER BY s.n LIMIT 1), 0),
                   coalesce(p.lon, (SELECT s.lon FROM hunt_stops s WHERE s.hunt_id = r.hunt_id ORDER BY s.n LIMIT 1), 0),
                   r.created_at
            FROM replies r LEFT JOIN pins p ON p.id = r.pin_id JOIN users u ON u.id = r.author_id WHERE r.id = \(item)
            ON CONFLICT (item) DO NOTHING
            """
    }

    /// Hides or shows a pin or reply (keeping the pin's visible reply count right); returns
    /// the pin whose feed entry changed, if the content still exists.
    static func setContentHidden(_ connection: PostgresConnection, item: String, hidden: Bool) throws -> String? {
        if Identifier.isHunt(item) {
            try connection.query("UPDATE hunts SET moderation_hidden = \(hidden) WHERE id = \(item)")
            return nil
        }
        if Identifier.isStop(item) {
            try connection.query("UPDATE hunt_stops SET moderation_hidden = \(hidden) WHERE id = \(item)")
            return nil
        }
        if Identifier.isPin(item) {
            let rows = try connection.query("UPDATE pins SET hidden = \(hidden) WHERE id = \(item) AND hidden <> \(hidden) RETURNING id")
            return rows.isEmpty ? nil : item
        }
        let rows = try connection.query("""
            UPDATE replies SET hidden = \(hidden) WHERE id = \(item) AND hidden <> \(hidden) RETURNING pin_id
            """)
        // A reply in a hunt's chat has no pin to count it.
        guard let row = rows.first, let pin: String = try row.string("pin_id") else { return nil }
        try connection.query("""
            UPDATE pins SET reply_count = greatest(0, reply_count + \(hidden ? -1 : 1)) WHERE id = \(pin)
            """)
        return pin
    }

    // MARK: The queue

    /// The item's status as it stands now: a claim whose lease ran out is open again.
    static let effectiveStatus = """
        CASE WHEN m.status = 'claimed' AND m.claim_expires <= now() THEN 'open' ELSE m.status END
        """

    /// A queue item with its evidence snapshot, each column named for ``ItemColumns``.
    static let itemColumns = """
        m.item, m.kind, m.snap_author, m.snap_text, m.snap_pin, m.snap_lat, m.snap_lon, m.snap_pin_kind,
        (extract(epoch FROM m.snap_created) * 1000000)::bigint AS snap_created_us,
        (extract(epoch FROM m.snap_expires) * 1000000)::bigint AS snap_expires_us,
        m.snap_photo_mime, m.snap_photo_bytes, m.photo IS NOT NULL AS photo_kept, m.reports,
        \(effectiveStatus) AS status,
        CASE WHEN m.status = 'claimed' AND m.claim_expires > now() THEN c.name END AS claimed_by_name,
        m.hidden, (extract(epoch FROM m.first_reported) * 1000000)::bigint AS first_reported_us,
        (extract(epoch FROM m.last_reported) * 1000000)::bigint AS last_reported_us, m.resolution,
        (SELECT string_agg(reason || '=' || n, ',' ORDER BY n DESC, reason)
           FROM (SELECT reason, count(*) AS n FROM reports r WHERE r.item = m.item GROUP BY reason) x) AS reasons
        """

    /// ``itemColumns`` found in one result, to read a queue item from each of its rows.
    struct ItemColumns {
        let item, kind, author, text, pin, lat, lon, pinKind, created, expires, photoMime, photoBytes, photoKept: PostgresColumn
        let reports, status, claimedBy, hidden, firstReported, lastReported, resolution, reasons: PostgresColumn

        init(_ rows: PostgresRows) throws(PostgresError) {
            item = try rows.column("item")
            kind = try rows.column("kind")
            author = try rows.column("snap_author")
            text = try rows.column("snap_text")
            pin = try rows.column("snap_pin")
            lat = try rows.column("snap_lat")
            lon = try rows.column("snap_lon")
            pinKind = try rows.column("snap_pin_kind")
            created = try rows.column("snap_created_us")
            expires = try rows.column("snap_expires_us")
            photoMime = try rows.column("snap_photo_mime")
            photoBytes = try rows.column("snap_photo_bytes")
            photoKept = try rows.column("photo_kept")
            reports = try rows.column("reports")
            status = try rows.column("status")
            claimedBy = try rows.column("claimed_by_name")
            hidden = try rows.column("hidden")
            firstReported = try rows.column("first_reported_us")
            lastReported = try rows.column("last_reported_us")
            resolution = try rows.column("resolution")
            reasons = try rows.column("reasons")
        }

        func item(_ row: PostgresRow) throws -> ModerationItem {
            var photo: PhotoInfo?
            if let mime: String = try row.string(photoMime), let bytes: Int = try row.int(photoBytes) {
                photo = PhotoInfo(mime: mime, bytes: bytes)
            }
            let expires: Int? = try row.int(self.expires)
            let pinKind: String? = try row.string(self.pinKind)
            let content = ContentSnapshot(
                author: try row.string(author), text: try row.string(text), pin: try row.string(pin), lat: try row.double(lat),
                lon: try row.double(lon), pinKind: pinKind.flatMap(PinKind.init(rawValue:)),
                created: Timestamp(microseconds: Int64(try row.int(created) as Int)),
                expires: expires.map { Timestamp(microseconds: Int64($0)) }, photo: photo, photoKept: try row.bool(photoKept))
            let reasonText: String? = try row.string(self.reasons)
            let reasons = (reasonText ?? "").split(separator: ",").compactMap { pair -> (reason: String, count: Int)? in
                let parts = pair.split(separator: "=")
                guard parts.count == 2, let count = Int(parts[1]) else { return nil }
                return (reason: String(parts[0]), count: count)
            }
            let statusText: String = try row.string(status)
            let resolution: String? = try row.string(self.resolution)
            return ModerationItem(
                item: try row.string(item), kind: try row.string(kind), content: content, reports: try row.int(reports), reasons: reasons,
                status: ItemStatus(rawValue: statusText) ?? .open, claimedBy: try row.string(claimedBy), hidden: try row.bool(hidden),
                firstReported: Timestamp(microseconds: Int64(try row.int(firstReported) as Int)),
                lastReported: Timestamp(microseconds: Int64(try row.int(lastReported) as Int)),
                resolution: resolution.flatMap(Resolution.init(rawValue:)))
        }
    }

    static func loadItem(_ connection: PostgresConnection, _ item: String) throws -> ModerationItem {
        let rows = try connection.query("""
            SELECT \(unescaped: itemColumns) FROM moderation_items m LEFT JOIN users c ON c.id = m.claimed_by
            WHERE m.item = \(item)
            """)
        guard let row = rows.first else { throw StoreError.unexpected("a queue item vanished inside its transaction") }
        return try ItemColumns(rows).item(row)
    }

    /// Queue items with the given status (nil: all) and, when given, at least one report for
    /// `reason`; most-reported first, then oldest; `offset` items skipped (paging).
    public func moderationQueue(
        status: ItemStatus?, reason: ReportReason? = nil, limit: Int, offset: Int = 0
    ) async throws -> [ModerationItem] {
        let filter: String
        switch status {
        case .open?: filter = "(m.status = 'open' OR (m.status = 'claimed' AND m.claim_expires <= now()))"
        case .claimed?: filter = "(m.status = 'claimed' AND m.claim_expires > now())"
        case .resolved?: filter = "m.status = 'resolved'"
        case nil: filter = "true"
        }
        return try await mappingErrors {
            let rows = try await pool.query("""
                SELECT \(unescaped: Self.itemColumns) FROM moderation_items m LEFT JOIN users c ON c.id = m.claimed_by
                WHERE \(unescaped: filter)
                  AND (\(reason?.rawValue)::text IS NULL
                       OR EXISTS (SELECT 1 FROM reports r WHERE r.item = m.item AND r.reason = \(reason?.rawValue)))
                ORDER BY m.reports DESC, m.first_reported, m.item LIMIT \(limit) OFFSET \(offset)
                """)
            let columns = try ItemColumns(rows)
            return try rows.map(columns.item)
        }
    }

    /// Claims an item (or the next open one) for `claimSeconds`. Nil when nothing is open.
    /// Two moderators claiming at once never get the same item (`SKIP LOCKED`). A named item is
    /// claimed as `decide` (the board's rule) decides from its facts (nil when it is not in the
    /// queue); the next open one is never the moderator's own content.
    public func claim(
        moderator: Account, item: String?, claimSeconds: Int, request: KeyedWrite<ModerationItem?>? = nil,
        decide: @escaping @Sendable (QueueItemFacts?) throws -> Void
    ) async throws(StoreError) -> ModerationItem? {
        try await moderation(request: request) { connection -> ModerationItem? in
            let target: String
            if let item {
                try decide(try Self.queueItemFacts(connection, item: item))
                target = item
            } else {
                let rows = try connection.query("""
                    SELECT item FROM moderation_items m
                    WHERE (m.status = 'open' OR (m.status = 'claimed' AND m.claim_expires <= now()))
                      AND m.author_id IS DISTINCT FROM \(moderator.id)
                    ORDER BY m.reports DESC, m.first_reported, m.item
                    LIMIT 1 FOR UPDATE SKIP LOCKED
                    """)
                guard let row = rows.first else { return nil }
                target = try row.string("item")
            }
            try connection.query("""
                UPDATE moderation_items SET status = 'claimed', claimed_by = \(moderator.id),
                    claim_expires = now() + make_interval(secs => \(claimSeconds))
                WHERE item = \(target)
                """)
            try Self.log(connection, moderator: moderator.id, action: "claim", item: target, user: nil, note: nil)
            return try Self.loadItem(connection, target)
        }
    }

    /// Decides an item, as `decide` (the board's rule: who may) decides from its facts (nil when
    /// it is not in the queue); a ban of its author as `decideBan` decides from theirs.
    public func resolve(
        moderator: Account, item: String, resolution: Resolution, ban: BanLength, note: String?,
        request: KeyedWrite<ResolveOutcome>? = nil, decide: @escaping @Sendable (QueueItemFacts?) throws -> Void,
        decideBan: @escaping @Sendable (BanTargetFacts?) throws -> Void
    ) async throws(StoreError) -> ResolveOutcome {
        try await moderation(request: request) { connection in
            let facts = try Self.queueItemFacts(connection, item: item)
            try decide(facts)
            let authorID = facts?.authorID
            var refreshPin: String?
            var removedPin: String?
            var note = note
            switch resolution {
            case .dismiss:
                refreshPin = try Self.setContentHidden(connection, item: item, hidden: false)
            case .remove, .ban:
                if resolution == .ban, let authorID {
                    // A moderator's ban never shortens or replaces an admin's: the board's rule
                    // refuses it (RESOLVE … remove still takes the content down).
                    try decideBan(try Self.banTargetFacts(connection, userID: authorID))
                    try Self.setBan(connection, userID: authorID, ban: ban, by: moderator)
                }
                let log = HuntLog()
                if Identifier.isHunt(item) {
                    // A removed hunt's points leave the rankings, as if every player had left it.
                    let players = try Self.takeBackHuntPoints(connection, log, huntID: item)
                    let said = "its points left the rankings (\(players.count) player\(players.count == 1 ? "" : "s"))"
                    note = note.map { "\($0); \(said)" } ?? said
                    (refreshPin, removedPin) = try Self.removeContent(connection, item: item)
                    // A removed hunt completes for no one: its completions and badges go.
                    try Self.settleAchievements(connection, log, huntID: item, users: Set(players))
                } else {
                    (refreshPin, removedPin) = try Self.removeContent(connection, item: item)
                }
                try log.write(on: connection, wakeListeners: true)
            }
            try connection.query("""
                UPDATE moderation_items SET status = 'resolved', resolution = \(resolution.rawValue),
                    resolved_by = \(moderator.id), resolved_at = now(), claimed_by = NULL, claim_expires = NULL,
                    hidden = CASE WHEN \(resolution.rawValue) = 'dismiss' THEN false ELSE hidden END,
                    dismissed = dismissed OR \(resolution.rawValue) = 'dismiss',
                    photo = NULL
                WHERE item = \(item)
                """)
            try Self.log(
                connection, moderator: moderator.id, action: resolution.rawValue, item: item,
                user: resolution == .ban ? authorID : nil, note: note)
            return ResolveOutcome(item: try Self.loadItem(connection, item), refreshPin: refreshPin, removedPin: removedPin)
        }
    }

    // MARK: Bans

    /// Locks a user's row and reads what a ban of them is decided on; nil when there is none.
    static func banTargetFacts(_ connection: PostgresConnection, userID: Int) throws -> BanTargetFacts? {
        try banTargetFacts(connection, rows: connection.query("""
            SELECT id, role, coalesce(banned_until > now() AND banned_by_role = 'admin', false) AS admin_ban
            FROM users WHERE id = \(userID) FOR UPDATE
            """))
    }

    private static func banTargetFacts(_ connection: PostgresConnection, rows: PostgresRows) throws -> BanTargetFacts? {
        guard let row = rows.first else { return nil }
        let roleName: String = try row.string("role")
        guard let role = Role(rawValue: roleName) else { throw StoreError.unexpected("a user's role is \(roleName)") }
        return BanTargetFacts(userID: try row.int("id"), role: role, bannedByAdmin: try row.bool("admin_ban"))
    }

    /// Sets (or with nil lifts) a user's ban, recording whether an admin or a moderator set it.
    static func setBan(_ connection: PostgresConnection, userID: Int, ban: BanLength?, by moderator: Account) throws {
        let role = moderator.user.role == .admin ? Role.admin.rawValue : Role.moderator.rawValue
        switch ban {
        case .permanent?:
            try connection.query("""
                UPDATE users SET banned_until = 'infinity', banned_by_role = \(role) WHERE id = \(userID)
                """)
        case .seconds(let seconds)?:
            try connection.query("""
                UPDATE users SET banned_until = now() + make_interval(secs => \(seconds)), banned_by_role = \(role)
                WHERE id = \(userID)
                """)
        case nil:
            try connection.query("UPDATE users SET banned_until = NULL, banned_by_role = NULL WHERE id = \(userID)")
        }
        // A banned user's sessions stay: they may still read and log out; writes are refused.
    }

    /// Bans (`ban` non-nil) or unbans a user by name, as `decide` (the board's rule) decides from
    /// their facts (nil when no user has that name).
    public func setBan(
        moderator: Account, username: String, ban: BanLength?, note: String?, request: KeyedWrite<Void>? = nil,
        decide: @escaping @Sendable (BanTargetFacts?) throws -> Void
    ) async throws(StoreError) {
        try await moderation(request: request) { connection in
            let facts = try Self.banTargetFacts(connection, rows: connection.query("""
                SELECT id, role, coalesce(banned_until > now() AND banned_by_role = 'admin', false) AS admin_ban
                FROM users WHERE role <> 'guest' AND lower(name) = lower(\(username)) FOR UPDATE
                """))
            try decide(facts)
            guard let userID = facts?.userID else { throw StoreError.unexpected("a ban was decided for no user") }
            try Self.setBan(connection, userID: userID, ban: ban, by: moderator)
            try Self.log(connection, moderator: moderator.id, action: ban == nil ? "unban" : "ban", item: nil, user: userID, note: note)
        }
    }

    // MARK: Deletes

    /// Audits a moderator's (or admin's) DELETE of someone else's pin, in the deleting
    /// transaction, before the pin goes: its evidence snapshot is taken (or the one from its
    /// first report kept), its queue item is resolved as `remove` by `moderator`, and the log
    /// gets a `delete` entry naming the author.
    static func auditDelete(_ connection: PostgresConnection, pin: String, moderator: Int, author: Int) throws {
        try connection.query(snapshotInsert(item: pin))
        try connection.query("""
            UPDATE moderation_items SET status = 'resolved', resolution = 'remove', resolved_by = \(moderator),
                resolved_at = now(), claimed_by = NULL, claim_expires = NULL, photo = NULL
            WHERE item = \(pin)
            """)
        try log(connection, moderator: moderator, action: "delete", item: pin, user: author, note: nil)
    }

    // MARK: The log

    static func log(_ connection: PostgresConnection, moderator: Int, action: String, item: String?, user: Int?, note: String?) throws {
        try connection.query("""
            INSERT INTO moderation_log (moderator_id, action, item, user_id, note)
            VALUES (\(moderator), \(action), \(item), \(user), \(note))
            """)
    }

    /// The log, newest first, before the entry `before` (a cursor from the previous page).
    public func moderationLog(limit: Int, before: Int?) async throws -> (entries: [ModerationLogEntry], next: Int?) {
        try await mappingErrors {
            let rows = try await pool.query("""
                SELECT \(unescaped: Self.logColumns)
                FROM moderation_log l JOIN users m ON m.id = l.moderator_id LEFT JOIN users u ON u.id = l.user_id
                WHERE l.id < \(before ?? Int.max)
                ORDER BY l.id DESC LIMIT \(limit + 1)
                """)
            let columns = try LogColumns(rows)
            let entries = try rows.prefix(limit).map(columns.entry)
            return (entries, rows.count > limit ? entries.last?.id : nil)
        }
    }

    /// A log entry (`l`) with its moderator's (`m`) and user's (`u`) names, each column named
    /// for ``LogColumns``.
    static let logColumns = """
        l.id AS log_id, (extract(epoch FROM l.at) * 1000000)::bigint AS log_at_us, m.name AS log_moderator,
        l.action AS log_action, l.item AS log_item, u.name AS log_user, l.note AS log_note
        """

    /// ``logColumns`` found in one result, to read a log entry from each of its rows.
    struct LogColumns {
        let id, at, moderator, action, item, user, note: PostgresColumn

        init(_ rows: PostgresRows) throws(PostgresError) {
            id = try rows.column("log_id")
            at = try rows.column("log_at_us")
            moderator = try rows.column("log_moderator")
            action = try rows.column("log_action")
            item = try rows.column("log_item")
            user = try rows.column("log_user")
            note = try rows.column("log_note")
        }

        func entry(_ row: PostgresRow) throws -> ModerationLogEntry {
            ModerationLogEntry(
                id: try row.int(id), at: Timestamp(microseconds: Int64(try row.int(at) as Int)), moderator: try row.string(moderator),
                action: try row.string(action), item: try row.string(item), user: try row.string(user), note: try row.string(note))
        }
    }

    /// A photo kept as evidence for a reported pin (for moderators).
    public func evidencePhoto(item: String) async throws(StoreError) -> Photo? {
        try await mappingErrors {
            let rows = try await pool.query(
                "SELECT snap_photo_mime, photo FROM moderation_items WHERE item = \(item) AND photo IS NOT NULL",
                binaryResults: true)
            guard let row = rows.first, let mime = try row.bytes("snap_photo_mime"), let data = try row.bytes("photo") else { return nil }
            return Photo(mime: String(decoding: mime, as: UTF8.self), data: data)
        }
    }
}
