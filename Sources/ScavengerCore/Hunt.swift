// The objects of protocol 1.2's hunts as clients see them: hunt, stop, check-in and leaderboard
// entry. Plain values: the rules that make and change them live beside them (HuntSchedule,
// HuntValidation, Presence, TravelSpeed, Leaderboard).

/// Where a hunt is in its life; see ``HuntSchedule/state(at:)``.
public enum HuntState: String, Sendable, CaseIterable, Codable {
    /// Not started yet: stops can be added and removed.
    case scheduled
    /// Players check in.
    case running
    /// Over for good; only reviews still change its leaderboard.
    case ended
}

/// What proves a player was at a stop.
public enum StopProof: String, Sendable, CaseIterable, Codable {
    /// A fix within the stop's radius.
    case place
    /// The stop's secret code (the fix is recorded, not judged).
    case code
    /// A fix within the radius and a photo, reviewed before it earns anything.
    case photo
}

/// Where a check-in stands.
public enum CheckInStatus: String, Sendable, CaseIterable, Codable {
    /// Counted: the stop's points (and any bonus) are in the player's score.
    case accepted
    /// A photo check-in waiting for review; earns nothing yet.
    case pending
    /// Failed the travel-speed check; earns nothing until approved.
    case flagged
    /// Refused by a review; the player may try again.
    case rejected

    /// Whether a check-in with this status blocks another at the same stop (all but rejected).
    public var isLive: Bool { self != .rejected }
}

/// A hunt as anyone allowed to read it sees it, at one moment. The join code is not here: only
/// ``HostedHunt`` (the host's view) carries it, so a reply built from a `Hunt` cannot leak it.
public struct Hunt: Sendable, Equatable, Codable {
    /// Its opaque id.
    public var id: String
    /// 1–80 characters.
    public var name: String
    /// May be empty.
    public var description: String
    /// The host's username.
    public var host: String
    /// Its state at the moment it was read.
    public var state: HuntState
    /// When it starts, or once started the moment it did; nil: its host starts it by hand.
    public var starts: Timestamp?
    /// When it ends; nil: it runs until its host ends it (or a DURATION sets it at the start).
    public var ends: Timestamp?
    /// Whether players must find the stops in order.
    public var ordered: Bool
    /// Whether anyone may find, read and join it by id (the contract's `public`).
    public var isPublic: Bool
    /// How many stops it holds.
    public var stops: Int
    /// How many players have joined (and not left).
    public var players: Int
    /// A team hunt's largest team (protocol 1.4's `teams`); nil for a hunt of single players.
    public var teams: Int? = nil
    /// A time trial's seconds from a player's (or team's) first check-in; nil for no trial.
    public var trial: Int? = nil
    /// The name of the hunt's own badge (`BADGE`), awarded to everyone who completes it; nil for none.
    public var badge: String? = nil
    /// How many guests may join without an account (protocol 1.5's `guests`); nil: accounts only.
    public var guests: Int? = nil

    /// A hunt from its fields.
    public init(
        id: String, name: String, description: String, host: String, state: HuntState, starts: Timestamp?, ends: Timestamp?,
        ordered: Bool, isPublic: Bool, stops: Int, players: Int, teams: Int? = nil, trial: Int? = nil, badge: String? = nil,
        guests: Int? = nil
    ) {
        self.guests = guests
        self.teams = teams
        self.trial = trial
        self.badge = badge
        self.id = id
        self.name = name
        self.description = description
        self.host = host
        self.state = state
        self.starts = starts
        self.ends = ends
        self.ordered = ordered
        self.isPublic = isPublic
        self.stops = stops
        self.players = players
    }

    /// A hunt whose state, `starts` and `ends` are those of `schedule` at `now` (a DURATION
    /// shows as `ends` only once the hunt has started).
    public init(
        id: String, name: String, description: String, host: String, schedule: HuntSchedule, at now: Timestamp,
        ordered: Bool, isPublic: Bool, stops: Int, players: Int, teams: Int? = nil, trial: Int? = nil, badge: String? = nil,
        guests: Int? = nil
    ) {
        let settled = schedule.settled(at: now)
        self.init(
            id: id, name: name, description: description, host: host, state: settled.state(at: now), starts: settled.starts,
            ends: settled.ends, ordered: ordered, isPublic: isPublic, stops: stops, players: players, teams: teams, trial: trial,
            badge: badge, guests: guests)
    }
}

/// A hunt as its host sees it: the hunt and its join code, which no reply to anyone else holds.
public struct HostedHunt: Sendable, Equatable {
    /// The hunt as everyone else sees it.
    public var hunt: Hunt
    /// Its join code.
    public var code: JoinCode

    /// The host's view of `hunt`.
    public init(hunt: Hunt, code: JoinCode) {
        self.hunt = hunt
        self.code = code
    }
}

