import ScavengerCore
import ScavengerTestSupport
import Testing

/// The leaderboard as the contract words it, computed the slow and obvious way: sort everyone,
/// then count for each player those strictly ahead.
private struct Oracle {
    struct Standing: Equatable {
        var points: Int
        var found: Int
        var at: Timestamp?
    }

    var standings: [String: Standing] = [:]
    /// Each name's place in name order: by its lowercased bytes, then by its bytes. Computed
    /// once for the names a test uses, so that sorting the board compares numbers only.
    let nameOrder: [String: Int]

    init(names: [String]) {
        let byName = names.map { (name: $0, folded: Array($0.lowercased().utf8), bytes: Array($0.utf8)) }.sorted { a, b in
            a.folded != b.folded ? a.folded.lexicographicallyPrecedes(b.folded) : a.bytes.lexicographicallyPrecedes(b.bytes)
        }
        nameOrder = Dictionary(uniqueKeysWithValues: byName.enumerated().map { ($0.element.name, $0.offset) })
    }

    private struct SortKey {
        var points: Int
        var at: Int64
        var name: Int
        var row: Int
    }

    static func ahead(_ a: Standing, of b: Standing) -> Bool {
        a.points > b.points || (a.points == b.points && a.points > 0 && a.at! < b.at!)
    }

    /// Every entry, in order (points descending, then the instant above 0 points, then the
    /// name), ranks counted in one pass over the sorted list.
    func entries() -> [LeaderboardEntry] {
        let rows = Array(standings)
        let keys = rows.indices.map { index in
            let (name, standing) = rows[index]
            return SortKey(
                points: standing.points, at: standing.points > 0 ? standing.at!.microseconds : 0, name: nameOrder[name]!, row: index)
        }
        let sorted = keys.sorted { a, b in
            if a.points != b.points { return a.points > b.points }
            if a.at != b.at { return a.at < b.at }
            return a.name < b.name
        }.map { rows[$0.row] }
        var entries: [LeaderboardEntry] = []
        entries.reserveCapacity(sorted.count)
        for (index, (name, standing)) in sorted.enumerated() {
            let rank: Int
            if index > 0, !Self.ahead(sorted[index - 1].value, of: standing) {
                rank = entries[index - 1].rank
            } else {
                rank = index + 1
            }
            entries.append(LeaderboardEntry(rank: rank, player: name, points: standing.points, found: standing.found, at: standing.at))
        }
        return entries
    }

    /// A player's rank by its definition: one more than the players strictly ahead.
    func rank(of player: String) -> Int? {
        guard let standing = standings[player] else { return nil }
        return 1 + standings.values.count(where: { Self.ahead($0, of: standing) })
    }

    /// The entries of `after` that differ from the same player's in `before` (or are new).
    static func changed(from before: [LeaderboardEntry], to after: [LeaderboardEntry]) -> [LeaderboardEntry] {
        var old: [String: LeaderboardEntry] = [:]
        for entry in before { old[entry.player] = entry }
        return after.filter { old[$0.player] != $0 }
    }
}

/// Random operations on a leaderboard and on the oracle side by side.
private struct Scenario {
    var random: SplitMix64
    var board = Leaderboard()
    var oracle: Oracle
    /// `oracle.entries()` as of the last step.
    var entries: [LeaderboardEntry] = []
    let names: [String]
    /// Few distinct points and instants, so ties of both kinds are common.
    let maximumPoints: Int
    let instants: Int64

    init(seed: UInt64, players: Int, maximumPoints: Int, instants: Int64) {
        var generator = SplitMix64(seed: seed)
        var names = Set<String>()
        let alphabet = Array("abcABC019_.-xyzXYZ")
        while names.count < players {
            let length = generator.int(in: 3 ... 6)
            names.insert(String((0 ..< length).map { _ in alphabet[generator.int(in: 0 ... alphabet.count - 1)] }))
        }
        random = generator
        // Some names that differ only in case, to test the last tie-break.
        names.formUnion(["abc", "ABC", "Abc", "aBc"])
        self.names = names.sorted()
        oracle = Oracle(names: self.names)
        self.maximumPoints = maximumPoints
        self.instants = instants
    }

