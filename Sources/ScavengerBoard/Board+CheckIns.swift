import ScavengerCore
import ScavengerStore
import Sodium

// CHECKIN, REVIEW, APPROVE, REJECT and PHOTO of a check-in.

extension Board {
    // MARK: Check-ins

    /// CHECKIN: the server judges presence (distance on NEARBY's sphere, the fix's accuracy, a
    /// code compared against its hash, a photo), the travel speed, the hunt's state and order and
    /// the one-check-in-per-stop rule, and writes the check-in with its points in one transaction.
    /// The reply's rank is the player's (their team's) on the hunt's board as this daemon holds
    /// it, with the standing the write left (Core's one rule of who is ahead), decided in the
    /// transaction so that a keyed check-in's reply can be stored with it.
    public func checkIn(
        _ draft: CheckInDraft, by session: Session, request: RequestKey<CheckInResult>? = nil
    ) async throws(BoardError) -> CheckInResult {
        // A photo's sizes are made in the background once it is written.
        defer { if draft.photo != nil { photoSizes.wake() } }
        return try await replaying(request, by: session) { () async throws(BoardError) -> CheckInResult in
            try guardedNow {
                try Validation.coordinates(lat: draft.fix.lat, lon: draft.fix.lon)
                try Validation.accuracy(draft.fix.accuracyMeters)
                if let code = draft.code { try Validation.stopCode(code) }
            }
            return try await guarded {
                let account = try await player(of: session)
                guard Identifier.isStop(draft.stopID) else { throw Self.noSuchStop }
                let hasCode = draft.code != nil
                let hasPhoto = draft.photo != nil
                var photo = draft.photo
                var huntID = stopHunts.withLock { $0[draft.stopID] }
                if huntID == nil, !hasCode, !hasPhoto {
                    guard let stopRecord = try await store.stop(id: draft.stopID) else { throw Self.noSuchStop }
                    huntID = stopRecord.stop.hunt
                }
                if hasCode || hasPhoto {
                    // A code is checked against the stop's hash and a photo cleaned before the
                    // transaction, so the stop is read first; a plain check-in (the common one) is
                    // judged from the stop the transaction reads.
                    guard let stopRecord = try await store.stop(id: draft.stopID) else { throw Self.noSuchStop }
                    let stop = stopRecord.stop
                    huntID = stop.hunt
                    try HuntDecisions.proofOptions(stop.proof, code: hasCode, photo: hasPhoto)
                    if let given = photo {
                        photo = try given.checkedForStorage(limits: self.rules.pins.pixelLimits)
                    }
                    if stop.proof == .code, let code = draft.code, let hash = stopRecord.codeHash {
                        try await checkCode(code, hash: hash, stop: stop, account: account)
                    }
                }
                guard let huntID else { throw Self.noSuchStop }
                stopHunts.withLock { known in
                    if known.count >= Self.stopHuntsKept { known.removeAll(keepingCapacity: true) }
                    known[draft.stopID] = huntID
                }
                // The hunt's board as this daemon holds it (loaded now if it is not kept): the
                // check-in's rank is its side's there, as the board stands when it is written.
                let loaded = try await leaderboard(of: huntID)
                let hunts = feed.hunts
                let board: @Sendable () -> Leaderboard = { hunts.keptLeaderboard(of: huntID) ?? loaded }
                let rules = self.rules.hunts
                let new = NewCheckIn(
                    stopID: draft.stopID, userID: account.id, lat: draft.fix.lat, lon: draft.fix.lon,
                    accuracyMeters: draft.fix.accuracyMeters, photo: photo)
                let fix = draft.fix
                let result: @Sendable (CheckInWrite) -> CheckInResult = { written in
                    CheckInResult(checkIn: written.checkIn, points: written.standing.points, found: written.standing.found, rank: written.rank)
                }
                let keyed = try keyedWrite(request, userID: account.id) { (outcome: CheckInOutcome?) -> CheckInResult? in
                    guard case .written(let written) = outcome else { return nil }
                    return result(written)
                }
                let outcome: CheckInOutcome?
                let photoRate = hasPhoto ? rate(.photo, for: account.user.role) : nil
                do {
                    outcome = try await charging(.photo, photoRate) {
                        try await store.checkIn(new, board: board, photoRate: photoRate, request: keyed) { facts in
                            try Self.rule {
                                try HuntDecisions.proofOptions(facts.stop.proof, code: hasCode, photo: hasPhoto)
                                return try Self.judge(fix, facts: facts, rules: rules)
                            }
                        }
                    }
                } catch StoreError.conflict(constraint: "checkins_one_live") {
                    throw BoardError(.conflict, "you have already checked in at this stop")
                }
                let written: CheckInWrite
                switch outcome {
                case nil: throw Self.noSuchStop
                case .refused(let refusal)?: throw refusal
                case .written(let write)?: written = write
                }
                // The hunt's leaderboard here has the check-in before the reply goes (the player's
                // next LEADERBOARD shows it).
                // Committed: the answer is OK whatever happens here (a leaderboard that cannot be
                // loaded now is loaded by the next read).
                _ = try? await leaderboard(of: written.checkIn.hunt, afterOwnWrite: true)
                return result(written)
            }
        }
    }

