import Postgres
import ScavengerCore

extension Database {
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
        // Committed: numbered soon, which wakes every daemon's listener (several commits to one
        // numbering).
        if logged { huntNumbering.number() }
        return result
    }

    /// Takes the player's lock (the first of ``HuntLog``'s order) for the rest of the transaction:
    /// whatever is judged from the player's own history (their last fix, their wrong codes) is
    /// judged one request after the other, whichever daemon each came to.
    static func lockPlayer(_ connection: PostgresConnection, userID: Int) throws {
        try connection.query("SELECT lock_player(\(userID)::bigint)")
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
                INSERT INTO hunts (id, host_id, name, description, code, ordered, public, starts_at, ends_at, duration_s,
                    team_size, trial_s, badge_name, guests)
                VALUES (\(new.id), \(new.hostID), \(new.name), \(new.description), \(new.code.text), \(new.ordered), \(new.isPublic),
                    'epoch'::timestamptz + \(new.schedule.starts?.microseconds)::bigint * interval '1 microsecond',
                    'epoch'::timestamptz + \(new.schedule.ends?.microseconds)::bigint * interval '1 microsecond',
                    \(new.schedule.durationSeconds)::integer, \(new.teamSize)::integer, \(new.trialSeconds)::integer, \(new.badgeName),
                    \(new.guests)::integer)
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
}