    mutating func randomName() -> String { names[random.int(in: 0 ... names.count - 1)] }

    mutating func randomStanding() -> Oracle.Standing {
        let points = random.chance(0.2) ? 0 : random.int(in: 1 ... maximumPoints)
        let at = points == 0 ? nil : Timestamp(microseconds: 1_800_000_000_000_000 + Int64(random.int(in: 0 ... Int(instants))))
        return Oracle.Standing(points: points, found: random.int(in: 0 ... 3), at: at)
    }

    /// One random update, removal or rename; returns the entries it reported, the ones that
    /// changed by the oracle, and the names it touched.
    mutating func step() -> (reported: [LeaderboardEntry], expected: [LeaderboardEntry], touched: [String]) {
        let before = entries
        let player = randomName()
        let reported: [LeaderboardEntry]
        let roll = random.double(in: 0 ..< 1)
        if roll < 0.15 {
            reported = board.removeReportingChanges(player)
            oracle.standings[player] = nil
        } else if roll < 0.2, let existing = oracle.standings[player] {
            // A rename: no rank or points change, so nothing to report but the new name.
            let target = randomName()
            let renamed = board.rename(player, to: target)
            #expect(renamed == (oracle.standings[target] == nil && target != player))
            if renamed {
                oracle.standings[player] = nil
                oracle.standings[target] = existing
                entries = oracle.entries()
            }
            return ([], [], [player, target])
        } else if roll < 0.3, var standing = oracle.standings[player] {
            // Only the stops found change.
            standing.found += 1
            reported = board.updateReportingChanges(player, points: standing.points, found: standing.found, at: standing.at)
            oracle.standings[player] = standing
        } else if roll < 0.4, let other = oracle.standings[randomName()], other.points > 0 {
            // An exact tie with another player.
            let standing = Oracle.Standing(points: other.points, found: 1, at: other.at)
            reported = board.updateReportingChanges(player, points: standing.points, found: standing.found, at: standing.at)
            oracle.standings[player] = standing
        } else {
            let standing = randomStanding()
            reported = board.updateReportingChanges(player, points: standing.points, found: standing.found, at: standing.at)
            oracle.standings[player] = standing
        }
        entries = oracle.entries()
        return (reported, Oracle.changed(from: before, to: entries), [player])
    }

    /// Everything a reader can ask, checked against the oracle.
    mutating func checkEverything() {
        let expected = entries
        #expect(expected == oracle.entries())
        #expect(board.count == expected.count)
        // Pages of a random size, followed to the end through the cursor's text.
        let limit = random.int(in: 1 ... 40)
        var listed: [LeaderboardEntry] = []
        var page = board.page(after: nil, limit: limit)
        while true {
            #expect(page.entries.count == min(limit, expected.count - listed.count))
            listed += page.entries
            guard let next = page.next else { break }
            let cursor = LeaderboardCursor(scope: "hunt", position: next)
            guard let parsed = LeaderboardCursor(encoded: cursor.encoded), parsed.belongs(to: "hunt") else {
                Issue.record("cursor \(cursor.encoded) did not parse")
                return
            }
            page = board.page(after: parsed.position, limit: limit)
        }
        #expect(listed == expected)
        // Every player's rank and entry, and the oracle's one-pass ranks against their
        // definition (one expectation each: thousands of them would cost more than the checks).
        #expect(expected.map { board.rank(of: $0.player) } == expected.map(\.rank))
        #expect(expected.map { board.entry(of: $0.player) } == expected)
        #expect(expected.map { oracle.rank(of: $0.player) } == expected.map(\.rank))
        // AROUND for a few players, and for one who is not on the board.
        for _ in 0 ..< 5 {
            let player = randomName()
            let limit = random.int(in: 1 ... 25)
            let around = board.page(around: player, limit: limit)
            let start = expected.firstIndex(where: { $0.player == player }).map { max(0, $0 - limit / 2) } ?? 0
            let slice = Array(expected[start ..< min(expected.count, start + limit)])
            #expect(around.entries == slice, "\(player) limit \(limit)")
            #expect(around.next == (start + limit < expected.count ? board.position(of: slice.last!.player) : nil))
        }
    }
}

