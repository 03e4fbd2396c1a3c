@testable import ScavengerBoard
import ScavengerCore
import ScavengerStore
import Testing

/// The hunts' decisions without a database: who may run a host's command, change the schedule,
/// chat, and when a check-in may be made (joining and leaving: GameRulesTests in the Core tests). (End-to-end tests over TCP cover each once.)
@Suite("Hunt decisions: the host's commands, the schedule, the chat, proofs, the running window")
struct HuntDecisionTests {
    static let now = Timestamp(microseconds: 1_800_000_000_000_000)
    static let hour: Int64 = 3_600_000_000

    static func at(_ hours: Int64) -> Timestamp { Timestamp(microseconds: now.microseconds + hours * hour) }

    /// A hunt hosted by user 1, public or not, removed or not, on `schedule`.
    static func hunt(_ schedule: HuntSchedule, isPublic: Bool = false, removed: Bool = false) -> HuntRecord {
        HuntRecord(
            id: "h1", name: "Walk", description: "", hostID: 1, hostName: "host", code: JoinCode(typed: "ABCDEF")!,
            ordered: false, isPublic: isPublic, schedule: schedule, stops: 3, players: 2, created: at(-48), removed: removed)
    }

    static let running = HuntSchedule(starts: at(-1), ends: at(1))
    static let ended = HuntSchedule(starts: at(-2), ends: at(-1))
    static let notStarted = HuntSchedule(starts: at(2), ends: at(3))
    static let byHand = HuntSchedule()

    static let host = DecisionTests.account(1, .user)
    static let player = DecisionTests.account(5, .user)
    static let moderator = DecisionTests.moderator
    static let refusal = BoardError(.forbidden, "only the hunt's host may do that")

    static func refusal(_ decide: () throws(BoardError) -> Void) -> String? { DecisionTests.refusal(decide) }

    @Test("a host's command: the host only, anyone else hears the refusal given", arguments: [
        (host, nil), (player, "forbidden only the hunt's host may do that"), (moderator, "forbidden only the hunt's host may do that"),
    ] as [(Account, String?)])
    func hostOnly(account: Account, refused: String?) {
        #expect(Self.refusal { () throws(BoardError) in try HuntDecisions.hostOnly(Self.hunt(Self.running), by: account, refusal: Self.refusal) } == refused)
    }

    @Test("the schedule: the host; a moderator only where moderators may (ENDHUNT), named for the log", arguments: [
        (host, false, "host"), (host, true, "host"), (moderator, true, "moderator 2"),
        (moderator, false, "forbidden only the hunt's host may do that"), (player, true, "forbidden only the hunt's host may do that"),
    ] as [(Account, Bool, String)])
    func scheduleChange(account: Account, moderatorsToo: Bool, outcome: String) {
        var decided = ""
        let refused = Self.refusal { () throws(BoardError) in
            let moderator = try HuntDecisions.scheduleChange(
                Self.hunt(Self.running), by: account, moderatorsToo: moderatorsToo, refusal: Self.refusal)
            decided = moderator.map { "moderator \($0)" } ?? "host"
        }
        #expect((refused ?? decided) == outcome)
    }

    @Test("the chat: members of the hunt; strangers hear FORBIDDEN of a public hunt, NOT_FOUND of a private or removed one", arguments: [
        (false, false, true, player, nil), (false, false, false, player, "notFound no such hunt"),
        (true, false, false, player, "forbidden only the hunt's host and players may use its chat"),
        (true, true, true, player, "notFound no such hunt"), (true, true, true, host, nil),
    ] as [(Bool, Bool, Bool, Account, String?)])
    func chat(isPublic: Bool, removed: Bool, member: Bool, account: Account, refused: String?) {
        let hunt = Self.hunt(Self.running, isPublic: isPublic, removed: removed)
        #expect(Self.refusal { () throws(BoardError) in try HuntDecisions.chat(hunt, member: member, by: account) } == refused)
    }

    @Test("a check-in's proof: PHOTO for photo stops, CODE for code stops, neither for place stops", arguments: [
        (StopProof.place, false, false, nil), (.place, true, false, "badArgument CODE is only for code stops"),
        (.place, false, true, "badArgument PHOTO is only for photo stops"), (.code, true, false, nil),
        (.code, false, false, "badArgument this stop needs its CODE"), (.code, true, true, "badArgument PHOTO is only for photo stops"),
        (.photo, false, true, nil), (.photo, false, false, "badArgument this stop needs a PHOTO"),
        (.photo, true, true, "badArgument CODE is only for code stops"),
    ] as [(StopProof, Bool, Bool, String?)])
    func proofOptions(proof: StopProof, code: Bool, photo: Bool, refused: String?) {
        #expect(Self.refusal { () throws(BoardError) in try HuntDecisions.proofOptions(proof, code: code, photo: photo) } == refused)
    }

    @Test("a check-in only while the hunt runs, saying when it starts or that it ended", arguments: [
        (running, nil), (ended, "conflict the hunt has ended"),
        (byHand, "conflict the hunt has not started; its host starts it"),
        (notStarted, "conflict the hunt has not started; it starts at \(at(2).rfc3339)"),
    ] as [(HuntSchedule, String?)])
    func runningWindow(schedule: HuntSchedule, refused: String?) {
        #expect(Self.refusal { () throws(BoardError) in try HuntDecisions.running(Self.hunt(schedule), at: Self.now) } == refused)
    }
}
