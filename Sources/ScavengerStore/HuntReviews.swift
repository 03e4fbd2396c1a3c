import Postgres
import ScavengerCore

// Reviews of check-ins (APPROVE, REJECT): the status and points move together, and what follows
// the side's state is settled last.
extension Database {
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
            // In a team hunt, the team it was made for (its row before the player's: HuntLog's
            // order), with the check-in that started its trial clock.
            let teamRows = try connection.query("""
                SELECT t.id, t.trial_started_by FROM checkins c JOIN hunt_teams t ON t.id = c.team_id WHERE c.id = \(checkInID) FOR NO KEY UPDATE OF t
                """)
            let teamID: Int? = try teamRows.first?.int("id")
            let clockStartedBy: String? = try teamRows.first?.string("trial_started_by")
            guard let player = try Self.player(connection, hunt: hunt.id, user: record.userID, forUpdate: true) else {
                throw StoreError.unexpected("a check-in's player is not in its hunt")
            }
            var standing = StandingChange(
                player: player.name, points: player.points, found: player.found, at: player.pointsAt, userID: player.userID)
            var loggedStanding = false
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
                let credited = try Self.credit(
                    connection, log, hunt: hunt.id, stop: checkIn.stop, userID: record.userID, points: decision.points, at: at)
                standing = credited.standing
                log.append(hunt: hunt.id, .found(player: player.name, stop: checkIn.stop, points: decision.points))
                if hunt.trialSeconds != nil {
                    (standing.trialFirst, standing.trialLast) = try Self.trialTimes(connection, hunt: hunt.id, userID: record.userID)
                }
                log.append(hunt: hunt.id, .standing(standing, renamedFrom: nil))
                loggedStanding = true
                // The firsts the approval earns (after its standing in the log, as a check-in's).
                let firsts = BadgeRules.firsts(BadgeFacts(
                    checkIn: checkInID, hunt: hunt.id, players: hunt.players, stopFoundBefore: credited.stopFoundBefore))
                try Self.award(connection, log, firsts.map { (record.userID, player.name, $0) })
            } else if wasAccepted, !nowAccepted {
                // A rejected find was never one: the stop's next first find may be its pathfinder.
                try connection.query("UPDATE hunt_stops SET found_by = found_by - 1, finds_ever = finds_ever - 1 WHERE id = \(checkIn.stop)")
                let updated = try connection.query("""
                    UPDATE hunt_players SET points = points - \(record.checkIn.points), found = found - 1,
                        points_at = (SELECT max(accepted_at) FROM checkins
                                     WHERE hunt_id = \(hunt.id) AND user_id = \(record.userID) AND status = 'accepted' AND points > 0)
                    WHERE hunt_id = \(hunt.id) AND user_id = \(record.userID)
                    RETURNING user_id, name, points, found, (extract(epoch FROM points_at) * 1000000)::bigint AS at_us
                    """)
                standing = try Self.standing(updated[0])
                if let acceptedUS {
                    try Self.debitTotals(
                        connection, log, userID: record.userID, points: record.checkIn.points, acceptedAt: Timestamp(microseconds: Int64(acceptedUS)))
                }
            }
            if decision.status == .rejected {
                // The firsts that check-in earned go with it.
                try Self.takeBackFirsts(connection, userID: record.userID, checkIn: checkInID)
                // A team trial's clock moves only when the check-in that started it is rejected:
                // to the team's earliest remaining live check-in (none: not started).
                if let teamID, hunt.trialSeconds != nil, GameRules.trialClockMoves(rejecting: checkInID, startedBy: clockStartedBy) {
                    try connection.query("""
                        UPDATE hunt_teams t SET (trial_started_at, trial_started_by) = (
                            SELECT c.created_at, c.id FROM checkins c WHERE c.team_id = t.id AND c.status <> 'rejected'
                            ORDER BY c.created_at, c.id LIMIT 1)
                        WHERE t.id = \(teamID)::bigint
                        """)
                }
            }
            // A team's standing (and a trial team's times) move with any review.
            let team = try teamID.flatMap { try Self.refreshTeams(connection, log, [$0])[$0] }
            if let log = decision.logAs {
                try Self.log(connection, moderator: log.moderator, action: log.action, item: checkInID, user: record.userID, note: decision.note)
            }
            if hunt.trialSeconds != nil, !loggedStanding {
                // A time trial's times move with any review (a rejected first check-in no longer
                // starts the clock), so its standing is logged after every one.
                (standing.trialFirst, standing.trialLast) = try Self.trialTimes(connection, hunt: hunt.id, userID: record.userID)
                log.append(hunt: hunt.id, .standing(standing, renamedFrom: nil))
            } else if wasAccepted != nowAccepted, !loggedStanding {
                log.append(hunt: hunt.id, .standing(standing, renamedFrom: nil))
            }
            if wasAccepted != nowAccepted {
                // What follows the side's state follows it, for every player of the side.
                try Self.settleAchievements(
                    connection, log, huntID: hunt.id, users: Set(team?.memberIDs ?? [record.userID]), checkIn: nowAccepted ? checkInID : nil)
            }
            return (checkIn, standing)
        }
    }
}
