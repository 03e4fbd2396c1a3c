import Postgres
import ScavengerCore

extension Database {
    /// The columns every hunt query selects (from `hunts h JOIN users hu ON hu.id = h.host_id`),
    /// each named for ``HuntColumns``.
    static let huntColumns = """
        h.id AS hunt_id, h.name AS hunt_name, h.description AS hunt_description, h.host_id AS hunt_host_id,
        hu.name AS hunt_host, h.code AS hunt_code, h.ordered AS hunt_ordered, h.public AS hunt_public,
        (extract(epoch FROM h.starts_at) * 1000000)::bigint AS hunt_starts_us,
        (extract(epoch FROM h.ends_at) * 1000000)::bigint AS hunt_ends_us,
        h.duration_s AS hunt_duration_s, h.stop_count AS hunt_stops, h.player_count AS hunt_players,
        (extract(epoch FROM h.created_at) * 1000000)::bigint AS hunt_created_us,
        h.moderation_hidden AS hunt_moderation_hidden, h.removed AS hunt_removed
        """

    static let huntFrom = "hunts h JOIN users hu ON hu.id = h.host_id"

    /// A hunt's end as the clock sees it: `ends_at`, or a started hunt's start plus its DURATION.
    static let huntEnd = "coalesce(h.ends_at, h.starts_at + h.duration_s * interval '1 second')"
    /// A hunt that has not ended.
    static let huntNotEnded = "(\(huntEnd) IS NULL OR \(huntEnd) > now())"
    /// A hunt that is running.
    static let huntRunning = "(h.starts_at <= now() AND \(huntNotEnded))"

    struct HuntColumns {
        let id, name, description, hostID, host, code, ordered, isPublic, starts, ends, duration, stops, players, created: PostgresColumn
        let moderationHidden, removed: PostgresColumn

        init(_ rows: PostgresRows) throws(PostgresError) {
            id = try rows.column("hunt_id")
            name = try rows.column("hunt_name")
            description = try rows.column("hunt_description")
            hostID = try rows.column("hunt_host_id")
            host = try rows.column("hunt_host")
            code = try rows.column("hunt_code")
            ordered = try rows.column("hunt_ordered")
            isPublic = try rows.column("hunt_public")
            starts = try rows.column("hunt_starts_us")
            ends = try rows.column("hunt_ends_us")
            duration = try rows.column("hunt_duration_s")
            stops = try rows.column("hunt_stops")
            players = try rows.column("hunt_players")
            created = try rows.column("hunt_created_us")
            moderationHidden = try rows.column("hunt_moderation_hidden")
            removed = try rows.column("hunt_removed")
        }

        func hunt(_ row: PostgresRow) throws -> HuntRecord {
            let codeText: String = try row.string(code)
            guard let joinCode = JoinCode(typed: codeText) else { throw StoreError.unexpected("a stored join code is malformed") }
            let startsUS: Int? = try row.int(starts)
            let endsUS: Int? = try row.int(ends)
            return HuntRecord(
                id: try row.string(id), name: try row.string(name), description: try row.string(description),
                hostID: try row.int(hostID), hostName: try row.string(host), code: joinCode, ordered: try row.bool(ordered),
                isPublic: try row.bool(isPublic),
                schedule: HuntSchedule(
                    starts: startsUS.map { Timestamp(microseconds: Int64($0)) }, ends: endsUS.map { Timestamp(microseconds: Int64($0)) },
                    durationSeconds: try row.int(duration)),
                stops: try row.int(stops), players: try row.int(players),
                created: Timestamp(microseconds: Int64(try row.int(created) as Int)), moderationHidden: try row.bool(moderationHidden),
                removed: try row.bool(removed))
        }
    }

    static let stopColumns = """
        s.id AS stop_id, s.hunt_id AS stop_hunt, s.n AS stop_n, s.title AS stop_title, s.clue AS stop_clue, s.lat AS stop_lat,
        s.lon AS stop_lon, s.radius_m AS stop_radius, s.points AS stop_points, s.proof AS stop_proof, s.code_hash AS stop_code_hash,
        s.hidden AS stop_hidden, s.found_by AS stop_found_by, s.moderation_hidden AS stop_withheld
        """

    struct StopColumns {
        let id, hunt, n, title, clue, lat, lon, radius, points, proof, codeHash, hidden, foundBy, withheld: PostgresColumn

        init(_ rows: PostgresRows) throws(PostgresError) {
            id = try rows.column("stop_id")
            hunt = try rows.column("stop_hunt")
            n = try rows.column("stop_n")
            title = try rows.column("stop_title")
            clue = try rows.column("stop_clue")
            lat = try rows.column("stop_lat")
            lon = try rows.column("stop_lon")
            radius = try rows.column("stop_radius")
            points = try rows.column("stop_points")
            proof = try rows.column("stop_proof")
            codeHash = try rows.column("stop_code_hash")
            hidden = try rows.column("stop_hidden")
            foundBy = try rows.column("stop_found_by")
            withheld = try rows.column("stop_withheld")
        }

        func stop(_ row: PostgresRow) throws -> StopRecord {
            let proofName: String = try row.string(proof)
            guard let proof = StopProof(rawValue: proofName) else { throw StoreError.unexpected("unknown proof \(proofName)") }
            return StopRecord(
                stop: HuntStop(
                    id: try row.string(id), hunt: try row.string(hunt), n: try row.int(n), title: try row.string(title),
                    clue: try row.string(clue), lat: try row.double(lat), lon: try row.double(lon), radiusMeters: try row.double(radius),
                    points: try row.int(points), proof: proof, foundBy: try row.int(foundBy), hidden: try row.bool(hidden)),
                codeHash: try row.string(codeHash), withheld: try row.bool(withheld))
        }
    }

    static let checkInColumns = """
        c.id AS checkin_id, c.hunt_id AS checkin_hunt, c.stop_id AS checkin_stop, hp.name AS checkin_player,
        c.status AS checkin_status, c.points AS checkin_points, (extract(epoch FROM c.created_at) * 1000000)::bigint AS checkin_at_us,
        c.distance_m AS checkin_distance, c.photo_mime AS checkin_photo_mime, c.photo_bytes AS checkin_photo_bytes,
        c.user_id AS checkin_user, h.host_id AS checkin_host, s.points AS checkin_stop_points,
        c.travel_from_m AS checkin_travel_m, c.travel_seconds AS checkin_travel_s
        """

    /// Check-ins with their player's name, their hunt's host and their stop's points.
    static let checkInFrom = """
        checkins c JOIN hunt_players hp ON hp.hunt_id = c.hunt_id AND hp.user_id = c.user_id
        JOIN hunts h ON h.id = c.hunt_id JOIN hunt_stops s ON s.id = c.stop_id
        """

    struct CheckInColumns {
        let id, hunt, stop, player, status, points, at, distance, photoMime, photoBytes, user, host, stopPoints: PostgresColumn
        let travelMeters, travelSeconds: PostgresColumn

