@testable import ScavengerBoard
import ScavengerCore
import ScavengerStore
import Testing

/// A check-in's rules without a database: `Board.judge` from the facts the store reads under
/// its locks to a verdict, a refusal, or a `TOO_FAR` that counts as a try.
@Suite("Check-in judgement: the rules from facts to a verdict")
struct CheckInJudgementTests {
    static let now = Timestamp(microseconds: 1_800_000_000_000_000)
    static let stopPlace = (lat: 48.8566, lon: 2.3522)

    /// A running hunt (started an hour ago, no end) with one stop of `proof`, 50 m radius, 10 points.
    static func facts(
        proof: StopProof = .place, hidden: Bool = false, ordered: Bool = false, player: Bool = true, live: Bool = false,
        next: Int? = 1, starts: Timestamp? = Timestamp(microseconds: 1_800_000_000_000_000 - 3_600_000_000), ends: Timestamp? = nil,
        previous: (lat: Double, lon: Double, at: Timestamp)? = nil, tooFarTries: Int = 0
    ) -> CheckInFacts {
        let hunt = HuntRecord(
            id: "h", name: "Walk", description: "", hostID: 1, hostName: "host", code: JoinCode(typed: "ABCDEF")!, ordered: ordered,
            isPublic: false, schedule: HuntSchedule(starts: starts, ends: ends), stops: 3, players: 1, created: .init(microseconds: 0))
        let stop = HuntStop(
            id: "s", hunt: "h", n: 1, title: "Bridge", clue: "", lat: stopPlace.lat, lon: stopPlace.lon, radiusMeters: 50, points: 10,
            proof: proof, foundBy: 0, hidden: hidden)
        return CheckInFacts(
            hunt: hunt, stop: stop, player: player ? PlayerRecord(userID: 2, name: "amy", points: 0, found: 0, pointsAt: nil) : nil,
            hasLiveCheckIn: live, nextStop: next, previous: previous,
            tooFarTries: Array(repeating: Timestamp(microseconds: now.microseconds - 1_000_000), count: tooFarTries), now: now)
    }

    /// At the stop, and about 1.1 km north of it.
    static let here = Fix(lat: stopPlace.lat, lon: stopPlace.lon)
    static let far = Fix(lat: stopPlace.lat + 0.01, lon: stopPlace.lon)

    /// What the judgement comes to, as one line: the verdict, or the refusal's code, words and figures.
    static func outcome(_ fix: Fix, _ facts: CheckInFacts) -> String {
        do {
            switch try Board.judge(fix, facts: facts, rules: HuntRules()) {
            case .write(let verdict):
                return "\(verdict.status.rawValue) \(verdict.points)" + (verdict.travel == nil ? "" : " travel")
            case .refuseCountingTry(let refusal):
                let error = refusal as? BoardError
                return "try \(error.map { "\($0.code)" } ?? "?") \(error?.distanceMeters.map(String.init) ?? "")"
            }
        } catch let error as BoardError {
            return "\(error.code) \(error.message)" + (error.retryAfterSeconds.map { " after \($0)" } ?? "")
        } catch {
            return "unexpected \(error)"
        }
    }

