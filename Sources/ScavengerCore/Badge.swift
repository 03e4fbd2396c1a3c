// Badges (protocol 1.4's achievements): what each one is, and the pure rules that say which a
// write earns and which a rejection takes back. The store reads the facts in the transaction of
// the write and writes what these rules answer.
//
// Only a REJECT of an accepted check-in takes badges back. LEAVE (which takes the player's points
// back) and a moderator's removal of a hunt or stop keep them: a badge records that something was
// achieved, and neither says it was not.

/// A badge a user holds.
public struct Badge: Sendable, Equatable {
    /// `first-find`, `finisher`, `explorer-10`, `explorer-100`, `pathfinder`, `trial`, or
    /// `hunt:<hunt id>` for a hunt's own badge.
    public var id: String
    public var name: String
    public var description: String
    /// The hunt it was earned in (nil if none).
    public var hunt: String?
    /// When it was awarded.
    public var at: Timestamp

    public init(id: String, name: String, description: String, hunt: String?, at: Timestamp) {
        self.id = id
        self.name = name
        self.description = description
        self.hunt = hunt
        self.at = at
    }
}

/// A badge a write earns: what the store inserts (once per user and badge).
public struct BadgeAward: Sendable, Equatable {
    public var id: String
    public var name: String
    public var description: String
    /// The hunt it is earned in.
    public var hunt: String
    /// The check-in that earned it.
    public var checkIn: String

    public init(id: String, name: String, description: String, hunt: String, checkIn: String) {
        self.id = id
        self.name = name
        self.description = description
        self.hunt = hunt
        self.checkIn = checkIn
    }
}

/// What an accepted check-in's transaction knows when it decides its badges (after the credit).
public struct BadgeFacts: Sendable, Equatable {
    /// The accepted check-in.
    public var checkIn: String
    public var hunt: String
    /// The hunt's stops and players (as read under the check-in's locks).
    public var stops: Int
    public var players: Int
    /// The hunt's own badge's name, if it has one.
    public var huntBadge: String?
    /// The hunt's time trial in seconds, if it is one.
    public var trialSeconds: Int?
    /// Accepted check-ins at the stop before this one (its `found_by` before the credit).
    public var stopFoundBefore: Int
    /// The player's stops found in the hunt, this one included.
    public var foundInHunt: Int
    /// The user's stops found across hunts (all-time `found`), this one included.
    public var allTimeFound: Int
    /// From the player's first live (accepted, pending or flagged) check-in in the hunt to the
    /// last accepted one (this one included), in seconds; nil when not read (no trial, or not
    /// completed).
    public var trialElapsedSeconds: Double?

    public init(
        checkIn: String, hunt: String, stops: Int, players: Int, huntBadge: String? = nil, trialSeconds: Int? = nil,
        stopFoundBefore: Int, foundInHunt: Int, allTimeFound: Int, trialElapsedSeconds: Double? = nil
    ) {
        self.checkIn = checkIn
        self.hunt = hunt
        self.stops = stops
        self.players = players
        self.huntBadge = huntBadge
        self.trialSeconds = trialSeconds
        self.stopFoundBefore = stopFoundBefore
        self.foundInHunt = foundInHunt
        self.allTimeFound = allTimeFound
        self.trialElapsedSeconds = trialElapsedSeconds
    }

    /// Whether this check-in completes the hunt for the player (every stop found).
    public var completesHunt: Bool { stops > 0 && foundInHunt >= stops }
}

/// What a rejection of an accepted check-in knows when it re-decides the user's badges (after
/// the debit).
public struct BadgeTakeBackFacts: Sendable, Equatable {
    /// The rejected check-in and its hunt.
    public var checkIn: String
    public var hunt: String
    /// Whether the player had completed the hunt before the rejection (it no longer is).
    public var huntWasCompleted: Bool
    /// The user's stops found across hunts and hunts completed, after the rejection.
    public var allTimeFound: Int
    public var huntsCompleted: Int
    /// The badges the user holds: id, the hunt it was earned in, the check-in that earned it.
    public var held: [(id: String, hunt: String?, checkIn: String?)]

