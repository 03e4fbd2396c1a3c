import Foundation

// The protocol's objects (README, "Objects", "Hunts", "Scores"). Times are `Date`s (RFC 3339 in
// UTC on the wire); ids are opaque strings. Decoding ignores fields it does not know, so a newer
// daemon's additions do not break an older client.

/// A role of a user.
public enum Role: String, Codable, Sendable, Hashable {
    case user, moderator, admin
}

/// A user: `{"name", "role"}`.
public struct User: Codable, Sendable, Hashable {
    public var name: String
    public var role: Role
    /// True for a guest (protocol 1.5: joined one hunt without an account); nil for an account.
    public var guest: Bool?
    /// Whether the user's email is verified: only in the user's own object (`WHOAMI`, `RESET`,
    /// `VERIFY code`), nil elsewhere.
    public var emailVerified: Bool?

    enum CodingKeys: String, CodingKey {
        case name, role, guest
        case emailVerified = "email_verified"
    }
}

/// A photo's type and size (never the image itself; ``ScavengerClient/photo(_:)`` reads that).
public struct PhotoInfo: Codable, Sendable, Hashable {
    public var mime: String
    public var bytes: Int
    /// In a moderation snapshot only: whether a copy of the photo is still held.
    public var kept: Bool?
    /// A check-in's photo: its size as shown (0 while unknown) and its paths on the HTTP port
    /// (``ScavengerClient/photoURL(_:base:)`` makes them absolute).
    public var width: Int?
    public var height: Int?
    public var url: String?
    public var thumb: String?
}

/// The kind of a pin.
public enum PinKind: String, Codable, Sendable, Hashable {
    case text, photo
}

/// A pin on the map.
public struct Pin: Codable, Sendable, Hashable, Identifiable {
    public var id: String
    public var lat: Double
    public var lon: Double
    public var kind: PinKind
    /// The message, or a photo pin's caption (may be empty).
    public var text: String
    public var author: String
    public var created: Date
    public var expires: Date
    public var region: String?
    public var photo: PhotoInfo?
    /// How many visible replies it has.
    public var replies: Int
    /// From `NEARBY` and watches only: the distance from the query's centre.
    public var distanceMeters: Double?
    /// A photo pin's size as shown (0 while unknown), and where the HTTP port serves it: the
    /// original and the 256 px thumbnail, as paths (``ScavengerClient/photoURL(_:base:)``).
    public var width: Int?
    public var height: Int?
    public var url: String?
    public var thumb: String?

    enum CodingKeys: String, CodingKey {
        case id, lat, lon, kind, text, author, created, expires, region, photo, replies, width, height, url, thumb
        case distanceMeters = "distance_m"
    }
}

/// A message in the chat of a pin or of a hunt (`pin` then holds the hunt's id).
public struct Reply: Codable, Sendable, Hashable, Identifiable {
    public var id: String
    public var pin: String
    public var text: String
    public var author: String
    public var created: Date
}

/// A page of a list: its items and the cursor of the next page (nil on the last).
public struct Page<Item: Sendable & Hashable>: Sendable, Hashable {
    public var items: [Item]
    public var next: String?
}

/// A photo's image: `PHOTO id`.
public struct Photo: Codable, Sendable, Hashable {
    public var id: String
    public var mime: String
    /// The image, decoded from its base64.
    public var data: Data

    enum CodingKeys: String, CodingKey { case id, mime, data }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        mime = try container.decode(String.self, forKey: .mime)
        guard let data = Data(base64Encoded: try container.decode(String.self, forKey: .data)) else {
            throw DecodingError.dataCorruptedError(forKey: .data, in: container, debugDescription: "not base64")
        }
        self.data = data
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(mime, forKey: .mime)
        try container.encode(data.base64EncodedString(), forKey: .data)
    }
}

/// `HELLO`: the server, its version, the protocol's and the connection's user.
public struct ServerInfo: Codable, Sendable, Hashable {
    public var server: String
    public var version: String
    public var `protocol`: Int
    public var user: User?
}

