import Logging
import ScavengerCore
import ScavengerStore
import Synchronization

/// The live side of hunts, in memory on every daemon and kept in step with the hunts' change log
/// (`hunt_changes`): each hunt's leaderboard, loaded once from its players' standings and then
/// changed only by the log (so a LEADERBOARD read never touches the database, and every daemon
/// holds the same board), the rankings of all users (RANKING), loaded at start-up from the users'
/// totals and then changed only by the log's `totals` entries, and the `WATCH HUNT` watches with
/// their events.
///
/// Boards are read and changed in place under the lock, never copied out: a copy held by a reader
/// would make the next change copy the whole board (a million users, for the rankings).
///
/// Changes are applied in log order, a batch at a time under ``state``'s lock, skipping what is
/// already applied; so catch-ups may run at once from several tasks (the listener, and a use case
/// that wants its own write applied before it answers). A board loaded at log position `through`
/// skips the changes up to it (they are in its snapshot already).
///
/// Locks: ``state`` only; sinks are called under it and must not call back (``WatchSink``).
public final class HuntFeed: Sendable {
    private let database: Database

    /// A hunt's leaderboard and the last change in it, with who may read it (its host, whether
    /// it is public or removed, and its players by user id), kept by the same log entries, so a
    /// `LEADERBOARD` needs no read of the database; nil `access` when the log could not keep it
    /// (an entry written before user ids were logged): then readers ask the database.
    struct CachedBoard {
        var board: Leaderboard
        var through: Int
        var access: Access?
    }

    /// Who may read a hunt, kept with its board.
    struct Access {
        var facts: HuntAccessFacts
        var members: [Int: String]
    }

    /// Who a viewer is to a hunt whose board is kept: what ``access(to:viewer:)`` answers.
    public struct Viewer: Sendable, Equatable {
        public var hostID: Int
        public var isPublic: Bool
        public var removed: Bool
        /// The viewer's name in the hunt when they play it.
        public var playerName: String?
    }

    /// A `WATCH HUNT` watch, and the watching player's name in the hunt (nil for its host): a
    /// player's watches close when they leave.
    struct Watcher {
        var hunt: String
        var player: String?
        var sink: any WatchSink
    }

    /// What a watched hunt looked like when its watchers last heard of it: the automatic start
    /// and end are announced when its state at the clock differs.
    struct WatchedHunt {
        var record: HuntRecord
        var announcedState: HuntState
        var watchers: Set<String>
    }

    struct State {
        /// The last change applied; nil until the rankings are loaded (``load()``), which sets
        /// it to the log's position they reflect.
        var applied: Int?
        /// The stamp of the log's row at ``applied`` (see `LogPlace`).
        var appliedStamp: Int64 = 0
        /// Whether a ``load()`` is under way (another waits for it rather than loading too).
        var loading = false
        var rankings = Rankings()
        var boards: [String: CachedBoard] = [:]
        var watchers: [String: Watcher] = [:]
        var watched: [String: WatchedHunt] = [:]
        var counter: UInt64 = 0
    }

    private let state = Mutex(State())
    private let catchUps = CatchUpTurns()
    private let rewrites = Atomic<Int>(0)

    /// How many times the log was found rewritten under this feed's place (each a reload).
    public var logRewrites: Int { rewrites.load(ordering: .relaxed) }

    /// Boards kept for hunts nobody watches, before the oldest loaded are dropped (a dropped board
    /// is loaded again on its next read).
    static let maximumUnwatchedBoards = 2000
    /// Changes read from the log at a time.
    static let changesPerRead = 1000

    private let logger: Logger

    /// The time as this daemon sees it: when a watched hunt's `STARTS` or `ENDS` has passed, and
    /// which weeks the rankings hold.
    public let clock: any WallClock

    /// - Parameter clock: the time of day; the system's unless a test holds one (a ``Feed``
    ///   gives its own).
    public init(database: Database, logger: Logger = Logger(label: "scavenger.hunts"), clock: any WallClock = .system) {
        self.database = database
        self.logger = logger
        self.clock = clock
    }