    /// A code stop's secret: refused while the player is locked out after wrong codes; a wrong one
    /// is counted and refused. The player and the hunt's state are checked first, so nobody who
    /// could not check in learns anything about the code (and the transaction checks them again).
    /// The guess is counted before the code is compared, under the player's lock in the
    /// database, so that however many guesses arrive at once (on one daemon or several) no more
    /// than the limit are ever compared; a right code's guess is taken back.
    private func checkCode(_ code: String, hash: String, stop: HuntStop, account: Account) async throws {
        guard let hunt = try await store.hunt(id: stop.hunt) else { throw Self.noSuchStop }
        guard try await store.player(huntID: hunt.id, userID: account.id) != nil else { throw Self.notAPlayer }
        try HuntDecisions.running(hunt, at: clock.now)
        let rules = self.rules.hunts
        let guess = try await store.takeCodeGuess(stopID: stop.id, userID: account.id, windowSeconds: rules.codeGuessWindowSeconds) {
            counted, now, trial in
            try Self.rule {
                if let trial { try GameRules.trialClock(seconds: trial.seconds, startedAt: trial.startedAt, now: now, team: trial.team) }
                try Self.allowCodeGuess(counted: counted, now: now, rules: rules)
            }
        }
        // Compared as typed once normalized; a stop made before codes were normalized kept the
        // hash of its code as the host typed it, so that is tried too.
        let normalized = StopCode.normalized(code)
        var right = await passwords.verify(normalized, against: hash)
        if !right, normalized != code { right = await passwords.verify(code, against: hash) }
        guard right else { throw BoardError(.forbidden, "wrong code") }
        try await store.returnCodeGuess(id: guess)
    }

    /// The wrong-code limit: `rateLimited` with the wait while the guesses counted in the window
    /// (`counted`) have reached it.
    static func allowCodeGuess(counted: [Timestamp], now: Timestamp, rules: HuntRules) throws(BoardError) {
        if let wait = CodeGuesses.lockout(wrongCodesAt: counted, now: now, rules: rules) {
            throw BoardError.rateLimited(
                retryAfter: wait, "too many wrong codes at this stop (at most \(rules.codeGuesses) per \(rules.codeGuessWindowSeconds) s); wait \(wait) s")
        }
    }

    static let notAPlayer = BoardError(.forbidden, "you are not a player of this hunt; JOIN it first")