        init(_ rows: PostgresRows) throws(PostgresError) {
            id = try rows.column("checkin_id")
            hunt = try rows.column("checkin_hunt")
            stop = try rows.column("checkin_stop")
            player = try rows.column("checkin_player")
            status = try rows.column("checkin_status")
            points = try rows.column("checkin_points")
            at = try rows.column("checkin_at_us")
            distance = try rows.column("checkin_distance")
            photoMime = try rows.column("checkin_photo_mime")
            photoBytes = try rows.column("checkin_photo_bytes")
            user = try rows.column("checkin_user")
            host = try rows.column("checkin_host")
            stopPoints = try rows.column("checkin_stop_points")
            travelMeters = try rows.column("checkin_travel_m")
            travelSeconds = try rows.column("checkin_travel_s")
        }

        static func travel(_ row: PostgresRow, _ meters: PostgresColumn, _ seconds: PostgresColumn) throws -> Travel? {
            guard let from: Double = try row.double(meters), let elapsed: Double = try row.double(seconds) else { return nil }
            return Travel(fromMeters: from, seconds: elapsed)
        }

        func checkIn(_ row: PostgresRow) throws -> CheckInRecord {
            let statusName: String = try row.string(status)
            guard let status = CheckInStatus(rawValue: statusName) else { throw StoreError.unexpected("unknown status \(statusName)") }
            var photo: PhotoInfo?
            if let mime: String = try row.string(photoMime), let bytes: Int = try row.int(photoBytes) {
                photo = PhotoInfo(mime: mime, bytes: bytes)
            }
            return CheckInRecord(
                checkIn: CheckIn(
                    id: try row.string(id), hunt: try row.string(hunt), stop: try row.string(stop), player: try row.string(player),
                    status: status, points: try row.int(points), at: Timestamp(microseconds: Int64(try row.int(at) as Int)),
                    distanceMeters: try row.double(distance), photo: photo, travel: try Self.travel(row, travelMeters, travelSeconds)),
                userID: try row.int(user), hostID: try row.int(host), stopPoints: try row.int(stopPoints))
        }
    }

    /// The database's clock, to the microsecond.
    static func clock(_ connection: PostgresConnection) throws -> Timestamp {
        let rows = try connection.query("SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint AS now_us")
        return Timestamp(microseconds: Int64(try rows[0].int("now_us") as Int))
    }

    /// Appends a change to the hunts' change log at once, in the caller's transaction: for a
    /// transaction whose last row lock is already taken (a moderator's removal). Hunt writes
    /// append to their ``HuntLog`` instead, written last.
    static func logHuntChange(_ connection: PostgresConnection, hunt: String, _ change: HuntChange) throws {
        let log = HuntLog()
        log.append(hunt: hunt, change)
        try log.write(on: connection, wakeListeners: true)
    }

    /// Runs `body` in a hunt write's transaction, letting a caller's refusal through and rolling
    /// back. A keyed write's key and reply (`request`) are stored after it, and the change-log
    /// entries `body` appended to its ``HuntLog`` last of all (see ``HuntLog`` for the lock order
    /// every body keeps). A deadlock or serialization failure runs the whole of it again.
    func huntTransaction<T: Sendable>(
        request: KeyedWrite<T>? = nil, _ body: @escaping @Sendable (PostgresConnection, HuntLog) throws -> T
    ) async throws(StoreError) -> T {
        let (result, logged) = try await mappingErrors {
            try await pool.transaction { connection in
                let log = HuntLog()
                let result = try body(connection, log)
                try request.record(result, on: connection)
                return (result, try log.write(on: connection))
            }
        }
        // Committed: every daemon's listener hears of it (several commits to one wake-up).
        if logged { huntWakeUps.wake() }
        return result
    }

    /// Takes the player's lock (the first of ``HuntLog``'s order) for the rest of the transaction:
    /// whatever is judged from the player's own history (their last fix, their wrong codes) is
    /// judged one request after the other, whichever daemon each came to.
    static func lockPlayer(_ connection: PostgresConnection, userID: Int) throws {
        try connection.query("SELECT pg_advisory_xact_lock(7470, hashtext(current_schema() || '.' || \(userID)::bigint::text))")
    }

    // MARK: Hunts

    /// Writes a new hunt with its join code, unless a hunt that has not ended holds that code
    /// (``StoreError/conflict(constraint:)`` with `hunts_code`: draw another). The code's check
    /// and the insert run under an advisory lock on the code, so two hunts created at once with
    /// the same code cannot both have it. The host's `POST` token is taken in the same transaction.
    public func createHunt(_ new: NewHunt, request: KeyedWrite<HuntRecord>? = nil) async throws(StoreError) -> HuntRecord {
        try await huntTransaction(request: request) { connection, log in
            try Self.takeRateToken(connection, userID: new.hostID, action: .post, rate: new.rate)
            try connection.query("SELECT pg_advisory_xact_lock(7469, hashtext(\(new.code.text)))")
            let taken = try connection.query("SELECT 1 FROM hunts h WHERE h.code = \(new.code.text) AND \(unescaped: Self.huntNotEnded)")
            if !taken.isEmpty { throw StoreError.conflict(constraint: "hunts_code") }
            try connection.query("""
                INSERT INTO hunts (id, host_id, name, description, code, ordered, public, starts_at, ends_at, duration_s)
                VALUES (\(new.id), \(new.hostID), \(new.name), \(new.description), \(new.code.text), \(new.ordered), \(new.isPublic),
                    'epoch'::timestamptz + \(new.schedule.starts?.microseconds)::bigint * interval '1 microsecond',
                    'epoch'::timestamptz + \(new.schedule.ends?.microseconds)::bigint * interval '1 microsecond',
                    \(new.schedule.durationSeconds)::integer)
                """)
            guard let hunt = try Self.hunt(connection, id: new.id, lock: "") else { throw StoreError.unexpected("a new hunt vanished") }
            return hunt
        }
    }

    static func hunt(_ connection: PostgresConnection, id: String, lock: String) throws -> HuntRecord? {
        let rows = try connection.query("SELECT \(unescaped: huntColumns) FROM \(unescaped: huntFrom) WHERE h.id = \(id) \(unescaped: lock)")
        return try rows.first.map(HuntColumns(rows).hunt)
    }

    /// A hunt by id.
    public func hunt(id: String) async throws(StoreError) -> HuntRecord? {
        try await mappingErrors {
            let rows = try await pool.query("SELECT \(unescaped: Self.huntColumns) FROM \(unescaped: Self.huntFrom) WHERE h.id = \(id)")
            return try rows.first.map(HuntColumns(rows).hunt)
        }
    }

    /// The hunt that holds a join code and has not ended.
    public func hunt(code: JoinCode) async throws(StoreError) -> HuntRecord? {
        try await mappingErrors {
            let rows = try await pool.query("""
                SELECT \(unescaped: Self.huntColumns) FROM \(unescaped: Self.huntFrom)
                WHERE h.code = \(code.text) AND \(unescaped: Self.huntNotEnded)
                """)
            return try rows.first.map(HuntColumns(rows).hunt)
        }
    }

    /// A hunt's stops, in order.
    public func stops(huntID: String) async throws(StoreError) -> [StopRecord] {
        try await mappingErrors {
            let rows = try await pool.query("SELECT \(unescaped: Self.stopColumns) FROM hunt_stops s WHERE s.hunt_id = \(huntID) ORDER BY s.n")
            let columns = try StopColumns(rows)
            return try rows.map(columns.stop)
        }
    }

