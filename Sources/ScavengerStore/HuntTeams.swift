import Postgres
import ScavengerCore

// Team hunts' teams: their standings as every daemon loads them, and as writes leave them.
extension Database {
    /// A team hunt's teams with the position of the hunts' change log they reflect, in one
    /// statement under the log's lock (as ``playersSnapshot(huntID:)``); nil when the hunt is not
    /// a team hunt (or there is no such hunt), read without that lock.
    public func teamsSnapshot(huntID: String) async throws(StoreError)
        -> (teams: [TeamStandingChange], through: Int, access: HuntAccessFacts?, trial: Bool)?
    {
        try await mappingErrors {
            let rows = try await pool.query("SELECT * FROM hunt_team_board_snapshot(\(huntID))")
            guard let first = rows.first, try first.int("hunt_team_size") as Int? != nil, let host: Int = try first.int("hunt_host_id") else {
                return nil
            }
            let access = HuntAccessFacts(hostID: host, isPublic: try first.bool("hunt_public"), removed: try first.bool("hunt_removed"))
            let trial = try first.int("hunt_trial_s") as Int? != nil
            var teams: [TeamStandingChange] = []
            for row in rows {
                guard let name: String = try row.string("team_name") else { continue }
                if teams.last?.team != name {
                    let at: Int? = try row.int("at_us")
                    var team = TeamStandingChange(
                        team: name, points: try row.int("points"), found: try row.int("found"),
                        at: at.map { Timestamp(microseconds: Int64($0)) }, members: [], memberIDs: [])
                    let first: Int? = try row.int("trial_first_us"), last: Int? = try row.int("trial_last_us")
                    team.trialFirst = first.map { Timestamp(microseconds: Int64($0)) }
                    team.trialLast = last.map { Timestamp(microseconds: Int64($0)) }
                    teams.append(team)
                }
                if let user: Int = try row.int("user_id") {
                    teams[teams.count - 1].members.append(try row.string("name"))
                    teams[teams.count - 1].memberIDs.append(user)
                }
            }
            return (teams, try first.int("through"), access, trial)
        }
    }

    /// Sets the standings of `teams` (ids) from their accepted check-ins and logs each one as it
    /// now stands (members, times), in id order; answers them by id. In the caller's transaction, which holds the teams' rows (a check-in's
    /// locks) or their hunt's for update (JOIN, LEAVE).
    @discardableResult
    static func refreshTeams(_ connection: PostgresConnection, _ log: HuntLog, _ teams: Set<Int>) throws -> [Int: TeamStandingChange] {
        guard !teams.isEmpty else { return [:] }
        let ids = PostgresArray.text(teams.sorted().map(String.init))
        let rows = try connection.query("SELECT * FROM team_refresh(\(ids)::bigint[])")
        var refreshed: [Int: TeamStandingChange] = [:]
        for row in rows {
            let at: Int? = try row.int("at_us")
            let members: String = try row.string("members"), memberIDs: String = try row.string("member_ids")
            var team = TeamStandingChange(
                team: try row.string("name"), points: try row.int("points"), found: try row.int("found"),
                at: at.map { Timestamp(microseconds: Int64($0)) }, members: try PostgresArray.parseText(members),
                memberIDs: try PostgresArray.parseText(memberIDs).map { text in
                    guard let id = Int(text) else { throw StoreError.unexpected("a team member's id is not a number") }
                    return id
                })
            let first: Int? = try row.int("trial_first_us"), last: Int? = try row.int("trial_last_us")
            team.trialFirst = first.map { Timestamp(microseconds: Int64($0)) }
            team.trialLast = last.map { Timestamp(microseconds: Int64($0)) }
            refreshed[try row.int("team_id")] = team
            log.append(hunt: try row.string("hunt_id"), .team(team))
        }
        return refreshed
    }

    /// The team a player of a hunt plays for (its id and name); nil when none. In the caller's transaction.
    static func team(_ connection: PostgresConnection, hunt: String, user: Int) throws -> (id: Int, name: String)? {
        let rows = try connection.query("""
            SELECT t.id, t.name FROM hunt_players p JOIN hunt_teams t ON t.id = p.team_id
            WHERE p.hunt_id = \(hunt) AND p.user_id = \(user)
            """)
        guard let row = rows.first else { return nil }
        return (try row.int("id"), try row.string("name"))
    }
}
