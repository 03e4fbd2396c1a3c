import ScavengerCore
import Testing

/// The instant of an RFC 3339 time in UTC.
private func time(_ text: String) -> Timestamp {
    guard let time = Timestamp(rfc3339: text) else { fatalError("not a time: \(text)") }
    return time
}

private func standing(_ points: Int, found: Int = 1, at text: String? = nil) -> Leaderboard.Standing {
    Leaderboard.Standing(points: points, found: found, at: text.map(time))
}

private func totals(_ user: String, _ points: Int, at text: String, weekPoints: Int? = nil) -> UserTotals {
    let instant = time(text)
    return UserTotals(
        user: user, allTime: standing(points, at: text), week: ScoreWeek(containing: instant),
        weekly: standing(weekPoints ?? points, at: text))
}

private func players(_ page: LeaderboardPage) -> [String] {
    page.entries.map { "\($0.rank) \($0.player) \($0.points)" }
}

@Suite("Scores across hunts: weeks and the rankings of all users")
struct RankingsTests {
    @Test("a week runs from Monday 00:00:00 UTC to the next Monday, named by its Monday", arguments: [
        ("2026-11-23T00:00:00Z", "2026-11-23"),  // Monday's first instant
        ("2026-11-29T23:59:59Z", "2026-11-23"),  // Sunday's last second
        ("2026-11-30T00:00:00Z", "2026-11-30"),
        ("2026-11-27T08:41:19Z", "2026-11-23"),
        ("2027-01-01T12:00:00Z", "2026-12-28"),  // a week across the new year
        ("1970-01-01T00:00:00Z", "1969-12-29"),  // 1970 began on a Thursday
        ("2024-02-29T10:00:00Z", "2024-02-26"),
    ])
    func weeks(instant: String, monday: String) {
        let week = ScoreWeek(containing: time(instant))
        #expect(week.description == monday)
        #expect(week.start <= time(instant) && time(instant) < week.next.start)
        #expect(week.next.previous == week)
        #expect(ScoreWeek(mondayDay: week.mondayDay) == week)
    }

    @Test("the microsecond before Monday midnight is the week before")
    func lastMicrosecond() {
        let monday = time("2026-11-30T00:00:00Z")
        let before = Timestamp(microseconds: monday.microseconds - 1)
        #expect(ScoreWeek(containing: before).next == ScoreWeek(containing: monday))
    }

    @Test("only a Monday names a week", arguments: [1, 2, 3, 5, 6, 7, -1])
    func notAMonday(offset: Int) {
        let monday = ScoreWeek(containing: time("2026-11-23T12:00:00Z")).mondayDay
        #expect(ScoreWeek(mondayDay: monday + offset) == nil || offset % 7 == 0)
    }

    @Test("a change sets the user's all-time standing and their week's; at 0 points they leave the board")
    func applyingChanges() {
        var rankings = Rankings()
        let now = time("2026-11-27T10:00:00Z")
        rankings.apply(totals("amy", 30, at: "2026-11-27T09:00:00Z"), now: now)
        rankings.apply(totals("bob", 30, at: "2026-11-27T08:00:00Z", weekPoints: 10), now: now)
        rankings.apply(totals("cat", 5, at: "2026-11-26T08:00:00Z"), now: now)
        let week = RankingBoard.week(ScoreWeek(containing: now))
        // Equal points: who got there first ranks first.
        #expect(players(rankings.page(.allTime, after: nil, limit: 10)) == ["1 bob 30", "2 amy 30", "3 cat 5"])
        #expect(players(rankings.page(week, after: nil, limit: 10)) == ["1 amy 30", "2 bob 10", "3 cat 5"])
        // A rejection takes amy to 0: off both boards.
        rankings.apply(UserTotals(user: "amy", allTime: standing(0, found: 0), week: ScoreWeek(containing: now), weekly: standing(0, found: 0)), now: now)
        #expect(players(rankings.page(.allTime, after: nil, limit: 10)) == ["1 bob 30", "2 cat 5"])
        #expect(players(rankings.page(week, after: nil, limit: 10)) == ["1 bob 10", "2 cat 5"])
        #expect(rankings.entry(of: "amy", on: .allTime) == nil)
    }

