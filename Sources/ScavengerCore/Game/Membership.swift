/// What JOIN's rules see of the caller and the hunt, under the hunt's row lock.
public struct JoinFacts: Sendable, Equatable {
    public var mode: HuntMode
    /// The hunt's state by the database's clock.
    public var state: HuntState
    /// Whether the caller hosts the hunt.
    public var isHost: Bool
    /// The team asked for with `TEAM`; nil without.
    public var team: String?
    /// Whether the caller left the hunt while it ran, in a mode where leaving is final.
    public var left: Bool

    public init(mode: HuntMode, state: HuntState, isHost: Bool, team: String?, left: Bool) {
        self.mode = mode
        self.state = state
        self.isHost = isHost
        self.team = team
        self.left = left
    }
}

/// What JOIN's rules see of the team a player asks to join, under the hunt's lock.
public struct TeamJoinFacts: Sendable, Equatable {
    /// The team's name: as its maker typed it when it exists, else as asked.
    public var team: String
    /// Whether the hunt has a team of that name (case-insensitively).
    public var exists: Bool
    /// Its players now.
    public var members: Int
    /// Whether the joiner already plays for it.
    public var isMember: Bool
    /// The team the joiner plays for now, if they play the hunt already.
    public var currentTeam: String? = nil
    /// The hunt's state by the database's clock.
    public var state: HuntState = .scheduled
    /// The teams the hunt holds now.
    public var teams: Int = 0

    public init(team: String, exists: Bool, members: Int, isMember: Bool, currentTeam: String? = nil, state: HuntState = .scheduled, teams: Int = 0) {
        self.team = team
        self.exists = exists
        self.members = members
        self.isMember = isMember
        self.currentTeam = currentTeam
        self.state = state
        self.teams = teams
    }
}

/// A side's time-trial clock as a write reads it: the trial's seconds, when the clock started
/// (nil: not yet), and whether it is a team's.
public struct TrialClockFacts: Sendable, Equatable {
    public var seconds: Int
    public var startedAt: Timestamp?
    public var team: Bool

    public init(seconds: Int, startedAt: Timestamp?, team: Bool) {
        self.seconds = seconds
        self.startedAt = startedAt
        self.team = team
    }
}

/// What a LEAVE does beyond taking the player out with their check-ins.
public enum LeaveEffect: Sendable, Equatable {
    /// Nothing more: they may join again.
    case free
    /// Their departure is recorded: they may not join again before the hunt ends.
    case final
}

/// The game's rules: pure decisions from the facts a write reads under its locks to a refusal
/// (a ``GameRefusal``) or what the write must do. Each rule is written here once.
public enum GameRules {
    /// The teams one hunt may hold unless an operator says otherwise.
    public static let defaultMaximumTeams = 200

    /// `JOIN`: anyone but the host, until the hunt has ended; a team hunt with a `TEAM`, any
    /// other without one; nobody who left a running trial or team hunt, until it ends.
    public static func join(_ facts: JoinFacts) throws(GameRefusal) {
        guard !facts.isHost else { throw GameRefusal(.forbidden, "the host cannot join their own hunt") }
        guard facts.state != .ended else { throw GameRefusal(.conflict, "the hunt has ended") }
        if facts.left {
            throw GameRefusal(.conflict, "you left this hunt while it was running; you cannot join it again before it ends")
        }
        switch (facts.mode.sides, facts.team) {
        case (.teams, nil):
            throw GameRefusal(.badArgument, "this is a team hunt: JOIN it with TEAM and a team's name (a new name makes the team)")
        case (.players, _?):
            throw GameRefusal(.badArgument, "this hunt is played by single players: JOIN it without TEAM")
        default:
            break
        }
    }

    /// `JOIN … TEAM`: a member may join again (to rename); once the hunt runs a member's team is
    /// fixed; a team has room for `largest` players; a hunt holds at most `maximumTeams` teams.
    public static func joinTeam(_ facts: TeamJoinFacts, largest: Int, maximumTeams: Int) throws(GameRefusal) {
        if facts.isMember { return }
        if facts.state == .running, let current = facts.currentTeam {
            throw GameRefusal(.conflict, "the hunt is running: you play for \(current) until it ends")
        }
        if !facts.exists, facts.teams >= maximumTeams {
            throw GameRefusal(.conflict, "this hunt holds at most \(maximumTeams) teams; join one of them")
        }
        if facts.members >= largest {
            throw GameRefusal(.conflict, "the team \(facts.team) is full (\(largest) players)")
        }
    }

    /// `LEAVE`: until the hunt has ended (then the standings stay as they are); final while a
    /// trial or team hunt runs.
    public static func leave(mode: HuntMode, state: HuntState) throws(GameRefusal) -> LeaveEffect {
        switch state {
        case .ended: throw GameRefusal(.conflict, "the hunt has ended")
        case .running: return mode.leavingIsFinalWhileRunning ? .final : .free
        case .scheduled: return .free
        }
    }

    /// A time trial's clock: a side has `seconds` from its clock's start (nil: not started; this
    /// check-in starts it), by the database's clock `now`; from then on a check-in is `CONFLICT`,
    /// before any code is compared or counted.
    public static func trialClock(seconds: Int?, startedAt: Timestamp?, now: Timestamp, team: Bool) throws(GameRefusal) {
        guard let seconds, let startedAt else { return }
        if now.microseconds - startedAt.microseconds >= Int64(seconds) * 1_000_000 {
            throw GameRefusal(.conflict, "time is up: this time trial gives \(seconds) s from your \(team ? "team's " : "")first check-in")
        }
    }

    /// Whether rejecting check-in `rejecting` moves a trial clock started by `startedBy`: only
    /// the check-in that started it does (a LEAVE that takes check-ins away never does).
    public static func trialClockMoves(rejecting: String, startedBy: String?) -> Bool { startedBy == rejecting }
}
