import ScavengerCore
import ScavengerStore
import Sodium

/// A guest who joined (`JOIN code AS name GUEST`): the hunt, the guest session's token (stored
/// only hashed) and the guest's user object.
public struct GuestSignIn: Sendable, Equatable {
    public var hunt: HuntView
    public var token: String
    public var user: User
}

// Guests (protocol 1.5): players of one hunt without an account. The rules are the game's
// (``GameRules/joinAsGuest(_:)``, ``GameRules/guestMay(_:guestHunt:)``,
// ``GameRules/guestSessionIsLive(huntEnd:now:)``); these use cases read the facts and apply them.
extension Board {
    /// `JOIN code AS name GUEST` on a connection with no login: a guest of the hunt that holds
    /// `code`, named `name` (username rules, unique in the hunt), for `team` in a team hunt; the
    /// connection is logged in as the guest. A code that finds nothing counts against the
    /// address's JOIN guesses as any JOIN's does; a right one never does.
    public func joinAsGuest(_ code: String, as name: String, team: String? = nil, on session: Session) async throws(BoardError) -> GuestSignIn {
        guard session.login == nil else {
            throw BoardError(.badArgument, "GUEST is for joining without an account: LOGOUT first, or JOIN without GUEST")
        }
        try guardedNow { try Validation.playerName(name) }
        if let team { try guardedNow { try Validation.teamName(team) } }
        guard !Identifier.isHunt(code) else { throw BoardError(.badArgument, "a guest joins with the hunt's join code, not its id") }
        return try await guarded {
            let record = try await hunt(byCode: code, from: session.address)
            let token = SecureRandom.token()
            let tokenHash = Digest.sha256(token)
            let now = clock.now
            // The session outlives the hunt by a day (GameRules says when it stops working, EXTEND
            // included); its row must live at least that long.
            var ttl = Int64(rules.sessionTTLSeconds)
            if let end = record.schedule.settled(at: now).ends {
                ttl = max(ttl, (end.microseconds - now.microseconds) / 1_000_000 + GameRules.guestSessionAfterEndSeconds)
            }
            do {
                guard let joined = try await store.joinAsGuest(
                    huntID: record.id, name: name, team: team, tokenHash: tokenHash, sessionTTLSeconds: Int(ttl),
                    check: { hunt, now, guests in
                        try Self.rule {
                            try GameRules.joinAsGuest(GuestJoinFacts(
                                mode: hunt.mode, state: hunt.schedule.state(at: now), team: team, allowed: hunt.guests, guests: guests))
                        }
                    },
                    checkTeam: { [maximumTeams = rules.hunts.maximumTeams] facts in
                        try Self.rule {
                            try GameRules.joinTeam(facts, largest: record.teamSize ?? HuntLimits.defaultTeamSize, maximumTeams: maximumTeams)
                        }
                    })
                else { throw Self.noSuchHunt }
                signIn(session, account: joined.guest, tokenHash: tokenHash)
                await applyOwnHuntWrite()
                return GuestSignIn(hunt: HuntView(hunt: joined.hunt.hunt(at: clock.now), code: nil), token: token, user: joined.guest.user)
            } catch StoreError.conflict(constraint: "hunt_players_name") {
                throw BoardError(.conflict, "another player of this hunt is named \(name)")
            } catch StoreError.conflict(constraint: "hunt_teams_name") {
                throw BoardError(.conflict, "another player is making the team \(team ?? "") right now; JOIN again")
            }
        }
    }

    /// The hunt that holds join code `code` and has not ended. Codes cannot be guessed: an
    /// address that typed too many that found nothing waits. Each look-up holds a place in the
    /// address's limit until it is known to have found a hunt (then it costs nothing) or not (a
    /// token), so guesses arriving at once are judged no more than the tokens left, and a class
    /// typing the right code at once all get in (see ``FailureLimiter``).
    func hunt(byCode code: String, from address: String?) async throws -> HuntRecord {
        try await joinFailures.begin(address, action: "JOINs by unknown codes")
        let found: HuntRecord?
        do {
            if let joinCode = JoinCode(typed: code) { found = try await store.hunt(code: joinCode) } else { found = nil }
        } catch {
            joinFailures.end(address, failed: false)
            throw error
        }
        joinFailures.end(address, failed: found == nil)
        guard let found else { throw BoardError(.notFound, "no hunt that has not ended has this code") }
        return found
    }

    /// The account of a live session: nil when the token is unknown, expired or revoked, or when
    /// it is a guest's whose hunt ended more than a day ago.
    func liveAccount(sessionTokenHash tokenHash: [UInt8]) async throws -> Account? {
        guard let account = try await store.account(sessionTokenHash: tokenHash) else { return nil }
        guard let huntID = account.guestHunt else { return account }
        let now = clock.now
        guard let hunt = try await store.hunt(id: huntID),
              GameRules.guestSessionIsLive(huntEnd: hunt.schedule.settled(at: now).ends, now: now)
        else { return nil }
        return account
    }

    /// The logged-in account for a write a guest may make too (in their hunt: `CHECKIN`, `LEAVE`,
    /// its chat, a `REPORT` in it): not banned. A guest is a player only of their hunt, so the
    /// write's own rules refuse them anywhere else.
    func player(of session: Session) async throws(BoardError) -> Account {
        return try await guarded {
            let account = try await account(of: session)
            if let ban = account.ban { throw BoardError(.banned, ban.text) }
            return account
        }
    }

    /// Refuses a guest a write that is not playing their hunt (`FORBIDDEN`).
    static func refuseGuest(_ user: User, guestHunt: String?) throws(BoardError) {
        guard user.isGuest else { return }
        do throws(GameRefusal) {
            try GameRules.guestMay(.other, guestHunt: guestHunt ?? "")
        } catch {
            throw BoardError(error)
        }
    }

    /// `REGISTER` on a guest's connection: the guest becomes that account, keeping their place,
    /// check-ins and points in the hunt; the guest session ends and the account's begins.
    func registerGuest(
        name: String, email: String, password: String, on session: Session
    ) async throws(BoardError) -> SignIn {
        return try await guarded {
            let guest = try await account(of: session)
            guard guest.user.isGuest else {
                throw BoardError(.conflict, "this connection's guest already has an account; LOGOUT to register another")
            }
            try await takeAddressToken(session.address, action: "registrations")
            if let conflict = try await store.registrationConflict(name: name, email: email) {
                throw Self.refusal(conflict)
            }
            let passwordHash = try await passwordQueue.run(
                first: loginThrottle.isClean(session.address), isWanted: { session.isConnected }
            ) { hasher in try await hasher.hash(password) }
            let token = SecureRandom.token()
            let tokenHash = Digest.sha256(token)
            let account: Account?
            do {
                account = try await store.registerGuest(
                    userID: guest.id, name: name, email: email, passwordHash: passwordHash, tokenHash: tokenHash,
                    sessionTTLSeconds: rules.sessionTTLSeconds)
            } catch let error as StoreError {
                guard let conflict = RegistrationConflict(error) else { throw error }
                throw Self.refusal(conflict)
            }
            guard let account else { throw BoardError(.unauthorized, "the guest session has ended; JOIN again or REGISTER afresh") }
            // This connection goes on as the account (its watches with it); others that resumed
            // the guest's session hear that it ended.
            signIn(session, account: account, tokenHash: tokenHash)
            await applyOwnHuntWrite()
            return SignIn(user: account.user, token: token)
        }
    }
}