/// One command of `HELP`.
public struct CommandHelp: Codable, Sendable, Hashable {
    public var command: String
    public var syntax: String
    public var summary: String
    /// `write` (takes `REQUEST key`), `readonly` (changes nothing), or none (changes the
    /// connection's state); empty from a daemon older than the flags.
    public var flags: [String]

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        command = try container.decode(String.self, forKey: .command)
        syntax = try container.decode(String.self, forKey: .syntax)
        summary = try container.decode(String.self, forKey: .summary)
        flags = try container.decodeIfPresent([String].self, forKey: .flags) ?? []
    }
}

/// A logged-in session: the user and the token that resumes it (`AUTH`) on another connection.
public struct Session: Codable, Sendable, Hashable {
    public var user: User
    public var token: String
}

/// A guest's join (`JOIN code AS name GUEST`): the hunt, the guest session's token and the guest.
public struct GuestSession: Codable, Sendable, Hashable {
    public var hunt: Hunt
    public var token: String
    public var user: User
}

/// A named region and its number of live pins.
public struct RegionSummary: Codable, Sendable, Hashable {
    public var name: String
    public var pins: Int
}

/// A report's reason.
public enum ReportReason: String, Codable, Sendable, Hashable, CaseIterable {
    case spam, harassment, hate, sexual, violence, illegal, other
}

/// A report, as `REPORT` answers it.
public struct Report: Codable, Sendable, Hashable, Identifiable {
    public var id: String
    public var item: String
    public var status: String
}

/// What a reported item looked like at its first report.
public struct ContentSnapshot: Codable, Sendable, Hashable {
    public var text: String
    public var author: String
    public var lat: Double?
    public var lon: Double?
    public var created: Date?
    public var photo: PhotoInfo?
    public var kind: String?
    public var expires: Date?
    public var pin: String?
    public var hunt: String?
}

/// An item of the moderation queue.
public struct ModerationItem: Codable, Sendable, Hashable {
    public var item: String
    /// `pin`, `reply`, `hunt` or `stop`.
    public var kind: String
    public var content: ContentSnapshot
    public var reports: Int
    public var reasons: [String: Int]
    /// `open`, `claimed` or `resolved`.
    public var status: String
    public var claimedBy: String?
    public var hidden: Bool
    public var firstReported: Date
    public var lastReported: Date?
    public var resolution: String?

    enum CodingKeys: String, CodingKey {
        case item, kind, content, reports, reasons, status, hidden, resolution
        case claimedBy = "claimed_by", firstReported = "first_reported", lastReported = "last_reported"
    }
}

/// A moderator's action in `MODLOG`.
public struct LogEntry: Codable, Sendable, Hashable {
    public var at: Date
    public var moderator: String
    public var action: String
    public var item: String?
    public var user: String?
    public var note: String?
}

/// How a moderator decides an item.
public enum Resolution: String, Codable, Sendable, Hashable {
    case dismiss, remove, ban
}

/// A hunt's state.
public enum HuntState: String, Codable, Sendable, Hashable {
    case scheduled, running, ended
}

/// A hunt.
public struct Hunt: Codable, Sendable, Hashable, Identifiable {
    public var id: String
    public var name: String
    public var description: String
    public var host: String
    public var state: HuntState
    public var starts: Date?
    public var ends: Date?
    public var ordered: Bool
    public var `public`: Bool
    public var stops: Int
    public var players: Int
    /// The join code: in replies to the host only.
    public var code: String?
    /// A team hunt's largest team; nil for a hunt of single players (protocol 1.4).
    public var teams: Int?
    /// A time trial's seconds from each player's first check-in; nil for none (protocol 1.4).
    public var trial: Int?
    /// The name of the hunt's own badge, awarded to everyone who completes it; nil for none.
    public var badge: String?
    /// How many may join as guests, without an account; nil: accounts only (protocol 1.5).
    public var guests: Int?
}

/// What proves a player was at a stop.
public enum Proof: String, Codable, Sendable, Hashable {
    case place, code, photo
}

/// A stop of a hunt.
public struct Stop: Codable, Sendable, Hashable, Identifiable {
    public var id: String
    public var hunt: String
    public var n: Int
    public var title: String
    public var clue: String
    /// Nil for a hidden stop the caller has not found.
    public var lat: Double?
    public var lon: Double?
    public var radiusMeters: Double
    public var points: Int
    public var proof: Proof
    public var foundBy: Int

