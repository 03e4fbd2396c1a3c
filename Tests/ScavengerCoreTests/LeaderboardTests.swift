import ScavengerCore
import Testing

private func at(_ micros: Int64) -> Timestamp { Timestamp(microseconds: 1_800_000_000_000_000 + micros) }

/// The whole board, by following pages of `limit` from the first to the end.
private func allEntries(_ board: Leaderboard, limit: Int = 1000) -> [LeaderboardEntry] {
    var entries: [LeaderboardEntry] = []
    var page = board.page(after: nil, limit: limit)
    entries += page.entries
    while let next = page.next {
        page = board.page(after: next, limit: limit)
        entries += page.entries
    }
    return entries
}

private func rows(_ entries: [LeaderboardEntry]) -> [String] {
    entries.map { "\($0.rank) \($0.player) \($0.points)" }
}

@Suite("Leaderboard: order and ranks")
struct LeaderboardOrderTests {
    @Test("competition ranks: only equal points reached at the same instant share one")
    func competitionRanks() {
        var board = Leaderboard()
        board.update("dora", points: 30, found: 3, at: at(5))
        board.update("bob", points: 20, found: 2, at: at(3))
        board.update("carl", points: 20, found: 2, at: at(3))
        board.update("anna", points: 20, found: 1, at: at(4))
        board.update("emil", points: 10, found: 1, at: at(1))
        #expect(rows(allEntries(board)) == ["1 dora 30", "2 bob 20", "2 carl 20", "4 anna 20", "5 emil 10"])
        // A page that starts inside a tie keeps the shared rank.
        #expect(rows(allEntries(board, limit: 2)) == rows(allEntries(board)))
        #expect(rows(board.page(after: board.position(of: "bob"), limit: 2).entries) == ["2 carl 20", "4 anna 20"])
        #expect(rows(board.page(around: "carl", limit: 1).entries) == ["2 carl 20"])
        #expect(board.rank(of: "carl") == 2)
        #expect(board.rank(of: "anna") == 4)
        #expect(board.rank(of: "nobody") == nil)
        #expect(board.entry(of: "anna") == LeaderboardEntry(rank: 4, player: "anna", points: 20, found: 1, at: at(4)))
    }

    @Test("a microsecond decides between equal points")
    func microseconds() {
        var board = Leaderboard()
        board.update("late", points: 10, found: 1, at: at(1))
        board.update("early", points: 10, found: 1, at: at(0))
        #expect(rows(allEntries(board)) == ["1 early 10", "2 late 10"])
    }

    @Test("players at 0 points share the last rank, are listed by name and have no time")
    func zeroPoints() {
        var board = Leaderboard()
        board.update("zed", points: 0, found: 0, at: nil)
        board.update("amy", points: 0, found: 1, at: at(9))  // a found stop worth 0: no time at 0 points
        board.update("max", points: 5, found: 1, at: at(2))
        board.update("Bea", points: 0, found: 0, at: nil)
        #expect(rows(allEntries(board)) == ["1 max 5", "2 amy 0", "2 Bea 0", "2 zed 0"])
        #expect(board.entry(of: "amy")?.at == nil)
        #expect(board.standing(of: "amy") == .init(points: 0, found: 1, at: nil))
        #expect(board.rank(of: "zed") == 2)
    }

    @Test("names order ties by their lowercased bytes, then by their bytes", arguments: [
        (["bob", "Alice", "carol"], ["Alice", "bob", "carol"]),
        (["abc", "ABC", "Abc"], ["ABC", "Abc", "abc"]),
        (["ab", "a_b", "a.b", "a-b", "A_B", "a9b"], ["a-b", "a.b", "a9b", "A_B", "a_b", "ab"]),
        (["abcd", "abc", "ABCD"], ["abc", "ABCD", "abcd"]),
        (["Zed", "zed_", "ZED"], ["ZED", "Zed", "zed_"]),
    ])
    func names(given: [String], expected: [String]) {
        for points in [0, 7] {
            var board = Leaderboard()
            for name in given { board.update(name, points: points, found: 0, at: at(1)) }
            let entries = allEntries(board)
            #expect(entries.map(\.player) == expected)
            #expect(Set(entries.map(\.rank)) == [1])
        }
    }

