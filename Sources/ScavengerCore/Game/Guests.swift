// Guests (protocol 1.5): players who joined one hunt with its code and a name, without an
// account. A guest is a kind of player: the same check-ins, standings and rules as any player
// of that hunt, with these rules on top, written once here.

/// What `JOIN code AS name GUEST` is judged from, under the hunt's row lock.
public struct GuestJoinFacts: Sendable, Equatable {
    /// The join rules' facts (a guest is never the host, and has never left).
    public var join: JoinFacts
    /// How many guests the hunt takes (`GUESTS n`); nil: accounts only.
    public var allowed: Int?
    /// The hunt's guests now.
    public var guests: Int

    public init(mode: HuntMode, state: HuntState, team: String?, allowed: Int?, guests: Int) {
        self.join = JoinFacts(mode: mode, state: state, isHost: false, team: team, left: false)
        self.allowed = allowed
        self.guests = guests
    }
}

/// What a guest may do besides reading: the hunt they play, and nothing else.
public enum GuestAction: Sendable, Equatable {
    /// `CHECKIN`, `LEAVE`, a `REPLY` in the hunt's chat, a `REPORT` of something in the hunt.
    case play(hunt: String)
    /// Any other write: `POST`, `CREATEHUNT`, `JOIN` of a hunt, `EDIT`, a reply to a pin, …
    case other
}

extension GameRules {
    /// How long a guest's session outlives the hunt's end: the final board can still be read,
    /// and a photo still sent for review.
    public static let guestSessionAfterEndSeconds: Int64 = 24 * 3600

    /// `JOIN … GUEST`: only in a hunt that takes guests, while it has room for one more, and by
    /// the rules of any `JOIN`.
    public static func joinAsGuest(_ facts: GuestJoinFacts) throws(GameRefusal) {
        guard let allowed = facts.allowed else {
            throw GameRefusal(.badArgument, "this hunt takes players with accounts only: REGISTER or LOGIN, then JOIN without GUEST")
        }
        try join(facts.join)
        if facts.guests >= allowed {
            throw GameRefusal(.conflict, "this hunt has room for no more guests (\(allowed)); ask the host, or join with an account")
        }
    }

    /// Whether a guest of `guestHunt` may do `action`: play their own hunt; nothing else.
    public static func guestMay(_ action: GuestAction, guestHunt: String) throws(GameRefusal) {
        switch action {
        case .play(let hunt) where hunt == guestHunt: return
        case .play, .other:
            throw GameRefusal(.forbidden, "a guest plays their hunt only (CHECKIN, LEAVE, REPLY and REPORT in it); REGISTER for an account to do more")
        }
    }

    /// Whether a guest's session still works at `now`: until a day after their hunt's end (an
    /// `EXTEND` moves it), or, while the hunt has no end yet, for as long as it runs.
    public static func guestSessionIsLive(huntEnd: Timestamp?, now: Timestamp) -> Bool {
        guard let huntEnd else { return true }
        return now.microseconds < huntEnd.microseconds + guestSessionAfterEndSeconds * 1_000_000
    }
}
