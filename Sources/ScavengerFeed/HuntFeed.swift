import Logging
import ScavengerCore
import ScavengerStore
import Synchronization

/// The live side of hunts, in memory on every daemon and kept in step with the hunts' change log
/// (`hunt_changes`): each hunt's leaderboard (``HuntBoards``), the rankings of all users
/// (RANKING; `Rankings`, loaded at start-up from the users' totals and then changed only by the
/// log's `totals` entries), and the `WATCH HUNT` watches with their events (``HuntWatches``),
/// all as of one place in the log (``HuntLogPlace``).
///
/// Changes are applied in log order, a batch at a time under ``projections``' lock, skipping what
/// is already applied; so catch-ups may run at once from several tasks (the listener, and a use
/// case that wants its own write applied before it answers). A board loaded at log position
/// `through` skips the changes up to it (they are in its snapshot already).
///
/// **Locks.** ``projections`` guards the place and the projections kept as of it, together: they
/// change together (a change is applied to the boards, the rankings and the watches, and the
/// place moves past it, at once; a board is kept only if its snapshot is not behind the place;
/// the rankings are swapped in with the place they reflect), so one lock, held briefly, never
/// while the database is read or a sink is called. ``deliveries`` (a leaf, taken inside it)
/// orders the events made under it; sinks are called after the lock is let go, in that order
/// (``WatchDelivery``), so a sink may call back into the feed.
public final class HuntFeed: Sendable {
    private let database: Database

    /// Who a viewer is to a hunt whose board is kept: what ``access(to:viewer:)`` answers.
    public struct Viewer: Sendable, Equatable {
        public var hostID: Int
        public var isPublic: Bool
        public var removed: Bool
        /// The viewer's name in the hunt when they play it.
        public var playerName: String?
        /// In a team hunt: the viewer's team when they play it.
        public var teamName: String? = nil
    }

    /// The place in the log and what the log has made of the hunts up to it.
    struct Projections {
        var place = HuntLogPlace()
        var rankings = Rankings()
        var boards = HuntBoards()
        var watches = HuntWatches()

        /// Applies one change (after the place has moved to it), `record` being its hunt as read
        /// again for a `hunt` entry; the watchers' events go to `outbox`.
        mutating func apply(_ logged: LoggedHuntChange, record: HuntRecord?, now: Timestamp, into outbox: inout WatchOutbox) {
            let hunt = logged.hunt
            switch logged.change {
            case .hunt:
                if let record { watches.huntChanged(hunt, to: record, now: now, into: &outbox) }
                boards.huntChanged(hunt, record: record)
            case .hint(let text, let at):
                watches.tell(hunt, into: &outbox) { .hint(watch: $0, text: text, at: at) }
            case .found(let player, let stop, let points):
                watches.tell(hunt, into: &outbox) { .found(watch: $0, player: player, stop: stop, points: points) }
            case .reply(let reply):
                watches.tell(hunt, into: &outbox) { .reply(watch: $0, reply: reply) }
            case .standing(let standing, let renamedFrom):
                if let old = renamedFrom { watches.renamePlayer(in: hunt, from: old, to: standing.player) }
                for entry in boards.apply(standing, renamedFrom: renamedFrom, of: hunt, seq: logged.seq) {
                    watches.tell(hunt, into: &outbox) { .score(watch: $0, entry: entry) }
                }
            case .left(let player, let userID):
                // The player hears nothing of the hunt after their LEAVE.
                watches.close(hunt, reason: "left", into: &outbox) { $0.player == player }
                for entry in boards.remove(player, userID: userID, of: hunt, seq: logged.seq) {
                    watches.tell(hunt, into: &outbox) { .score(watch: $0, entry: entry) }
                }
            case .totals(let totals):
                rankings.apply(totals, now: now)
            case .badge(let player, let badge):
                watches.tell(hunt, into: &outbox) { .badge(watch: $0, player: player, badge: badge) }
            case .review(let checkIn, let status):
                // Only the host's watches (`player` nil): players do not see others' check-ins.
                watches.tell(hunt, into: &outbox, only: { $0.player == nil }) { .review(watch: $0, checkIn: checkIn, status: status.rawValue) }
            case .team(let team):
                for entry in boards.apply(team, of: hunt, seq: logged.seq) {
                    watches.tell(hunt, into: &outbox) { .score(watch: $0, entry: entry) }
                }
            }
        }
    }

    private let projections = Mutex(Projections())
    private let deliveries = WatchDelivery()
    private let catchUps = CatchUpTurns()
    private let rewrites = Atomic<Int>(0)

    /// How many times the log was found rewritten under this feed's place (each a reload).
    public var logRewrites: Int { rewrites.load(ordering: .relaxed) }

    /// Changes read from the log at a time.
    static let changesPerRead = 1000

    private let logger: Logger