    @Test("an update moves a player; an unchanged one changes nothing; removing one moves those behind up")
    func updatesAndRemovals() {
        var board = Leaderboard()
        for (index, name) in ["aa", "bb", "cc", "dd"].enumerated() {
            board.update(name, points: 10 * (4 - index), found: 1, at: at(Int64(index)))
        }
        board.update("dd", points: 50, found: 2, at: at(10))
        #expect(rows(allEntries(board)) == ["1 dd 50", "2 aa 40", "3 bb 30", "4 cc 20"])
        board.update("dd", points: 50, found: 2, at: at(10))
        #expect(board.count == 4)
        let removed = board.remove("aa")
        let removedAgain = board.remove("aa")
        #expect(removed && !removedAgain)
        #expect(rows(allEntries(board)) == ["1 dd 50", "2 bb 30", "3 cc 20"])
        board.update("bb", points: 0, found: 0, at: nil)
        #expect(rows(allEntries(board)) == ["1 dd 50", "2 cc 20", "3 bb 0"])
    }

    @Test("a rename keeps the standing and moves the player among its ties only")
    func rename() {
        var board = Leaderboard()
        board.update("mid", points: 10, found: 1, at: at(1))
        board.update("zoe", points: 10, found: 1, at: at(1))
        board.update("top", points: 20, found: 2, at: at(0))
        let renamed = board.rename("zoe", to: "abe")
        #expect(renamed)
        #expect(rows(allEntries(board)) == ["1 top 20", "2 abe 10", "2 mid 10"])
        #expect(board.standing(of: "abe") == .init(points: 10, found: 1, at: at(1)))
        #expect(board.standing(of: "zoe") == nil)
        let ontoAnother = board.rename("abe", to: "mid")
        let ghost = board.rename("ghost", to: "new")
        #expect(!ontoAnother && !ghost)
        #expect(board.count == 3)
    }

    @Test("pages: LIMIT entries, next until the end, continuing after a player who left")
    func pages() {
        var board = Leaderboard()
        for index in 0 ..< 7 { board.update("p\(index)", points: 70 - 10 * index, found: 1, at: at(0)) }
        let first = board.page(after: nil, limit: 3)
        #expect(first.entries.map(\.player) == ["p0", "p1", "p2"])
        #expect(first.next == board.position(of: "p2"))
        board.remove("p2")
        let second = board.page(after: first.next, limit: 3)
        #expect(second.entries.map(\.player) == ["p3", "p4", "p5"])
        #expect(second.entries.map(\.rank) == [3, 4, 5])
        let last = board.page(after: second.next, limit: 3)
        #expect(last.entries.map(\.player) == ["p6"])
        #expect(last.next == nil)
        // A page that ends exactly at the end has no next.
        #expect(board.page(after: nil, limit: 6).next == nil)
        #expect(board.page(after: nil, limit: 5).next != nil)
        #expect(Leaderboard().page(after: nil, limit: 10) == LeaderboardPage(entries: [], next: nil))
    }

    @Test("AROUND: the page holding the player, with up to LIMIT/2 above it", arguments: [
        // (player index, limit, first index on the page)
        (0, 4, 0), (1, 4, 0), (2, 4, 0), (3, 4, 1), (9, 4, 7), (5, 1, 5), (5, 2, 4), (5, 3, 4), (5, 11, 0), (9, 20, 0),
    ])
    func around(player: Int, limit: Int, first: Int) {
        var board = Leaderboard()
        for index in 0 ..< 10 { board.update("p\(index)", points: 100 - index, found: 1, at: at(0)) }
        let page = board.page(around: "p\(player)", limit: limit)
        let expected = (first ..< min(10, first + limit)).map { "p\($0)" }
        #expect(page.entries.map(\.player) == expected)
        #expect(page.entries.map(\.rank) == (first ..< min(10, first + limit)).map { $0 + 1 })
        #expect(page.next == (first + limit < 10 ? board.position(of: expected.last!) : nil))
        // A caller with no entry gets the first page.
        #expect(board.page(around: "stranger", limit: limit) == board.page(after: nil, limit: limit))
    }