@Suite("Leaderboard against a brute-force sort and rank")
struct LeaderboardPropertyTests {
    @Test("thousands of seeded random updates, removals and renames", arguments: [
        // (seed, players, maximum points, instants)
        (UInt64(1), 60, 5, Int64(3)),  // ties everywhere
        (2, 150, 40, 20),
        (3, 300, 10_000, 1_000_000),  // ties rare
        (4, 20, 2, 1),
    ])
    func againstTheOracle(seed: UInt64, players: Int, maximumPoints: Int, instants: Int64) {
        var scenario = Scenario(seed: seed, players: players, maximumPoints: maximumPoints, instants: instants)
        for step in 0 ..< 3000 {
            let (reported, expected, touched) = scenario.step()
            if reported != expected {
                Issue.record("step \(step), \(touched): reported \(reported), expected \(expected)")
                return
            }
            if touched.map({ scenario.board.rank(of: $0) }) != touched.map({ scenario.oracle.rank(of: $0) }) {
                Issue.record("step \(step): the ranks of \(touched) differ from the oracle's")
            }
            if step % 50 == 0 { scenario.checkEverything() }
        }
        scenario.checkEverything()
    }

    @Test("paging while the board changes lists every player who stayed put exactly once")
    func pagingWhileChanging() {
        var scenario = Scenario(seed: 99, players: 200, maximumPoints: 30, instants: 5)
        for _ in 0 ..< 400 { _ = scenario.step() }
        for round in 0 ..< 30 {
            let limit = scenario.random.int(in: 1 ... 15)
            var touched = Set<String>()
            var seen: [String: Int] = [:]
            var page = scenario.board.page(after: nil, limit: limit)
            while true {
                for entry in page.entries { seen[entry.player, default: 0] += 1 }
                guard let next = page.next else { break }
                for _ in 0 ..< scenario.random.int(in: 0 ... 3) {
                    touched.formUnion(scenario.step().touched)
                }
                page = scenario.board.page(after: next, limit: limit)
            }
            for player in scenario.oracle.standings.keys where !touched.contains(player) {
                #expect(seen[player] == 1, "round \(round): \(player) seen \(seen[player] ?? 0) times")
            }
        }
    }

    @Test("10,000 players: updates and ranks stay right")
    func tenThousandPlayers() {
        var random = SplitMix64(seed: 10_000)
        var board = Leaderboard()
        var oracle = Oracle(names: (0 ..< 10_000).map { "player\($0)" })
        for index in 0 ..< 10_000 {
            let value = random.int(in: 0 ... 500)
            let standing = Oracle.Standing(points: value, found: 1, at: value == 0 ? nil : Timestamp(microseconds: Int64(index % 100)))
            board.update("player\(index)", points: standing.points, found: 1, at: standing.at)
            oracle.standings["player\(index)"] = standing
        }
        for step in 0 ..< 10_000 {
            let name = "player\(random.int(in: 0 ... 9999))"
            let value = oracle.standings[name]!.points + random.int(in: 0 ... 20)
            let standing = Oracle.Standing(points: value, found: 1, at: value == 0 ? nil : Timestamp(microseconds: 100 + Int64(step)))
            board.update(name, points: standing.points, found: 1, at: standing.at)
            oracle.standings[name] = standing
            if step % 1000 == 0 {
                #expect(board.rank(of: name) == oracle.rank(of: name))
            }
        }
        #expect(allPages(board) == oracle.entries())
    }

    private func allPages(_ board: Leaderboard) -> [LeaderboardEntry] {
        var entries: [LeaderboardEntry] = []
        var page = board.page(after: nil, limit: 200)
        entries += page.entries
        while let next = page.next {
            page = board.page(after: next, limit: 200)
            entries += page.entries
        }
        return entries
    }
}
