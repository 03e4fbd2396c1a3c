import ScavengerCore
import ScavengerTestSupport
import Testing

/// `Leaderboard.rank(of:with:after:)`: a written check-in's rank, decided on the board the daemon
/// holds without changing it, must be what updating a copy and asking its rank gives.
@Suite("A check-in's rank on the hunt's board, with what its write left")
struct LeaderboardRankAfterTests {
    static func standing(points: Int, found: Int, at: Int64, time: Int64?) -> Leaderboard.Standing {
        Leaderboard.Standing(points: points, found: found, at: Timestamp(microseconds: at), trialTime: time)
    }

    @Test("a table: a new side, a side that moves up, an unchanged side (nil), changes by others before it", arguments: [
        // (board, side, its standing, earlier changes, rank)
        ([("amy", 20, 1), ("bob", 10, 2)], "cat", (30, 3), [] as [(String, Int, Int64)], 1),
        ([("amy", 20, 1), ("bob", 10, 2)], "cat", (10, 3), [], 3),
        ([("amy", 20, 1), ("bob", 10, 2)], "bob", (25, 3), [], 1),
        ([("amy", 20, 1), ("bob", 10, 2)], "bob", nil, [], 2),
        ([("amy", 20, 1), ("bob", 10, 2)], "cat", (15, 9), [("bob", 30, 4)], 3),
        ([("amy", 20, 1), ("bob", 10, 2)], "cat", (15, 9), [("amy", 10, 4), ("amy", 5, 5)], 1),
        ([("amy", 20, 1), ("bob", 10, 2)], "cat", (20, 1), [], 1),
        ([("amy", 0, 0), ("bob", 0, 0)], "cat", (0, 7), [], 1),
    ] as [([(String, Int, Int64)], String, (Int, Int64)?, [(String, Int, Int64)], Int)])
    func table(board rows: [(String, Int, Int64)], side: String, standing: (Int, Int64)?, changes: [(String, Int, Int64)], rank: Int) {
        var board = Leaderboard()
        for (name, points, at) in rows { board.update(name, points: points, found: points > 0 ? 1 : 0, at: Timestamp(microseconds: at)) }
        let mine = standing.map { Self.standing(points: $0.0, found: 1, at: $0.1, time: nil) }
        let earlier = changes.map { (side: $0.0, standing: Self.standing(points: $0.1, found: 1, at: $0.2, time: nil)) }
        #expect(board.rank(of: side, with: mine, after: earlier) == rank)
    }

    @Test("equals the rank of a copy with the changes applied, on boards of points and of time trials", arguments: [false, true])
    func againstCopies(trial: Bool) {
        var random = SplitMix64(seed: trial ? 51 : 15)
        let names = (0 ..< 12).map { "p\($0)" }
        for _ in 0 ..< 400 {
            func draw() -> Leaderboard.Standing {
                let found = Int.random(in: 0 ... 3, using: &random)
                let points = found == 0 ? 0 : 10 * Int.random(in: 0 ... 3, using: &random)
                return Self.standing(
                    points: points, found: found, at: Int64.random(in: 1 ... 5, using: &random),
                    time: Int64.random(in: 0 ... 4, using: &random) * 1_000_000)
            }
            var board = Leaderboard(trial: trial)
            for name in names where Bool.random(using: &random) {
                let s = draw()
                board.update(name, points: s.points, found: s.found, at: s.at, trialTime: s.trialTime)
            }
            let side = names.randomElement(using: &random)!
            let mine: Leaderboard.Standing? = Int.random(in: 0 ... 3, using: &random) == 0 ? nil : draw()
            let changes = (0 ..< Int.random(in: 0 ... 4, using: &random)).map { _ in (side: names.randomElement(using: &random)!, standing: draw()) }
            var copy = board
            for change in changes where change.side != side {
                copy.update(change.side, points: change.standing.points, found: change.standing.found, at: change.standing.at,
                            trialTime: change.standing.trialTime)
            }
            let own = mine ?? board.standing(of: side) ?? Leaderboard.Standing(points: 0, found: 0, at: nil)
            copy.update(side, points: own.points, found: own.found, at: own.at, trialTime: own.trialTime)
            #expect(board.rank(of: side, with: mine, after: changes) == copy.rank(of: side), "\(side) \(String(describing: mine)) \(changes)")
        }
    }
}
