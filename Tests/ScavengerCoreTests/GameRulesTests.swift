import ScavengerCore
import Testing

/// The game's rules as tables, without a database or a socket: joining, teams, leaving, the
/// trial clock, and the achievements that follow the facts (protocol 1.4 and 1.5).
@Suite("The game's rules: JOIN, teams, LEAVE, the trial clock, completions and badges")
struct GameRulesTests {
    static let singles = HuntMode(teamSize: nil, ordered: false, trialSeconds: nil)
    static let teams = HuntMode(teamSize: 3, ordered: false, trialSeconds: nil)
    static let trial = HuntMode(teamSize: nil, ordered: true, trialSeconds: 600)
    static let teamTrial = HuntMode(teamSize: 3, ordered: false, trialSeconds: 600)

    static func refusal(_ decide: () throws(GameRefusal) -> Void) -> String? {
        do throws(GameRefusal) {
            try decide()
            return nil
        } catch {
            return "\(error.kind) \(error.message)"
        }
    }

    @Test("JOIN: the host never; not after the end; not after a final LEAVE; TEAM where teams play and only there", arguments: [
        (singles, HuntState.running, false, nil, false, nil),
        (singles, .scheduled, false, nil, false, nil),
        (singles, .ended, false, nil, false, "conflict the hunt has ended"),
        (singles, .running, true, nil, false, "forbidden the host cannot join their own hunt"),
        (trial, .running, false, nil, true, "conflict you left this hunt while it was running; you cannot join it again before it ends"),
        (teams, .running, false, "Red", true, "conflict you left this hunt while it was running; you cannot join it again before it ends"),
        (teams, .running, false, "Red", false, nil),
        (teams, .running, false, nil, false, "badArgument this is a team hunt: JOIN it with TEAM and a team's name (a new name makes the team)"),
        (singles, .running, false, "Red", false, "badArgument this hunt is played by single players: JOIN it without TEAM"),
    ] as [(HuntMode, HuntState, Bool, String?, Bool, String?)])
    func join(mode: HuntMode, state: HuntState, isHost: Bool, team: String?, left: Bool, refused: String?) {
        let facts = JoinFacts(mode: mode, state: state, isHost: isHost, team: team, left: left)
        #expect(Self.refusal { () throws(GameRefusal) in try GameRules.join(facts) } == refused)
    }

    @Test("JOIN … TEAM: members rename freely; a running hunt's member keeps their team; room per team; teams per hunt", arguments: [
        (TeamJoinFacts(team: "Red", exists: true, members: 3, isMember: true, currentTeam: "Red", state: .running, teams: 5), nil),
        (TeamJoinFacts(team: "Red", exists: true, members: 2, isMember: false, currentTeam: "Blue", state: .scheduled, teams: 5), nil),
        (TeamJoinFacts(team: "Red", exists: true, members: 2, isMember: false, currentTeam: "Blue", state: .running, teams: 5),
         "conflict the hunt is running: you play for Blue until it ends"),
        (TeamJoinFacts(team: "Red", exists: true, members: 2, isMember: false, currentTeam: nil, state: .running, teams: 5), nil),
        (TeamJoinFacts(team: "Red", exists: true, members: 3, isMember: false, currentTeam: nil, state: .running, teams: 5),
         "conflict the team Red is full (3 players)"),
        (TeamJoinFacts(team: "New", exists: false, members: 0, isMember: false, currentTeam: nil, state: .running, teams: 4),
         "conflict this hunt holds at most 4 teams; join one of them"),
        (TeamJoinFacts(team: "Red", exists: true, members: 1, isMember: false, currentTeam: nil, state: .running, teams: 4), nil),
        (TeamJoinFacts(team: "New", exists: false, members: 0, isMember: false, currentTeam: nil, state: .scheduled, teams: 3), nil),
    ] as [(TeamJoinFacts, String?)])
    func joinTeam(facts: TeamJoinFacts, refused: String?) {
        #expect(Self.refusal { () throws(GameRefusal) in try GameRules.joinTeam(facts, largest: 3, maximumTeams: 4) } == refused)
    }

    @Test("LEAVE: free before the start and in open hunts, final while a trial or team hunt runs, refused after the end", arguments: [
        (singles, HuntState.running, LeaveEffect?.some(.free)), (singles, .scheduled, .free), (singles, .ended, nil),
        (trial, .running, .final), (trial, .scheduled, .free), (teams, .running, .final), (teams, .scheduled, .free),
        (teamTrial, .running, .final), (teamTrial, .ended, nil),
    ] as [(HuntMode, HuntState, LeaveEffect?)])
    func leave(mode: HuntMode, state: HuntState, effect: LeaveEffect?) {
        var decided: LeaveEffect?
        let refused = Self.refusal { () throws(GameRefusal) in decided = try GameRules.leave(mode: mode, state: state) }
        #expect(decided == effect)
        #expect((refused == nil) == (effect != nil))
    }