    enum CodingKeys: String, CodingKey {
        case id, hunt, n, title, clue, lat, lon, points, proof
        case radiusMeters = "radius_m", foundBy = "found_by"
    }
}

/// A check-in's state.
public enum CheckInStatus: String, Codable, Sendable, Hashable {
    case accepted, pending, flagged, rejected
}

/// A check-in at a stop.
public struct CheckIn: Codable, Sendable, Hashable, Identifiable {
    public var id: String
    public var hunt: String
    public var stop: String
    public var player: String
    public var status: CheckInStatus
    public var points: Int
    public var at: Date
    public var distanceMeters: Double
    public var photo: PhotoInfo?

    enum CodingKeys: String, CodingKey {
        case id, hunt, stop, player, status, points, at, photo
        case distanceMeters = "distance_m"
    }
}

/// A player's standing in a hunt.
public struct Score: Codable, Sendable, Hashable {
    public var points: Int
    public var found: Int
    public var rank: Int
}

/// `CHECKIN`'s answer: the check-in and the player's standing after it (in a team hunt, the
/// team's: a stop counts once per team).
public struct CheckInResult: Codable, Sendable, Hashable {
    public var checkin: CheckIn
    public var score: Score
}

/// A row of a leaderboard (`LEADERBOARD`) or of the ranking across hunts (`RANKING`).
public struct LeaderboardEntry: Codable, Sendable, Hashable {
    public var rank: Int
    /// The player's name in the hunt; in a team hunt's leaderboard, the team's name.
    public var player: String
    public var points: Int
    public var found: Int
    /// When the player reached these points (nil at 0).
    public var at: Date?
    /// In a time trial's leaderboard: seconds from the player's first check-in to their last
    /// accepted one (nil when nothing is found yet, and outside trials).
    public var timeSeconds: Double?
    /// In a team hunt's leaderboard (and its watch's `score` events): the names of the team's
    /// players (protocol 1.4); nil in a hunt of single players and in `RANKING`.
    public var members: [String]?

    enum CodingKeys: String, CodingKey {
        case rank, player, points, found, at, members
        case timeSeconds = "time_s"
    }
}

/// A hint of a hunt.
public struct Hint: Codable, Sendable, Hashable {
    public var text: String
    public var at: Date
}

/// The caller's standing in a hunt they play; in a team hunt, their team's (its points, the
/// stops the team found, its rank on the team board).
public struct HuntStanding: Codable, Sendable, Hashable {
    public var points: Int
    public var found: [String]
    public var rank: Int
    /// In a team hunt: the caller's team (protocol 1.4); nil in a hunt of single players.
    public var team: String?
}

/// `HUNT id`: the hunt, the stops the caller may see, hints, the caller's standing, winners.
public struct HuntDetails: Codable, Sendable, Hashable {
    public var hunt: Hunt
    public var stops: [Stop]
    public var hints: [Hint]
    public var me: HuntStanding?
    public var winners: [String]
}

/// A user's totals across hunts: `PROFILE`.
public struct Profile: Codable, Sendable, Hashable {
    public var user: User
    public var points: Int
    public var stopsFound: Int
    public var huntsPlayed: Int
    public var huntsCompleted: Int
    public var rank: Int?
    /// How many badges the user holds (nil from a server before protocol 1.4).
    public var badges: Int?

    enum CodingKeys: String, CodingKey {
        case user, points, rank, badges
        case stopsFound = "stops_found", huntsPlayed = "hunts_played", huntsCompleted = "hunts_completed"
    }
}

/// A badge a user holds: `BADGES`, and a hunt watch's `badge` event.
public struct Badge: Codable, Sendable, Hashable {
    /// `first-find`, `finisher`, `explorer-10`, `explorer-100`, `pathfinder`, `trial`, or
    /// `hunt:<hunt id>` for a hunt's own badge.
    public var id: String
    public var name: String
    public var description: String
    /// The hunt it was earned in.
    public var hunt: String?
    public var at: Date
}

/// A pin kind filter, a `STATUS` of the queue, a `RANKING` period.
public enum QueueStatus: String, Sendable, Hashable {
    case open, claimed, resolved, all
}

/// Which points `RANKING` counts.
public enum RankingPeriod: String, Sendable, Hashable {
    case allTime = "", week = "WEEK", lastWeek = "LASTWEEK"
}
