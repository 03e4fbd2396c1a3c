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

    /// Whether `a` comes before `b`: points descending, then the instant (above 0 points), then
    /// the lowercased name's bytes, then the name's bytes.
    static func before(_ a: (String, Standing), _ b: (String, Standing)) -> Bool {
        if a.1.points != b.1.points { return a.1.points > b.1.points }
        if a.1.points > 0, a.1.at! != b.1.at! { return a.1.at! < b.1.at! }
        let foldedA = Array(a.0.lowercased().utf8)
        let foldedB = Array(b.0.lowercased().utf8)
        if foldedA != foldedB { return foldedA.lexicographicallyPrecedes(foldedB) }
        return Array(a.0.utf8).lexicographicallyPrecedes(Array(b.0.utf8))
    }

    static func ahead(_ a: Standing, of b: Standing) -> Bool {
        a.points > b.points || (a.points == b.points && a.points > 0 && a.at! < b.at!)
    }

    /// Every entry, in order, ranks counted in one pass over the sorted list.
    func entries() -> [LeaderboardEntry] {
        let sorted = standings.map { ($0.key, $0.value) }.sorted(by: Self.before)
        var entries: [LeaderboardEntry] = []
        for (index, (name, standing)) in sorted.enumerated() {
            let rank: Int
            if index > 0, !Self.ahead(sorted[index - 1].1, of: standing) {
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
    var oracle = Oracle()
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
        let before = oracle.entries()
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
        return (reported, Oracle.changed(from: before, to: oracle.entries()), [player])
    }

    /// Everything a reader can ask, checked against the oracle.
    mutating func checkEverything() {
        let expected = oracle.entries()
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
        // Every player's rank and entry, and ranks by their definition.
        for entry in expected {
            #expect(board.rank(of: entry.player) == entry.rank)
            #expect(board.entry(of: entry.player) == entry)
            #expect(oracle.rank(of: entry.player) == entry.rank)
        }
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
            for player in touched {
                #expect(scenario.board.rank(of: player) == scenario.oracle.rank(of: player))
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

    @Test("10,000 players: updates and ranks stay fast and right")
    func tenThousandPlayers() {
        var random = SplitMix64(seed: 10_000)
        var board = Leaderboard()
        var oracle = Oracle()
        for index in 0 ..< 10_000 {
            let value = random.int(in: 0 ... 500)
            let standing = Oracle.Standing(points: value, found: 1, at: value == 0 ? nil : Timestamp(microseconds: Int64(index % 100)))
            board.update("player\(index)", points: standing.points, found: 1, at: standing.at)
            oracle.standings["player\(index)"] = standing
        }
        for step in 0 ..< 20_000 {
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
