// Achievements that follow the facts (protocol 1.5): a completion and the badges that go with a
// state hold exactly while that state does. Every write that changes a player's or a team's
// accepted check-ins (a check-in, an approval, a rejection, a LEAVE, a moderator's removal of the
// hunt) reads these facts for each user it touches, in its own transaction, and applies what
// ``Achievements/settle(_:)`` answers; so whatever the order of events, what is held equals a
// recount. Badges that record a first (`first-find`, `pathfinder`) are not a state: see
// ``BadgeRules/firsts(_:)``.

/// What a write knows of one user and one hunt when it settles their achievements (after its own
/// changes to check-ins and totals).
public struct CompletionFacts: Sendable, Equatable {
    public var userID: Int
    public var hunt: String
    public var huntName: String
    /// The hunt's stops.
    public var stops: Int
    public var mode: HuntMode
    /// The hunt's own badge's name, if it has one.
    public var huntBadge: String?
    /// Whether the hunt may award its badge now (not hidden by reports, not removed).
    public var awardsHuntBadge: Bool
    /// Whether moderators removed the hunt (a removed hunt completes for no one).
    public var removed: Bool
    /// Whether the user still plays the hunt (false for one leaving it).
    public var playing: Bool
    /// Stops with an accepted check-in of the user's side: theirs, or their team's.
    public var sideFound: Int
    /// Whether the user's completion of the hunt is counted now (in `hunts_completed`).
    public var counted: Bool
    /// Completions counted in other hunts, and how many of those are time trials.
    public var otherCompletions: Int
    public var otherTrialCompletions: Int
    /// The user's stops found across hunts, as the write leaves them.
    public var allTimeFound: Int
    /// The ids of the badges the user holds.
    public var held: Set<String>
    /// The check-in that the write credits (awards are recorded against it); nil for a write
    /// that credits none (a rejection, a LEAVE, a removal), which awards nothing.
    public var checkIn: String?
    /// In a time trial: the side's time from its clock's start to its last accepted check-in, in
    /// seconds (nil when not known). A completion earns `trial` only within the trial's seconds.
    public var trialElapsedSeconds: Double? = nil

    public init(
        userID: Int, hunt: String, huntName: String, stops: Int, mode: HuntMode, huntBadge: String?, awardsHuntBadge: Bool, removed: Bool,
        playing: Bool, sideFound: Int, counted: Bool, otherCompletions: Int, otherTrialCompletions: Int, allTimeFound: Int,
        held: Set<String>, checkIn: String?
    ) {
        self.userID = userID
        self.hunt = hunt
        self.huntName = huntName
        self.stops = stops
        self.mode = mode
        self.huntBadge = huntBadge
        self.awardsHuntBadge = awardsHuntBadge
        self.removed = removed
        self.playing = playing
        self.sideFound = sideFound
        self.counted = counted
        self.otherCompletions = otherCompletions
        self.otherTrialCompletions = otherTrialCompletions
        self.allTimeFound = allTimeFound
        self.held = held
        self.checkIn = checkIn
    }

    /// Whether the user completes the hunt as the facts stand: they play it, it was not removed,
    /// and their side has an accepted check-in at every stop.
    public var completes: Bool { playing && !removed && stops > 0 && sideFound >= stops }
}

/// What settling one user's achievements changes.
public struct AchievementEffects: Sendable, Equatable {
    /// The completion's new value when it changes (`hunts_completed` moves by one with it).
    public var completion: Bool?
    /// Badges to award (once per user and badge).
    public var award: [BadgeAward]
    /// Ids of badges to take back.
    public var takeBack: [String]

    public init(completion: Bool? = nil, award: [BadgeAward] = [], takeBack: [String] = []) {
        self.completion = completion
        self.award = award
        self.takeBack = takeBack
    }

    /// Whether nothing changes.
    public var isEmpty: Bool { completion == nil && award.isEmpty && takeBack.isEmpty }
}

/// The rules of completions and of the badges that follow a state.
public enum Achievements {
    /// Stops found across hunts for each `explorer-*` badge.
    public static let explorers: [(kind: BadgeRules.Kind, stops: Int)] = [(BadgeRules.explorer10, 10), (BadgeRules.explorer100, 100)]

    /// Whether a credited check-in can change what ``settle(_:)`` answers: only a side that has
    /// now found every stop, or a user whose stops found across hunts reach an `explorer-*`
    /// count (a credit adds, so it takes nothing back). Writes that credit settle only then.
    public static func mayChangeOnCredit(sideFound: Int, stops: Int, allTimeFound: Int) -> Bool {
        (stops > 0 && sideFound >= stops) || explorers.contains { allTimeFound >= $0.stops }
    }

    /// A user's completion of a hunt and the badges that follow the facts: `finisher` while any
    /// completion is counted, `trial` while a time trial's completed in time is, the hunt's own while this one is,
    /// `explorer-*` while enough stops are found. A badge that should be held and is not is
    /// awarded only by a write that credits a check-in (and the hunt's own only while the hunt
    /// may award it); one held that should not be is taken back by any write.
    public static func settle(_ facts: CompletionFacts) -> AchievementEffects {
        var effects = AchievementEffects()
        let completes = facts.completes
        // A completion is gained by the write that credits the side's last stop (its members
        // then complete it, one who joins later does not); it is lost by any write that undoes it.
        if completes != facts.counted, !completes || facts.checkIn != nil { effects.completion = completes }
        let completions = facts.otherCompletions + (completes ? 1 : 0)
        let inTime = facts.mode.trialSeconds.map { seconds in facts.trialElapsedSeconds.map { $0 <= Double(seconds) } ?? false } ?? false
        let trialCompletions = facts.otherTrialCompletions + (completes && inTime ? 1 : 0)

        func follow(_ id: String, holds: Bool, mayAward: Bool, award: () -> BadgeAward?) {
            let held = facts.held.contains(id)
            if holds, !held, mayAward, facts.checkIn != nil, let made = award() {
                effects.award.append(made)
            } else if !holds, held {
                effects.takeBack.append(id)
            }
        }
        func builtIn(_ kind: BadgeRules.Kind) -> BadgeAward? {
            facts.checkIn.map { BadgeAward(id: kind.id, name: kind.name, description: kind.description, hunt: facts.hunt, checkIn: $0) }
        }
        for explorer in explorers {
            follow(explorer.kind.id, holds: facts.allTimeFound >= explorer.stops, mayAward: true) { builtIn(explorer.kind) }
        }
        follow(BadgeRules.finisher.id, holds: completions > 0, mayAward: completes) { builtIn(BadgeRules.finisher) }
        follow(BadgeRules.trial.id, holds: trialCompletions > 0, mayAward: completes && inTime) { builtIn(BadgeRules.trial) }
        if let name = facts.huntBadge {
            follow(BadgeRules.huntBadgeID(facts.hunt), holds: completes, mayAward: facts.awardsHuntBadge) {
                facts.checkIn.map {
                    BadgeAward(
                        id: BadgeRules.huntBadgeID(facts.hunt), name: name, description: BadgeRules.huntBadgeDescription(facts.huntName),
                        hunt: facts.hunt, checkIn: $0)
                }
            }
        }
        return effects
    }
}