    /// The time as this daemon sees it: when a watched hunt's `STARTS` or `ENDS` has passed, and
    /// which weeks the rankings hold.
    public let clock: any WallClock

    /// - Parameter clock: the time of day; the system's unless a test holds one (a ``Feed``
    ///   gives its own).
    /// - Parameter standbyReads: a standby the rankings' load may read the totals from (nil: the primary).
    public init(
        database: Database, logger: Logger = Logger(label: "scavenger.hunts"), clock: any WallClock = .system,
        standbyReads: StandbyReads? = nil
    ) {
        self.database = database
        self.logger = logger
        self.clock = clock
        self.standbyReads = standbyReads
    }

    /// Where the rankings' load may read the totals besides the primary (see ``StandbyReads``).
    private let standbyReads: StandbyReads?

    /// Totals read from the database at a time while the rankings load.
    static let totalsPerRead = 20000

    /// Hunt watches held.
    public var watchCount: Int { projections.withLock { $0.watches.count } }

    /// Whether the rankings are loaded and the feed has a place in the log.
    public var isLoaded: Bool { projections.withLock { $0.place.isLoaded } }

    /// Whether a load of the rankings is under way (at start-up, the listener's).
    public var isLoading: Bool { projections.withLock { $0.place.loading } }

    /// Batches of events made and not yet handed to their sinks (for tests).
    var undeliveredBatches: Int { deliveries.pending }

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
        // The totals from a standby that shows everything up to `through`, when there is one.
        let database = await standbyReads?.reader(after: self.database, for: "rankings", logger: logger) ?? self.database
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
        let watched = projections.withLock { state -> Set<String>? in
            guard state.place.loaded(at: through) else { return nil }
            // Swapped in, not copied: a second reference would make the next change copy it all.
            swap(&state.rankings, &rankings)
            state.boards.dropAll()
            return state.watches.hunts
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
        guard projections.withLock({ $0.place.beginLoad() }) else { return nil }
        defer { projections.withLock { $0.place.endLoad() } }
        return try await load()
    }

    /// Reads the rankings in place under the lock (`body` must be quick and must not call back);
    /// nil before they are loaded.
    public func withRankings<T>(_ body: (Rankings) -> T) -> T? {
        projections.withLock { state in
            guard state.place.isLoaded else { return nil }
            return body(state.rankings)
        }
    }

    // MARK: Leaderboards

    /// A hunt's leaderboard as of the last change applied (or later): loaded on first use from the
    /// players' standings, in memory from then on.
    public func leaderboard(of huntID: String) async throws(StoreError) -> Leaderboard {
        if let cached = projections.withLock({ $0.boards.board(of: huntID) }) { return cached }
        let snapshot: HuntBoards.Kept
        if let teams = try await database.teamsSnapshot(huntID: huntID) {
            snapshot = HuntBoards.Kept(teams: teams.teams, through: teams.through, facts: teams.access, trial: teams.trial)
        } else {
            let (players, through, facts, trial) = try await database.playersSnapshot(huntID: huntID)
            snapshot = HuntBoards.Kept(players: players, through: through, facts: facts, trial: trial)
        }
        return projections.withLock { state in
            state.boards.keep(snapshot, of: huntID, place: state.place, watches: state.watches)
        }
    }

    /// A hunt's leaderboard as kept in memory now (every change applied so far), without
    /// loading it; nil when it is not kept.
    public func keptLeaderboard(of huntID: String) -> Leaderboard? {
        projections.withLock { $0.boards.board(of: huntID) }
    }

    /// Who `viewer` (nil: nobody logged in) is to a hunt whose board and access are kept, from
    /// memory; nil when they are not kept (the caller asks the database).
    public func access(to huntID: String, viewer: Int?) -> Viewer? {
        projections.withLock { $0.boards.viewer(viewer, of: huntID) }
    }

    // MARK: Catching up

    /// Applies every change committed since the last one applied: leaderboards change and
    /// watchers hear of it; returns once it has read the log at least once after this call
    /// began, so a write committed before the call is applied, and its watchers' events handed
    /// to their sinks, when it returns (each read numbers what is committed first, see
    /// `hunt_changes_after`). Calls at the same time share reads (one in flight).
    public func catchUp() async throws(StoreError) {
        try await catchUps.take { () throws(StoreError) in try await self.applyNewChanges() }
    }

