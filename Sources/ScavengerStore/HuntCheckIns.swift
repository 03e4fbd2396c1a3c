import Postgres
import ScavengerCore

// Check-ins: wrong codes, the check-in's transaction, the credit it gives, reviews.
extension Database {
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

    /// Takes accepted check-ins (already deleted or rejected) out of the user's totals, all-time
    /// and their weeks', in one statement (`score_debit_all`); the caller logs the totals after.
    static func debitAllTotals(_ connection: PostgresConnection, userID: Int, _ debited: [(points: Int, at: Timestamp)]) throws {
        guard !debited.isEmpty else { return }
        // Arrays as PostgreSQL's text form: whole numbers, and times as microseconds since the epoch.
        let points = "{" + debited.map { String($0.points) }.joined(separator: ",") + "}"
        let micros = "{" + debited.map { String($0.at.microseconds) }.joined(separator: ",") + "}"
        try connection.query("""
            SELECT score_debit_all(\(userID)::bigint, \(points)::integer[],
                ARRAY(SELECT 'epoch'::timestamptz + m * interval '1 microsecond' FROM unnest(\(micros)::bigint[]) WITH ORDINALITY AS u(m, i) ORDER BY i))
            """)
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
}
