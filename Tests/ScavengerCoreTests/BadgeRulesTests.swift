import ScavengerCore
import Testing

/// An accepted check-in's facts, each test changing what it is about.
private func facts(
    stops: Int = 3, players: Int = 5, huntBadge: String? = nil, trial: Int? = nil, foundBefore: Int = 1, inHunt: Int = 1,
    allTime: Int = 1, elapsed: Double? = nil
) -> BadgeFacts {
    BadgeFacts(
        checkIn: "c1", hunt: "h1", stops: stops, players: players, huntBadge: huntBadge, trialSeconds: trial, stopFoundBefore: foundBefore,
        foundInHunt: inHunt, allTimeFound: allTime, trialElapsedSeconds: elapsed)
}

/// What a rejection knows, each test changing what it is about.
private func rejected(
    wasCompleted: Bool = false, allTime: Int = 0, completed: Int = 0, held: [(id: String, hunt: String?, checkIn: String?)]
) -> BadgeTakeBackFacts {
    BadgeTakeBackFacts(checkIn: "c1", hunt: "h1", huntWasCompleted: wasCompleted, allTimeFound: allTime, huntsCompleted: completed, held: held)
}

@Suite("Badges: which a check-in earns, which a rejection takes back")
struct BadgeRulesTests {
    struct AwardCase: Sendable, CustomTestStringConvertible {
        let label: String
        let facts: BadgeFacts
        let expected: [String]
        var testDescription: String { label }
    }

    @Test("the badges an accepted check-in earns", arguments: [
        AwardCase(label: "an ordinary find: first-find (kept once by the store)", facts: facts(), expected: ["first-find"]),
        AwardCase(label: "first at a stop of a hunt of 5 players: pathfinder", facts: facts(foundBefore: 0), expected: ["first-find", "pathfinder"]),
        AwardCase(label: "first at a stop of a hunt of 4 players: no pathfinder", facts: facts(players: 4, foundBefore: 0), expected: ["first-find"]),
        AwardCase(label: "second at a stop: no pathfinder", facts: facts(players: 50, foundBefore: 1), expected: ["first-find"]),
        AwardCase(label: "9 stops found: no explorer", facts: facts(allTime: 9), expected: ["first-find"]),
        AwardCase(label: "10 stops found: explorer-10", facts: facts(allTime: 10), expected: ["first-find", "explorer-10"]),
        AwardCase(label: "99 stops found", facts: facts(allTime: 99), expected: ["first-find", "explorer-10"]),
        AwardCase(label: "100 stops found", facts: facts(allTime: 100), expected: ["first-find", "explorer-10", "explorer-100"]),
        AwardCase(label: "the last stop of a hunt: finisher", facts: facts(inHunt: 3), expected: ["first-find", "finisher"]),
        AwardCase(label: "two of three: not completed", facts: facts(huntBadge: "Old town", inHunt: 2), expected: ["first-find"]),
        AwardCase(label: "completing a hunt with its own badge", facts: facts(huntBadge: "Old town", inHunt: 3),
                  expected: ["first-find", "finisher", "hunt:h1"]),
        AwardCase(label: "a time trial completed in time", facts: facts(trial: 60, inHunt: 3, elapsed: 59.9),
                  expected: ["first-find", "finisher", "trial"]),
        AwardCase(label: "a time trial completed at its last second", facts: facts(trial: 60, inHunt: 3, elapsed: 60),
                  expected: ["first-find", "finisher", "trial"]),
        AwardCase(label: "a time trial completed too late", facts: facts(trial: 60, inHunt: 3, elapsed: 60.001), expected: ["first-find", "finisher"]),
        AwardCase(label: "a time trial not completed", facts: facts(trial: 60, inHunt: 2, elapsed: 1), expected: ["first-find"]),
        AwardCase(label: "everything at once",
                  facts: facts(stops: 1, players: 7, huntBadge: "B", trial: 600, foundBefore: 0, inHunt: 1, allTime: 100, elapsed: 0),
                  expected: ["first-find", "pathfinder", "explorer-10", "explorer-100", "finisher", "trial", "hunt:h1"]),
    ])
    func awards(_ item: AwardCase) {
        let awards = BadgeRules.awards(item.facts, huntName: "Old town")
        #expect(awards.map(\.id) == item.expected)
        #expect(awards.allSatisfy { $0.hunt == "h1" && $0.checkIn == "c1" && !$0.name.isEmpty && !$0.description.isEmpty })
    }