    /// Totals read from the database at a time while the rankings load.
    static let totalsPerRead = 20000

    /// Hunt watches held.
    public var watchCount: Int { state.withLock { $0.watchers.count } }

    /// Whether the rankings are loaded and the feed has a place in the log.
    public var isLoaded: Bool { state.withLock { $0.applied != nil } }

    /// Whether a load of the rankings is under way (at start-up, the listener's).
    public var isLoading: Bool { state.withLock { $0.loading } }

    // MARK: Rankings

    /// Loads the rankings of all users (all-time, this week's and last week's by `now`, by
    /// default the ``clock``'s) from the
    /// users' totals, in batches, and takes the log's position read before them as the place to
    /// apply changes from: a change committed meanwhile is both (perhaps) in a batch and applied
    /// again, which is harmless since a `totals` entry carries a user's whole totals, and entries
    /// apply in log order. Every hunt board loaded before is dropped (loaded again on use).
    /// Returns the users ranked all-time.
    @discardableResult
    public func load(now: Timestamp? = nil) async throws(StoreError) -> Int {
        let now = now ?? clock.now
        let started = ContinuousClock.now
        let through = try await database.lastHuntChange()
        var rankings = Rankings()
        var after = 0
        while true {
            let batch = try await database.allTotals(afterUserID: after, limit: Self.totalsPerRead)
            for totals in batch {
                rankings.setAllTime(totals.user, totals.standing)
                rankings.setProfile(totals.profile)
            }
            guard batch.count == Self.totalsPerRead, let last = batch.last else { break }
            after = last.userID
        }
        for week in try await database.scoredWeeks(from: ScoreWeek(containing: now).previous) {
            after = 0
            while true {
                let batch = try await database.rankedTotals(in: week, afterUserID: after, limit: Self.totalsPerRead)
                for totals in batch { rankings.setWeekly(totals.user, totals.standing, in: week) }
                guard batch.count == Self.totalsPerRead, let last = batch.last else { break }
                after = last.userID
            }
        }
        let ranked = rankings.count(.allTime), weeks = rankings.weeksHeld.count
        let watched = state.withLock { state -> [String]? in
            // A load that finished first from a later place wins (this one would replay changes
            // its watchers have heard).
            if let applied = state.applied, applied > Int(through.seq) { return nil }
            // Swapped in, not copied: a second reference would make the next change copy it all.
            swap(&state.rankings, &rankings)
            state.applied = Int(through.seq)
            state.appliedStamp = through.stamp
            state.boards = [:]
            return Array(state.watched.keys)
        }
        guard let watched else { return ranked }
        logger.info("rankings loaded", metadata: [
            "users": "\(ranked)", "weeks": "\(weeks)", "seconds": "\(ContinuousClock.now - started)",
        ])
        for hunt in watched { try await prepareWatch(of: hunt) }
        return ranked
    }

    /// ``load(now:)`` unless loaded or being loaded by another task; returns the users ranked
    /// all-time when it loaded.
    public func loadIfNeeded() async throws(StoreError) -> Int? {
        let mayLoad = state.withLock { state in
            if state.loading || state.applied != nil { return false }
            state.loading = true
            return true
        }
        guard mayLoad else { return nil }
        defer { state.withLock { $0.loading = false } }
        return try await load()
    }

    /// Reads the rankings in place under the lock (`body` must be quick and must not call back);
    /// nil before they are loaded.
    public func withRankings<T>(_ body: (Rankings) -> T) -> T? {
        state.withLock { state in
            guard state.applied != nil else { return nil }
            return body(state.rankings)
        }
    }

    // MARK: Leaderboards