    @Test("the entries a change reports: the player's own and those it passed or fell behind")
    func reportedChanges() {
        var board = Leaderboard()
        for (index, name) in ["a1", "b2", "c3", "d4", "e5"].enumerated() {
            board.update(name, points: 50 - 10 * index, found: 1, at: at(0))
        }
        // e5 (10) passes d4 (20) and c3 (30): they each drop one rank.
        #expect(rows(board.updateReportingChanges("e5", points: 35, found: 2, at: at(1)))
            == ["3 e5 35", "4 c3 30", "5 d4 20"])
        // b2 falls from 40 to 25, behind e5 and c3.
        #expect(rows(board.updateReportingChanges("b2", points: 25, found: 1, at: at(2)))
            == ["2 e5 35", "3 c3 30", "4 b2 25"])
        // A found stop worth nothing: only the player's own entry.
        #expect(board.updateReportingChanges("d4", points: 20, found: 2, at: at(0)).map(\.player) == ["d4"])
        // Nothing at all changed: nothing reported.
        #expect(board.updateReportingChanges("d4", points: 20, found: 2, at: at(0)).isEmpty)
        // A newcomer at 0 points: only its own entry. Reaching points: every other 0 drops.
        board.update("zz", points: 0, found: 0, at: nil)
        #expect(rows(board.updateReportingChanges("yy", points: 0, found: 0, at: nil)) == ["6 yy 0"])
        #expect(rows(board.updateReportingChanges("zz", points: 1, found: 1, at: at(5))) == ["6 zz 1", "7 yy 0"])
        // Falling into an exact tie (same points, same instant): the player tied with moves up
        // to share the rank, nobody else moves.
        #expect(rows(board.updateReportingChanges("a1", points: 35, found: 3, at: at(1))) == ["1 a1 35", "1 e5 35"])
        #expect(rows(allEntries(board)) == ["1 a1 35", "1 e5 35", "3 c3 30", "4 b2 25", "5 d4 20", "6 zz 1", "7 yy 0"])
        // Leaving moves up everyone strictly behind.
        #expect(rows(board.removeReportingChanges("c3")) == ["3 b2 25", "4 d4 20", "5 zz 1", "6 yy 0"])
        // The one it was tied with keeps its rank; those behind move up.
        #expect(rows(board.removeReportingChanges("e5")) == ["2 b2 25", "3 d4 20", "4 zz 1", "5 yy 0"])
        #expect(board.removeReportingChanges("ghost").isEmpty)
    }
}

@Suite("Leaderboard cursors")
struct LeaderboardCursorTests {
    @Test("a cursor round-trips and belongs to its board only", arguments: [
        LeaderboardPosition(points: 120, at: at(123_456), player: "alice"),
        LeaderboardPosition(points: 0, at: nil, player: "Bob_the.builder-2"),
        LeaderboardPosition(points: 0, at: at(5), player: "zero"),  // no time at 0 points
        LeaderboardPosition(points: Int.max, at: Timestamp(microseconds: Timestamp.storableMicroseconds.upperBound), player: "max"),
        LeaderboardPosition(points: 1, at: Timestamp(microseconds: 0), player: "___"),
    ])
    func roundTrip(position: LeaderboardPosition) throws {
        let cursor = LeaderboardCursor(scope: "hunt-1", position: position)
        let parsed = try #require(LeaderboardCursor(encoded: cursor.encoded))
        #expect(parsed == cursor)
        #expect(parsed.belongs(to: "hunt-1"))
        #expect(!parsed.belongs(to: "hunt-2"))
        #expect(cursor.encoded.split(separator: "_").first?.utf8.count == 16)
        #expect(cursor.encoded.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F })
    }