    /// One pass over the log from the feed's place to its end.
    private func applyNewChanges() async throws(StoreError) {
        var place = projections.withLock { $0.place.applied }
        if place == nil {
            // The first catch-up loads the rankings, then applies what was committed meanwhile;
            // when another task is loading, its place comes with it.
            guard try await loadIfNeeded() != nil else { return }
            place = projections.withLock { $0.place.applied }
        }
        while let from = place {
            let page = try await database.huntChanges(after: Int(from.seq), stamp: from.stamp, limit: Self.changesPerRead)
            let changes = page.changes
            if !page.placeHolds {
                // The row at this daemon's place is gone or another (a standby promoted without
                // the last changes, positions given out again): what was applied may never have
                // happened. Everything is loaded afresh from the database as it now is.
                logger.error("the hunts' change log was rewritten under this daemon's place (a failover?); reloading", metadata: [
                    "place": "\(from.seq)",
                ])
                rewrites.add(1, ordering: .relaxed)
                projections.withLock { $0.place.forget() }
                try await load()
                return
            }
            if page.trimmedThrough > from.seq {
                // `expire` trimmed the log past this daemon's place (it was away a long time):
                // every board and the rankings are loaded afresh, the watched hunts' at once.
                try await load()
                return
            }
            guard !changes.isEmpty else { return }
            // Hunts whose schedule changed are read again before the lock, for their events.
            var records: [String: HuntRecord] = [:]
            let (watched, kept) = projections.withLock { ($0.watches.hunts, $0.boards.hunts) }
            for change in changes where change.change == .hunt && (watched.contains(change.hunt) || kept.contains(change.hunt))
                && records[change.hunt] == nil {
                records[change.hunt] = try await database.hunt(id: change.hunt)
            }
            place = await apply(changes, records: records)
            if changes.count < Self.changesPerRead { return }
        }
    }

    /// Applies a batch in order under the lock, skipping what is applied already, then hands the
    /// watchers' events to their sinks once it is let go (in the order the lock made them:
    /// ``WatchDelivery``); answers the place reached.
    func apply(_ changes: [LoggedHuntChange], records: [String: HuntRecord]) async -> LogPlace? {
        let now = clock.now
        let (reached, batch) = projections.withLock { state -> (LogPlace?, Int?) in
            var outbox = WatchOutbox()
            for logged in changes {
                guard state.place.advance(to: logged) else { continue }
                state.apply(logged, record: records[logged.hunt], now: now, into: &outbox)
            }
            return (state.place.applied, deliveries.enqueue(outbox))
        }
        await deliveries.deliver(through: batch)
        return reached
    }

    /// Announces watched hunts whose state the clock has changed (a `STARTS` or `ENDS` passed):
    /// every daemon does so by its own clock (``clock``, unless `now` is given), within a tick.
    /// The events are handed to the sinks before it returns, unless another task is handing
    /// events over just then: that task hands these over too, after the ones made before them.
    public func announceScheduledChanges(at now: Timestamp? = nil) {
        let now = now ?? clock.now
        projections.withLock { state in
            var outbox = WatchOutbox()
            state.watches.announceScheduledChanges(at: now, into: &outbox)
            deliveries.enqueue(outbox)
        }
        deliveries.deliverQueued()
    }

    // MARK: Watches

    /// Gets ready to watch a hunt: the feed's place known and the hunt's leaderboard kept, so the
    /// watch hears every change of it from ``addWatch(_:player:sink:)`` on. `unavailable` while
    /// another task loads the rankings (at start-up).
    public func prepareWatch(of huntID: String) async throws(StoreError) {
        if !isLoaded { try await catchUp() }
        // Another task is loading the rankings (start-up): a board is kept only from then on.
        guard isLoaded else { throw .unavailable("the hunts' feed is still loading; retry") }
        // Loaded until it is kept (it is not when the feed moved past its snapshot meanwhile).
        while !projections.withLock({ $0.boards.holds(huntID) }) {
            _ = try await leaderboard(of: huntID)
        }
    }

    /// Starts a watch of `record`'s hunt for `sink` (after ``prepareWatch(of:)``), by its host
    /// (`player` nil) or the player of that name; returns its id, `h` and a number.
    public func addWatch(_ record: HuntRecord, player: String?, sink: any WatchSink) -> String {
        let now = clock.now
        return projections.withLock { $0.watches.add(record, player: player, sink: sink, now: now) }
    }

    /// Whether `id` names a hunt watch (rather than an area watch).
    public static func isHuntWatch(_ id: String) -> Bool { id.hasPrefix("h") }

    /// Ends a hunt watch with a `closed` event saying `reason` (its last); false when there is
    /// none with that id.
    @discardableResult
    public func closeWatch(id: String, reason: String) -> Bool {
        let closed = projections.withLock { state in
            var outbox = WatchOutbox()
            let closed = state.watches.close(id: id, reason: reason, into: &outbox)
            deliveries.enqueue(outbox)
            return closed
        }
        deliveries.deliverQueued()
        return closed
    }

    /// Ends a hunt watch; false when there is none with that id. Events already made for it may
    /// still reach its sink (which drops those of watches its connection no longer holds).
    @discardableResult
    public func removeWatch(id: String) -> Bool {
        projections.withLock { $0.watches.remove(id: id) }
    }
}
