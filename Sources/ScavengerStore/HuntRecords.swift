import Postgres
import ScavengerCore

/// A stop as stored: the stop and, for a code stop, the hash of its secret.
public struct StopRecord: Sendable, Equatable {
    public var stop: HuntStop
    /// libsodium's argon2id string of the stop's code; nil unless its proof is `code`.
    public var codeHash: String?
    /// Hidden by reports or removed by a moderator: its title and clue are withheld from all
    /// but the host and moderators.
    public var withheld: Bool

    public init(stop: HuntStop, codeHash: String?, withheld: Bool = false) {
        self.stop = stop
        self.codeHash = codeHash
        self.withheld = withheld
    }
}

/// A hunt to write.
public struct NewHunt: Sendable {
    public var id: String
    public var hostID: Int
    public var name: String
    public var description: String
    public var code: JoinCode
    public var ordered: Bool
    public var isPublic: Bool
    public var schedule: HuntSchedule
    /// The host's `POST` rate: a hunt is written only if a token can be taken. Nil: unlimited.
    public var rate: RateLimit?
    /// A team hunt's largest team; nil for single players.
    public var teamSize: Int? = nil
    /// A time trial's seconds; nil for none.
    public var trialSeconds: Int? = nil
    /// The hunt's own badge's name; nil for none.
    public var badgeName: String? = nil
    /// How many guests may join; nil: accounts only.
    public var guests: Int? = nil

    public init(
        id: String = Identifier.newHunt(), hostID: Int, name: String, description: String, code: JoinCode, ordered: Bool,
        isPublic: Bool, schedule: HuntSchedule, rate: RateLimit?
    ) {
        self.id = id
        self.hostID = hostID
        self.name = name
        self.description = description
        self.code = code
        self.ordered = ordered
        self.isPublic = isPublic
        self.schedule = schedule
        self.rate = rate
    }
}

/// A stop to add.
public struct NewStop: Sendable {
    public var id: String
    public var lat: Double
    public var lon: Double
    public var radiusMeters: Double
    public var points: Int
    public var title: String
    public var clue: String
    public var proof: StopProof
    public var codeHash: String?
    public var hidden: Bool

    public init(
        id: String = Identifier.newStop(), lat: Double, lon: Double, radiusMeters: Double, points: Int, title: String, clue: String,
        proof: StopProof, codeHash: String?, hidden: Bool
    ) {
        self.id = id
        self.lat = lat
        self.lon = lon
        self.radiusMeters = radiusMeters
        self.points = points
        self.title = title
        self.clue = clue
        self.proof = proof
        self.codeHash = codeHash
        self.hidden = hidden
    }
}

/// A check-in to write (its verdict comes from the rules, inside the transaction).
public struct NewCheckIn: Sendable {
    public var id: String
    public var stopID: String
    public var userID: Int
    public var lat: Double
    public var lon: Double
    public var accuracyMeters: Double
    public var photo: Photo?

    public init(id: String = Identifier.newCheckIn(), stopID: String, userID: Int, lat: Double, lon: Double, accuracyMeters: Double, photo: Photo?) {
        self.id = id
        self.stopID = stopID
        self.userID = userID
        self.lat = lat
        self.lon = lon
        self.accuracyMeters = accuracyMeters
        self.photo = photo
    }
}

/// A change of a hunt, as the hunts' change log (`hunt_changes`) carries it to every daemon.
public enum HuntChange: Sendable, Equatable {
    /// Started, extended or ended by a write; read the hunt again.
    case hunt
    case hint(text: String, at: Timestamp)
    case found(player: String, stop: String, points: Int)
    /// A player's new standing (joined, checked in, reviewed, renamed from `renamedFrom`).
    case standing(StandingChange, renamedFrom: String?)
    /// A player left (`userID`: nil in log entries written before it was logged).
    case left(player: String, userID: Int?)
    /// A message in the hunt's chat (its `pin` is the hunt's id).
    case reply(PinReply)
    /// A user's totals across every hunt changed (logged with no hunt: `""`).
    case totals(UserTotals)
    /// A player earned a badge in the hunt.
    case badge(player: String, badge: Badge)
    /// A team's new standing in a team hunt (a check-in, a review, a member joining, moving,
    /// renamed or leaving).
    case team(TeamStandingChange)
    /// A check-in now waits for a review (`pending` or `flagged`): its reviewers' watches hear it.
    case review(checkIn: String, status: CheckInStatus)
}

/// One row of the hunts' change log.
public struct LoggedHuntChange: Sendable, Equatable {
    public var seq: Int
    public var hunt: String
    public var change: HuntChange
    /// The row's random stamp (see ``LogPlace``).
    public var stamp: Int64 = 0
}

/// A page of the hunts' change log after a reader's place (``Database/huntChanges(after:stamp:limit:)``).
public struct HuntChangePage: Sendable {
    public var changes: [LoggedHuntChange]
    /// How far `expire` trimmed the log: past the place, changes after it may be gone.
    public var trimmedThrough: Int
    /// Whether the row at the place is still the one the reader applied (see ``LogPlace``).
    public var placeHolds: Bool
}

/// Where the next page of public hunts starts: the sort key of the last hunt shown.
public struct HuntListCursor: Sendable, Equatable {
    /// 0 running, 1 scheduled with a start, 2 started by hand (0 in a NEAR list).
    public var group: Int
    /// The start in microseconds (0 when none, and in a NEAR list).
    public var starts: Int64
    /// The distance to the nearest stop that is not hidden (0 unless NEAR).
    public var distance: Double
    public var id: String

    public init(group: Int, starts: Int64, distance: Double, id: String) {
        self.group = group
        self.starts = starts
        self.distance = distance
        self.id = id
    }
}
