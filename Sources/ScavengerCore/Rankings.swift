/// A week of the weekly ranking: an ISO week in UTC, from Monday 00:00:00 to the next Monday,
/// named by its Monday.
public struct ScoreWeek: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Days from 1970-01-01 to its Monday.
    public let mondayDay: Int

    private static let microsecondsPerDay: Int64 = 86_400_000_000

    /// The week whose Monday is `mondayDay` days after 1970-01-01; nil when that day is not a
    /// Monday.
    public init?(mondayDay: Int) {
        guard Self.weekday(mondayDay) == 0 else { return nil }
        self.mondayDay = mondayDay
    }

    /// The week `instant` falls in (UTC).
    public init(containing instant: Timestamp) {
        let micros = instant.microseconds
        let day = Int(micros >= 0 ? micros / Self.microsecondsPerDay : (micros - Self.microsecondsPerDay + 1) / Self.microsecondsPerDay)
        mondayDay = day - Self.weekday(day)
    }

    /// Days since the Monday of `day`'s week (0 Monday … 6 Sunday): 1970-01-01 was a Thursday.
    private static func weekday(_ day: Int) -> Int {
        ((day + 3) % 7 + 7) % 7
    }

    /// The week before.
    public var previous: ScoreWeek { ScoreWeek(uncheckedMonday: mondayDay - 7) }

    /// The week after.
    public var next: ScoreWeek { ScoreWeek(uncheckedMonday: mondayDay + 7) }

    /// Monday 00:00:00 UTC, when the week starts.
    public var start: Timestamp { Timestamp(microseconds: Int64(mondayDay) * Self.microsecondsPerDay) }

    /// Its Monday as `2026-11-23`.
    public var description: String { String(start.rfc3339.prefix(10)) }

    private init(uncheckedMonday day: Int) { mondayDay = day }

    public static func < (lhs: ScoreWeek, rhs: ScoreWeek) -> Bool { lhs.mondayDay < rhs.mondayDay }
}

/// A user's totals after a change of them, as the change log carries it: all-time, and in the
/// week of the check-in that changed them.
public struct UserTotals: Sendable, Equatable {
    /// The username.
    public var user: String
    /// Points, stops found and when the points were reached, across every hunt.
    public var allTime: Leaderboard.Standing
    /// The week of the check-in that changed them.
    public var week: ScoreWeek
    /// Points, stops found and when the points were reached, in ``week``.
    public var weekly: Leaderboard.Standing
    /// Hunts joined and not left; hunts whose every stop the user found.
    public var huntsPlayed: Int
    public var huntsCompleted: Int
    /// The user's role.
    public var role: Role

    /// Totals from their parts.
    public init(
        user: String, allTime: Leaderboard.Standing, week: ScoreWeek, weekly: Leaderboard.Standing,
        huntsPlayed: Int = 0, huntsCompleted: Int = 0, role: Role = .user
    ) {
        self.user = user
        self.allTime = allTime
        self.week = week
        self.weekly = weekly
        self.huntsPlayed = huntsPlayed
        self.huntsCompleted = huntsCompleted
        self.role = role
    }

    /// The profile these totals make (no rank).
    public var profile: UserProfile {
        UserProfile(user: User(name: user, role: role), standing: allTime, huntsPlayed: huntsPlayed, huntsCompleted: huntsCompleted, rank: nil)
    }
}

/// Which ranking of all users: all-time, or one week's.
public enum RankingBoard: Sendable, Hashable {
    case allTime
    case week(ScoreWeek)

    /// The name a cursor is bound to: a cursor pages only the board it came from.
    public var scope: String {
        switch self {
        case .allTime: "ranking"
        case .week(let week): "ranking-week-\(week)"
        }
    }
}

/// Which ranking a RANKING asks for: all-time, this week's, or last week's (each read by the clock).
public enum RankingPeriod: Sendable, Hashable {
    case allTime
    case thisWeek
    case lastWeek

    /// The board it names at `now`.
    public func board(at now: Timestamp) -> RankingBoard {
        switch self {
        case .allTime: .allTime
        case .thisWeek: .week(ScoreWeek(containing: now))
        case .lastWeek: .week(ScoreWeek(containing: now).previous)
        }
    }
}

/// The rankings of all users (RANKING), in memory: all-time, and this week's and last week's.
/// Only users with points are ranked; order and ranks are the leaderboard's (points, then who
/// reached them first, then name; competition ranks). Each board is a ``Leaderboard``, so a
/// user's rank, the top and any page cost O(log n) among a million users.
///
/// Weeks turn by the clock the caller passes: a week's board exists from its first points (a new
/// week starts empty, with nothing to do at midnight), and the week before the current one stays
/// readable until the current one ends. Older weeks are dropped as changes arrive
/// (``dropWeeks(before:)``).
public struct Rankings: Sendable {
    private var allTime = Leaderboard()
    private var weeks: [ScoreWeek: Leaderboard] = [:]
    /// Every user with totals (points or not: a hunt joined is enough), by ASCII-lowercased
    /// name: PROFILE from memory.
    private var profiles: [String: UserProfile] = [:]

    /// No one ranked.
    public init() {}

    /// The weeks that have a board, oldest first.
    public var weeksHeld: [ScoreWeek] { weeks.keys.sorted() }

    /// Users on `board`.
    public func count(_ board: RankingBoard) -> Int {
        switch board {
        case .allTime: allTime.count
        case .week(let week): weeks[week]?.count ?? 0
        }
    }