    /// A stop by id.
    public func stop(id: String) async throws(StoreError) -> StopRecord? {
        try await mappingErrors {
            let rows = try await pool.query("SELECT \(unescaped: Self.stopColumns) FROM hunt_stops s WHERE s.id = \(id)")
            return try rows.first.map(StopColumns(rows).stop)
        }
    }

    /// The hints of a hunt, oldest first.
    public func hints(huntID: String) async throws(StoreError) -> [(text: String, at: Timestamp)] {
        try await mappingErrors {
            let rows = try await pool.query("""
                SELECT body, (extract(epoch FROM at) * 1000000)::bigint AS at_us FROM hunt_hints WHERE hunt_id = \(huntID) ORDER BY at, id
                """)
            return try rows.map { row in (try row.string("body"), Timestamp(microseconds: Int64(try row.int("at_us") as Int))) }
        }
    }

    /// A hunt's players with the position of the hunts' change log they reflect, read in one
    /// statement (one snapshot): every change up to `through` is in them and none after it, since
    /// the log's numbers follow commit order.
    public func playersSnapshot(huntID: String) async throws(StoreError)
        -> (players: [PlayerRecord], through: Int, access: HuntAccessFacts?)
    {
        try await mappingErrors {
            // One snapshot under the log's lock: the players are exactly the log through `through`.
            let rows = try await pool.query("SELECT * FROM hunt_players_snapshot(\(huntID))")
            let through: Int = try rows[0].int("through")
            var access: HuntAccessFacts?
            if let host: Int = try rows[0].int("hunt_host_id") {
                access = HuntAccessFacts(hostID: host, isPublic: try rows[0].bool("hunt_public"), removed: try rows[0].bool("hunt_removed"))
            }
            let user = try rows.column("user_id")
            var players: [PlayerRecord] = []
            for row in rows where try !row.isNull(user) {
                players.append(try Self.player(row))
            }
            return (players, through, access)
        }
    }

    /// A player's standing, each column named for ``player(_:)``.
    static let playerColumns = "user_id, name, points, found, (extract(epoch FROM points_at) * 1000000)::bigint AS at_us"

    /// One player of a hunt, its row locked for the transaction when `forUpdate`; nil when not a player.
    static func player(_ connection: PostgresConnection, hunt: String, user: Int, forUpdate: Bool) throws -> PlayerRecord? {
        let rows = try connection.query("""
            SELECT \(unescaped: playerColumns) FROM hunt_players WHERE hunt_id = \(hunt) AND user_id = \(user)
            \(unescaped: forUpdate ? "FOR UPDATE" : "")
            """)
        return try rows.first.map(player)
    }

    static func player(_ row: PostgresRow) throws -> PlayerRecord {
        let at: Int? = try row.int("at_us")
        return PlayerRecord(
            userID: try row.int("user_id"), name: try row.string("name"), points: try row.int("points"), found: try row.int("found"),
            pointsAt: at.map { Timestamp(microseconds: Int64($0)) })
    }

    /// A player's columns read with `prefix` before each name (`user_id`, `name`, `points`,
    /// `found`, `at_us`) from an outer join: nil when the user is not a player.
    static func player(_ row: PostgresRow, prefix: String) throws -> PlayerRecord? {
        guard let userID: Int = try row.int(prefix + "user_id") else { return nil }
        let at: Int? = try row.int(prefix + "at_us")
        return PlayerRecord(
            userID: userID, name: try row.string(prefix + "name"), points: try row.int(prefix + "points"),
            found: try row.int(prefix + "found"), pointsAt: at.map { Timestamp(microseconds: Int64($0)) })
    }

    /// The caller as a player of a hunt, with the stops they have a check-in at that is not
    /// rejected (`live`) and those accepted (`found`); nil when not a player.
    public func player(huntID: String, userID: Int) async throws(StoreError)
        -> (player: PlayerRecord, live: Set<String>, found: [String])?
    {
        try await mappingErrors {
            let rows = try await pool.query("""
                SELECT \(unescaped: Self.playerColumns) FROM hunt_players WHERE hunt_id = \(huntID) AND user_id = \(userID)
                """)
            guard let row = rows.first else { return nil }
            let player = try Self.player(row)
            let checkIns = try await pool.query("""
                SELECT c.stop_id, c.status FROM checkins c JOIN hunt_stops s ON s.id = c.stop_id
                WHERE c.hunt_id = \(huntID) AND c.user_id = \(userID) AND c.status <> 'rejected'
                ORDER BY s.n
                """)
            var live = Set<String>()
            var found: [String] = []
            for row in checkIns {
                let stop: String = try row.string("stop_id")
                live.insert(stop)
                if try row.string("status") as String == "accepted" { found.append(stop) }
            }
            return (player, live, found)
        }
    }

    /// The finish times of a hunt's players who found every stop (the `at` of their last
    /// accepted check-in), first first.
    public func finishers(huntID: String) async throws(StoreError) -> [String] {
        try await mappingErrors {
            let rows = try await pool.query("""
                SELECT hp.name FROM hunt_players hp JOIN hunts h ON h.id = hp.hunt_id
                JOIN checkins c ON c.hunt_id = hp.hunt_id AND c.user_id = hp.user_id AND c.status = 'accepted'
                WHERE hp.hunt_id = \(huntID) AND h.stop_count > 0
                GROUP BY hp.name, h.stop_count
                HAVING count(*) = h.stop_count
                ORDER BY max(c.accepted_at), hp.name
                """)
            return try rows.map { try $0.string("name") }
        }
    }

    /// Public hunts that have not ended: running first by start, then scheduled by start (by-hand
    /// last), ties by id; a page after `cursor` (the sort key of the last hunt shown). With
    /// `near`, only running hunts with a stop everyone sees (not hidden; in an ordered hunt, the
    /// first; a scheduled hunt's stops only its host sees) within the radius, nearest such stop first (the haversine on NEARBY's sphere), ties by id.
    public func publicHunts(limit: Int, after cursor: HuntListCursor?, near: (lat: Double, lon: Double, radius: Double)?) async throws(StoreError)
        -> [(hunt: HuntRecord, key: HuntListCursor)]
    {
        try await mappingErrors {
            let group = "(CASE WHEN h.starts_at <= now() THEN 0 WHEN h.starts_at IS NOT NULL THEN 1 ELSE 2 END)"
            let startKey = "coalesce((extract(epoch FROM h.starts_at) * 1000000)::bigint, 0)"
            var sql: SQL
            if let near {
                sql = """
                    SELECT * FROM (
                        SELECT \(unescaped: Self.huntColumns), 0 AS list_group, 0::bigint AS list_starts,
                            (SELECT min(6371008.8 * 2 * asin(least(1, sqrt(
                                power(sin(radians(s.lat - \(near.lat)::float8) / 2), 2)
                                + cos(radians(\(near.lat)::float8)) * cos(radians(s.lat)) * power(sin(radians(s.lon - \(near.lon)::float8) / 2), 2)))))
                             FROM hunt_stops s WHERE s.hunt_id = h.id AND NOT s.hidden AND NOT s.moderation_hidden
                                 AND (NOT h.ordered OR s.n = 1)) AS list_distance
                        FROM \(unescaped: Self.huntFrom)
                        WHERE h.public AND NOT h.moderation_hidden AND h.starts_at <= now() AND \(unescaped: Self.huntNotEnded)
                    ) listed WHERE list_distance <= \(near.radius)::float8
                    """
                if let cursor {
                    sql.append(" AND (list_distance, hunt_id) > (\(cursor.distance)::float8, \(cursor.id))")
                }
                sql.append(" ORDER BY list_distance, hunt_id LIMIT \(limit + 1)")
            } else {
                sql = """
                    SELECT \(unescaped: Self.huntColumns), \(unescaped: group) AS list_group, \(unescaped: startKey) AS list_starts,
                        0::float8 AS list_distance
                    FROM \(unescaped: Self.huntFrom)
                    WHERE h.public AND NOT h.moderation_hidden AND \(unescaped: Self.huntNotEnded)
                    """
                if let cursor {
                    sql.append("""
                         AND (\(unescaped: group), \(unescaped: startKey), h.id) > (\(cursor.group)::integer, \(cursor.starts)::bigint, \(cursor.id))
                        """)
                }
                sql.append(" ORDER BY list_group, list_starts, h.id LIMIT \(limit + 1)")
            }
            let rows = try await pool.query(sql)
            let columns = try HuntColumns(rows)
            return try rows.map { row in
                let hunt = try columns.hunt(row)
                let key = HuntListCursor(
                    group: try row.int("list_group"), starts: Int64(try row.int("list_starts") as Int), distance: try row.double("list_distance"),
                    id: hunt.id)
                return (hunt, key)
            }
        }
    }