/// A stop of a hunt. Its place is always here; whether a viewer is shown it (a ``hidden`` stop's
/// place only to the host and to players who found it) is decided where replies are written. A
/// code stop's secret is never part of it.
public struct HuntStop: Sendable, Equatable, Codable {
    /// Its opaque id.
    public var id: String
    /// The id of its hunt.
    public var hunt: String
    /// Its place in the hunt: 1, 2, …
    public var n: Int
    /// 1–80 characters.
    public var title: String
    /// May be empty.
    public var clue: String
    /// Latitude of its place, in degrees.
    public var lat: Double
    /// Longitude of its place, in degrees.
    public var lon: Double
    /// How close a fix must be, in metres (5–1,000).
    public var radiusMeters: Double
    /// What an accepted check-in earns (0–10,000).
    public var points: Int
    /// What proves presence here.
    public var proof: StopProof
    /// Players whose check-in here is accepted.
    public var foundBy: Int
    /// Whether its place is kept from everyone but the host and those who found it.
    public var hidden: Bool

    /// A stop from its fields.
    public init(
        id: String, hunt: String, n: Int, title: String, clue: String, lat: Double, lon: Double, radiusMeters: Double,
        points: Int, proof: StopProof, foundBy: Int, hidden: Bool
    ) {
        self.id = id
        self.hunt = hunt
        self.n = n
        self.title = title
        self.clue = clue
        self.lat = lat
        self.lon = lon
        self.radiusMeters = radiusMeters
        self.points = points
        self.proof = proof
        self.foundBy = foundBy
        self.hidden = hidden
    }
}

/// A player's attempt to prove presence at a stop, with the server's verdict.
public struct CheckIn: Sendable, Equatable, Codable {
    /// Its opaque id.
    public var id: String
    /// The id of the stop's hunt.
    public var hunt: String
    /// The id of the stop.
    public var stop: String
    /// The player's name in the hunt.
    public var player: String
    /// Where it stands: accepted, pending, flagged or rejected.
    public var status: CheckInStatus
    /// What it earns: the stop's points (plus a bonus) once accepted, else 0.
    public var points: Int
    /// When it was made.
    public var at: Timestamp
    /// The great-circle distance from the fix to the stop, in metres.
    public var distanceMeters: Double
    /// The photo sent with it, for a photo stop.
    public var photo: PhotoInfo?
    /// What flagged it for its speed, for reviewers only (nil for a check-in not flagged so).
    public var travel: Travel?

    /// A check-in from its fields.
    public init(
        id: String, hunt: String, stop: String, player: String, status: CheckInStatus, points: Int, at: Timestamp,
        distanceMeters: Double, photo: PhotoInfo?, travel: Travel? = nil
    ) {
        self.travel = travel
        self.id = id
        self.hunt = hunt
        self.stop = stop
        self.player = player
        self.status = status
        self.points = points
        self.at = at
        self.distanceMeters = distanceMeters
        self.photo = photo
    }
}

/// The travel-speed check's figures for a flagged check-in: how far its fix is from the player's
/// previous standing fix, the seconds between them, and the speed that implies.
public struct Travel: Sendable, Equatable, Codable {
    public var fromMeters: Double
    public var seconds: Double

    public init(fromMeters: Double, seconds: Double) {
        self.fromMeters = fromMeters
        self.seconds = seconds
    }

    /// The speed in km/h (as if a microsecond passed when none did, so it is always a number).
    public var kmh: Double {
        TravelSpeed.speedKmh(distanceMeters: fromMeters, elapsedMicroseconds: max(1, Int64((seconds * 1_000_000).rounded())))
    }
}

/// A row of a leaderboard (a hunt's, or the ranking of all users).
public struct LeaderboardEntry: Sendable, Equatable {
    /// Competition rank (1, 2, 2, 4): one more than the number of entries strictly ahead.
    public var rank: Int
    /// The player's name in the hunt (the username in the ranking of all users).
    public var player: String
    /// Points from accepted check-ins (bonuses included).
    public var points: Int
    /// Stops found (accepted check-ins).
    public var found: Int
    /// When the player reached these points, to the microsecond; nil at 0 points.
    public var at: Timestamp?
    /// Whether the entry is a time trial's (it then shows ``trialSeconds``, as `time_s`).
    public var isTrial: Bool = false
    /// In a time trial: seconds from the player's first check-in to their last accepted one;
    /// nil when nothing is found yet (and outside trials).
    public var trialSeconds: Double? = nil
    /// In a team hunt (where ``player`` is the team's name): its members' player names; nil for
    /// a player's entry.
    public var members: [String]? = nil

    /// An entry from its fields.
    public init(
        rank: Int, player: String, points: Int, found: Int, at: Timestamp?, isTrial: Bool = false, trialSeconds: Double? = nil,
        members: [String]? = nil
    ) {
        self.rank = rank
        self.player = player
        self.points = points
        self.found = found
        self.at = at
        self.isTrial = isTrial
        self.trialSeconds = trialSeconds
        self.members = members
    }
}