    static let tag = "00000000000000ab"

    @Test("cursors no page made are refused", arguments: [
        "", "bogus", "\(tag)_10_5", "\(tag)_10_5_", "\(tag)_10_n_alice", "\(tag)_0_5_alice", "\(tag)_-1_5_alice",
        "\(tag)_+1_5_alice", "\(tag)_01_5_alice", "\(tag)_1_-5_alice", "\(tag)_1_253402300800000000_alice",
        "\(tag)_99999999999999999999_5_alice", "\(tag)_1_5_al", "\(tag)_1_5_two words", "\(tag)_1_5_ünï",
        "00000000000000AB_1_5_alice", "0000000000000ab_1_5_alice", "\(tag)__5_alice", "\(tag)_1__alice", "\(tag)_1_x_alice",
        "\(tag)_0_N_alice",
    ])
    func refused(text: String) {
        #expect(LeaderboardCursor(encoded: text) == nil)
    }

    @Test("names holding underscores survive", arguments: ["a__b", "__x", "x__", "_._"])
    func underscores(name: String) throws {
        let cursor = LeaderboardCursor(scope: "s", position: LeaderboardPosition(points: 3, at: at(1), player: name))
        #expect(try #require(LeaderboardCursor(encoded: cursor.encoded)).position.player == name)
    }
}

@Suite("Leaderboard: a time trial's order")
struct TrialLeaderboardTests {
    private func trialRows(_ entries: [LeaderboardEntry]) -> [String] {
        entries.map { "\($0.rank) \($0.player) \($0.found) \($0.trialSeconds.map { String($0) } ?? "null")" }
    }

    /// A trial board: stops found (descending), then the trial time (ascending), then name;
    /// points do not order it.
    private func board() -> Leaderboard {
        var board = Leaderboard(trial: true)
        board.update("amy", points: 10, found: 2, at: at(9), trialTime: 90_000_000)
        board.update("Bob", points: 99, found: 1, at: at(1), trialTime: 5_000_000)
        board.update("cat", points: 5, found: 2, at: at(1), trialTime: 30_500_000)
        board.update("dan", points: 5, found: 2, at: at(2), trialTime: 30_500_000)
        board.update("eve", points: 0, found: 0, at: nil, trialTime: 1)  // nothing found: no time
        board.update("al", points: 0, found: 0, at: nil)
        return board
    }

    @Test("stops found, then time from first check-in to last accepted, then name; time_s null until a find")
    func order() {
        let board = board()
        let expected = ["1 cat 2 30.5", "1 dan 2 30.5", "3 amy 2 90.0", "4 Bob 1 5.0", "5 al 0 null", "5 eve 0 null"]
        #expect(trialRows(allEntries(board)) == expected)
        #expect(allEntries(board).allSatisfy { $0.isTrial })
        // Cursors and AROUND follow the same order.
        #expect(trialRows(allEntries(board, limit: 1)) == expected)
        #expect(trialRows(board.page(after: board.position(of: "dan"), limit: 2).entries) == ["3 amy 2 90.0", "4 Bob 1 5.0"])
        #expect(trialRows(board.page(around: "Bob", limit: 2).entries) == ["3 amy 2 90.0", "4 Bob 1 5.0"])
        #expect(board.rank(of: "amy") == 3)
        // A rejection that moves a time moves the player, and those they pass are reported.
        var changed = board
        let report = changed.updateReportingChanges("amy", points: 10, found: 2, at: at(9), trialTime: 10_000_000)
        #expect(trialRows(report) == ["1 amy 2 10.0", "2 cat 2 30.5", "2 dan 2 30.5"])
        // A points board of the same players is ordered by points as ever.
        var points = Leaderboard()
        points.update("amy", points: 10, found: 2, at: at(9), trialTime: 90_000_000)
        #expect(points.entry(of: "amy")?.trialSeconds == nil)
        #expect(points.entry(of: "amy")?.isTrial == false)
    }
}