    public init(
        checkIn: String, hunt: String, huntWasCompleted: Bool, allTimeFound: Int, huntsCompleted: Int,
        held: [(id: String, hunt: String?, checkIn: String?)]
    ) {
        self.checkIn = checkIn
        self.hunt = hunt
        self.huntWasCompleted = huntWasCompleted
        self.allTimeFound = allTimeFound
        self.huntsCompleted = huntsCompleted
        self.held = held
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.checkIn == rhs.checkIn && lhs.hunt == rhs.hunt && lhs.huntWasCompleted == rhs.huntWasCompleted
            && lhs.allTimeFound == rhs.allTimeFound && lhs.huntsCompleted == rhs.huntsCompleted
            && lhs.held.map { "\($0.id)|\($0.hunt ?? "")|\($0.checkIn ?? "")" } == rhs.held.map { "\($0.id)|\($0.hunt ?? "")|\($0.checkIn ?? "")" }
    }
}

/// The built-in badges and the rules that award them and take them back.
public enum BadgeRules {
    /// A built-in badge: id, name, one-line description.
    public struct Kind: Sendable, Equatable {
        public var id: String
        public var name: String
        public var description: String
    }

    public static let firstFind = Kind(id: "first-find", name: "First find", description: "Had a first check-in accepted.")
    public static let finisher = Kind(id: "finisher", name: "Finisher", description: "Completed a hunt: found every stop.")
    public static let explorer10 = Kind(id: "explorer-10", name: "Explorer", description: "Found 10 stops across hunts.")
    public static let explorer100 = Kind(id: "explorer-100", name: "Seasoned explorer", description: "Found 100 stops across hunts.")
    public static let pathfinder = Kind(
        id: "pathfinder", name: "Pathfinder", description: "First of all players to find a stop, in a hunt of at least 5 players.")
    public static let trial = Kind(id: "trial", name: "Against the clock", description: "Completed a time trial in time.")

    /// Every built-in badge, in the order they are listed.
    public static let builtIn: [Kind] = [firstFind, finisher, explorer10, explorer100, pathfinder, trial]

    /// The players a hunt needs for `pathfinder`.
    public static let pathfinderPlayers = 5

    /// The id of a hunt's own badge.
    public static func huntBadgeID(_ hunt: String) -> String { "hunt:" + hunt }

    /// The one-line description of a hunt's own badge.
    public static func huntBadgeDescription(_ huntName: String) -> String { "Completed the hunt \u{201C}\(huntName)\u{201D}." }

    /// The badges an accepted check-in earns, as far as its facts tell; the store inserts them
    /// once per user and badge, so one already held is simply proposed again and kept as it was.
    /// `huntName` names the hunt in its own badge's description.
    public static func awards(_ facts: BadgeFacts, huntName: String = "") -> [BadgeAward] {
        var awards: [BadgeAward] = []
        func award(_ kind: Kind) {
            awards.append(BadgeAward(id: kind.id, name: kind.name, description: kind.description, hunt: facts.hunt, checkIn: facts.checkIn))
        }
        award(firstFind)
        if facts.stopFoundBefore == 0, facts.players >= pathfinderPlayers { award(pathfinder) }
        if facts.allTimeFound >= 10 { award(explorer10) }
        if facts.allTimeFound >= 100 { award(explorer100) }
        if facts.completesHunt {
            award(finisher)
            if let trialSeconds = facts.trialSeconds, let elapsed = facts.trialElapsedSeconds, elapsed <= Double(trialSeconds) {
                award(trial)
            }
            if let name = facts.huntBadge {
                awards.append(BadgeAward(
                    id: huntBadgeID(facts.hunt), name: name, description: huntBadgeDescription(huntName.isEmpty ? name : huntName),
                    hunt: facts.hunt, checkIn: facts.checkIn))
            }
        }
        return awards
    }

