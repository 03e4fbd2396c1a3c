import ScavengerCore
import Testing

@Suite("Badges that record a first: which a check-in earns, which a rejection takes back")
struct BadgeRulesTests {
    @Test("the firsts an accepted check-in earns", arguments: [
        (5, false, ["first-find", "pathfinder"]),
        (5, true, ["first-find"]),
        (4, false, ["first-find"]),
        (100, false, ["first-find", "pathfinder"]),
    ])
    func firsts(players: Int, foundBefore: Bool, expected: [String]) {
        let awards = BadgeRules.firsts(BadgeFacts(checkIn: "c1", hunt: "h1", players: players, stopFoundBefore: foundBefore))
        #expect(awards.map(\.id) == expected)
        #expect(awards.allSatisfy { $0.checkIn == "c1" && $0.hunt == "h1" })
    }

    @Test("a rejection takes back the pathfinder its check-in earned; first-find moves to a find that stands, or goes", arguments: [
        ([("first-find", "c1"), ("pathfinder", "c1")], "c2", ["pathfinder"], ["first-find>c2"]),
        ([("first-find", "c1"), ("pathfinder", "c1")], nil, ["first-find", "pathfinder"], []),
        ([("first-find", "c0"), ("pathfinder", "c1")], "c2", ["pathfinder"], []),
        ([("first-find", "c0"), ("finisher", "c1"), ("explorer-10", "c1")], nil, [], []),
    ] as [([(String, String)], String?, [String], [String])])
    func afterRejecting(held: [(String, String)], standing: String?, takenBack: [String], moved: [String]) {
        let change = BadgeRules.afterRejecting(checkIn: "c1", held: held.map { (id: $0.0, checkIn: $0.1) }, standing: standing)
        #expect(change.takenBack == takenBack)
        #expect(change.moved.map { "\($0.badge)>\($0.to)" } == moved)
    }

    @Test("whether a stop was found before each of a group's accepted check-ins, in the group's order", arguments: [
        ([String](), [Bool](), [Bool]()),
        (["s1"], [false], [false]),
        (["s1", "s1", "s2", "s1"], [false, false, true, false], [false, true, true, true]),
        (["s2", "s1", "s2"], [true, false, true], [true, false, true]),
    ])
    func foundBefore(stops: [String], start: [Bool], expected: [Bool]) {
        #expect(BadgeRules.foundBefore(stops: stops, foundAtStart: start) == expected)
    }

    @Test("a hunt's own badge may not take a built-in badge's name or id", arguments: [
        ("Finisher", true), ("FIRST FIND", true), ("explorer-10", true), ("Against the clock", true), ("Bridge master", false),
    ])
    func builtInNames(name: String, builtIn: Bool) {
        #expect(BadgeRules.isBuiltInName(name) == builtIn)
    }
}