    /// The hunts a user hosts or plays, any state, newest first, after the hunt `after`.
    public func hunts(of userID: Int, limit: Int, after cursor: (created: Timestamp, id: String)?) async throws(StoreError) -> [HuntRecord] {
        try await mappingErrors {
            var sql: SQL = """
                SELECT \(unescaped: Self.huntColumns) FROM \(unescaped: Self.huntFrom)
                WHERE (h.host_id = \(userID)
                    OR (NOT h.removed AND EXISTS (SELECT 1 FROM hunt_players p WHERE p.hunt_id = h.id AND p.user_id = \(userID))))
                """
            if let cursor {
                sql.append("""
                     AND (h.created_at, h.id) < ('epoch'::timestamptz + \(cursor.created.microseconds)::bigint * interval '1 microsecond', \(cursor.id))
                    """)
            }
            sql.append(" ORDER BY h.created_at DESC, h.id DESC LIMIT \(limit + 1)")
            let rows = try await pool.query(sql)
            let columns = try HuntColumns(rows)
            return try rows.map(columns.hunt)
        }
    }

    /// Changes a hunt under its row lock: `change` (the board's rules) sees the hunt and the
    /// database's clock and returns the new schedule, or throws a refusal. The change is logged
    /// for every daemon. Nil when there is no such hunt.
    public func changeSchedule(
        huntID: String, request: KeyedWrite<HuntRecord?>? = nil,
        _ change: @escaping @Sendable (HuntRecord, Timestamp) throws -> (schedule: HuntSchedule, log: (moderator: Int, action: String)?)
    ) async throws(StoreError) -> HuntRecord? {
        try await huntTransaction(request: request) { connection, log in
            guard let hunt = try Self.hunt(connection, id: huntID, lock: "FOR NO KEY UPDATE OF h") else { return nil }
            let now = try Self.clock(connection)
            let (schedule, moderation) = try change(hunt, now)
            try connection.query("""
                UPDATE hunts SET
                    starts_at = 'epoch'::timestamptz + \(schedule.starts?.microseconds)::bigint * interval '1 microsecond',
                    ends_at = 'epoch'::timestamptz + \(schedule.ends?.microseconds)::bigint * interval '1 microsecond',
                    duration_s = \(schedule.durationSeconds)::integer
                WHERE id = \(huntID)
                """)
            if let moderation {
                try Self.log(connection, moderator: moderation.moderator, action: moderation.action, item: huntID, user: hunt.hostID, note: nil)
            }
            log.append(hunt: huntID, .hunt)
            var changed = hunt
            changed.schedule = schedule
            return changed
        }
    }

    /// Adds a stop at the end of a hunt; `check` (the board's rules) sees the hunt under its row
    /// lock and the clock first. Nil when there is no such hunt.
    public func addStop(
        huntID: String, _ stop: NewStop, request: KeyedWrite<StopRecord?>? = nil,
        check: @escaping @Sendable (HuntRecord, Timestamp) throws -> Void
    ) async throws(StoreError) -> StopRecord? {
        try await huntTransaction(request: request) { connection, log in
            guard let hunt = try Self.hunt(connection, id: huntID, lock: "FOR NO KEY UPDATE OF h") else { return nil }
            try check(hunt, try Self.clock(connection))
            try connection.query("""
                INSERT INTO hunt_stops (id, hunt_id, n, title, clue, lat, lon, radius_m, points, proof, code_hash, hidden)
                VALUES (\(stop.id), \(huntID), \(hunt.stops + 1), \(stop.title), \(stop.clue), \(stop.lat), \(stop.lon), \(stop.radiusMeters),
                    \(stop.points), \(stop.proof.rawValue), \(stop.codeHash), \(stop.hidden))
                """)
            try connection.query("UPDATE hunts SET stop_count = stop_count + 1 WHERE id = \(huntID)")
            let rows = try connection.query("SELECT \(unescaped: Self.stopColumns) FROM hunt_stops s WHERE s.id = \(stop.id)")
            return try StopColumns(rows).stop(rows[0])
        }
    }

    /// Removes a stop; later stops move up one place. `check` sees the hunt under its row lock.
    /// False when there is no such stop.
    public func removeStop(
        id: String, request: KeyedWrite<Bool>? = nil, check: @escaping @Sendable (HuntRecord, Timestamp) throws -> Void
    ) async throws(StoreError) -> Bool {
        try await huntTransaction(request: request) { connection, log in
            let found = try connection.query("SELECT hunt_id, n FROM hunt_stops WHERE id = \(id)")
            guard let row = found.first else { return false }
            let huntID: String = try row.string("hunt_id")
            guard let hunt = try Self.hunt(connection, id: huntID, lock: "FOR NO KEY UPDATE OF h") else { return false }
            try check(hunt, try Self.clock(connection))
            let place: Int = try row.int("n")
            try connection.query("DELETE FROM hunt_stops WHERE id = \(id)")
            try connection.query("UPDATE hunt_stops SET n = n - 1 WHERE hunt_id = \(huntID) AND n > \(place)")
            try connection.query("UPDATE hunts SET stop_count = stop_count - 1 WHERE id = \(huntID)")
            return true
        }
    }

    /// Adds a hint to a hunt; `check` sees the hunt under a share lock. Nil when no such hunt.
    public func addHint(
        huntID: String, text: String, rate: RateLimit? = nil, request: KeyedWrite<Timestamp?>? = nil,
        check: @escaping @Sendable (HuntRecord, Timestamp) throws -> Void
    ) async throws(StoreError) -> Timestamp? {
        try await huntTransaction(request: request) { connection, log in
            guard let hunt = try Self.hunt(connection, id: huntID, lock: "FOR SHARE OF h") else { return nil }
            try check(hunt, try Self.clock(connection))
            try Self.takeRateToken(connection, userID: hunt.hostID, action: .reply, rate: rate)
            let rows = try connection.query("""
                INSERT INTO hunt_hints (hunt_id, body) VALUES (\(huntID), \(text))
                RETURNING (extract(epoch FROM at) * 1000000)::bigint AS at_us
                """)
            let at = Timestamp(microseconds: Int64(try rows[0].int("at_us") as Int))
            log.append(hunt: huntID, .hint(text: text, at: at))
            return at
        }
    }

