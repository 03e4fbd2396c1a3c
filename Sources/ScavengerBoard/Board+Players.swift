import ScavengerCore
import ScavengerStore
import Sodium

// JOIN and LEAVE: the game's rules (GameRules) judge them from the facts the store reads.

extension Board {
    // MARK: Players

    /// JOIN by code or by a public hunt's id, as the username or `name`; in a team hunt for
    /// `team` (made when the hunt has none of that name; another team's player moves to it).
    public func join(
        _ codeOrID: String, as name: String?, team: String? = nil, by session: Session, request: RequestKey<HuntView>? = nil
    ) async throws(BoardError) -> HuntView {
        try await replaying(request, by: session) { () async throws(BoardError) -> HuntView in
            if let name {
                try guardedNow { try Validation.playerName(name) }
            }
            if let team {
                try guardedNow { try Validation.teamName(team) }
            }
            return try await guarded {
                let account = try await writer(of: session)
                let record: HuntRecord
                if Identifier.isHunt(codeOrID) {
                    guard let found = try await store.hunt(id: codeOrID), found.isPublic || found.hostID == account.id, !found.removed else {
                        throw Self.noSuchHunt
                    }
                    record = found
                } else {
                    record = try await hunt(byCode: codeOrID, from: session.address)
                }
                let playerName = name ?? account.user.name
                let view: @Sendable (Database.JoinOutcome) -> HuntView = { [clock] outcome in
                    switch outcome {
                    case .joined(let hunt), .unchanged(let hunt), .renamed(let hunt): HuntView(hunt: hunt.hunt(at: clock.now), code: nil)
                    }
                }
                let made = MadeInTransaction<HuntView>()
                let keyed = try keyedWrite(request, userID: account.id, made: made) { (outcome: Database.JoinOutcome?) in outcome.map(view) }
                do {
                    let joinRate = rate(.join, for: account.user.role)
                    guard let outcome = try await charging(.join, joinRate, { try await store.join(
                        huntID: record.id, userID: account.id, name: playerName, team: team, rate: joinRate, request: keyed,
                        check: { hunt, now, left in
                            try Self.rule {
                                try GameRules.join(JoinFacts(
                                    mode: hunt.mode, state: hunt.schedule.state(at: now), isHost: hunt.hostID == account.id, team: team, left: left))
                            }
                        },
                        checkTeam: { [maximumTeams = rules.hunts.maximumTeams] facts in
                            try Self.rule {
                                try GameRules.joinTeam(facts, largest: record.teamSize ?? HuntLimits.defaultTeamSize, maximumTeams: maximumTeams)
                            }
                        }) }) else { throw Self.noSuchHunt }
                    await applyOwnHuntWrite()
                    return made.value { view(outcome) }
                } catch StoreError.conflict(constraint: "hunt_players_name") {
                    throw BoardError(.conflict, "another player of this hunt is named \(playerName)")
                } catch StoreError.conflict(constraint: "hunt_teams_name") {
                    // Two made the same team at once (joins of a hunt are one at a time, so this
                    // is a safety net): the next JOIN finds it.
                    throw BoardError(.conflict, "another player is making the team \(team ?? "") right now; JOIN again")
                }
            }
        }
    }

    /// LEAVE: a player leaves a hunt before it ends, with their check-ins and points.
    public func leave(huntID: String, by session: Session, request: RequestKey<Void>? = nil) async throws(BoardError) {
        try await replaying(request, by: session) { () async throws(BoardError) in
            try await guarded {
                let account = try await player(of: session)
                guard Identifier.isHunt(huntID) else { throw Self.noSuchHunt }
                let keyed = try keyedWrite(request, userID: account.id) { (left: Bool) in left ? () : nil }
                let joinRate = rate(.join, for: account.user.role)
                let left = try await charging(.join, joinRate) {
                    try await store.leave(huntID: huntID, userID: account.id, rate: joinRate, request: keyed) { hunt, now in
                        try Self.rule { try GameRules.leave(mode: hunt.mode, state: hunt.schedule.state(at: now)) }
                    }
                }
                guard left else { throw BoardError(.notFound, "you are not a player of this hunt") }
                await applyOwnHuntWrite()
            }
        }
    }
}