    @Test("a hunt's own badge is named by its BADGE and described by the hunt's name")
    func huntBadge() throws {
        let award = try #require(BadgeRules.awards(facts(huntBadge: "Bridge master", inHunt: 3), huntName: "Old town").last)
        #expect(award == BadgeAward(
            id: "hunt:h1", name: "Bridge master", description: "Completed the hunt \u{201C}Old town\u{201D}.", hunt: "h1", checkIn: "c1"))
    }

    @Test("every built-in badge has an id, a name and a one-line description, all different")
    func builtIn() {
        #expect(BadgeRules.builtIn.map(\.id) == ["first-find", "finisher", "explorer-10", "explorer-100", "pathfinder", "trial"])
        #expect(Set(BadgeRules.builtIn.map(\.name)).count == BadgeRules.builtIn.count)
        for kind in BadgeRules.builtIn {
            #expect(!kind.name.isEmpty && !kind.description.isEmpty && !kind.description.contains("\n"))
        }
    }

    struct TakeBackCase: Sendable, CustomTestStringConvertible {
        let label: String
        let facts: BadgeTakeBackFacts
        let expected: [String]
        var testDescription: String { label }
    }

    @Test("the badges a rejection of an accepted check-in takes back", arguments: [
        TakeBackCase(label: "the only find: first-find goes",
                     facts: rejected(allTime: 0, held: [("first-find", "h1", "c1")]), expected: ["first-find"]),
        TakeBackCase(label: "another find stands: first-find stays, even if this one earned it",
                     facts: rejected(allTime: 1, held: [("first-find", "h1", "c1")]), expected: []),
        TakeBackCase(label: "below 10 found: explorer-10 goes, whichever check-in earned it",
                     facts: rejected(allTime: 9, held: [("first-find", "h0", "c0"), ("explorer-10", "h0", "c9")]), expected: ["explorer-10"]),
        TakeBackCase(label: "still 10 found: explorer-10 stays",
                     facts: rejected(allTime: 10, held: [("explorer-10", "h1", "c1")]), expected: []),
        TakeBackCase(label: "below 100: explorer-100 goes, explorer-10 stays",
                     facts: rejected(allTime: 99, held: [("explorer-10", "h1", "c1"), ("explorer-100", "h1", "c1")]), expected: ["explorer-100"]),
        TakeBackCase(label: "the pathfinder's check-in: pathfinder goes",
                     facts: rejected(allTime: 3, held: [("pathfinder", "h1", "c1")]), expected: ["pathfinder"]),
        TakeBackCase(label: "another check-in's pathfinder stays",
                     facts: rejected(allTime: 3, held: [("pathfinder", "h1", "c2")]), expected: []),
        TakeBackCase(label: "un-completing the only completed hunt: its badge, finisher and trial go",
                     facts: rejected(wasCompleted: true, allTime: 2, completed: 0,
                                     held: [("finisher", "h1", "c3"), ("trial", "h1", "c3"), ("hunt:h1", "h1", "c3"), ("first-find", "h1", "c2")]),
                     expected: ["finisher", "trial", "hunt:h1"]),
        TakeBackCase(label: "un-completing one of two completed hunts: finisher stays, and the trial of the other",
                     facts: rejected(wasCompleted: true, allTime: 5, completed: 1,
                                     held: [("finisher", "h1", "c3"), ("trial", "h2", "c8"), ("hunt:h1", "h1", "c3"), ("hunt:h2", "h2", "c8")]),
                     expected: ["hunt:h1"]),
        TakeBackCase(label: "a hunt not completed: its (earlier) badge is not touched",
                     facts: rejected(wasCompleted: false, allTime: 5, completed: 1, held: [("hunt:h1", "h1", "c3"), ("finisher", "h1", "c3")]),
                     expected: []),
    ])
    func takenBack(_ item: TakeBackCase) {
        #expect(BadgeRules.takenBack(item.facts) == item.expected)
    }

    @Test("found_by before each of a group's accepted check-ins, in the group's order", arguments: [
        ([String](), [Int](), [Int]()),
        (["s1"], [0], [0]),
        (["s1", "s1", "s2", "s1"], [0, 0, 4, 0], [0, 1, 4, 2]),
        (["s2", "s1", "s2"], [3, 0, 3], [3, 0, 4]),
    ])
    func foundBefore(stops: [String], start: [Int], expected: [Int]) {
        #expect(BadgeRules.foundBefore(stops: stops, foundByAtStart: start) == expected)
    }
}
