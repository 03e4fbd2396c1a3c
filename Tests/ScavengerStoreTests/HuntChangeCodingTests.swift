@testable import ScavengerStore
import ScavengerCore
import Testing

// The hunts' change log's payloads, written and read without Foundation: every kind round-trips,
// strings of every sort survive, and the text PostgreSQL's jsonb prints back reads the same.

private let awkward = "quote \" backslash \\ slash / newline \n tab \t bell \u{07} nul-free é ü 漢字 🎯 \u{2028}"

@Suite("The hunts' change-log payloads")
struct HuntChangeCodingTests {
    static let changes: [HuntChange] = [
        .hunt,
        .hint(text: awkward, at: Timestamp(microseconds: 1_764_000_000_123_456)),
        .found(player: "amy", stop: "sabcdefghijklmnopqrstuvwx", points: 10_000),
        .standing(StandingChange(player: "bob", points: 35, found: 2, at: Timestamp(microseconds: 1_764_000_000_000_001), userID: 42), renamedFrom: "bobby"),
        .standing(StandingChange(player: "cat", points: 0, found: 0, at: nil, userID: nil), renamedFrom: nil),
        // A time trial's standing carries the player's first live and last accepted check-ins.
        .standing(StandingChange(
            player: "ida", points: 20, found: 2, at: Timestamp(microseconds: 90), userID: 8, trialFirst: Timestamp(microseconds: 10),
            trialLast: Timestamp(microseconds: 80)), renamedFrom: nil),
        .standing(StandingChange(
            player: "jo", points: 0, found: 0, at: nil, userID: 9, trialFirst: Timestamp(microseconds: 10), trialLast: nil), renamedFrom: nil),
        .left(player: "dan", userID: 7),
        .left(player: "eve", userID: nil),
        .reply(PinReply(id: "rabc", pin: "hxyz", text: awkward, author: "fay", created: Timestamp(microseconds: 5))),
        .totals(UserTotals(
            user: "gus", allTime: Leaderboard.Standing(points: 120, found: 9, at: Timestamp(microseconds: 77)),
            week: ScoreWeek(mondayDay: 20_416)!, weekly: Leaderboard.Standing(points: 0, found: 0, at: nil),
            huntsPlayed: 3, huntsCompleted: 1, role: .moderator)),
        .badge(player: "hal", badge: Badge(id: "hunt:hxyz", name: awkward, description: awkward, hunt: "hxyz", at: Timestamp(microseconds: 9))),
        .badge(player: "ivy", badge: Badge(id: "first-find", name: "First find", description: "d", hunt: nil, at: Timestamp(microseconds: 0))),
        // A team's standing: its name (spaces and all), members with their ids, trial times.
        .team(TeamStandingChange(
            team: "Red \"Foxes\" \\ 2", points: 30, found: 2, at: Timestamp(microseconds: 44), members: ["amy", "bob"], memberIDs: [3, 4])),
        .team(TeamStandingChange(team: "Empty", points: 0, found: 0, at: nil, members: [], memberIDs: [])),
        .team({
            var team = TeamStandingChange(team: "Fast", points: 5, found: 1, at: Timestamp(microseconds: 9), members: ["cy"], memberIDs: [5])
            team.trialFirst = Timestamp(microseconds: 1)
            team.trialLast = Timestamp(microseconds: 9)
            return team
        }()),
        .review(checkIn: "cabc", status: .pending),
        .review(checkIn: "cdef", status: .flagged),
    ]

    @Test("every kind of change reads back as written", arguments: changes)
    func roundTrip(change: HuntChange) throws {
        let (kind, payload) = HuntChangeCoding.encode(change)
        let hunt = if case .reply(let reply) = change { reply.pin } else { "hxyz" }
        #expect(HuntChangeCoding.decode(kind: kind, payload: payload, hunt: hunt) == change, "\(payload)")
    }

    @Test("a standing logged before time trials reads with no trial times")
    func standingBeforeTrials() {
        let printed = #"{"at": 77, "user": 4, "found": 1, "player": "amy", "points": 10}"#
        let change = HuntChangeCoding.decode(kind: "standing", payload: printed, hunt: "h")
        #expect(change == .standing(StandingChange(player: "amy", points: 10, found: 1, at: Timestamp(microseconds: 77), userID: 4), renamedFrom: nil))
        if case .standing(let standing, _)? = change { #expect(standing.trialTime == nil) }
        let trial = StandingChange(
            player: "amy", points: 10, found: 1, at: nil, trialFirst: Timestamp(microseconds: 5), trialLast: Timestamp(microseconds: 2_000_005))
        #expect(trial.trialTime == 2_000_000)
    }

    @Test("the text jsonb prints back (spaces, keys reordered, escapes of its own) reads the same")
    func jsonbText() {
        let printed = #"{"at": 1764000000123456, "text": "a \"q\" \\ \u00e9 \ud83c\udfaf \n"}"#
        #expect(HuntChangeCoding.decode(kind: "hint", payload: printed, hunt: "h") == .hint(
            text: "a \"q\" \\ é 🎯 \n", at: Timestamp(microseconds: 1_764_000_000_123_456)))
    }

    @Test("malformed payloads read as nothing", arguments: [
        "", "{", "{\"player\": }", "{\"player\": \"amy\"", "[1, 2]", "{\"player\": \"a\"} x", "{\"player\": \"\\ud83c\"}",
        "{\"player\": \"a\", \"stop\": \"s\", \"points\": 1.5}",
    ])
    func malformed(payload: String) {
        #expect(HuntChangeCoding.decode(kind: "found", payload: payload, hunt: "h") == nil)
    }

    @Test("strings are escaped as JSON: quotes, backslashes and control characters")
    func escaping() {
        #expect(JSONObjectWriter.quoted("a\"b\\c\n\u{01}") == #""a\"b\\c\n\u0001""#)
        #expect(JSONValueReader.parse(JSONObjectWriter.quoted(awkward)) == .string(awkward))
    }
}