    @Test("the trial clock: none or not started runs; time is up at the trial's seconds", arguments: [
        (Int?.none, Int64?.none, Int64(0), nil),
        (600, nil, 10_000, nil),
        (600, 0, 599_999_999, nil),
        (600, 0, 600_000_000, "conflict time is up: this time trial gives 600 s from your first check-in"),
    ] as [(Int?, Int64?, Int64, String?)])
    func trialClock(seconds: Int?, started: Int64?, now: Int64, refused: String?) {
        #expect(Self.refusal { () throws(GameRefusal) in
            try GameRules.trialClock(
                seconds: seconds, startedAt: started.map { Timestamp(microseconds: $0) }, now: Timestamp(microseconds: now), team: false)
        } == refused)
    }

    @Test("a trial clock moves only when the check-in that started it is rejected")
    func trialClockMoves() {
        #expect(GameRules.trialClockMoves(rejecting: "c1", startedBy: "c1"))
        #expect(!GameRules.trialClockMoves(rejecting: "c2", startedBy: "c1"))
        #expect(!GameRules.trialClockMoves(rejecting: "c1", startedBy: nil))
    }

    /// One user's facts in hunt h1 of 3 stops with its own badge, each case changing what it is about.
    static func facts(
        mode: HuntMode = singles, removed: Bool = false, hidden: Bool = false, playing: Bool = true, found: Int = 3, counted: Bool = false,
        other: Int = 0, otherTrials: Int = 0, allTime: Int = 3, held: Set<String> = [], checkIn: String? = "c1", elapsed: Double? = 300
    ) -> CompletionFacts {
        var facts = CompletionFacts(
            userID: 7, hunt: "h1", huntName: "Old town", stops: 3, mode: mode, huntBadge: "Bridge master", awardsHuntBadge: !hidden && !removed,
            removed: removed, playing: playing, sideFound: found, counted: counted, otherCompletions: other, otherTrialCompletions: otherTrials,
            allTimeFound: allTime, held: held, checkIn: checkIn)
        facts.trialElapsedSeconds = elapsed
        return facts
    }

    struct SettleCase: Sendable, CustomTestStringConvertible {
        let label: String
        let facts: CompletionFacts
        let completion: Bool?
        let award: [String]
        let takeBack: [String]
        var testDescription: String { label }
    }

    @Test("achievements follow the facts, in any order of events", arguments: [
        SettleCase(label: "the last stop found", facts: facts(), completion: true, award: ["finisher", "hunt:h1"], takeBack: []),
        SettleCase(
            label: "a trial completed", facts: facts(mode: trial), completion: true, award: ["finisher", "trial", "hunt:h1"], takeBack: []),
        SettleCase(
            label: "a trial completed too late", facts: facts(mode: trial, elapsed: 601), completion: true, award: ["finisher", "hunt:h1"],
            takeBack: []),
        SettleCase(label: "a hidden hunt awards no badge of its own", facts: facts(hidden: true), completion: true, award: ["finisher"], takeBack: []),
        SettleCase(label: "not all found", facts: facts(found: 2), completion: nil, award: [], takeBack: []),
        SettleCase(
            label: "a rejection undoes it", facts: facts(found: 2, counted: true, held: ["finisher", "hunt:h1"], checkIn: nil),
            completion: false, award: [], takeBack: ["finisher", "hunt:h1"]),
        SettleCase(
            label: "undone, but another hunt still earns finisher", facts: facts(found: 2, counted: true, other: 1, held: ["finisher", "hunt:h1"]),
            completion: false, award: [], takeBack: ["hunt:h1"]),
        SettleCase(
            label: "a trial undone while another trial stands",
            facts: facts(mode: trial, found: 2, counted: true, other: 1, otherTrials: 1, held: ["finisher", "trial", "hunt:h1"], checkIn: nil),
            completion: false, award: [], takeBack: ["hunt:h1"]),
        SettleCase(
            label: "a trial undone, the only one", facts: facts(mode: trial, found: 2, counted: true, other: 1, held: ["finisher", "trial"]),
            completion: false, award: [], takeBack: ["trial"]),
        SettleCase(
            label: "leaving a completed hunt", facts: facts(playing: false, counted: true, held: ["finisher", "hunt:h1"], checkIn: nil),
            completion: false, award: [], takeBack: ["finisher", "hunt:h1"]),
        SettleCase(
            label: "a removed hunt completes for no one", facts: facts(removed: true, counted: true, held: ["finisher", "hunt:h1"], checkIn: nil),
            completion: false, award: [], takeBack: ["finisher", "hunt:h1"]),
        SettleCase(
            label: "a teammate's find completes it for a member", facts: facts(mode: teams, held: ["first-find"]),
            completion: true, award: ["finisher", "hunt:h1"], takeBack: []),
        SettleCase(
            label: "already counted and held: nothing", facts: facts(counted: true, held: ["finisher", "hunt:h1"]),
            completion: nil, award: [], takeBack: []),
        SettleCase(label: "explorer-10 reached", facts: facts(found: 1, allTime: 10), completion: nil, award: ["explorer-10"], takeBack: []),
        SettleCase(
            label: "explorer-10 lost", facts: facts(found: 1, allTime: 9, held: ["explorer-10"], checkIn: nil), completion: nil, award: [],
            takeBack: ["explorer-10"]),
        SettleCase(
            label: "a write that credits nothing completes nothing and awards nothing", facts: facts(checkIn: nil), completion: nil, award: [],
            takeBack: []),
        SettleCase(
            label: "firsts are not a state", facts: facts(found: 0, allTime: 0, held: ["first-find", "pathfinder"], checkIn: nil),
            completion: nil, award: [], takeBack: []),
    ])
    func settle(item: SettleCase) {
        let effects = Achievements.settle(item.facts)
        #expect(effects.completion == item.completion)
        #expect(effects.award.map(\.id) == item.award)
        #expect(effects.takeBack == item.takeBack)
        #expect(effects.award.allSatisfy { $0.checkIn == "c1" && $0.hunt == "h1" })
    }

    @Test("a credit settles only when a side completes or an explorer count is reached", arguments: [
        (3, 3, 3, true), (2, 3, 2, false), (2, 3, 10, true), (0, 0, 1, false), (1, 3, 100, true),
    ])
    func mayChangeOnCredit(found: Int, stops: Int, allTime: Int, expected: Bool) {
        #expect(Achievements.mayChangeOnCredit(sideFound: found, stops: stops, allTimeFound: allTime) == expected)
    }
}