    /// A hunt's leaderboard as of the last change applied (or later): loaded on first use from the
    /// players' standings, in memory from then on.
    public func leaderboard(of huntID: String) async throws(StoreError) -> Leaderboard {
        if let cached = state.withLock({ $0.boards[huntID]?.board }) { return cached }
        let (players, through, facts) = try await database.playersSnapshot(huntID: huntID)
        var board = Leaderboard()
        var members: [Int: String] = [:]
        for player in players {
            board.update(player.name, points: player.points, found: player.found, at: player.points > 0 ? player.pointsAt : nil)
            members[player.userID] = player.name
        }
        let access = facts.map { Access(facts: $0, members: members) }
        return state.withLock { state in
            // Another task may have loaded it meanwhile, possibly later in the log: keep the later.
            if let cached = state.boards[huntID], cached.through >= through { return cached.board }
            // Kept only when no change after its snapshot can have been passed over: the feed has
            // started (its place is known) and is not past the snapshot.
            guard let applied = state.applied, through >= applied else { return board }
            if state.boards.count >= Self.maximumUnwatchedBoards + state.watched.count {
                let unwatched = state.boards.keys.filter { state.watched[$0] == nil }
                for id in unwatched.prefix(state.boards.count / 2) { state.boards[id] = nil }
            }
            state.boards[huntID] = CachedBoard(board: board, through: through, access: access)
            return board
        }
    }

    /// Who `viewer` (nil: nobody logged in) is to a hunt whose board and access are kept, from
    /// memory; nil when they are not kept (the caller asks the database).
    public func access(to huntID: String, viewer: Int?) -> Viewer? {
        state.withLock { state in
            guard let access = state.boards[huntID]?.access else { return nil }
            return Viewer(
                hostID: access.facts.hostID, isPublic: access.facts.isPublic, removed: access.facts.removed,
                playerName: viewer.flatMap { access.members[$0] })
        }
    }

    // MARK: Catching up

    /// Applies every change committed since the last one applied: leaderboards change and
    /// watchers hear of it; returns once it has read the log at least once after this call
    /// began, so a write committed before the call is applied when it returns. Calls at the same
    /// time share reads (one in flight: each read of the log holds its writers back a moment,
    /// see `hunt_changes_after`).
    public func catchUp() async throws(StoreError) {
        try await catchUps.take { () throws(StoreError) in try await self.applyNewChanges() }
    }

    /// One pass over the log from the feed's place to its end.
    private func applyNewChanges() async throws(StoreError) {
        var after = state.withLock { $0.applied }
        if after == nil {
            // The first catch-up loads the rankings, then applies what was committed meanwhile;
            // when another task is loading, its place comes with it.
            guard try await loadIfNeeded() != nil else { return }
            after = state.withLock { $0.applied }
        }
        while let from = after {
            let stamp = state.withLock { $0.appliedStamp }
            let page = try await database.huntChanges(after: from, stamp: stamp, limit: Self.changesPerRead)
            let changes = page.changes
            if !page.placeHolds {
                // The row at this daemon's place is gone or another (a standby promoted without
                // the last changes, positions given out again): what was applied may never have
                // happened. Everything is loaded afresh from the database as it now is.
                logger.error("the hunts' change log was rewritten under this daemon's place (a failover?); reloading", metadata: [
                    "place": "\(from)",
                ])
                rewrites.add(1, ordering: .relaxed)
                state.withLock { $0.applied = nil }
                try await load()
                return
            }
            if page.trimmedThrough > from {
                // `expire` trimmed the log past this daemon's place (it was away a long time):
                // every board and the rankings are loaded afresh, the watched hunts' at once.
                try await load()
                return
            }
            guard !changes.isEmpty else { return }
            // Hunts whose schedule changed are read again before the lock, for their events.
            var records: [String: HuntRecord] = [:]
            let watched = state.withLock { Set($0.watched.keys) }
            let kept = state.withLock { Set($0.boards.keys) }
            for change in changes where change.change == .hunt && (watched.contains(change.hunt) || kept.contains(change.hunt))
                && records[change.hunt] == nil {
                records[change.hunt] = try await database.hunt(id: change.hunt)
            }
            after = apply(changes, records: records)
            if changes.count < Self.changesPerRead { return }
        }
    }