    /// Sets `user`'s all-time standing (taking them off at 0 points).
    public mutating func setAllTime(_ user: String, _ standing: Leaderboard.Standing) {
        Self.set(&allTime, user, standing)
    }

    /// Sets `user`'s standing in `week` (taking them off at 0 points).
    public mutating func setWeekly(_ user: String, _ standing: Leaderboard.Standing, in week: ScoreWeek) {
        if standing.points > 0 {
            Self.set(&weeks[week, default: Leaderboard()], user, standing)
        } else if weeks[week] != nil {
            weeks[week]!.remove(user)
            if weeks[week]!.isEmpty { weeks[week] = nil }
        }
    }

    /// Sets `profile` (no rank) as the user's, found by their name in any case.
    public mutating func setProfile(_ profile: UserProfile) {
        profiles[Self.key(profile.user.name)] = profile
    }

    /// The profile of the user named `name` (in any case), with their all-time rank; nil when
    /// they have no totals.
    public func profile(named name: String) -> UserProfile? {
        guard var profile = profiles[Self.key(name)] else { return nil }
        profile.rank = rank(of: profile.user.name, with: profile.standing, on: .allTime)
        return profile
    }

    /// Users with a profile.
    public var profileCount: Int { profiles.count }

    /// A name's key: usernames are ASCII and unique whatever their case.
    private static func key(_ name: String) -> String {
        String(decoding: name.utf8.map { (UInt8(ascii: "A") ... UInt8(ascii: "Z")).contains($0) ? $0 + 0x20 : $0 }, as: UTF8.self)
    }

    /// Applies a logged change of `totals`: the all-time board and the profile always, the week's
    /// board when the week is still kept at `now` (this week, the week before, or a later one).
    /// A guest's totals change nothing: a guest is on their hunt's board only (their name is not
    /// a username, and may be an account's).
    public mutating func apply(_ totals: UserTotals, now: Timestamp) {
        guard totals.role != .guest else { return }
        setProfile(totals.profile)
        setAllTime(totals.user, totals.allTime)
        let oldest = ScoreWeek(containing: now).previous
        if totals.week >= oldest {
            setWeekly(totals.user, totals.weekly, in: totals.week)
        }
        dropWeeks(before: oldest)
    }

    /// Drops the boards of weeks before `week`.
    public mutating func dropWeeks(before week: ScoreWeek) {
        for old in weeks.keys where old < week { weeks[old] = nil }
    }

    /// The instant given to points whose moment is missing (never, from the store): the last a
    /// row can have, so such a user ranks behind everyone tied with them, and nothing traps.
    static let unknownInstant = Timestamp(microseconds: Timestamp.storableMicroseconds.upperBound)

    private static func set(_ board: inout Leaderboard, _ user: String, _ standing: Leaderboard.Standing) {
        if standing.points > 0 {
            board.update(user, points: standing.points, found: standing.found, at: standing.at ?? unknownInstant)
        } else {
            board.remove(user)
        }
    }

    /// `user`'s entry on `board`, or nil when they are not ranked there.
    public func entry(of user: String, on board: RankingBoard) -> LeaderboardEntry? {
        switch board {
        case .allTime: allTime.entry(of: user)
        case .week(let week): weeks[week]?.entry(of: user)
        }
    }

    /// The rank `user` has on `board` with `standing` (their points as the database has them now,
    /// which this board may not have applied yet): one more than the others strictly ahead; nil
    /// at 0 points.
    public func rank(of user: String, with standing: Leaderboard.Standing, on board: RankingBoard) -> Int? {
        guard standing.points > 0 else { return nil }
        let position = LeaderboardPosition(points: standing.points, at: standing.at ?? Self.unknownInstant, player: user)
        switch board {
        case .allTime: return allTime.rank(at: position)
        case .week(let week): return weeks[week]?.rank(at: position) ?? 1
        }
    }

    /// Up to `limit` entries of `board` after `position` (nil: from the top).
    public func page(_ board: RankingBoard, after position: LeaderboardPosition?, limit: Int) -> LeaderboardPage {
        switch board {
        case .allTime: allTime.page(after: position, limit: limit)
        case .week(let week): weeks[week]?.page(after: position, limit: limit) ?? LeaderboardPage(entries: [], next: nil)
        }
    }

    /// The page of `board` that holds `user`, with up to `limit / 2` entries above them; the first
    /// page when they are not ranked there.
    public func page(_ board: RankingBoard, around user: String, limit: Int) -> LeaderboardPage {
        switch board {
        case .allTime: allTime.page(around: user, limit: limit)
        case .week(let week): weeks[week]?.page(around: user, limit: limit) ?? LeaderboardPage(entries: [], next: nil)
        }
    }
}

/// PROFILE: a user's totals across every hunt and their all-time rank.
public struct UserProfile: Sendable, Equatable {
    public var user: User
    /// All-time points, stops found and when the points were reached.
    public var standing: Leaderboard.Standing
    /// Hunts joined and not left.
    public var huntsPlayed: Int
    /// Hunts whose every stop the user found.
    public var huntsCompleted: Int
    /// The all-time rank; nil without points.
    public var rank: Int?
    /// How many badges the user holds.
    public var badges: Int = 0

    /// A profile from its parts.
    public init(user: User, standing: Leaderboard.Standing, huntsPlayed: Int, huntsCompleted: Int, rank: Int?) {
        self.user = user
        self.standing = standing
        self.huntsPlayed = huntsPlayed
        self.huntsCompleted = huntsCompleted
        self.rank = rank
    }
}