    // MARK: Players

    /// How JOIN went.
    public enum JoinOutcome: Sendable, Equatable {
        case joined(HuntRecord)
        case unchanged(HuntRecord)
        case renamed(HuntRecord)
    }

    /// Joins (or renames) `userID` as `name`; `check` sees the hunt under its row lock (a join
    /// changes the hunt's count of players, so joins of one hunt are one after the other). A name
    /// another player holds is ``StoreError/conflict(constraint:)`` `hunt_players_name`. Nil when
    /// no such hunt.
    public func join(
        huntID: String, userID: Int, name: String, rate: RateLimit? = nil, request: KeyedWrite<JoinOutcome?>? = nil,
        check: @escaping @Sendable (HuntRecord, Timestamp) throws -> Void
    ) async throws(StoreError) -> JoinOutcome? {
        try await huntTransaction(request: request) { connection, log in
            guard let hunt = try Self.hunt(connection, id: huntID, lock: "FOR NO KEY UPDATE OF h") else { return nil }
            try check(hunt, try Self.clock(connection))
            try Self.takeRateToken(connection, userID: userID, action: .join, rate: rate)
            if let player = try Self.player(connection, hunt: huntID, user: userID, forUpdate: true) {
                if player.name == name { return .unchanged(hunt) }
                try connection.query("UPDATE hunt_players SET name = \(name) WHERE hunt_id = \(huntID) AND user_id = \(userID)")
                log.append(hunt: huntID, .standing(
                    StandingChange(player: name, points: player.points, found: player.found, at: player.pointsAt, userID: userID),
                    renamedFrom: player.name))
                return .renamed(hunt)
            }
            try connection.query("INSERT INTO hunt_players (hunt_id, user_id, name) VALUES (\(huntID), \(userID), \(name))")
            try connection.query("""
                INSERT INTO user_scores AS t (user_id, hunts_played) VALUES (\(userID), 1)
                ON CONFLICT (user_id) DO UPDATE SET hunts_played = t.hunts_played + 1
                """)
            try Self.logCurrentTotals(connection, log, userID: userID)
            try connection.query("UPDATE hunts SET player_count = player_count + 1 WHERE id = \(huntID)")
            log.append(hunt: huntID, .standing(StandingChange(player: name, points: 0, found: 0, at: nil, userID: userID), renamedFrom: nil))
            var joined = hunt
            joined.players += 1
            return .joined(joined)
        }
    }

    /// Takes a player out of a hunt with their check-ins: `found_by` of the stops they had found
    /// drops. `check` sees the hunt under its row lock. False when not a player (or no hunt).
    public func leave(
        huntID: String, userID: Int, rate: RateLimit? = nil, request: KeyedWrite<Bool>? = nil,
        check: @escaping @Sendable (HuntRecord, Timestamp) throws -> Void
    ) async throws(StoreError) -> Bool {
        try await huntTransaction(request: request) { connection, log in
            guard let hunt = try Self.hunt(connection, id: huntID, lock: "FOR NO KEY UPDATE OF h") else { return false }
            try check(hunt, try Self.clock(connection))
            try Self.takeRateToken(connection, userID: userID, action: .join, rate: rate)
            let rows = try connection.query("DELETE FROM hunt_players WHERE hunt_id = \(huntID) AND user_id = \(userID) RETURNING name, found")
            guard let row = rows.first else { return false }
            let name: String = try row.string("name")
            let found: Int = try row.int("found")
            try connection.query("""
                UPDATE hunt_stops s SET found_by = found_by - 1
                FROM checkins c WHERE c.stop_id = s.id AND c.hunt_id = \(huntID) AND c.user_id = \(userID) AND c.status = 'accepted'
                """)
            let counted = try connection.query("""
                DELETE FROM checkins WHERE hunt_id = \(huntID) AND user_id = \(userID)
                RETURNING status, points, (extract(epoch FROM accepted_at) * 1000000)::bigint AS accepted_us
                """)
            // The user's totals lose what this hunt gave them; the totals are logged once all is
            // taken (in between, points of check-ins already deleted would still count).
            var debited: [Timestamp] = []
            for checkIn in counted where try checkIn.string("status") as String == "accepted" {
                let acceptedAt = Timestamp(microseconds: Int64(try checkIn.int("accepted_us") as Int))
                try Self.debitTotals(connection, log, userID: userID, points: try checkIn.int("points"), acceptedAt: acceptedAt, logged: false)
                debited.append(acceptedAt)
            }
            try connection.query("""
                UPDATE user_scores SET hunts_played = hunts_played - 1,
                    hunts_completed = hunts_completed - CASE WHEN \(found) = \(hunt.stops) AND \(hunt.stops) > 0 THEN 1 ELSE 0 END
                WHERE user_id = \(userID)
                """)
            // Logged once all is taken, hunts played included (with no check-in taken, for the
            // profile alone).
            if debited.isEmpty {
                try Self.logCurrentTotals(connection, log, userID: userID)
            } else {
                try Self.logTotals(connection, log, userID: userID, weeks: Set(debited.map(ScoreWeek.init(containing:))))
            }
            try connection.query("UPDATE hunts SET player_count = player_count - 1 WHERE id = \(huntID)")
            log.append(hunt: huntID, .left(player: name, userID: userID))
            return true
        }
    }

    // MARK: Check-ins

    /// Counts a guess of `userID`'s at the code of `stopID` before the code is checked, under the
    /// player's lock (``lockPlayer(_:userID:)``), so that the limit holds however many guesses
    /// arrive at once: `decide` (the board's rule) sees the times of the guesses counted within
    /// the last `windowSeconds` and the database's clock, and refuses or lets this one be
    /// counted. Returns the guess's id, for ``returnCodeGuess(id:)`` when the code was right.
    public func takeCodeGuess(
        stopID: String, userID: Int, windowSeconds: Int,
        decide: @escaping @Sendable (_ counted: [Timestamp], _ now: Timestamp) throws -> Void
    ) async throws(StoreError) -> Int {
        try await huntTransaction { connection, _ in
            try Self.lockPlayer(connection, userID: userID)
            let now = try Self.clock(connection)
            let rows = try connection.query("""
                SELECT (extract(epoch FROM at) * 1000000)::bigint AS at_us FROM code_guesses
                WHERE stop_id = \(stopID) AND user_id = \(userID)
                  AND at > 'epoch'::timestamptz + \(now.microseconds - Int64(windowSeconds) * 1_000_000)::bigint * interval '1 microsecond'
                ORDER BY at
                """)
            try decide(try rows.map { Timestamp(microseconds: Int64(try $0.int("at_us") as Int)) }, now)
            let inserted = try connection.query("""
                INSERT INTO code_guesses (stop_id, user_id, at)
                VALUES (\(stopID), \(userID), 'epoch'::timestamptz + \(now.microseconds)::bigint * interval '1 microsecond')
                RETURNING id
                """)
            return try inserted[0].int("id")
        }
    }