    @Test("each rule, in the order they are checked", arguments: [
        (here, facts(), "accepted 10"),
        (here, facts(proof: .photo), "pending 0"),
        (here, facts(player: false), "forbidden you are not a player of this hunt; JOIN it first"),
        (here, facts(starts: nil), "conflict the hunt has not started; its host starts it"),
        (here, facts(ends: Timestamp(microseconds: 1_800_000_000_000_000 - 1)), "conflict the hunt has ended"),
        (here, facts(live: true), "conflict you have already checked in at this stop"),
        (here, facts(ordered: true, next: 2), "conflict this hunt is ordered: your next stop is number 2"),
        (here, facts(ordered: false, next: 2), "accepted 10"),
        (far, facts(), "try tooFar 1111"),
        (far, facts(hidden: true), "try tooFar -1"),
        (far, facts(tooFarTries: 30), "rateLimited too many check-ins too far from this stop (at most 30 per 600 s); wait 599 s after 599"),
        (here, facts(tooFarTries: 29), "accepted 10"),
        // 50 km in a minute is faster than any player: flagged for review, with the figures.
        (here, facts(previous: (stopPlace.lat + 0.45, stopPlace.lon, Timestamp(microseconds: 1_800_000_000_000_000 - 60_000_000))),
         "flagged 0 travel"),
        // The same distance in a day is a trip.
        (here, facts(previous: (stopPlace.lat + 0.45, stopPlace.lon, Timestamp(microseconds: 1_800_000_000_000_000 - 86_400_000_000))),
         "accepted 10"),
    ] as [(Fix, CheckInFacts, String)])
    func rules(fix: Fix, facts: CheckInFacts, expected: String) {
        #expect(Self.outcome(fix, facts) == expected)
    }
}

/// A time trial's clock in the check-in judgement: the player's time runs from their earliest
/// live check-in (`trialStartedAt`), by the database's clock (`now`).
@Suite("Check-in judgement: a time trial's clock")
struct TrialJudgementTests {
    /// A 60 s trial's facts, its clock started `startedAgo` microseconds before `now` (nil: not started).
    static func facts(trial: Int? = 60, startedAgo: Int64?, live: Bool = false, ordered: Bool = false, next: Int? = 1) -> CheckInFacts {
        var facts = CheckInJudgementTests.facts(ordered: ordered, live: live, next: next)
        facts.hunt.trialSeconds = trial
        facts.trialStartedAt = startedAgo.map { Timestamp(microseconds: CheckInJudgementTests.now.microseconds - $0) }
        return facts
    }

    static let here = CheckInJudgementTests.here
    static let far = CheckInJudgementTests.far
    static let up = "conflict time is up: this time trial gives 60 s from your first check-in"

    @Test("time is up from the trial's seconds after the first live check-in, before the other rules", arguments: [
        (here, facts(startedAgo: nil), "accepted 10"),  // the first check-in starts the clock
        (here, facts(startedAgo: 0), "accepted 10"),
        (here, facts(startedAgo: 59_999_999), "accepted 10"),  // the last microsecond
        (here, facts(startedAgo: 60_000_000), up),
        (here, facts(startedAgo: 86_400_000_000), up),
        (here, facts(trial: nil, startedAgo: 86_400_000_000), "accepted 10"),  // no trial: no clock
        (here, facts(trial: 3_600, startedAgo: 60_000_000), "accepted 10"),
        // Time is up whatever else this check-in would be refused for.
        (here, facts(startedAgo: 60_000_000, live: true), up),
        (here, facts(startedAgo: 60_000_000, ordered: true, next: 2), up),
        (far, facts(startedAgo: 60_000_000), up),
        // In time, the other rules still hold.
        (here, facts(startedAgo: 10_000_000, live: true), "conflict you have already checked in at this stop"),
        (far, facts(startedAgo: 10_000_000), "try tooFar 1111"),
    ] as [(Fix, CheckInFacts, String)])
    func clock(fix: Fix, facts: CheckInFacts, expected: String) {
        #expect(CheckInJudgementTests.outcome(fix, facts) == expected)
    }

    @Test("a player who is not a player, or a hunt not running, is told that first")
    func orderOfRules() {
        var notPlayer = Self.facts(startedAgo: 60_000_000)
        notPlayer.player = nil
        #expect(CheckInJudgementTests.outcome(Self.here, notPlayer) == "forbidden you are not a player of this hunt; JOIN it first")
        var ended = Self.facts(startedAgo: 60_000_000)
        ended.hunt.schedule = HuntSchedule(starts: Timestamp(microseconds: 0), ends: Timestamp(microseconds: 1))
        #expect(CheckInJudgementTests.outcome(Self.here, ended) == "conflict the hunt has ended")
    }
}
