// The facts the game's rules judge from and the verdicts and standings they answer: plain
// values that the store reads and writes and the board's rules and the feed's views share.

/// A hunt as stored: its fields, its host's id and its join code. What a viewer is shown is
/// decided by the board.
public struct HuntRecord: Sendable, Equatable {
    public var id: String
    public var name: String
    public var description: String
    public var hostID: Int
    public var hostName: String
    public var code: JoinCode
    public var ordered: Bool
    public var isPublic: Bool
    public var schedule: HuntSchedule
    public var stops: Int
    public var players: Int
    public var created: Timestamp
    /// Hidden by reports until a moderator decides: out of HUNTS.
    public var moderationHidden: Bool
    /// Removed by a moderator: ended, and gone for all but its host and moderators.
    public var removed: Bool
    /// A team hunt's largest team; nil for single players.
    public var teamSize: Int? = nil
    /// A time trial's seconds; nil for none.
    public var trialSeconds: Int? = nil
    /// The hunt's own badge's name; nil for none.
    public var badgeName: String? = nil
    /// How many guests may join (`GUESTS n`); nil: accounts only.
    public var guests: Int? = nil

    public init(
        id: String, name: String, description: String, hostID: Int, hostName: String, code: JoinCode, ordered: Bool,
        isPublic: Bool, schedule: HuntSchedule, stops: Int, players: Int, created: Timestamp, moderationHidden: Bool = false,
        removed: Bool = false
    ) {
        self.moderationHidden = moderationHidden
        self.removed = removed
        self.id = id
        self.name = name
        self.description = description
        self.hostID = hostID
        self.hostName = hostName
        self.code = code
        self.ordered = ordered
        self.isPublic = isPublic
        self.schedule = schedule
        self.stops = stops
        self.players = players
        self.created = created
    }

    /// How the hunt is played.
    public var mode: HuntMode { HuntMode(teamSize: teamSize, ordered: ordered, trialSeconds: trialSeconds) }

    /// The hunt as anyone allowed to read it sees it at `now` (no join code).
    public func hunt(at now: Timestamp) -> Hunt {
        Hunt(
            id: id, name: name, description: description, host: hostName, schedule: schedule, at: now, ordered: ordered,
            isPublic: isPublic, stops: stops, players: players, teams: teamSize, trial: trialSeconds, badge: badgeName, guests: guests)
    }
}

/// A player of a hunt and their standing.
public struct PlayerRecord: Sendable, Equatable {
    public var userID: Int
    /// The name in the hunt.
    public var name: String
    public var points: Int
    public var found: Int
    /// When they reached these points (nil at 0).
    public var pointsAt: Timestamp?
    /// In a time trial: the player's first live check-in and last accepted one (see
    /// ``StandingChange/trialFirst``); read only where a trial's board needs them.
    public var trialFirst: Timestamp? = nil
    public var trialLast: Timestamp? = nil

    public init(userID: Int, name: String, points: Int, found: Int, pointsAt: Timestamp?) {
        self.userID = userID
        self.name = name
        self.points = points
        self.found = found
        self.pointsAt = pointsAt
    }
}

/// What a check-in's transaction knows when the board's rules judge it: read under locks, so
/// nothing changes between the judgement and the write.
public struct CheckInFacts: Sendable {
    public var hunt: HuntRecord
    public var stop: HuntStop
    /// The caller as a player of the hunt; nil when they are not one.
    public var player: PlayerRecord?
    /// Whether the caller already has a check-in at this stop that is not rejected.
    public var hasLiveCheckIn: Bool
    /// The place (n) of the first stop the caller has no live check-in at (for ordered hunts).
    public var nextStop: Int?
    /// The fix and time of the caller's previous check-in in any hunt that stands or may stand
    /// (accepted or pending): the travel-speed check's reference.
    public var previous: (lat: Double, lon: Double, at: Timestamp)?
    /// When the caller's check-ins at this stop were refused as too far, within the window.
    public var tooFarTries: [Timestamp] = []
    /// The database's clock.
    public var now: Timestamp
    /// In a time trial: when the caller's clock started, the time of their earliest check-in in
    /// the hunt that is accepted, pending or flagged; nil when they have none (this one starts it).
    public var trialStartedAt: Timestamp? = nil
    /// In a team hunt: the caller's team (its id), nil otherwise. Then ``nextStop`` and
    /// ``trialStartedAt`` are the team's.
    public var teamID: Int? = nil
    /// In a team hunt: whether the caller's team has a check-in at this stop that is not rejected.
    public var teamHasCheckIn = false

    public init(
        hunt: HuntRecord, stop: HuntStop, player: PlayerRecord?, hasLiveCheckIn: Bool, nextStop: Int?,
        previous: (lat: Double, lon: Double, at: Timestamp)?, tooFarTries: [Timestamp] = [], now: Timestamp
    ) {
        self.hunt = hunt
        self.stop = stop
        self.player = player
        self.hasLiveCheckIn = hasLiveCheckIn
        self.nextStop = nextStop
        self.previous = previous
        self.tooFarTries = tooFarTries
        self.now = now
    }
}

/// What the rules make of a check-in: write it with its verdict, or refuse it and count the
/// refusal as a try (`TOO_FAR`: the try is written though the check-in is not).
public enum CheckInJudgement: Sendable {
    case write(CheckInVerdict)
    case refuseCountingTry(any Error & Sendable)
}