    /// Takes back a guess counted by ``takeCodeGuess(stopID:userID:windowSeconds:decide:)``: the
    /// code was right, and only wrong codes count.
    public func returnCodeGuess(id: Int) async throws(StoreError) {
        try await mappingErrors {
            try await pool.query("DELETE FROM code_guesses WHERE id = \(id)", idempotent: false)
        }
    }

    /// Writes a check-in in one transaction with its consequences: the facts are read under
    /// locks (the hunt shared, so ENDHUNT waits; the player's row, so their check-ins are one at a
    /// time), `judge` (the board's rules) turns them into a verdict or a refusal, and an accepted
    /// check-in adds the stop's points, `found` and `found_by` and logs `found` and `standing`.
    /// A second live check-in at a stop is ``StoreError/conflict(constraint:)`` `checkins_one_live`.
    /// A refusal `judge` counts as a try (too far) commits that try alone. A photo check-in that
    /// is written takes a token of `photoRate` in the same transaction. Nil when there is no such stop.
    public func checkIn(
        _ new: NewCheckIn, photoRate: RateLimit? = nil, request: KeyedWrite<CheckInOutcome?>? = nil,
        judge: @escaping @Sendable (CheckInFacts) throws -> CheckInJudgement
    ) async throws(StoreError) -> CheckInOutcome? {
        try await huntTransaction(request: request) { connection, log in
            // The locks first, in HuntLog's order (`checkin_lock`: the player, the stop's hunt
            // shared so ENDHUNT waits, the caller's player row), then everything the rules judge
            // from in one statement whose snapshot follows them: the stop with its hunt, the
            // caller as its player, the clock, the player's live check-ins in this hunt (place and
            // whether at this stop), the reference fix for the travel check (the latest check-in,
            // in any hunt, that stands or may stand: a flagged jump is no reference for the next
            // one), and their tries at this stop refused as too far.
            try connection.query("SELECT checkin_lock(\(new.userID)::bigint, \(new.stopID))")
            let found = try connection.query("""
                SELECT \(unescaped: Self.stopColumns), \(unescaped: Self.huntColumns),
                    p.user_id AS player_user_id, p.name AS player_name, p.points AS player_points, p.found AS player_found,
                    (extract(epoch FROM p.points_at) * 1000000)::bigint AS player_at_us,
                    (extract(epoch FROM clock_timestamp()) * 1000000)::bigint AS now_us,
                    (SELECT string_agg(ls.n::text || (CASE WHEN c.stop_id = s.id THEN '*' ELSE '' END), ',')
                     FROM checkins c JOIN hunt_stops ls ON ls.id = c.stop_id
                     WHERE c.hunt_id = h.id AND c.user_id = \(new.userID) AND c.status <> 'rejected') AS live,
                    previous.lat AS previous_lat, previous.lon AS previous_lon, previous.at_us AS previous_us,
                    (SELECT string_agg(((extract(epoch FROM t.at) * 1000000)::bigint)::text, ',')
                     FROM checkin_tries t WHERE t.stop_id = s.id AND t.user_id = \(new.userID) AND t.at > now() - interval '1 day') AS tries
                FROM hunt_stops s JOIN hunts h ON h.id = s.hunt_id JOIN users hu ON hu.id = h.host_id
                LEFT JOIN hunt_players p ON p.hunt_id = h.id AND p.user_id = \(new.userID)
                LEFT JOIN LATERAL (
                    SELECT lat, lon, (extract(epoch FROM created_at) * 1000000)::bigint AS at_us FROM checkins
                    WHERE user_id = \(new.userID) AND status IN ('accepted', 'pending') ORDER BY created_at DESC LIMIT 1
                ) AS previous ON true
                WHERE s.id = \(new.stopID)
                """)
            guard let factsRow = found.first else { return nil }
            let stop = try StopColumns(found).stop(factsRow).stop
            let hunt = try HuntColumns(found).hunt(factsRow)
            let player = try Self.player(factsRow, prefix: "player_")
            var facts = CheckInFacts(
                hunt: hunt, stop: stop, player: player, hasLiveCheckIn: false, nextStop: nil, previous: nil,
                now: Timestamp(microseconds: Int64(try factsRow.int("now_us") as Int)))
            if player != nil {
                var places = Set<Int>()
                let live: String? = try factsRow.string("live")
                for item in (live ?? "").split(separator: ",") {
                    let here = item.hasSuffix("*")
                    guard let place = Int(here ? item.dropLast() : item) else { throw StoreError.unexpected("a live check-in's place is not a number") }
                    places.insert(place)
                    if here { facts.hasLiveCheckIn = true }
                }
                facts.nextStop = (1 ... max(1, hunt.stops)).first { !places.contains($0) }
                if let lat: Double = try factsRow.double("previous_lat"), let lon: Double = try factsRow.double("previous_lon"),
                   let at: Int = try factsRow.int("previous_us") {
                    facts.previous = (lat, lon, Timestamp(microseconds: Int64(at)))
                }
                let tries: String? = try factsRow.string("tries")
                facts.tooFarTries = try (tries ?? "").split(separator: ",").map { item in
                    guard let at = Int64(item) else { throw StoreError.unexpected("a too-far try's time is not a number") }
                    return Timestamp(microseconds: at)
                }
            }
            let verdict: CheckInVerdict
            switch try judge(facts) {
            case .write(let judged):
                verdict = judged
            case .refuseCountingTry(let refusal):
                try connection.query("""
                    INSERT INTO checkin_tries (stop_id, user_id, at)
                    VALUES (\(stop.id), \(new.userID), 'epoch'::timestamptz + \(facts.now.microseconds)::bigint * interval '1 microsecond')
                    """)
                return .refused(refusal)
            }
            guard let player else { throw StoreError.unexpected("a check-in was judged for someone who is not a player") }
            if new.photo != nil { try Self.takeRateToken(connection, userID: new.userID, action: .photo, rate: photoRate) }
            // The row, its photo and an accepted one's credit in one call (`checkin_write`).
            let written = try connection.query("""
                SELECT * FROM checkin_write(\(new.id), \(hunt.id), \(stop.id), \(new.userID)::bigint, \(verdict.status.rawValue),
                    \(verdict.points)::integer, \(new.lat)::double precision, \(new.lon)::double precision,
                    \(new.accuracyMeters)::double precision, \(verdict.distanceMeters)::double precision, \(new.photo?.mime),
                    \(new.photo?.data)::bytea, \(verdict.travel?.fromMeters)::double precision, \(verdict.travel?.seconds)::double precision,
                    \(hunt.stops)::integer)
                """)[0]
            let at = Timestamp(microseconds: Int64(try written.int("at_us") as Int))
            let standing = try Self.standing(written, at: "at_points_us")
            if verdict.status == .accepted {
                log.append(hunt: "", .totals(try Self.userTotals(written, prefix: "t_")))
                log.append(hunt: hunt.id, .found(player: player.name, stop: stop.id, points: verdict.points))
                log.append(hunt: hunt.id, .standing(standing, renamedFrom: nil))
            }
            let checkIn = CheckIn(
                id: new.id, hunt: hunt.id, stop: stop.id, player: player.name, status: verdict.status, points: verdict.points, at: at,
                distanceMeters: verdict.distanceMeters, photo: new.photo.map { PhotoInfo(mime: $0.mime, bytes: $0.data.count) },
                travel: verdict.travel)
            return .written(CheckInWrite(checkIn: checkIn, standing: standing, rank: 1 + (try written.int("ahead") as Int)))
        }
    }

