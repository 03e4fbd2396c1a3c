@testable import ScavengerFeed
import Testing

/// Where a rewritten change log parts from what a feed applied, and which `SINCE` positions are
/// then read again from the start (no database: the stamps are given).
@Suite("Reused positions after a failover: where the histories part, which SINCE resumes")
struct ReusedPositionsTests {
    /// A tracker that applied positions `applied` with stamps 100 + seq.
    static func tracker(_ applied: ClosedRange<Int64>, capacity: Int = 4096) -> ReusedPositions {
        var positions = ReusedPositions(capacity: capacity)
        positions.applied(applied.map { .init(seq: $0, stamp: 100 + $0) })
        return positions
    }

    /// The new log's stamps at the remembered positions 1…10, and the parting point they make.
    static let partings: [(stored: [Int64: Int64], parting: Int64)] = {
        func same(_ range: ClosedRange<Int64>) -> [Int64: Int64] {
            Dictionary(uniqueKeysWithValues: range.map { ($0, 100 + $0) })
        }
        var givenAgain = same(1 ... 6)
        givenAgain[7] = 9_999
        givenAgain[8] = 9_998
        var holed = same(1 ... 10)
        holed[4] = 1
        return [
            (same(1 ... 10), 10),
            (same(1 ... 6), 6),  // 7…10 lost with the old primary
            (givenAgain, 6),  // 7, 8 given out again
            (holed, 3),  // a later match does not count
            ([:], 0),  // nothing of it left: nothing known to be shared
        ]
    }()

    @Test("the parting point is the last position whose row is still the one applied, every one before it too",
          arguments: ReusedPositionsTests.partings)
    func partingPoint(stored: [Int64: Int64], parting: Int64) {
        let positions = Self.tracker(1 ... 10)
        #expect(positions.partingPoint(stored: stored) == parting)
    }

    @Test("nothing remembered (just loaded) parts at 0: every position up to the end is read again")
    func nothingRemembered() {
        var positions = ReusedPositions()
        #expect(positions.partingPoint(stored: [5: 105]) == 0)
        positions.rewritten(parting: 0, through: 40)
        #expect(positions.mayBeReused(1) && positions.mayBeReused(40))
        #expect(!positions.mayBeReused(0) && !positions.mayBeReused(41))
    }

    @Test("after a rewrite, SINCE past the parting point and up to the end is read again; before it, and after the end, resumes",
          arguments: [(Int64(0), false), (5, false), (6, false), (7, true), (10, true), (12, true), (13, false), (500, false)])
    func sinceAfterRewrite(since: Int64, readAgain: Bool) {
        var positions = Self.tracker(1 ... 10)
        #expect(!positions.mayBeReused(since), "no rewrite yet: everything resumes")
        positions.rewritten(parting: 6, through: 12)
        #expect(positions.mayBeReused(since) == readAgain)
        #expect(positions.recent.isEmpty, "what was remembered belonged to the old history")
    }

    @Test("a second failover adds its own range; the first's stays")
    func twoFailovers() {
        var positions = Self.tracker(1 ... 10)
        positions.rewritten(parting: 6, through: 10)
        positions.applied((11 ... 20).map { .init(seq: $0, stamp: 7 + $0) })
        #expect(positions.partingPoint(stored: Dictionary(uniqueKeysWithValues: (11 ... 15).map { ($0, 7 + $0) })) == 15)
        positions.rewritten(parting: 15, through: 20)
        #expect((7 ... 10).allSatisfy(positions.mayBeReused) && (16 ... 20).allSatisfy(positions.mayBeReused))
        #expect(!(11 ... 15).contains(where: positions.mayBeReused))
    }

    @Test("only the last `capacity` changes are remembered: an older parting point is not claimed")
    func capacity() {
        let positions = Self.tracker(1 ... 100, capacity: 10)
        #expect(positions.recent.count <= 20)
        // Everything still matches: the parting point is the newest remembered.
        #expect(positions.partingPoint(stored: Dictionary(uniqueKeysWithValues: (1 ... 100).map { ($0, 100 + $0) })) == 100)
        // The oldest of the last ten already differs: nothing remembered is known to be shared.
        #expect(positions.partingPoint(stored: Dictionary(uniqueKeysWithValues: (1 ... 90).map { ($0, 100 + $0) })) == 0)
    }
}
