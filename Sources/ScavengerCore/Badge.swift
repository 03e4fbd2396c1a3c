// Badges (protocol 1.4's achievements, 1.5's rules): what each one is, and the pure rules of the
// badges that record a first (`first-find`, `pathfinder`): they stay with whoever earned them
// unless a REJECT takes back the check-in that earned them. The badges that follow a state
// (`finisher`, `trial`, `explorer-*`, a hunt's own) are ``Achievements``'.

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

/// What an accepted check-in's transaction knows when it decides the firsts it earns.
public struct BadgeFacts: Sendable, Equatable {
    /// The accepted check-in.
    public var checkIn: String
    public var hunt: String
    /// The hunt's players (as read under the check-in's locks).
    public var players: Int
    /// Whether any player ever had a check-in accepted at the stop before this one.
    public var stopFoundBefore: Bool

    public init(checkIn: String, hunt: String, players: Int, stopFoundBefore: Bool) {
        self.checkIn = checkIn
        self.hunt = hunt
        self.players = players
        self.stopFoundBefore = stopFoundBefore
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

    /// The firsts an accepted check-in earns: `first-find` (the store inserts once per user and
    /// badge, so one already held is kept as it was) and `pathfinder` when no player ever had a
    /// check-in accepted at the stop before, in a hunt of at least ``pathfinderPlayers``.
    public static func firsts(_ facts: BadgeFacts) -> [BadgeAward] {
        func award(_ kind: Kind) -> BadgeAward {
            BadgeAward(id: kind.id, name: kind.name, description: kind.description, hunt: facts.hunt, checkIn: facts.checkIn)
        }
        var awards = [award(firstFind)]
        if !facts.stopFoundBefore, facts.players >= pathfinderPlayers { awards.append(award(pathfinder)) }
        return awards
    }

    /// What a rejection of check-in `checkIn` does to the firsts it earned: `pathfinder` goes (the
    /// stop's next first find may earn it); `first-find` moves to the user's earliest accepted
    /// check-in that still stands (`standing`), and goes only when none does.
    public static func afterRejecting(
        checkIn: String, held: [(id: String, checkIn: String?)], standing: String?
    ) -> (takenBack: [String], moved: [(badge: String, to: String)]) {
        var takenBack: [String] = []
        var moved: [(badge: String, to: String)] = []
        for badge in held where badge.checkIn == checkIn {
            switch badge.id {
            case pathfinder.id: takenBack.append(badge.id)
            case firstFind.id:
                if let standing { moved.append((badge.id, standing)) } else { takenBack.append(badge.id) }
            default: break
            }
        }
        return (takenBack, moved)
    }

    /// Whether `name` is a built-in badge's name or id (case-insensitively): a hunt's own badge
    /// may not pass for one.
    public static func isBuiltInName(_ name: String) -> Bool {
        let folded = name.lowercased()
        return builtIn.contains { $0.name.lowercased() == folded || $0.id == folded }
    }

    /// Pathfinder for a group of accepted check-ins written in order in one transaction: whether
    /// each one's stop was found before it, given whether it was before the group and the earlier
    /// ones at the same stop.
    public static func foundBefore(stops: [String], foundAtStart: [Bool]) -> [Bool] {
        var seen = Set<String>()
        return zip(stops, foundAtStart).map { stop, start in
            !seen.insert(stop).inserted || start
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
