import ScavengerCore
@testable import ScavengerFeed
@testable import ScavengerStore
import Testing

/// The hunts' feed's projections, each on its own and without a database: the place in the log,
/// the kept boards, the watches and the events they make.
@Suite("The hunts' projections: the log place, the boards, the watches")
struct HuntProjectionTests {
    static let now = Timestamp(microseconds: 1_000_000_000_000)

    /// A place at `seq` (nil: not loaded).
    static func place(_ seq: Int?) -> HuntLogPlace {
        var place = HuntLogPlace()
        if let seq { _ = place.loaded(at: LogPlace(seq: Int64(seq), stamp: 3)) }
        return place
    }

    // MARK: The log place

    /// The place before, the change's position; whether it moves on, and where it is after.
    @Test("the place moves on only to a change after it, with that change's stamp", arguments: [
        (nil, 1, true, 1), (nil, 0, false, nil), (5, 6, true, 6), (5, 9, true, 9), (5, 5, false, 5), (5, 3, false, 5),
    ] as [(Int?, Int, Bool, Int?)])
    func advance(before: Int?, change: Int, moves: Bool, after: Int?) {
        var place = Self.place(before)
        let moved = place.advance(to: .entry(change, .hunt))
        #expect(moved == moves)
        #expect(place.seq == after)
        if moves { #expect(place.applied?.stamp == LoggedHuntChange.entry(change, .hunt).stamp) }
    }

    /// The place before, a load's; whether the load takes it, and where the place is after.
    @Test("a load takes its place unless a load that finished first took a later one", arguments: [
        (nil, 5, true, 5), (5, 5, true, 5), (5, 7, true, 7), (7, 5, false, 7),
    ] as [(Int?, Int, Bool, Int)])
    func load(before: Int?, loadedAt: Int, takes: Bool, after: Int) {
        var place = Self.place(before)
        let took = place.loaded(at: LogPlace(seq: Int64(loadedAt), stamp: 9))
        #expect(took == takes)
        #expect(place.seq == after)
    }

    @Test("one load at a time, none once loaded, and another once the place is forgotten")
    func loads() {
        var place = HuntLogPlace()
        var claims = [place.beginLoad(), place.beginLoad()]
        #expect(claims == [true, false] && place.loading)
        place.endLoad()
        let took = place.loaded(at: LogPlace(seq: 4, stamp: 1))
        claims = [place.beginLoad()]
        #expect(took && claims == [false] && place.isLoaded)
        place.forget()
        #expect(!place.isLoaded && place.seq == nil)
        claims = [place.beginLoad()]
        #expect(claims == [true])
    }

    /// The place, a snapshot's position; whether its board may be kept.
    @Test("a board's snapshot is kept only when the place is known and not past it", arguments: [
        (nil, 5, false), (5, 5, true), (5, 6, true), (6, 5, false),
    ] as [(Int?, Int, Bool)])
    func keeps(place: Int?, snapshot: Int, kept: Bool) {
        #expect(Self.place(place).keeps(snapshotThrough: snapshot) == kept)
    }

    // MARK: Boards

    static func snapshot(through: Int, _ players: [(name: String, user: Int, points: Int)] = [], hostID: Int = 1) -> HuntBoards.Kept {
        HuntBoards.Kept(
            players: players.map { PlayerRecord(userID: $0.user, name: $0.name, points: $0.points, found: 1, pointsAt: Timestamp(microseconds: 1)) },
            through: through, facts: HuntAccessFacts(hostID: hostID, isPublic: false, removed: false))
    }

    @Test("a snapshot behind the place is read but not kept; a later one is kept; an earlier one never replaces it")
    func keepingBoards() {
        var boards = HuntBoards()
        let place = Self.place(5), watches = HuntWatches()
        let behind = boards.keep(Self.snapshot(through: 4, [("alice", 2, 10)]), of: "h1", place: place, watches: watches)
        #expect(behind.entry(of: "alice")?.points == 10)
        #expect(!boards.holds("h1"))
        _ = boards.keep(Self.snapshot(through: 7, [("bob", 3, 20)]), of: "h1", place: place, watches: watches)
        let read = boards.keep(Self.snapshot(through: 6, [("alice", 2, 10)]), of: "h1", place: place, watches: watches)
        #expect(read.entry(of: "bob")?.points == 20 && read.entry(of: "alice") == nil)
        #expect(boards.board(of: "h1")?.entry(of: "bob") != nil)
    }

    @Test("changes up to a board's snapshot are skipped; later ones change it in place and report each player once, as they stand")
    func standings() {
        var boards = HuntBoards()
        _ = boards.keep(Self.snapshot(through: 5, [("alice", 2, 10)]), of: "h1", place: Self.place(5), watches: HuntWatches())
        let skipped = boards.apply(.player("bob", points: 50, user: 3), renamedFrom: nil, of: "h1", seq: 5)
        #expect(skipped.isEmpty)
        #expect(boards.board(of: "h1")?.entry(of: "bob") == nil)
        let overtaken = boards.apply(.player("bob", points: 50, user: 3), renamedFrom: nil, of: "h1", seq: 6)
        #expect(overtaken.map(\.player) == ["bob", "alice"])
        #expect(overtaken.map(\.rank) == [1, 2])
        // A rename reports the player once, under the new name; the old one is gone.
        let renamed = boards.apply(.player("alicia", points: 60, user: 2), renamedFrom: "alice", of: "h1", seq: 7)
        #expect(Set(renamed.map(\.player)) == ["alicia", "bob"] && renamed.count == 2)
        #expect(boards.board(of: "h1")?.rank(of: "alicia") == 1 && boards.board(of: "h1")?.entry(of: "alice") == nil)
        #expect(boards.viewer(2, of: "h1")?.playerName == "alicia")
        // A board nobody keeps is not changed, and reports nothing.
        let notKept = boards.apply(.player("carol", points: 1, user: 4), renamedFrom: nil, of: "h2", seq: 8)
        #expect(notKept.isEmpty && !boards.holds("h2"))
    }

    @Test("a team hunt's board holds teams: players' standings move rosters, not entries; team entries carry members, follow moves and leave when empty")
    func teamBoards() {
        var boards = HuntBoards()
        let owls = TeamStandingChange(team: "Owls", points: 10, found: 1, at: Timestamp(microseconds: 5), members: ["amy", "bob"], memberIDs: [2, 3])
        let kept = HuntBoards.Kept(teams: [owls], through: 5, facts: HuntAccessFacts(hostID: 1, isPublic: false, removed: false))
        _ = boards.keep(kept, of: "h1", place: Self.place(5), watches: HuntWatches())
        #expect(boards.board(of: "h1")?.entry(of: "Owls")?.members == ["amy", "bob"])
        #expect(boards.viewer(3, of: "h1")?.teamName == "Owls" && boards.viewer(3, of: "h1")?.playerName == "bob")
        // A player's standing changes no entry of a team board.
        #expect(boards.apply(.player("cat", points: 0, user: 4), renamedFrom: nil, of: "h1", seq: 6).isEmpty)
        #expect(boards.board(of: "h1")?.count == 1)
        // bob moves to a new team: both teams are reported, each with its members.
        let cats = TeamStandingChange(team: "Cats", points: 0, found: 0, at: nil, members: ["bob", "cat"], memberIDs: [3, 4])
        #expect(boards.apply(cats, of: "h1", seq: 7).map(\.player) == ["Cats"])
        var owlsLeft = owls
        owlsLeft.members = ["amy"]
        owlsLeft.memberIDs = [2]
        #expect(boards.apply(owlsLeft, of: "h1", seq: 8).map { $0.members ?? [] } == [["amy"]])
        #expect(boards.viewer(3, of: "h1")?.teamName == "Cats" && boards.viewer(2, of: "h1")?.teamName == "Owls")
        // A team with no members and nothing found leaves the board.
        let empty = TeamStandingChange(team: "Cats", points: 0, found: 0, at: nil, members: [], memberIDs: [])
        _ = boards.apply(empty, of: "h1", seq: 9)
        #expect(boards.board(of: "h1")?.entry(of: "Cats") == nil && boards.viewer(4, of: "h1")?.teamName == nil)
        // Entries at or before the board's place are skipped.
        #expect(boards.apply(cats, of: "h1", seq: 9).isEmpty)
    }

    /// The change after a kept board's snapshot, and whether who may read it is still known after.
    @Test("who may read a hunt follows its log entries, and is forgotten when an entry cannot keep it", arguments: [
        (HuntChange.standing(.player("dave", points: 5, user: 5), renamedFrom: nil), true),
        (.standing(.player("dave", points: 5, user: nil), renamedFrom: nil), false),
        (.left(player: "alice", userID: 2), true),
        (.left(player: "alice", userID: nil), false),
    ])
    func access(change: HuntChange, known: Bool) {
        var boards = HuntBoards()
        _ = boards.keep(Self.snapshot(through: 5, [("alice", 2, 10)]), of: "h1", place: Self.place(5), watches: HuntWatches())
        #expect(boards.viewer(2, of: "h1") == HuntFeed.Viewer(hostID: 1, isPublic: false, removed: false, playerName: "alice"))
        var state = HuntFeed.Projections()
        state.boards = boards
        var outbox = WatchOutbox()
        state.apply(.entry(6, change), record: nil, now: Self.now, into: &outbox)
        #expect((state.boards.viewer(nil, of: "h1") != nil) == known)
        if case .left = change, known { #expect(state.boards.viewer(2, of: "h1")?.playerName == nil) }
        if case .standing = change, known { #expect(state.boards.viewer(5, of: "h1")?.playerName == "dave") }
    }

    @Test("a hunt written: who may read it follows the record read again, and is forgotten when it was not read")
    func huntWritten() {
        var boards = HuntBoards()
        _ = boards.keep(Self.snapshot(through: 5), of: "h1", place: Self.place(5), watches: HuntWatches())
        boards.huntChanged("h1", record: .fixture(removed: true))
        #expect(boards.viewer(nil, of: "h1") == HuntFeed.Viewer(hostID: 1, isPublic: true, removed: true, playerName: nil))
        boards.huntChanged("h1", record: nil)
        #expect(boards.viewer(nil, of: "h1") == nil && boards.holds("h1"))
    }

    @Test("past the limit of unwatched boards, half of those are dropped; watched ones stay")
    func eviction() {
        var boards = HuntBoards()
        var watches = HuntWatches()
        _ = watches.add(.fixture("b0"), player: nil, sink: RecordingSink(), now: Self.now)
        let place = Self.place(5)
        for index in 0 ... HuntBoards.maximumUnwatched {
            _ = boards.keep(Self.snapshot(through: 5), of: "b\(index)", place: place, watches: watches)
        }
        #expect(boards.count == HuntBoards.maximumUnwatched + 1)
        _ = boards.keep(Self.snapshot(through: 5), of: "new", place: place, watches: watches)
        #expect(boards.count == HuntBoards.maximumUnwatched + 2 - (HuntBoards.maximumUnwatched + 1) / 2)
        #expect(boards.holds("b0") && boards.holds("new"))
    }

    // MARK: Watches and their events

    @Test("an event reaches every watcher of its hunt and no other, in watch-id order, each sink's in one batch")
    func routing() {
        var state = HuntFeed.Projections()
        let shared = RecordingSink(), own = RecordingSink(), elsewhere = RecordingSink()
        let first = state.watches.add(.fixture(), player: nil, sink: shared, now: Self.now)
        let second = state.watches.add(.fixture(), player: "alice", sink: own, now: Self.now)
        let third = state.watches.add(.fixture(), player: "bob", sink: shared, now: Self.now)
        _ = state.watches.add(.fixture("h2"), player: nil, sink: elsewhere, now: Self.now)
        var outbox = WatchOutbox()
        let at = Timestamp(microseconds: 5)
        state.apply(.entry(1, .hint(text: "north", at: at)), record: nil, now: Self.now, into: &outbox)
        state.apply(.entry(2, .found(player: "bob", stop: "s1", points: 10)), record: nil, now: Self.now, into: &outbox)
        outbox.deliver()
        #expect(shared.events == [
            .hint(watch: first, text: "north", at: at), .hint(watch: third, text: "north", at: at),
            .found(watch: first, player: "bob", stop: "s1", points: 10), .found(watch: third, player: "bob", stop: "s1", points: 10),
        ])
        #expect(shared.calls == 1)
        #expect(own.events == [.hint(watch: second, text: "north", at: at), .found(watch: second, player: "bob", stop: "s1", points: 10)])
        #expect(elsewhere.events.isEmpty)
    }

    @Test("a player who leaves, under the name they have by then: their watch closes, last; the others go on")
    func leaving() {
        var state = HuntFeed.Projections()
        let host = RecordingSink(), alice = RecordingSink()
        let hostWatch = state.watches.add(.fixture(), player: nil, sink: host, now: Self.now)
        let aliceWatch = state.watches.add(.fixture(), player: "alice", sink: alice, now: Self.now)
        var outbox = WatchOutbox()
        state.apply(.entry(1, .standing(.player("alicia", points: 0, user: 2), renamedFrom: "alice")), record: nil, now: Self.now, into: &outbox)
        #expect(state.watches.player(of: aliceWatch) == "alicia")
        state.apply(.entry(2, .left(player: "alicia", userID: 2)), record: nil, now: Self.now, into: &outbox)
        state.apply(.entry(3, .hint(text: "after", at: Self.now)), record: nil, now: Self.now, into: &outbox)
        outbox.deliver()
        #expect(alice.events == [.closed(watch: aliceWatch, reason: "left")])
        #expect(host.events == [.hint(watch: hostWatch, text: "after", at: Self.now)])
        #expect(state.watches.count == 1)
    }

    @Test("a hunt removed by moderators: its watchers hear it as it is now, then every watch of it closes")
    func removed() {
        var state = HuntFeed.Projections()
        let sink = RecordingSink()
        let watch = state.watches.add(.fixture(), player: nil, sink: sink, now: Self.now)
        let record = HuntRecord.fixture(removed: true)
        var outbox = WatchOutbox()
        state.apply(.entry(1, .hunt), record: record, now: Self.now, into: &outbox)
        outbox.deliver()
        #expect(sink.events == [.hunt(watch: watch, hunt: record.hunt(at: Self.now)), .closed(watch: watch, reason: "removed")])
        #expect(state.watches.count == 0 && state.watches.huntCount == 0)
    }

    /// Seconds after the watch began at which the clock ticks; the states announced. The hunt
    /// starts 10 s after the watch began and lasts 10 s.
    @Test("a watched hunt's start and end by the clock are announced once each, whatever the ticks", arguments: [
        ([5], []), ([10], [.running]), ([10, 12, 19], [.running]), ([10, 12, 20, 30], [.running, .ended]), ([25, 26], [.ended]),
    ] as [([Int64], [HuntState])])
    func announcements(ticks: [Int64], heard: [HuntState]) {
        var watches = HuntWatches()
        let sink = RecordingSink()
        _ = watches.add(.fixture(starts: Self.now.plus(seconds: 10), durationSeconds: 10), player: nil, sink: sink, now: Self.now)
        for tick in ticks {
            var outbox = WatchOutbox()
            watches.announceScheduledChanges(at: Self.now.plus(seconds: tick), into: &outbox)
            outbox.deliver()
        }
        #expect(sink.events.compactMap(\.huntState) == heard)
    }
}
