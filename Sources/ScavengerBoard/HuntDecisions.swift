import ScavengerCore
import ScavengerStore

/// Who may do what to a hunt, and when: pure functions from the facts a hunt write's transaction
/// reads under its locks (the hunt's row, the clock, the caller) to a refusal (a ``BoardError``)
/// or nothing; the store applies what they allow in the same transaction. Each is unit-tested
/// with a table of cases (HuntDecisionTests) beside the end-to-end tests. The check-in's own rules
/// are ``Board/judge(_:facts:rules:)``; a review's ``Board/reviewDecision(_:by:_:)``; joining and
/// leaving are the game's (``GameRules``).
enum HuntDecisions {
    static let ended = BoardError(.conflict, "the hunt has ended")

    /// `CREATEHUNT`'s 1.4 options: a team size of 2–50 and a trial of 60 s to 7 days.
    static func options(teamSize: Int?, trialSeconds: Int?) throws(BoardError) {
        if let size = teamSize, !HuntLimits.teamSize.contains(size) {
            throw BoardError(.badArgument, "SIZE must be \(HuntLimits.teamSize.lowerBound)–\(HuntLimits.teamSize.upperBound) players")
        }
        if let seconds = trialSeconds, !HuntLimits.trialSeconds.contains(seconds) {
            throw BoardError(
                .badArgument, "TRIAL must be \(HuntLimits.trialSeconds.lowerBound)–\(HuntLimits.trialSeconds.upperBound) seconds (1 minute to 7 days)")
        }
    }

    /// A host's command (`ADDSTOP`, `REMOVESTOP`, `HINT`, the schedule's): its host only; anyone
    /// else hears `refusal` (``Board/hostOnlyRefusal(huntID:account:what:)``: `FORBIDDEN` or, for
    /// a hunt they may not read, `NOT_FOUND`).
    static func hostOnly(_ hunt: HuntRecord, by account: Account, refusal: BoardError) throws(BoardError) {
        guard hunt.hostID == account.id else { throw refusal }
    }

    /// A schedule's change (`STARTHUNT`, `EXTEND`, `ENDHUNT`): the host, or for `ENDHUNT`
    /// (`moderatorsToo`) a moderator, whose id is returned for the moderation log.
    static func scheduleChange(
        _ hunt: HuntRecord, by account: Account, moderatorsToo: Bool, refusal: BoardError
    ) throws(BoardError) -> Int? {
        guard hunt.hostID != account.id else { return nil }
        guard moderatorsToo, account.user.role.canModerate else { throw refusal }
        return account.id
    }

    /// A message in a hunt's chat: its host and players; a removed hunt's only its host's.
    static func chat(_ hunt: HuntRecord, member: Bool, by account: Account) throws(BoardError) {
        guard !hunt.removed || hunt.hostID == account.id else { throw Board.noSuchHunt }
        guard member else { throw hunt.isPublic ? Board.chatMembersOnly : Board.noSuchHunt }
    }

    /// A check-in's proof options: a photo stop takes `PHOTO`, a code stop `CODE`, a place stop
    /// neither.
    static func proofOptions(_ proof: StopProof, code: Bool, photo: Bool) throws(BoardError) {
        switch proof {
        case .photo:
            guard !code else { throw BoardError(.badArgument, "CODE is only for code stops") }
            guard photo else { throw BoardError(.badArgument, "this stop needs a PHOTO") }
        case .code:
            guard !photo else { throw BoardError(.badArgument, "PHOTO is only for photo stops") }
            guard code else { throw BoardError(.badArgument, "this stop needs its CODE") }
        case .place:
            guard !code else { throw BoardError(.badArgument, "CODE is only for code stops") }
            guard !photo else { throw BoardError(.badArgument, "PHOTO is only for photo stops") }
        }
    }

    /// A check-in (and a guess at a code): only while the hunt runs, saying when it starts or
    /// that it ended.
    static func running(_ hunt: HuntRecord, at now: Timestamp) throws(BoardError) {
        let settled = hunt.schedule.settled(at: now)
        switch settled.state(at: now) {
        case .running: return
        case .ended: throw ended
        case .scheduled:
            if let starts = settled.starts {
                throw BoardError(.conflict, "the hunt has not started; it starts at \(starts.rfc3339)")
            }
            throw BoardError(.conflict, "the hunt has not started; its host starts it")
        }
    }
}
