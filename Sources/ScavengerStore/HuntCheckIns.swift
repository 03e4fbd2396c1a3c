import Postgres
import ScavengerCore

// Check-ins: wrong codes, the check-in's transaction, the credit it gives, reviews.
extension Database {
    /// Counts a guess of `userID`'s at the code of `stopID` before the code is checked, under the
    /// player's lock (``lockPlayer(_:userID:)``), so that the limit holds however many guesses
    /// arrive at once: `decide` (the board's rule) sees the times of the guesses counted within
    /// the last `windowSeconds` and the database's clock, and refuses or lets this one be
    /// counted. Returns the guess's id, for ``returnCodeGuess(id:)`` when the code was right.
    /// `decide` sees first the player's trial clock (nil outside a time trial), so that no code
    /// is compared or counted once their time is up.
    public func takeCodeGuess(
        stopID: String, userID: Int, windowSeconds: Int,
        decide: @escaping @Sendable (_ counted: [Timestamp], _ now: Timestamp, _ trial: TrialClockFacts?) throws -> Void
    ) async throws(StoreError) -> Int {
        try await huntTransaction { connection, _ in
            try Self.lockPlayer(connection, userID: userID)
            let now = try Self.clock(connection)
            let clocks = try connection.query("""
                SELECT h.trial_s, p.team_id IS NOT NULL AS in_team,
                    CASE WHEN p.team_id IS NOT NULL
                        THEN (SELECT (extract(epoch FROM t.trial_started_at) * 1000000)::bigint FROM hunt_teams t WHERE t.id = p.team_id)
                        ELSE (SELECT (extract(epoch FROM min(c.created_at)) * 1000000)::bigint FROM checkins c
                              WHERE c.hunt_id = h.id AND c.user_id = p.user_id AND c.status <> 'rejected') END AS started_us
                FROM hunt_stops s JOIN hunts h ON h.id = s.hunt_id LEFT JOIN hunt_players p ON p.hunt_id = h.id AND p.user_id = \(userID)
                WHERE s.id = \(stopID) AND h.trial_s IS NOT NULL
                """)
            let trial = try clocks.first.map { row in
                let started: Int? = try row.int("started_us")
                return TrialClockFacts(
                    seconds: try row.int("trial_s"), startedAt: started.map { Timestamp(microseconds: Int64($0)) }, team: try row.bool("in_team"))
            }
            let rows = try connection.query("""
                SELECT (extract(epoch FROM at) * 1000000)::bigint AS at_us FROM code_guesses
                WHERE stop_id = \(stopID) AND user_id = \(userID)
                  AND at > 'epoch'::timestamptz + \(now.microseconds - Int64(windowSeconds) * 1_000_000)::bigint * interval '1 microsecond'
                ORDER BY at
                """)
            try decide(try rows.map { Timestamp(microseconds: Int64(try $0.int("at_us") as Int)) }, now, trial)
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
    ///
    /// A check-in, keyed or not, with a photo or not, is written in a group with other players'
    /// (``CheckInGroups``): judged on its own facts, answered with its own outcome (its key stored
    /// with it), but committed in one transaction with them.
    /// The written check-in's rank is its side's on `board` (the stop's hunt's, as the daemon
    /// holds it when the check-in is written) with the standings the write left.
    public func checkIn(
        _ new: NewCheckIn, board: @escaping @Sendable () -> Leaderboard = { Leaderboard() }, photoRate: RateLimit? = nil, request: KeyedWrite<CheckInOutcome?>? = nil,
        judge: @escaping @Sendable (CheckInFacts) throws -> CheckInJudgement
    ) async throws(StoreError) -> CheckInOutcome? {
        let pending = PendingCheckIn(new: new, judge: judge, request: request, photoRate: photoRate, board: board)
        if let groups = checkInGroups {
            return try await groups.write(pending).get()
        }
        return try await writeCheckInsAlone(pending)
    }

    /// One check-in in a transaction of its own (with its key, its photo's token).
    func writeCheckInsAlone(_ pending: PendingCheckIn) async throws(StoreError) -> CheckInOutcome? {
        try await huntTransaction(request: pending.request) { connection, log in
            try Self.writeCheckIns([pending], connection, log)[0].get()
        }
    }

    /// Writes check-ins of distinct players in the caller's transaction, appending their changes
    /// to `log`: each one's outcome (nil: no such stop), or the refusal its `judge` threw. A
    /// failed statement throws, and then nothing of the group may be committed.
    ///
    /// The locks first, all at once in one order (`checkin_lock_all`: the players, the stops'
    /// hunts shared so ENDHUNT waits, the callers' player rows; HuntLog's order), then everything
    /// the rules judge from in one statement whose snapshot follows them: each stop with its hunt,
    /// the caller as its player, the clock, the player's live check-ins in the hunt (place and
    /// whether at this stop), the reference fix for the travel check (the latest check-in, in
    /// any hunt, that stands or may stand: a flagged jump is no reference for the next one), and
    /// their tries at the stop refused as too far. Then each is judged, the refused-as-too-far
    /// tries are counted, and the verdicts written one after the other in one call, in the
    /// group's order (the order they arrived: of two players tied on points, the first ranks first).
    static func writeCheckIns(
        _ group: [PendingCheckIn], _ connection: PostgresConnection, _ log: HuntLog
    ) throws -> [Result<CheckInOutcome?, StoreError>] {
        let users = PostgresArray.text(group.map { String($0.new.userID) })
        let stops = PostgresArray.text(group.map(\.new.stopID))
        try connection.query("SELECT checkin_lock_all(\(users)::bigint[], \(stops)::text[])")
        let found = try connection.query("""
            SELECT v.n, \(unescaped: Self.stopColumns), \(unescaped: Self.huntColumns),
                p.user_id AS player_user_id, p.name AS player_name, p.points AS player_points, p.found AS player_found,
                (extract(epoch FROM p.points_at) * 1000000)::bigint AS player_at_us,
                (extract(epoch FROM clock_timestamp()) * 1000000)::bigint AS now_us,
                (SELECT string_agg(ls.n::text || (CASE WHEN c.stop_id = s.id THEN '*' ELSE '' END), ',')
                 FROM checkins c JOIN hunt_stops ls ON ls.id = c.stop_id
                 WHERE c.hunt_id = h.id AND c.user_id = v.user_id AND c.status <> 'rejected') AS live,
                p.team_id AS player_team_id,
                (SELECT string_agg(ls.n::text || (CASE WHEN c.stop_id = s.id THEN '*' ELSE '' END), ',')
                 FROM checkins c JOIN hunt_stops ls ON ls.id = c.stop_id
                 WHERE c.team_id = p.team_id AND c.status <> 'rejected') AS team_live,
                (SELECT (extract(epoch FROM min(c.created_at)) * 1000000)::bigint FROM checkins c
                 WHERE h.trial_s IS NOT NULL AND p.team_id IS NULL AND c.hunt_id = h.id AND c.user_id = v.user_id AND c.status <> 'rejected') AS trial_start_us,
                (SELECT (extract(epoch FROM t.trial_started_at) * 1000000)::bigint FROM hunt_teams t
                 WHERE h.trial_s IS NOT NULL AND t.id = p.team_id) AS team_trial_start_us, s.finds_ever > 0 AS stop_found_ever,
                previous.lat AS previous_lat, previous.lon AS previous_lon, previous.at_us AS previous_us,
                (SELECT string_agg(((extract(epoch FROM t.at) * 1000000)::bigint)::text, ',')
                 FROM checkin_tries t WHERE t.stop_id = s.id AND t.user_id = v.user_id AND t.at > now() - interval '1 day') AS tries
            FROM unnest(\(users)::bigint[], \(stops)::text[]) WITH ORDINALITY AS v(user_id, stop_id, n)
            JOIN hunt_stops s ON s.id = v.stop_id JOIN hunts h ON h.id = s.hunt_id JOIN users hu ON hu.id = h.host_id
            LEFT JOIN hunt_players p ON p.hunt_id = h.id AND p.user_id = v.user_id
            LEFT JOIN LATERAL (
                SELECT c.lat, c.lon, (extract(epoch FROM c.created_at) * 1000000)::bigint AS at_us FROM checkins c
                WHERE c.user_id = v.user_id AND c.status IN ('accepted', 'pending') ORDER BY c.created_at DESC LIMIT 1
            ) AS previous ON true
            ORDER BY v.n
            """)
        var outcomes = [Result<CheckInOutcome?, StoreError>](repeating: .success(nil), count: group.count)
        var tries: [(index: Int, at: Timestamp)] = []
        var verdicts: [(index: Int, facts: CheckInFacts, player: PlayerRecord, verdict: CheckInVerdict)] = []
        let stopColumns = try StopColumns(found), huntColumns = try HuntColumns(found)
        // A team's stops taken by check-ins judged before in this group, and when its clock
        // started if one of them started it: the facts of a later member's check-in include them
        // (its team's row lock is the group's, so nothing else changes them meanwhile).
        var teamTaken: [Int: (places: Set<Int>, started: Timestamp)] = [:]
        // Whether each one's stop was ever found before the group (for pathfinder).
        var foundEver: [Int: Bool] = [:]
        for row in found {
            let index = (try row.int("n") as Int) - 1
            guard group.indices.contains(index) else { throw StoreError.unexpected("a check-in's facts for no check-in") }
            foundEver[index] = try row.bool("stop_found_ever")
            var (facts, places) = try Self.checkInFacts(row, stopColumns: stopColumns, huntColumns: huntColumns)
            if let team = facts.teamID, let taken = teamTaken[team] {
                if taken.places.contains(facts.stop.n) { facts.teamHasCheckIn = true }
                let all = places.union(taken.places)
                facts.nextStop = (1 ... max(1, facts.hunt.stops)).first { !all.contains($0) }
                if facts.hunt.trialSeconds != nil, facts.trialStartedAt == nil { facts.trialStartedAt = taken.started }
            }
            let judgement: CheckInJudgement
            do {
                judgement = try group[index].judge(facts)
            } catch {
                outcomes[index] = .failure(error as? StoreError ?? .refused(error))
                continue
            }
            switch judgement {
            case .write(let verdict):
                guard let player = facts.player else {
                    throw StoreError.unexpected("a check-in was judged for someone who is not a player")
                }
                // A photo takes its token once it is to be written; a player out of tokens is
                // refused alone (the statement answered; any other failure fails the group).
                if group[index].new.photo != nil {
                    do {
                        try Self.takeRateToken(connection, userID: group[index].new.userID, action: .photo, rate: group[index].photoRate)
                    } catch StoreError.rateLimited(let wait) {
                        outcomes[index] = .failure(.rateLimited(retryAfterSeconds: wait))
                        continue
                    }
                }
                if let team = facts.teamID {
                    teamTaken[team, default: (places: [], started: facts.now)].places.insert(facts.stop.n)
                }
                verdicts.append((index, facts, player, verdict))
            case .refuseCountingTry(let refusal):
                tries.append((index, facts.now))
                outcomes[index] = .success(.refused(refusal))
            }
        }
        if !tries.isEmpty {
            let micros = PostgresArray.text(tries.map { String($0.at.microseconds) })
            try connection.query("""
                INSERT INTO checkin_tries (stop_id, user_id, at)
                SELECT v.stop_id, v.user_id, 'epoch'::timestamptz + v.at_us * interval '1 microsecond'
                FROM unnest(\(PostgresArray.text(tries.map { group[$0.index].new.stopID }))::text[],
                    \(PostgresArray.text(tries.map { String(group[$0.index].new.userID) }))::bigint[], \(micros)::bigint[]) AS v(stop_id, user_id, at_us)
                """)
        }
        guard !verdicts.isEmpty else { return outcomes }
        let written: PostgresRows
        if verdicts.count == 1 {
            let (index, facts, _, verdict) = verdicts[0]
            let new = group[index].new
            written = try connection.query("""
                SELECT 1 AS n, * FROM checkin_write(\(new.id), \(facts.hunt.id), \(facts.stop.id), \(new.userID)::bigint,
                    \(facts.teamID)::bigint, \(verdict.status.rawValue),
                    \(verdict.points)::integer, \(new.lat)::double precision, \(new.lon)::double precision,
                    \(new.accuracyMeters)::double precision, \(verdict.distanceMeters)::double precision, \(new.photo?.mime),
                    \(new.photo?.data.count)::integer, \(verdict.travel?.fromMeters)::double precision,
                    \(verdict.travel?.seconds)::double precision)
                """)
        } else {
            func column(_ value: (PendingCheckIn, CheckInFacts, CheckInVerdict) -> String?) -> String {
                PostgresArray.text(verdicts.map { value(group[$0.index], $0.facts, $0.verdict) })
            }
            written = try connection.query("""
                SELECT * FROM checkin_write_all(
                    \(column { p, _, _ in p.new.id })::text[], \(column { _, f, _ in f.hunt.id })::text[],
                    \(column { _, f, _ in f.stop.id })::text[], \(column { p, _, _ in String(p.new.userID) })::bigint[],
                    \(column { _, f, _ in f.teamID.map(String.init) })::bigint[],
                    \(column { _, _, v in v.status.rawValue })::text[], \(column { _, _, v in String(v.points) })::integer[],
                    \(column { p, _, _ in String(p.new.lat) })::double precision[], \(column { p, _, _ in String(p.new.lon) })::double precision[],
                    \(column { p, _, _ in String(p.new.accuracyMeters) })::double precision[],
                    \(column { _, _, v in String(v.distanceMeters) })::double precision[],
                    \(column { p, _, _ in p.new.photo?.mime })::text[], \(column { p, _, _ in p.new.photo.map { String($0.data.count) } })::integer[],
                    \(column { _, _, v in v.travel.map { String($0.fromMeters) } })::double precision[],
                    \(column { _, _, v in v.travel.map { String($0.seconds) } })::double precision[])
                """)
        }
        // The photos' bytes, each bound as it is (not in an array's text).
        for (index, _, _, _) in verdicts {
            guard let photo = group[index].new.photo else { continue }
            // The dimensions read at the write go on the check-in's row in the same statement.
            try connection.query("""
                WITH sized AS (
                    UPDATE checkins SET photo_width = \(photo.dimensions?.width)::integer, photo_height = \(photo.dimensions?.height)::integer
                    WHERE id = \(group[index].new.id)
                )
                INSERT INTO checkin_photos (checkin_id, data) VALUES (\(group[index].new.id), \(photo.data)::bytea)
                """)
        }
        guard written.count == verdicts.count else { throw StoreError.unexpected("check-ins written and judged differ in number") }
        // A team trial's clock starts at its first live check-in and stays on the team's row (the
        // first of the group's for a team whose clock had not started).
        for (number, item) in verdicts.enumerated() where item.facts.hunt.trialSeconds != nil && item.facts.trialStartedAt == nil {
            guard let teamID = item.facts.teamID else { continue }
            let created: Int = try written[number].int("at_us")
            try connection.query("""
                UPDATE hunt_teams SET trial_started_by = \(group[item.index].new.id),
                    trial_started_at = 'epoch'::timestamptz + \(created)::bigint * interval '1 microsecond'
                WHERE id = \(teamID)::bigint AND trial_started_at IS NULL
                """)
        }
        // The teams' standings as the group leaves them (their log entries after the players').
        let teamLog = HuntLog()
        let teams = try Self.refreshTeams(connection, teamLog, Set(verdicts.compactMap(\.facts.teamID)))
        var accepted: [(facts: CheckInFacts, player: PlayerRecord, checkIn: String, found: Int, allTimeFound: Int, foundEver: Bool)] = []
        // Each hunt's players' standings written before in the group, in order; each team's hunt.
        var groupStandings: [String: [(side: String, standing: Leaderboard.Standing)]] = [:]
        var boards: [String: Leaderboard] = [:]
        let teamHunts = Dictionary(verdicts.compactMap { item in item.facts.teamID.map { ($0, item.facts.hunt.id) } }) { first, _ in first }
        for row in written {
            let number = (try row.int("n") as Int) - 1
            guard verdicts.indices.contains(number) else { throw StoreError.unexpected("a check-in written that was not judged") }
            let (index, facts, player, verdict) = verdicts[number]
            let new = group[index].new
            let at = Timestamp(microseconds: Int64(try row.int("at_us") as Int))
            var standing = try Self.standing(row, at: "at_points_us")
            if facts.hunt.trialSeconds != nil {
                // A time trial's times: the clock started at the earliest live check-in (this one
                // when there was none), and an accepted check-in is the player's latest.
                standing.trialFirst = facts.trialStartedAt ?? at
                standing.trialLast = verdict.status == .accepted ? at : nil
            }
            if verdict.status == .accepted {
                log.append(hunt: "", .totals(try Self.userTotals(row, prefix: "t_")))
                log.append(hunt: facts.hunt.id, .found(player: player.name, stop: facts.stop.id, points: verdict.points))
                log.append(hunt: facts.hunt.id, .standing(standing, renamedFrom: nil))
                let sideFound = facts.teamID.flatMap { teams[$0]?.found } ?? standing.found
                accepted.append((facts, player, new.id, sideFound, try row.int("t_found"), foundEver[index] ?? false))
            } else {
                // Pending (a photo) or flagged: the hunt's reviewers hear that it waits.
                log.append(hunt: facts.hunt.id, .review(checkIn: new.id, status: verdict.status))
            }
            let checkIn = CheckIn(
                id: new.id, hunt: facts.hunt.id, stop: facts.stop.id, player: player.name, status: verdict.status,
                points: verdict.points, at: at, distanceMeters: verdict.distanceMeters,
                photo: new.photo.map(PhotoInfo.init(storing:)), travel: verdict.travel)
            // The rank: the hunt's board as the daemon holds it now, with what the group wrote.
            let board = boards[facts.hunt.id] ?? group[index].board()
            boards[facts.hunt.id] = board
            if let teamID = facts.teamID, let team = teams[teamID] {
                // A team hunt: the score is the team's, ranked among teams (the group's other
                // teams of the hunt as the group left them).
                var teamStanding = StandingChange(player: team.team, points: team.points, found: team.found, at: team.at)
                teamStanding.trialFirst = team.trialFirst
                teamStanding.trialLast = team.trialLast
                let others = teams.filter { $0.key != teamID && teamHunts[$0.key] == facts.hunt.id }.sorted { $0.key < $1.key }
                    .map { (side: $0.value.team, standing: Self.boardStanding($0.value)) }
                let rank = board.rank(of: team.team, with: Self.boardStanding(team), after: others)
                outcomes[index] = .success(.written(CheckInWrite(checkIn: checkIn, standing: teamStanding, rank: rank)))
                continue
            }
            // A player's: a time trial's check-in that is not accepted leaves the standing as it was.
            let changed: Leaderboard.Standing? = facts.hunt.trialSeconds != nil && verdict.status != .accepted
                ? nil : Leaderboard.Standing(points: standing.points, found: standing.found, at: standing.at, trialTime: standing.trialTime)
            let rank = board.rank(of: player.name, with: changed, after: groupStandings[facts.hunt.id, default: []])
            if let changed { groupStandings[facts.hunt.id, default: []].append((player.name, changed)) }
            outcomes[index] = .success(.written(CheckInWrite(checkIn: checkIn, standing: standing, rank: rank)))
        }
        log.append(contentsOf: teamLog)
        // The firsts the accepted ones earn (each one's stop found before it: as read under the
        // group's locks, or by one accepted before it in the group), then the achievements that
        // follow each side's state, settled for its players (a team's members), last.
        let before = BadgeRules.foundBefore(stops: accepted.map(\.facts.stop.id), foundAtStart: accepted.map(\.foundEver))
        var firsts: [(userID: Int, player: String, award: BadgeAward)] = []
        for (item, foundBefore) in zip(accepted, before) {
            firsts += BadgeRules.firsts(BadgeFacts(
                checkIn: item.checkIn, hunt: item.facts.hunt.id, players: item.facts.hunt.players, stopFoundBefore: foundBefore))
                .map { (item.player.userID, item.player.name, $0) }
        }
        try Self.award(connection, log, firsts)
        var settled = Set<String>()
        for item in accepted where Achievements.mayChangeOnCredit(sideFound: item.found, stops: item.facts.hunt.stops, allTimeFound: item.allTimeFound) {
            let users = item.facts.teamID.flatMap { teams[$0]?.memberIDs } ?? [item.player.userID]
            guard settled.insert("\(item.facts.hunt.id) \(item.facts.teamID.map(String.init) ?? "u\(item.player.userID)")").inserted else { continue }
            try Self.settleAchievements(connection, log, huntID: item.facts.hunt.id, users: Set(users), checkIn: item.checkIn)
        }
        return outcomes
    }

    /// A team's standing as a board holds it.
    private static func boardStanding(_ team: TeamStandingChange) -> Leaderboard.Standing {
        Leaderboard.Standing(points: team.points, found: team.found, at: team.at, trialTime: team.trialTime, members: team.members)
    }

    /// A check-in's facts from its row of ``writeCheckIns(_:_:_:)``'s read, with the
    /// places of the stops its player (in a team hunt, its team) has a live check-in at.
    private static func checkInFacts(
        _ row: PostgresRow, stopColumns: StopColumns, huntColumns: HuntColumns
    ) throws -> (facts: CheckInFacts, places: Set<Int>) {
        let stop = try stopColumns.stop(row).stop
        let hunt = try huntColumns.hunt(row)
        let player = try Self.player(row, prefix: "player_")
        var facts = CheckInFacts(
            hunt: hunt, stop: stop, player: player, hasLiveCheckIn: false, nextStop: nil, previous: nil,
            now: Timestamp(microseconds: Int64(try row.int("now_us") as Int)))
        guard player != nil else { return (facts, []) }
        /// The places in a list of `n` or `n*` (`*`: at this stop), and whether one is here.
        func places(_ column: String) throws -> (places: Set<Int>, here: Bool) {
            var places = Set<Int>()
            var here = false
            for item in (try row.string(column) as String? ?? "").split(separator: ",") {
                let isHere = item.hasSuffix("*")
                guard let place = Int(isHere ? item.dropLast() : item) else {
                    throw StoreError.unexpected("a live check-in's place is not a number")
                }
                places.insert(place)
                if isHere { here = true }
            }
            return (places, here)
        }
        let own = try places("live")
        facts.hasLiveCheckIn = own.here
        var placesTaken = own.places
        facts.teamID = try row.int("player_team_id")
        if facts.teamID != nil {
            // A team hunt: the team's stops count (its order, its live check-ins).
            let team = try places("team_live")
            facts.teamHasCheckIn = team.here
            placesTaken = team.places
        }
        facts.nextStop = (1 ... max(1, hunt.stops)).first { !placesTaken.contains($0) }
        if let lat: Double = try row.double("previous_lat"), let lon: Double = try row.double("previous_lon"),
           let at: Int = try row.int("previous_us") {
            facts.previous = (lat, lon, Timestamp(microseconds: Int64(at)))
        }
        if let start: Int = try row.int(facts.teamID == nil ? "trial_start_us" : "team_trial_start_us") {
            facts.trialStartedAt = Timestamp(microseconds: Int64(start))
        }
        let tries: String? = try row.string("tries")
        facts.tooFarTries = try (tries ?? "").split(separator: ",").map { item in
            guard let at = Int64(item) else { throw StoreError.unexpected("a too-far try's time is not a number") }
            return Timestamp(microseconds: at)
        }
        return (facts, placesTaken)
    }

    /// A time trial player's times as their check-ins stand in the caller's transaction: their
    /// earliest check-in that is accepted, pending or flagged, and their latest accepted one.
    static func trialTimes(_ connection: PostgresConnection, hunt: String, userID: Int) throws -> (first: Timestamp?, last: Timestamp?) {
        let rows = try connection.query("""
            SELECT (extract(epoch FROM min(created_at)) * 1000000)::bigint AS first_us,
                (extract(epoch FROM max(created_at) FILTER (WHERE status = 'accepted')) * 1000000)::bigint AS last_us
            FROM checkins WHERE hunt_id = \(hunt) AND user_id = \(userID) AND status <> 'rejected'
            """)
        let first: Int? = try rows[0].int("first_us"), last: Int? = try rows[0].int("last_us")
        return (first.map { Timestamp(microseconds: Int64($0)) }, last.map { Timestamp(microseconds: Int64($0)) })
    }

    /// Adds an accepted check-in's points to its player in the hunt, to its stop's `found_by`
    /// and `finds_ever`, and to the user's totals (all-time and that week's). In the
    /// caller's transaction, before its change-log entries. Answers the player's standing and
    /// the user's totals after it, and whether the stop was ever found before (for pathfinder).
    static func credit(
        _ connection: PostgresConnection, _ log: HuntLog, hunt: String, stop: String, userID: Int, points: Int, at: Timestamp
    ) throws -> (standing: StandingChange, totals: UserTotals, stopFoundBefore: Bool) {
        let stopRows = try connection.query("""
            UPDATE hunt_stops SET found_by = found_by + 1, finds_ever = finds_ever + 1 WHERE id = \(stop) RETURNING finds_ever > 1 AS before
            """)
        let stopFoundBefore: Bool = try stopRows.first?.bool("before") ?? false
        let rows = try connection.query("""
            UPDATE hunt_players SET points = points + \(points), found = found + 1,
                points_at = CASE WHEN \(points) > 0 THEN 'epoch'::timestamptz + \(at.microseconds)::bigint * interval '1 microsecond' ELSE points_at END
            WHERE hunt_id = \(hunt) AND user_id = \(userID)
            RETURNING user_id, name, points, found, (extract(epoch FROM points_at) * 1000000)::bigint AS at_us
            """)
        let standing = try standing(rows[0])
        let totals = try connection.query("""
            SELECT * FROM score_credit(\(userID)::bigint, \(points)::integer,
                'epoch'::timestamptz + \(at.microseconds)::bigint * interval '1 microsecond')
            """)
        let userTotals = try userTotals(totals[0])
        log.append(hunt: "", .totals(userTotals))
        return (standing, userTotals, stopFoundBefore)
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
}