    @Test("the week turns with nothing to do: the new week starts empty, last week stays readable until the new one ends")
    func weeksTurn() {
        var rankings = Rankings()
        let thursday = time("2026-11-26T12:00:00Z")
        rankings.apply(totals("amy", 10, at: "2026-11-26T11:00:00Z"), now: thursday)
        let thisWeek = ScoreWeek(containing: thursday)
        // Monday: the new week is empty, LASTWEEK is what was this week.
        let monday = time("2026-11-30T00:00:01Z")
        #expect(RankingPeriod.thisWeek.board(at: monday) == .week(thisWeek.next))
        #expect(RankingPeriod.lastWeek.board(at: monday) == .week(thisWeek))
        #expect(rankings.page(RankingPeriod.thisWeek.board(at: monday), after: nil, limit: 5).entries.isEmpty)
        #expect(players(rankings.page(RankingPeriod.lastWeek.board(at: monday), after: nil, limit: 5)) == ["1 amy 10"])
        // A check-in in the new week: its board appears; last week's is still there.
        rankings.apply(totals("bob", 4, at: "2026-11-30T08:00:00Z"), now: time("2026-11-30T08:00:00Z"))
        #expect(rankings.weeksHeld == [thisWeek, thisWeek.next])
        // A rejection of a check-in accepted last week changes last week's board.
        rankings.apply(UserTotals(user: "amy", allTime: standing(0, found: 0), week: thisWeek, weekly: standing(0, found: 0)), now: time("2026-12-01T08:00:00Z"))
        #expect(rankings.count(.week(thisWeek)) == 0)
        // A week later the old week is dropped at the next change, and a change for it is ignored.
        let later = time("2026-12-08T09:00:00Z")
        rankings.apply(totals("cat", 2, at: "2026-12-08T09:00:00Z"), now: later)
        #expect(rankings.weeksHeld == [thisWeek.next, thisWeek.next.next])
        rankings.apply(UserTotals(user: "dan", allTime: standing(9, at: "2026-11-26T10:00:00Z"), week: thisWeek, weekly: standing(9, at: "2026-11-26T10:00:00Z")), now: later)
        #expect(rankings.weeksHeld == [thisWeek.next, thisWeek.next.next])
        #expect(rankings.entry(of: "dan", on: .allTime)?.rank == 1)
    }

    @Test("a rank for totals the board has not applied yet counts only the others ahead")
    func rankOfNewerTotals() {
        var rankings = Rankings()
        let now = time("2026-11-27T10:00:00Z")
        rankings.apply(totals("amy", 50, at: "2026-11-27T09:00:00Z"), now: now)
        rankings.apply(totals("bob", 40, at: "2026-11-27T08:00:00Z"), now: now)
        rankings.apply(totals("cat", 30, at: "2026-11-27T07:00:00Z"), now: now)
        // The database says amy dropped to 35: behind bob, ahead of cat (her own old entry does not count).
        #expect(rankings.rank(of: "amy", with: standing(35, at: "2026-11-27T09:30:00Z"), on: .allTime) == 2)
        // cat rose to 60: first.
        #expect(rankings.rank(of: "cat", with: standing(60, at: "2026-11-27T09:40:00Z"), on: .allTime) == 1)
        // Someone new at 40 reached later than bob: third.
        #expect(rankings.rank(of: "dan", with: standing(40, at: "2026-11-27T09:50:00Z"), on: .allTime) == 3)
        #expect(rankings.rank(of: "eve", with: standing(0, found: 2), on: .allTime) == nil)
    }

    @Test("points whose moment is missing rank behind everyone tied with them instead of trapping")
    func missingMoment() {
        var rankings = Rankings()
        rankings.setAllTime("amy", Leaderboard.Standing(points: 10, found: 1, at: nil))
        rankings.setAllTime("bob", standing(10, at: "2026-11-27T09:00:00Z"))
        #expect(players(rankings.page(.allTime, after: nil, limit: 5)) == ["1 bob 10", "2 amy 10"])
    }

    @Test("AROUND: the page holding the user with up to half the limit above; the first page for someone unranked", arguments: [1, 2, 3, 4, 7])
    func around(limit: Int) {
        var rankings = Rankings()
        let now = time("2026-11-27T10:00:00Z")
        for index in 0 ..< 20 {
            rankings.apply(totals("u\(index < 10 ? "0" : "")\(index)", 100 - index, at: "2026-11-27T09:00:00Z"), now: now)
        }
        let page = rankings.page(.allTime, around: "u10", limit: limit)
        #expect(page.entries.first?.rank == 11 - limit / 2)
        #expect(page.entries.count == limit)
        #expect(page.entries.contains { $0.player == "u10" })
        #expect(rankings.page(.allTime, around: "nobody", limit: limit).entries.first?.rank == 1)
    }
}