    /// Applies a batch in order under the lock; answers the position reached.
    private func apply(_ changes: [LoggedHuntChange], records: [String: HuntRecord]) -> Int? {
        let now = clock.now
        return state.withLock { state in
            var batches: [ObjectIdentifier: (sink: any WatchSink, events: [WatchEvent])] = [:]
            func tell(_ hunt: String, _ event: (String) -> WatchEvent) {
                guard let watched = state.watched[hunt] else { return }
                for id in watched.watchers.sorted() {
                    guard let watcher = state.watchers[id] else { continue }
                    batches[ObjectIdentifier(watcher.sink), default: (watcher.sink, [])].events.append(event(id))
                }
            }
            /// Ends the hunt's watches that `which` picks, each told why, last: nothing follows.
            func close(_ hunt: String, reason: String, _ which: (Watcher) -> Bool) {
                guard var watched = state.watched[hunt] else { return }
                for id in watched.watchers.sorted() {
                    guard let watcher = state.watchers[id], which(watcher) else { continue }
                    batches[ObjectIdentifier(watcher.sink), default: (watcher.sink, [])].events.append(.closed(watch: id, reason: reason))
                    state.watchers[id] = nil
                    watched.watchers.remove(id)
                }
                state.watched[hunt] = watched.watchers.isEmpty ? nil : watched
            }
            for logged in changes {
                guard logged.seq > (state.applied ?? 0) else { continue }
                state.applied = logged.seq
                state.appliedStamp = logged.stamp
                let hunt = logged.hunt
                switch logged.change {
                case .hunt:
                    if let record = records[hunt], var watched = state.watched[hunt] {
                        watched.record = record
                        watched.announcedState = record.schedule.state(at: now)
                        state.watched[hunt] = watched
                        let view = record.hunt(at: now)
                        tell(hunt) { .hunt(watch: $0, hunt: view) }
                        // Removed by moderators: it ended (above), and every watch of it closes.
                        if record.removed { close(hunt, reason: "removed") { _ in true } }
                    }
                    if state.boards[hunt]?.access != nil {
                        if let record = records[hunt] {
                            state.boards[hunt]!.access!.facts = HuntAccessFacts(hostID: record.hostID, isPublic: record.isPublic, removed: record.removed)
                        } else {
                            state.boards[hunt]!.access = nil
                        }
                    }
                case .hint(let text, let at):
                    tell(hunt) { .hint(watch: $0, text: text, at: at) }
                case .found(let player, let stop, let points):
                    tell(hunt) { .found(watch: $0, player: player, stop: stop, points: points) }
                case .reply(let reply):
                    tell(hunt) { .reply(watch: $0, reply: reply) }
                case .standing(let standing, let renamedFrom):
                    if let old = renamedFrom, let watched = state.watched[hunt] {
                        for id in watched.watchers where state.watchers[id]?.player == old { state.watchers[id]?.player = standing.player }
                    }
                    // Changed in place: a board copied out and back would be copied whole.
                    guard let through = state.boards[hunt]?.through, logged.seq > through else { continue }
                    if state.boards[hunt]!.access != nil {
                        if let user = standing.userID {
                            state.boards[hunt]!.access!.members[user] = standing.player
                        } else {
                            state.boards[hunt]!.access = nil
                        }
                    }
                    var changed: [LeaderboardEntry] = []
                    if let old = renamedFrom {
                        changed += state.boards[hunt]!.board.removeReportingChanges(old)
                    }
                    let at = standing.points > 0 ? standing.at : nil
                    changed += state.boards[hunt]!.board.updateReportingChanges(
                        standing.player, points: standing.points, found: standing.found, at: at)
                    state.boards[hunt]!.through = logged.seq
                    for entry in Self.latest(changed) { tell(hunt) { .score(watch: $0, entry: entry) } }
                case .left(let player, let userID):
                    // The player hears nothing of the hunt after their LEAVE.
                    close(hunt, reason: "left") { $0.player == player }
                    guard let through = state.boards[hunt]?.through, logged.seq > through else { continue }
                    if state.boards[hunt]!.access != nil {
                        if let userID {
                            state.boards[hunt]!.access!.members[userID] = nil
                        } else {
                            state.boards[hunt]!.access = nil
                        }
                    }
                    let changed = state.boards[hunt]!.board.removeReportingChanges(player)
                    state.boards[hunt]!.through = logged.seq
                    for entry in Self.latest(changed) { tell(hunt) { .score(watch: $0, entry: entry) } }
                case .totals(let totals):
                    state.rankings.apply(totals, now: now)
                }
            }
            for (_, batch) in batches { batch.sink.deliver(batch.events) }
            return state.applied
        }
    }