    /// Adds an accepted check-in's points to its player and its stop's `found_by`.
    /// Adds an accepted check-in's points to its player in the hunt, to its stop's `found_by` and
    /// to the user's totals (all-time and that week's; a hunt whose every stop they have now found
    /// counts as completed). In the caller's transaction, before its change-log entries.
    static func credit(
        _ connection: PostgresConnection, _ log: HuntLog, hunt: String, stops: Int, stop: String, userID: Int, points: Int, at: Timestamp
    ) throws -> StandingChange {
        try connection.query("UPDATE hunt_stops SET found_by = found_by + 1 WHERE id = \(stop)")
        let rows = try connection.query("""
            UPDATE hunt_players SET points = points + \(points), found = found + 1,
                points_at = CASE WHEN \(points) > 0 THEN 'epoch'::timestamptz + \(at.microseconds)::bigint * interval '1 microsecond' ELSE points_at END
            WHERE hunt_id = \(hunt) AND user_id = \(userID)
            RETURNING user_id, name, points, found, (extract(epoch FROM points_at) * 1000000)::bigint AS at_us
            """)
        let standing = try standing(rows[0])
        // Before the credit, whose answer (the totals logged) includes it.
        if standing.found == stops {
            try connection.query("UPDATE user_scores SET hunts_completed = hunts_completed + 1 WHERE user_id = \(userID)")
        }
        let totals = try connection.query("""
            SELECT * FROM score_credit(\(userID)::bigint, \(points)::integer,
                'epoch'::timestamptz + \(at.microseconds)::bigint * interval '1 microsecond')
            """)
        log.append(hunt: "", .totals(try userTotals(totals[0])))
        return standing
    }

    /// Takes an accepted check-in (accepted at `acceptedAt`, worth `points`, already rejected or
    /// deleted) out of the user's totals, all-time and its week's; logs the totals it left unless
    /// the caller logs them after more (``logTotals(_:userID:weeks:)``).
    static func debitTotals(_ connection: PostgresConnection, _ log: HuntLog, userID: Int, points: Int, acceptedAt: Timestamp, logged: Bool = true) throws {
        let totals = try connection.query("""
            SELECT * FROM score_debit(\(userID)::bigint, \(points)::integer,
                'epoch'::timestamptz + \(acceptedAt.microseconds)::bigint * interval '1 microsecond')
            """)
        if logged { log.append(hunt: "", .totals(try userTotals(totals[0]))) }
    }

    /// Logs the user's totals as they stand, with this week's (by PostgreSQL's clock): after a
    /// change of the hunts they play and nothing else.
    static func logCurrentTotals(_ connection: PostgresConnection, _ log: HuntLog, userID: Int) throws {
        let totals = try connection.query("SELECT * FROM score_totals_of(\(userID)::bigint, score_week(now()))")
        log.append(hunt: "", .totals(try userTotals(totals[0])))
    }

    /// Logs the user's totals as they stand, once for each of `weeks` (each entry with that
    /// week's totals), in week order.
    static func logTotals(_ connection: PostgresConnection, _ log: HuntLog, userID: Int, weeks: Set<ScoreWeek>) throws {
        for week in weeks.sorted() {
            let totals = try connection.query("""
                SELECT * FROM score_totals_of(\(userID)::bigint, date '1970-01-01' + \(week.mondayDay)::integer)
                """)
            log.append(hunt: "", .totals(try userTotals(totals[0])))
        }
    }

    /// The totals `score_credit` and `score_debit` answer (the type `score_totals`), each column
    /// named with `prefix` before it.
    static func userTotals(_ row: PostgresRow, prefix: String = "") throws -> UserTotals {
        func standing(_ points: String, _ found: String, _ at: String) throws -> Leaderboard.Standing {
            let instant: Int? = try row.int(prefix + at)
            return Leaderboard.Standing(
                points: try row.int(prefix + points), found: try row.int(prefix + found), at: instant.map { Timestamp(microseconds: Int64($0)) })
        }
        guard let week = ScoreWeek(mondayDay: try row.int(prefix + "week_day")) else {
            throw StoreError.unexpected("a week of scores that does not start on a Monday")
        }
        guard let role = Role(rawValue: try row.string(prefix + "role")) else { throw StoreError.unexpected("a user with an unknown role") }
        return UserTotals(
            user: try row.string(prefix + "name"), allTime: try standing("points", "found", "points_at_us"), week: week,
            weekly: try standing("week_points", "week_found", "week_at_us"), huntsPlayed: try row.int(prefix + "hunts_played"),
            huntsCompleted: try row.int(prefix + "hunts_completed"), role: role)
    }

    /// A player's standing from a row of `user_id`, `name`, `points`, `found` and the time of
    /// the points in microseconds (column `at`).
    static func standing(_ row: PostgresRow, at atColumn: String = "at_us") throws -> StandingChange {
        let at: Int? = try row.int(atColumn)
        return StandingChange(
            player: try row.string("name"), points: try row.int("points"), found: try row.int("found"),
            at: at.map { Timestamp(microseconds: Int64($0)) }, userID: try row.int("user_id"))
    }

    /// A check-in by id.
    public func checkIn(id: String) async throws(StoreError) -> CheckInRecord? {
        try await mappingErrors {
            let rows = try await pool.query("SELECT \(unescaped: Self.checkInColumns) FROM \(unescaped: Self.checkInFrom) WHERE c.id = \(id)")
            return try rows.first.map(CheckInColumns(rows).checkIn)
        }
    }

    /// A check-in's photo.
    public func checkInPhoto(id: String) async throws(StoreError) -> Photo? {
        try await mappingErrors {
            let rows = try await pool.query("""
                SELECT c.photo_mime, p.data FROM checkins c JOIN checkin_photos p ON p.checkin_id = c.id WHERE c.id = \(id)
                """, binaryResults: true)
            guard let row = rows.first, let mime = try row.bytes("photo_mime"), let data = try row.bytes("data") else { return nil }
            return Photo(mime: String(decoding: mime, as: UTF8.self), data: data)
        }
    }

    /// A hunt's pending and flagged check-ins, oldest first, after `after` (the last one shown).
    public func checkInsToReview(huntID: String, limit: Int, after cursor: (at: Timestamp, id: String)?) async throws(StoreError) -> [CheckIn] {
        try await mappingErrors {
            var sql: SQL = """
                SELECT \(unescaped: Self.checkInColumns) FROM \(unescaped: Self.checkInFrom)
                WHERE c.hunt_id = \(huntID) AND c.status IN ('pending', 'flagged')
                """
            if let cursor {
                sql.append("""
                     AND (c.created_at, c.id) > ('epoch'::timestamptz + \(cursor.at.microseconds)::bigint * interval '1 microsecond', \(cursor.id))
                    """)
            }
            sql.append(" ORDER BY c.created_at, c.id LIMIT \(limit + 1)")
            let rows = try await pool.query(sql)
            let columns = try CheckInColumns(rows)
            return try rows.map { try columns.checkIn($0).checkIn }
        }
    }