    /// The badges a rejection of an accepted check-in takes back, re-decided from what still
    /// stands: `pathfinder` when that check-in earned it; the hunt's own badge, and `trial` when
    /// earned in that hunt, when the hunt was completed (it no longer is); `finisher` when no
    /// completed hunt is left; `explorer-10`/`explorer-100` when the stops found fall below;
    /// `first-find` when no stop found is left. Any other check-in that still qualifies keeps
    /// the badge (those rules look at what stands, not at which check-in earned it).
    /// In a team hunt, what a member's check-in that completes the hunt for their team earns
    /// each of the team's other members: the badges of completing it (`finisher`, `trial`, the
    /// hunt's own), from the same facts (the team's stops found, the team's time).
    public static func teamAwards(_ facts: BadgeFacts, huntName: String = "") -> [BadgeAward] {
        guard facts.completesHunt else { return [] }
        return awards(facts, huntName: huntName).filter { isCompletion($0.id) }
    }

    /// Whether a badge id is one that completing a hunt earns.
    public static func isCompletion(_ id: String) -> Bool {
        id == finisher.id || id == trial.id || id.hasPrefix("hunt:")
    }

    public static func takenBack(_ facts: BadgeTakeBackFacts) -> [String] {
        var taken: [String] = []
        for held in facts.held {
            let take: Bool
            switch held.id {
            case pathfinder.id: take = held.checkIn == facts.checkIn
            case trial.id: take = facts.huntWasCompleted && held.hunt == facts.hunt
            case huntBadgeID(facts.hunt): take = facts.huntWasCompleted
            case finisher.id: take = facts.huntsCompleted == 0
            case explorer10.id: take = facts.allTimeFound < 10
            case explorer100.id: take = facts.allTimeFound < 100
            case firstFind.id: take = facts.allTimeFound == 0
            default: take = false
            }
            if take { taken.append(held.id) }
        }
        return taken
    }

    /// Pathfinder for a group of accepted check-ins written in order in one transaction: each
    /// one's `found_by` before it, given the stop's before the group and the earlier ones at the
    /// same stop.
    public static func foundBefore(stops: [String], foundByAtStart: [Int]) -> [Int] {
        var seen: [String: Int] = [:]
        return zip(stops, foundByAtStart).map { stop, start in
            let earlier = seen[stop, default: 0]
            seen[stop] = earlier + 1
            return start + earlier
        }
    }
}

/// What a caller is to the hunt a badge was earned in: whether `BADGES` lists that badge to a
/// caller who is not its holder (``BadgeRules/isListed(_:callerHolds:callerModerates:)``).
public struct BadgeHuntAccess: Sendable, Equatable {
    public var isPublic: Bool
    /// Removed by moderators (or no longer there).
    public var removed: Bool
    public var callerHosts: Bool
    public var callerPlays: Bool

    public init(isPublic: Bool, removed: Bool, callerHosts: Bool, callerPlays: Bool) {
        self.isPublic = isPublic
        self.removed = removed
        self.callerHosts = callerHosts
        self.callerPlays = callerPlays
    }
}

extension BadgeRules {
    /// Whether `BADGES` lists a badge earned in a hunt (`hunt`; nil for none) to a caller: its
    /// holder and moderators see every badge; anyone else only those of hunts they may read (a
    /// public hunt that is not removed, one they host, one they play that is not removed), so
    /// no list names a private or removed hunt to a stranger.
    public static func isListed(_ hunt: BadgeHuntAccess?, callerHolds: Bool, callerModerates: Bool) -> Bool {
        guard let hunt, !callerHolds, !callerModerates else { return true }
        return hunt.callerHosts || (!hunt.removed && (hunt.isPublic || hunt.callerPlays))
    }
}