    /// The last entry reported for each player, in the order first reported (a rename or several
    /// steps in one change report a player once, as they stand now).
    static func latest(_ entries: [LeaderboardEntry]) -> [LeaderboardEntry] {
        var last: [String: LeaderboardEntry] = [:]
        var order: [String] = []
        for entry in entries {
            if last.updateValue(entry, forKey: entry.player) == nil { order.append(entry.player) }
        }
        return order.compactMap { last[$0] }
    }

    /// Announces watched hunts whose state the clock has changed (a `STARTS` or `ENDS` passed):
    /// every daemon does so by its own clock (``clock``, unless `now` is given), within a tick.
    public func announceScheduledChanges(at now: Timestamp? = nil) {
        let now = now ?? clock.now
        state.withLock { state in
            var batches: [ObjectIdentifier: (sink: any WatchSink, events: [WatchEvent])] = [:]
            for (hunt, var watched) in state.watched {
                let current = watched.record.schedule.state(at: now)
                guard current != watched.announcedState else { continue }
                watched.announcedState = current
                state.watched[hunt] = watched
                let view = watched.record.hunt(at: now)
                for id in watched.watchers.sorted() {
                    guard let watcher = state.watchers[id] else { continue }
                    batches[ObjectIdentifier(watcher.sink), default: (watcher.sink, [])].events.append(.hunt(watch: id, hunt: view))
                }
            }
            for (_, batch) in batches { batch.sink.deliver(batch.events) }
        }
    }

    // MARK: Watches

    /// Gets ready to watch a hunt: the feed's place known and the hunt's leaderboard kept, so the
    /// watch hears every change of it from ``addWatch(_:sink:)`` on. `unavailable` while another
    /// task loads the rankings (at start-up).
    public func prepareWatch(of huntID: String) async throws(StoreError) {
        if state.withLock({ $0.applied == nil }) { try await catchUp() }
        // Another task is loading the rankings (start-up): a board is kept only from then on.
        guard isLoaded else { throw .unavailable("the hunts' feed is still loading; retry") }
        // Loaded until it is kept (it is not when the feed moved past its snapshot meanwhile).
        while state.withLock({ $0.boards[huntID] == nil }) {
            _ = try await leaderboard(of: huntID)
        }
    }

    /// Starts a watch of `record`'s hunt for `sink` (after ``prepareWatch(of:)``), by its host
    /// (`player` nil) or the player of that name; returns its id, `h` and a number.
    public func addWatch(_ record: HuntRecord, player: String?, sink: any WatchSink) -> String {
        let now = clock.now
        return state.withLock { state in
            state.counter += 1
            let id = "h\(state.counter)"
            state.watchers[id] = Watcher(hunt: record.id, player: player, sink: sink)
            var watched = state.watched[record.id] ?? WatchedHunt(record: record, announcedState: record.schedule.state(at: now), watchers: [])
            watched.watchers.insert(id)
            state.watched[record.id] = watched
            return id
        }
    }

    /// Whether `id` names a hunt watch (rather than an area watch).
    public static func isHuntWatch(_ id: String) -> Bool { id.hasPrefix("h") }

    /// Ends a hunt watch; false when there is none with that id.
    @discardableResult
    public func removeWatch(id: String) -> Bool {
        state.withLock { state in
            guard let watcher = state.watchers.removeValue(forKey: id) else { return false }
            if var watched = state.watched[watcher.hunt] {
                watched.watchers.remove(id)
                state.watched[watcher.hunt] = watched.watchers.isEmpty ? nil : watched
            }
            return true
        }
    }
}