/// How a check-in went: written, or refused with its try counted.
public enum CheckInOutcome: Sendable {
    case written(CheckInWrite)
    case refused(any Error & Sendable)
}

/// The board's verdict on a check-in, for the store to write.
public struct CheckInVerdict: Sendable {
    public var status: CheckInStatus
    public var points: Int
    public var distanceMeters: Double
    /// For a check-in flagged for its speed: what flagged it.
    public var travel: Travel?

    public init(status: CheckInStatus, points: Int, distanceMeters: Double, travel: Travel? = nil) {
        self.status = status
        self.points = points
        self.distanceMeters = distanceMeters
        self.travel = travel
    }
}

/// A check-in as stored, with the ids a review needs.
public struct CheckInRecord: Sendable, Equatable {
    public var checkIn: CheckIn
    public var userID: Int
    public var hostID: Int
    public var stopPoints: Int

    public init(checkIn: CheckIn, userID: Int, hostID: Int, stopPoints: Int) {
        self.checkIn = checkIn
        self.userID = userID
        self.hostID = hostID
        self.stopPoints = stopPoints
    }
}

/// A review's facts: the check-in, the hunt it belongs to, and the clock.
public struct ReviewFacts: Sendable {
    public var checkIn: CheckInRecord
    public var hunt: HuntRecord
    public var now: Timestamp

    public init(checkIn: CheckInRecord, hunt: HuntRecord, now: Timestamp) {
        self.checkIn = checkIn
        self.hunt = hunt
        self.now = now
    }
}

/// A review's decision, for the store to write: the new status and points, and whether the
/// moderation log records it (a moderator reviewing a hunt they do not host).
public struct ReviewDecision: Sendable {
    public var status: CheckInStatus
    public var points: Int
    public var logAs: (moderator: Int, action: String)?
    public var note: String?

    public init(status: CheckInStatus, points: Int, logAs: (moderator: Int, action: String)?, note: String?) {
        self.status = status
        self.points = points
        self.logAs = logAs
        self.note = note
    }
}

/// A hunt's standing after a check-in or a review: the player's.
public struct StandingChange: Sendable, Equatable {
    public var player: String
    public var points: Int
    public var found: Int
    public var at: Timestamp?
    /// The player's user id (every daemon keeps who plays a hunt beside its board); nil in log
    /// entries written before it was logged.
    public var userID: Int? = nil
    /// In a time trial: the player's first check-in that is accepted, pending or flagged (the
    /// start of their clock); nil outside trials, when there is none, and in older log entries.
    public var trialFirst: Timestamp? = nil
    /// In a time trial: the player's last accepted check-in; nil when none (or as above).
    public var trialLast: Timestamp? = nil

    public init(
        player: String, points: Int, found: Int, at: Timestamp?, userID: Int? = nil, trialFirst: Timestamp? = nil, trialLast: Timestamp? = nil
    ) {
        self.player = player
        self.points = points
        self.found = found
        self.at = at
        self.userID = userID
        self.trialFirst = trialFirst
        self.trialLast = trialLast
    }

    /// The trial time in microseconds, from ``trialFirst`` to ``trialLast``; nil unless both are known.
    public var trialTime: Int64? {
        guard let first = trialFirst, let last = trialLast else { return nil }
        return max(0, last.microseconds - first.microseconds)
    }
}

/// A team's standing in a team hunt, as its row and its members stand after a write (a check-in,
/// a review, a member joining, moving, renamed or leaving).
public struct TeamStandingChange: Sendable, Equatable {
    /// The team's name as its maker typed it.
    public var team: String
    public var points: Int
    public var found: Int
    public var at: Timestamp?
    /// Its members' player names, ordered by name.
    public var members: [String]
    /// Its members' user ids, in the order of ``members``.
    public var memberIDs: [Int]
    /// In a time trial: the team's first live check-in and its last accepted one.
    public var trialFirst: Timestamp? = nil
    public var trialLast: Timestamp? = nil

    public init(team: String, points: Int, found: Int, at: Timestamp?, members: [String], memberIDs: [Int]) {
        self.team = team
        self.points = points
        self.found = found
        self.at = at
        self.members = members
        self.memberIDs = memberIDs
    }

    /// The trial time in microseconds, from ``trialFirst`` to ``trialLast``; nil unless both are known.
    public var trialTime: Int64? {
        guard let first = trialFirst, let last = trialLast else { return nil }
        return max(0, last.microseconds - first.microseconds)
    }

    /// Whether a board shows the team: it has members, or found something.
    public var isShown: Bool { !members.isEmpty || found > 0 }
}

/// Who may read a hunt, as its row says: its host, whether it is public, whether moderators removed it.
public struct HuntAccessFacts: Sendable, Equatable {
    public var hostID: Int
    public var isPublic: Bool
    public var removed: Bool

    public init(hostID: Int, isPublic: Bool, removed: Bool) {
        self.hostID = hostID
        self.isPublic = isPublic
        self.removed = removed
    }
}

/// A written check-in, the player's standing after it and their rank in the hunt then.
public struct CheckInWrite: Sendable, Equatable {
    public var checkIn: CheckIn
    public var standing: StandingChange
    /// One more than the players (teams) strictly ahead: the hunt's board as the daemon held it
    /// when the check-in was written, with the standings the write left.
    public var rank: Int

    public init(checkIn: CheckIn, standing: StandingChange, rank: Int) {
        self.checkIn = checkIn
        self.standing = standing
        self.rank = rank
    }
}