    /// Reviews a check-in under its row lock: `decide` (the board's rules) sees it, its hunt and
    /// the clock and returns its new status and points. Points move with the status: an approval
    /// credits them, a rejection of an accepted check-in takes them back (and the player's `at`
    /// becomes that of their latest remaining check-in that earned points). Nil when no such
    /// check-in.
    public func review(
        checkInID: String, request: KeyedWrite<(checkIn: CheckIn, standing: StandingChange)?>? = nil,
        decide: @escaping @Sendable (ReviewFacts) throws -> ReviewDecision
    ) async throws(StoreError) -> (checkIn: CheckIn, standing: StandingChange)? {
        try await huntTransaction(request: request) { connection, log in
            // The hunt's row before the check-in's (the order of ``HuntLog``): its hunt is read
            // first without a lock (a check-in never moves to another hunt).
            let owner = try connection.query("SELECT hunt_id FROM checkins WHERE id = \(checkInID)")
            guard let ownerRow = owner.first else { return nil }
            let huntID: String = try ownerRow.string("hunt_id")
            guard let hunt = try Self.hunt(connection, id: huntID, lock: "FOR SHARE OF h") else { return nil }
            let rows = try connection.query("""
                SELECT \(unescaped: Self.checkInColumns) FROM \(unescaped: Self.checkInFrom) WHERE c.id = \(checkInID) FOR UPDATE OF c
                """)
            guard let row = rows.first else { return nil }
            let record = try CheckInColumns(rows).checkIn(row)
            let decision = try decide(ReviewFacts(checkIn: record, hunt: hunt, now: try Self.clock(connection)))
            guard let player = try Self.player(connection, hunt: hunt.id, user: record.userID, forUpdate: true) else {
                throw StoreError.unexpected("a check-in's player is not in its hunt")
            }
            var standing = StandingChange(
                player: player.name, points: player.points, found: player.found, at: player.pointsAt, userID: player.userID)
            let wasAccepted = record.checkIn.status == .accepted
            let nowAccepted = decision.status == .accepted
            let accepted = try connection.query("""
                SELECT (extract(epoch FROM accepted_at) * 1000000)::bigint AS accepted_us FROM checkins WHERE id = \(checkInID)
                """)
            let acceptedUS: Int? = try accepted[0].int("accepted_us")
            // One instant for the check-in's acceptance and the standings it moves.
            let at = try Self.clock(connection)
            try connection.query("""
                UPDATE checkins SET status = \(decision.status.rawValue), points = \(decision.points),
                    accepted_at = CASE WHEN \(nowAccepted)
                        THEN coalesce(accepted_at, 'epoch'::timestamptz + \(at.microseconds)::bigint * interval '1 microsecond') END,
                    reviewed_by = \(decision.logAs?.moderator), review_note = \(decision.note)
                WHERE id = \(checkInID)
                """)
            var checkIn = record.checkIn
            checkIn.status = decision.status
            checkIn.points = decision.points
            if nowAccepted, !wasAccepted {
                standing = try Self.credit(
                    connection, log, hunt: hunt.id, stops: hunt.stops, stop: checkIn.stop, userID: record.userID, points: decision.points, at: at)
                log.append(hunt: hunt.id, .found(player: player.name, stop: checkIn.stop, points: decision.points))
            } else if wasAccepted, !nowAccepted {
                try connection.query("UPDATE hunt_stops SET found_by = found_by - 1 WHERE id = \(checkIn.stop)")
                let updated = try connection.query("""
                    UPDATE hunt_players SET points = points - \(record.checkIn.points), found = found - 1,
                        points_at = (SELECT max(accepted_at) FROM checkins
                                     WHERE hunt_id = \(hunt.id) AND user_id = \(record.userID) AND status = 'accepted' AND points > 0)
                    WHERE hunt_id = \(hunt.id) AND user_id = \(record.userID)
                    RETURNING user_id, name, points, found, (extract(epoch FROM points_at) * 1000000)::bigint AS at_us
                    """)
                standing = try Self.standing(updated[0])
                // Before the debit, whose answer (the totals logged) includes it.
                if player.found == hunt.stops {
                    try connection.query("UPDATE user_scores SET hunts_completed = hunts_completed - 1 WHERE user_id = \(record.userID)")
                }
                if let acceptedUS {
                    try Self.debitTotals(
                        connection, log, userID: record.userID, points: record.checkIn.points, acceptedAt: Timestamp(microseconds: Int64(acceptedUS)))
                }
            }
            if let log = decision.logAs {
                try Self.log(connection, moderator: log.moderator, action: log.action, item: checkInID, user: record.userID, note: decision.note)
            }
            if wasAccepted != nowAccepted {
                log.append(hunt: hunt.id, .standing(standing, renamedFrom: nil))
            }
            return (checkIn, standing)
        }
    }

    // MARK: The chat

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

    // MARK: The change log

    /// Changes after `seq`, in order, at most `limit`, and how far `expire` has trimmed the log:
    /// when `trimmedThrough` is past `seq`, changes after `seq` may be gone.
    public func huntChanges(after seq: Int, limit: Int) async throws(StoreError) -> (changes: [LoggedHuntChange], trimmedThrough: Int) {
        try await mappingErrors {
            // The trim mark rides on the rows: with none after `seq` the log is continuous (trimming
            // always keeps the newest entry, so a trim past `seq` leaves rows after it).
            // A complete prefix (`hunt_changes_after` reads under the log's lock, exclusively).
            let rows = try await pool.query("SELECT * FROM hunt_changes_after(\(seq)::bigint, \(limit)::integer)")
            let changes = try rows.map { row in
                let kind: String = try row.string("kind")
                let payload: String = try row.string("payload")
                let hunt: String = try row.string("hunt_id")
                guard let change = HuntChangeCoding.decode(kind: kind, payload: payload, hunt: hunt) else {
                    throw StoreError.unexpected("a hunt change of kind \(kind) cannot be read: \(payload)")
                }
                return LoggedHuntChange(seq: try row.int("seq"), hunt: hunt, change: change)
            }
            return (changes, try rows.first.map { try $0.int("trimmed_through") } ?? 0)
        }
    }

    /// Deletes hunt change-log entries and wrong codes older than `keepSeconds` (keeping the
    /// newest entry, so a daemon's place stays findable); returns how many log entries went.
    public func trimHuntChanges(keepSeconds: Int, limit: Int) async throws(StoreError) -> Int {
        try await mappingErrors {
            try await pool.query("""
                DELETE FROM code_guesses WHERE ctid IN (
                    SELECT ctid FROM code_guesses WHERE at < now() - make_interval(secs => \(keepSeconds)) LIMIT \(limit))
                """, idempotent: false)
            try await pool.query("""
                DELETE FROM checkin_tries WHERE ctid IN (
                    SELECT ctid FROM checkin_tries WHERE at < now() - make_interval(secs => \(keepSeconds)) LIMIT \(limit))
                """, idempotent: false)
            return try await trimChangeLog("hunt_changes", mark: "hunt_changes_trimmed", keepSeconds: keepSeconds, limit: limit)
        }
    }

    /// The last position of the hunts' change log (0 when empty).
    public func lastHuntChange() async throws(StoreError) -> Int {
        try await mappingErrors {
            let rows = try await pool.query("SELECT hunt_changes_through() AS seq")
            return try rows[0].int("seq")
        }
    }
}
