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