    /// The rules of a check-in, on the facts read under the transaction's locks: a verdict to
    /// write, a refusal (thrown), or a `TOO_FAR` refusal that counts as a try at the stop.
    static func judge(_ fix: Fix, facts: CheckInFacts, rules: HuntRules) throws -> CheckInJudgement {
        guard facts.player != nil else { throw notAPlayer }
        try HuntDecisions.running(facts.hunt, at: facts.now)
        try trialClock(facts)
        guard !facts.hasLiveCheckIn else { throw BoardError(.conflict, "you have already checked in at this stop") }
        guard !facts.teamHasCheckIn else { throw BoardError(.conflict, "your team already has a check-in at this stop") }
        if facts.hunt.ordered, let next = facts.nextStop, next != facts.stop.n {
            throw BoardError(.conflict, "this hunt is ordered: your \(facts.teamID == nil ? "" : "team's ")next stop is number \(next)")
        }
        if let wait = CodeGuesses.lockout(tooFarAt: facts.tooFarTries, now: facts.now, rules: rules) {
            throw BoardError.rateLimited(
                retryAfter: wait,
                "too many check-ins too far from this stop (at most \(rules.tooFarTries) per \(rules.codeGuessWindowSeconds) s); wait \(wait) s")
        }
        let verdict = try Presence.judge(fix, at: facts.stop)
        if case .tooFar = verdict {
            // A hidden stop's place is the player's to find: a refusal tells no distance (-1),
            // or three refusals from three places would find it without going there.
            if facts.stop.hidden {
                return .refuseCountingTry(BoardError.tooFar(meters: -1, "the fix is not within the radius of this hidden stop"))
            }
            let whole = verdict.wholeMeters
            return .refuseCountingTry(BoardError.tooFar(
                meters: whole, "the fix is \(whole) m from the stop; it must be within \(Presence.plain(facts.stop.radiusMeters)) m"))
        }
        var status: CheckInStatus = facts.stop.proof == .photo ? .pending : .accepted
        var travel: Travel?
        if let previous = facts.previous {
            let from = Fix(lat: previous.lat, lon: previous.lon)
            if TravelSpeed.isImplausible(from: from, at: previous.at, to: fix, at: facts.now, rules: rules) {
                status = .flagged
                travel = Travel(
                    fromMeters: Geodesy.distance(lat1: from.lat, lon1: from.lon, lat2: fix.lat, lon2: fix.lon),
                    seconds: Double(max(0, facts.now.microseconds - previous.at.microseconds)) / 1_000_000)
            }
        }
        return .write(CheckInVerdict(
            status: status, points: status == .accepted ? facts.stop.points : 0, distanceMeters: verdict.distanceMeters, travel: travel))
    }

    /// A time trial's clock (``GameRules/trialClock(seconds:startedAt:now:team:)``): the
    /// player's, or in a team hunt the team's, by the database's clock.
    static func trialClock(_ facts: CheckInFacts) throws(BoardError) {
        do throws(GameRefusal) {
            try GameRules.trialClock(seconds: facts.hunt.trialSeconds, startedAt: facts.trialStartedAt, now: facts.now, team: facts.teamID != nil)
        } catch {
            throw BoardError(error)
        }
    }

    // MARK: Review

    /// Whether the viewer may review a hunt's check-ins: its host, or a moderator (whose review is logged).
    private static func reviewer(_ hunt: HuntRecord, _ account: Account) throws(BoardError) -> Int? {
        if hunt.hostID == account.id { return nil }
        guard account.user.role.canModerate else {
            throw BoardError(.forbidden, "only the hunt's host or a moderator may review its check-ins")
        }
        return account.id
    }

    /// REVIEW: a hunt's pending and flagged check-ins, oldest first.
    public func checkInsToReview(huntID: String, limit: Int, cursor: String?, by session: Session) async throws(BoardError)
        -> (checkIns: [CheckIn], next: String?)
    {
        try await guarded {
            let account = try await writer(of: session)
            guard Identifier.isHunt(huntID), let hunt = try await store.hunt(id: huntID) else { throw Self.noSuchHunt }
            do {
                _ = try Self.reviewer(hunt, account)
            } catch {
                // A player or anyone on a public hunt: FORBIDDEN; a stranger to a private one: NOT_FOUND.
                let refusal = try await hostOnlyRefusal(huntID: huntID, account: account, what: "review its check-ins")
                throw refusal.code == .notFound ? refusal : error
            }
            var after: (at: Timestamp, id: String)?
            if let cursor {
                guard let parsed = HuntCursors.review(cursor) else { throw BoardError(.badArgument, "CURSOR is not a cursor of this list") }
                after = parsed
            }
            let rows = try await store.checkInsToReview(huntID: huntID, limit: limit, after: after)
            let page = Array(rows.prefix(limit))
            let next = rows.count > limit ? page.last.map { HuntCursors.review(at: $0.at, id: $0.id) } : nil
            return (page, next)
        }
    }

    /// APPROVE: a pending or flagged check-in is accepted with the stop's points plus `bonus`.
    public func approve(checkInID: String, bonus: Int, by session: Session, request: RequestKey<CheckIn>? = nil) async throws(BoardError)
        -> CheckIn
    {
        try guardedNow { try Validation.bonus(bonus) }
        return try await review(checkInID: checkInID, by: session, request: request) { facts, moderator in
            switch facts.checkIn.checkIn.status {
            case .pending, .flagged: break
            case .accepted: throw BoardError(.conflict, "the check-in is already accepted")
            case .rejected: throw BoardError(.conflict, "the check-in was rejected; the player may check in again")
            }
            return ReviewDecision(
                status: .accepted, points: facts.checkIn.stopPoints + bonus, logAs: moderator.map { ($0, "approve") }, note: nil)
        }
    }

    /// REJECT: a pending, flagged or accepted check-in is rejected (an accepted one's points leave the score).
    public func reject(checkInID: String, note: String?, by session: Session, request: RequestKey<CheckIn>? = nil) async throws(BoardError)
        -> CheckIn
    {
        if let note { try checks.note(note) }
        return try await review(checkInID: checkInID, by: session, request: request) { facts, moderator in
            guard facts.checkIn.checkIn.status != .rejected else { throw BoardError(.conflict, "the check-in is already rejected") }
            return ReviewDecision(status: .rejected, points: 0, logAs: moderator.map { ($0, "reject") }, note: note)
        }
    }

    /// Who may review a check-in, then `decide`: no one their own (`FORBIDDEN`, a moderator's
    /// included: they read it); anyone but the hunt's host or a moderator learns nothing of
    /// another's check-in (`NOT_FOUND`); a removed hunt's check-ins stay as they were (`CONFLICT`:
    /// its points have left the rankings).
    static func reviewDecision(
        _ facts: ReviewFacts, by account: Account, _ decide: (ReviewFacts, Int?) throws -> ReviewDecision
    ) throws -> ReviewDecision {
        if facts.checkIn.userID == account.id { throw BoardError(.forbidden, "no one reviews their own check-in") }
        let moderator: Int?
        do {
            moderator = try reviewer(facts.hunt, account)
        } catch {
            throw noSuchCheckIn
        }
        if facts.hunt.removed { throw BoardError(.conflict, "the hunt was removed; its check-ins can no longer be reviewed") }
        return try decide(facts, moderator)
    }

    private func review(
        checkInID: String, by session: Session, request: RequestKey<CheckIn>?,
        _ decide: @escaping @Sendable (ReviewFacts, Int?) throws -> ReviewDecision
    ) async throws(BoardError) -> CheckIn {
        try await replaying(request, by: session) { () async throws(BoardError) -> CheckIn in
            try await guarded {
                let account = try await writer(of: session)
                guard Identifier.isCheckIn(checkInID) else { throw Self.noSuchCheckIn }
                let keyed = try keyedWrite(request, userID: account.id) {
                    (reviewed: (checkIn: CheckIn, standing: StandingChange)?) in reviewed?.checkIn
                }
                guard let reviewed = try await store.review(checkInID: checkInID, request: keyed, decide: { facts in
                    try Self.rule { try Self.reviewDecision(facts, by: account, decide) }
                }) else { throw Self.noSuchCheckIn }
                await applyOwnHuntWrite()
                return reviewed.checkIn
            }
        }
    }

    /// PHOTO of a check-in: for its player, the hunt's host and moderators.
    public func checkInPhoto(id: String, viewer session: Session) async throws(BoardError) -> Photo {
        try await checkInPhotoViewer(id: id, session: session)
        return try await guarded {
            guard let photo = try await store.checkInPhoto(id: id) else { throw BoardError(.notFound, "this check-in has no photo") }
            return photo
        }
    }

    /// Refuses (`NOT_FOUND`) anyone but the check-in's player, its hunt's host and moderators.
    func checkInPhotoViewer(id: String, session: Session) async throws(BoardError) {
        try await guarded {
            guard Identifier.isCheckIn(id), let viewer = Self.viewerID(session), let record = try await store.checkIn(id: id) else {
                throw Self.noSuchCheckIn
            }
            if record.userID != viewer, record.hostID != viewer {
                // A moderator, as the database says now (a banned one is told so).
                do throws(BoardError) {
                    _ = try await moderator(of: session)
                } catch {
                    if error.code == .banned { throw error }
                    throw Self.noSuchCheckIn
                }
            }
        }
    }
}
