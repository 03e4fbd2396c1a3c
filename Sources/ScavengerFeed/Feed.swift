import Foundation
import HeapModule
import Logging
import NIOPosix
import ScavengerCore
import ScavengerGeography
import ScavengerPinIndex
import ReadWriteLock
import ScavengerStore
import Synchronization

/// The live feed: every live pin in memory, so NEARBY and REGION never wait on the database.
///
/// PostgreSQL stays the source of truth. The feed loads all live pins at start, remembering the
/// place in the change log (`feed_changes`) that load is consistent with, then applies the log's
/// changes in order from there: its own daemon's writes (right after they commit, before the
/// client hears `OK`) and every other process's alike (woken by ``FeedListener``). Its own new
/// pins go in directly instead (``writeOwnPin(id:_:)``); the log brings them again. After a lost
/// `LISTEN` connection it replays from its place instead of reloading. Expiry needs no sweep: a
/// pin whose `expires` has passed is skipped on every read.
///
/// **Locks, and the one order they are taken in.** `publishing` (outermost: a batch of
/// transitions is computed and published under it) → `index` (the pin index's read-write lock)
/// → `expiries` or `ownPins` (innermost; never both at once). `position` and `regionIndex` are
/// leaves: taken alone, never while another lock of the feed's is wanted inside them. A path that
/// needs two takes them in this order and nothing else: no cycle, so no deadlock. Readers
/// (NEARBY, REGION) take only `index`'s read side (and `regionIndex` before it, released).
public final class Feed: Sendable {
    public let database: Database
    /// Where start-up loads may read from besides the primary (see ``StandbyReads``).
    private let standbyReads: StandbyReads?
    let index: ReadWriteLock<PinIndex>
    private let regionIndex: Mutex<RegionIndex>
    private let logger: Logger
    /// The last change applied; nil until the feed is loaded.
    /// The last change applied and its row's stamp (see `LogPlace`: the stamp tells a rewritten
    /// log from the one applied); nil until loaded.
    private let position = Mutex<LogPlace?>(nil)
    private let rewrites = Atomic<Int>(0)

    /// How many times the change log was found rewritten under this feed's place (each a reload).
    public var logRewrites: Int { rewrites.load(ordering: .relaxed) }
    private let catchUps = CatchUpTurns()
    /// The live watches: changes applied to the feed become their events.
    public let watches: WatchHub
    /// Hunts' leaderboards and `WATCH HUNT` watches, kept by the hunts' change log.
    public let hunts: HuntFeed
    /// Expiries still to announce to watches, and the time up to which they have been: a pin
    /// counts as visible to watches until then, so every pin a watch saw gets exactly one `gone`.
    let expiries: Mutex<ExpiryQueue>
    /// The watches of map boxes (`WATCH MAP`).
    let mapWatches = MapWatches()
    /// Held from computing a batch of transitions to publishing it, so watches hear changes in
    /// the order they were applied even when catch-ups, direct writes and expiry announcements
    /// run on different threads.
    let publishing = Mutex(())

    /// This daemon's new pins being written, from before their insert is sent until they are
    /// put in the feed (see ``writeOwnPin(id:_:)``).
    let ownPins = Mutex(OwnPinsInFlight())

    /// Changes read from the log at a time.
    static let changesPerRead = 1000

    /// The time as the feed sees it: which pins have expired, and when a hunt's `STARTS` or
    /// `ENDS` passes (its ``hunts`` read the same clock).
    public let clock: any WallClock

    /// - Parameter clock: the time of day; the system's unless a test holds one.
    /// - Parameter standbyReads: a standby the start-up loads may read from (nil: the primary).
    public init(database: Database, logger: Logger, clock: any WallClock = .system, standbyReads: StandbyReads? = nil) {
        self.database = database
        self.standbyReads = standbyReads
        self.index = ReadWriteLock(PinIndex())
        self.regionIndex = Mutex(RegionIndex.empty)
        self.logger = logger
        self.clock = clock
        self.watches = WatchHub()
        self.hunts = HuntFeed(database: database, logger: logger, clock: clock, standbyReads: standbyReads)
        self.expiries = Mutex(ExpiryQueue(announcedThrough: clock.now.microseconds))
    }

    /// Whether the feed has been loaded: until then it cannot answer (``FeedListener`` loads it,
    /// retrying while the database is away).
    public var isLoaded: Bool { position.withLock { $0 != nil } }

    /// Fills the feed with `pins` and calls it loaded at change `place`, without a database: for a
    /// board that only parses (the line checks), where no change will ever come.
    public func loadOffline(_ pins: [IndexedPin], place: Int64 = 0) {
        for pin in pins { upsert(pin) }
        position.withLock { $0 = LogPlace(seq: place, stamp: 0) }
    }

    /// The last change in the log this feed has applied (nil before it is loaded).
    public var appliedChange: Int64? { position.withLock { $0?.seq } }

    // MARK: Loading

    /// Opens a ``ChangeListener`` for ``FeedListener``, on a thread pool's thread (libpq blocks).
    public func startListening() async throws -> ChangeListener {
        try await NIOThreadPool.singleton.runIfActive { [database] in try database.listenForChanges() }
    }

    /// Loads the regions and every live pin (in bounded batches); returns the number of pins.
    /// The table is read in ranges of `pagesPerBatch` pages, in the order PostgreSQL stores it,
    /// and the next range is fetched while the current one is indexed, so the database's work
    /// and the daemon's overlap. The place in the change log is read first: every change up to it
    /// is in what is loaded, and later ones are applied by ``catchUp()`` (a pin written during
    /// the load, read twice or not at all by the ranges, is among them).
    @discardableResult
    public func load(pagesPerBatch: Int = 256) async throws(StoreError) -> Int {
        try await load(pagesPerBatch: pagesPerBatch, beforeEachRange: nil)
    }

    /// ``load(pagesPerBatch:)``, running `beforeEachRange` before each range of pages after the
    /// first is read: what tests use to change the table while a load goes on.
    package func load(
        pagesPerBatch: Int, beforeEachRange: (@Sendable () async -> Void)?
    ) async throws(StoreError) -> Int {
        // A new pin put in directly from now on might land in the index about to be replaced.
        ownPins.withLock { $0.reloadsBegun += 1 }
        let place = try await database.latestFeedPlace()
        try await reloadRegions()
        try await fillMissingCells()
        // The pages from a standby that shows everything up to `place` (and the cells just
        // filled), when there is one: the log after `place` is followed on the primary.
        let database = await standbyReads?.reader(after: self.database, for: "pins", logger: logger) ?? self.database
        var size = try await database.pinTableSize()
        var (fresh, loadedExpiries) = try await loadPages(
            size.pages, estimatedRows: size.estimatedRows, from: database, pagesPerBatch: pagesPerBatch, beforeEachRange: beforeEachRange)
        // A rewrite of the table (VACUUM FULL, CLUSTER) while the ranges were read moved its rows
        // to other pages without a change in the log: read it again.
        while case let after = try await database.pinTableSize(), after.file != size.file {
            logger.warning("the pins table was rewritten while the feed loaded; loading it again")
            size = after
            (fresh, loadedExpiries) = try await loadPages(
                size.pages, estimatedRows: size.estimatedRows, from: database, pagesPerBatch: pagesPerBatch,
                beforeEachRange: beforeEachRange)
        }
        fresh.finishBulkLoad()
        let count = fresh.count
        publishing.withLock { _ in
            index.write { index in
                index = fresh
                expiries.withLock { $0.replaceAll(with: loadedExpiries) }
                // Watches hear `overflow` after a reload: nothing loaded is still to announce.
                ownPins.withLock { $0.unannounced = [] }
            }
            position.withLock { $0 = place }
        }
        return count
    }

    /// Reads `pages` pages of the pins table into a fresh index (cells not yet filled in: see
    /// ``PinIndex/finishBulkLoad()``), with each new pin's expiry.
    private func loadPages(
        _ pages: Int, estimatedRows: Int?, from database: Database, pagesPerBatch: Int, beforeEachRange: (@Sendable () async -> Void)?
    ) async throws(StoreError) -> (PinIndex, [ExpiryQueue.Entry]) {
        let fresh = PinIndex()
        let step = max(1, pagesPerBatch)
        // Room for the rows PostgreSQL expects, so a large table's records do not regrow and
        // copy themselves while it loads (more pins than expected grow them as usual).
        let expected = min(estimatedRows ?? 0, 50_000_000)
        if expected > 0 { fresh.reserveCapacity(expected) }
        // Cells are filled in at the end, sorted (no one reads `fresh` until it is published).
        fresh.beginBulkLoad(expectedPins: expected)
        var batch = try await database.livePins(pages: 0 ..< min(step, pages))
        var nextPage = min(step, pages)
        while nextPage < pages || !batch.isEmpty {
            let range = nextPage ..< min(nextPage + step, pages)
            nextPage = range.upperBound
            if let beforeEachRange, !range.isEmpty { await beforeEachRange() }
            let next = Task { () throws(StoreError) -> [IndexedPin] in
                try await database.livePins(pages: range)
            }
            for pin in batch {
                do {
                    try fresh.upsert(pin)
                } catch {
                    logger.error("a stored pin cannot be indexed; skipping it", metadata: ["id": "\(pin.id)", "error": "\(error)"])
                }
            }
            do {
                batch = try await next.value
            } catch let error as StoreError {
                throw error
            } catch {
                throw .unexpected("\(error)")
            }
        }
        // Each pin's expiry as it was read last (a pin read twice, moved by a change meanwhile,
        // has the later one), by its compact key, not its id string.
        var loadedExpiries: [ExpiryQueue.Entry] = []
        loadedExpiries.reserveCapacity(fresh.count)
        fresh.forEachExpiry { expires, key in loadedExpiries.append(ExpiryQueue.Entry(expires: expires, key: key)) }
        return (fresh, loadedExpiries)
    }

    /// Applies every change in the log after the last one applied, in order; returns once it has
    /// read the log at least once after this call began, so a write committed before the call
    /// is in the feed when it returns. Calls at the same time share reads. Does nothing before
    /// the feed is loaded (the load will hold the changes).
    public func catchUp() async throws(StoreError) {
        try await catchUps.take { () throws(StoreError) in try await self.applyNewChanges() }
    }

    /// One pass over the log from the feed's place to its end: what is committed and not
    /// numbered yet is numbered first (writers number nothing themselves, `db/0037`).
    private func applyNewChanges() async throws(StoreError) {
        guard var place = appliedChange else { return }
        try await database.numberFeedChanges()
        while true {
            let page = try await database.feedChanges(
                after: place, stamp: position.withLock { $0?.stamp }, limit: Self.changesPerRead)
            guard page.isContinuous else {
                if page.rewritten {
                    // The row at this feed's place is gone or another (a standby promoted without
                    // the last changes): pins applied from it may be lost. (The new primary hands
                    // out positions past the lost ones, `db/0033`, so none is skipped.)
                    logger.error("the change log was rewritten under this feed's place (a failover?); reloading", metadata: [
                        "place": "\(place)",
                    ])
                    rewrites.add(1, ordering: .relaxed)
                } else {
                    // `expire` trimmed the log past this feed's place: start again from a full load.
                    logger.warning("the change log no longer reaches this feed's place; reloading", metadata: ["place": "\(place)"])
                }
                try await load()
                // What changed meanwhile is not known pin by pin: every watch hears `overflow`.
                publishing.withLock { _ in watches.overflowAll() }
                guard let reloaded = appliedChange else { return }
                place = reloaded
                continue
            }
            guard let last = page.changes.last else { return }
            var regionsChanged = false
            publishing.withLock { _ in
                let transitions = index.write { index in
                    var transitions: [PinTransition] = []
                    for change in page.changes {
                        switch change.subject {
                        case .pin(let id, let now):
                            let unannounced = ownPins.withLock { own -> Bool in
                                if !own.pins.isEmpty { own.pins[id] = nil }
                                return !own.unannounced.isEmpty && own.unannounced.remove(id) != nil
                            }
                            if let transition = apply(id: id, now, to: index, seq: change.sequence, unannounced: unannounced) {
                                transitions.append(transition)
                            }
                        case .region:
                            regionsChanged = true
                        }
                    }
                    return transitions
                }
                watches.publish(transitions)
                // Under the same lock: a watch starting sees the index and its place agree.
                position.withLock { $0 = LogPlace(seq: last.sequence, stamp: last.stamp) }
            }
            if regionsChanged { try await reloadRegions() }
            place = last.sequence
            if page.changes.count < Self.changesPerRead { return }
        }
    }

    /// Whether some of this daemon's own new pins are in the index but not yet announced to
    /// watches (their change-log entries not yet applied): a snapshot taken now would leave them
    /// out (they would come as live events after `ready`).
    public var hasUnannouncedOwnPins: Bool { ownPins.withLock { !$0.unannounced.isEmpty } }

    /// After this daemon's own write committed: brings the feed up to it, so the writer's next
    /// read sees it. If the log cannot be read just now, `fallback` puts the write in directly
    /// (the next catch-up reads it again from the database).
    public func applyOwnWrite(fallback: (Feed) -> Void) async {
        do {
            try await catchUp()
        } catch {
            logger.warning("could not read the change log after a write; applying it directly", metadata: ["error": "\(error)"])
            fallback(self)
        }
    }

    /// Writes a new pin of this daemon's (`write` returns it once committed) and puts it in
    /// the feed straight away, without reading the change log first: the writer's next read sees
    /// it, and its `OK` does not wait for a round trip to the log. Watches hear of it only when
    /// the catch-up reaches its entry in the log, so that their events carry its `seq` in log
    /// order (until then it is "not yet announced"); when some watch holds it, a catch-up starts
    /// at once.
    ///
    /// That is safe because a new pin's id is unknown to every other writer until it is
    /// committed: if the catch-up has applied any change to the pin by then, it has applied the
    /// insert and read the pin as it is now (later edits or deletion included), and the pin is
    /// left as the catch-up put it. A reload begun in between may have read the database before
    /// the commit, or be about to replace the index, so then the feed catches up instead. A
    /// write that fails may still have committed (its answer lost): the listener catches up soon.
    public func writeOwnPin(id: String, _ write: () async throws -> Pin) async throws -> Pin {
        ownPins.withLock { $0.pins[id] = $0.reloadsBegun }
        let pin: Pin
        do {
            pin = try await write()
        } catch {
            ownPins.withLock { own in
                own.pins[id] = nil
                own.failedWrites = true
            }
            throw error
        }
        let (reloaded, put) = publishing.withLock { _ -> (Bool, Bool) in
            // Checked under the index's write lock, which catch-ups and reloads hold while they
            // apply changes and replace the index.
            index.write { index -> (Bool, Bool) in
                let (sentAfter, reloads) = ownPins.withLock { ($0.pins.removeValue(forKey: id), $0.reloadsBegun) }
                guard let sentAfter else { return (false, false) }  // the catch-up has it, as it is now
                guard sentAfter == reloads else { return (true, false) }
                _ = apply(id: id, IndexedPin(pin), to: index, seq: 0, unannounced: true)
                ownPins.withLock { _ = $0.unannounced.insert(id) }
                return (false, true)
            }
        }
        if reloaded {
            await applyOwnWrite { $0.upsert(IndexedPin(pin)) }
        } else if put, watches.count > 0, !watches.watches(holding: pin).isEmpty {
            Task { try? await self.catchUp() }
        }
        return pin
    }

    /// Whether a write of a new pin failed since the last call, having perhaps committed: the
    /// listener then catches up without waiting for a wake-up, which names this daemon and which
    /// it would sleep through.
    public func takeFailedOwnWrites() -> Bool {
        ownPins.withLock { own in
            defer { own.failedWrites = false }
            return own.failedWrites
        }
    }

    /// Pins written before grid cells existed get theirs.
    private func fillMissingCells() async throws(StoreError) {
        while true {
            let missing = try await database.pinsWithoutCell(limit: 5000)
            if missing.isEmpty { return }
            try await database.fillMissingCells(missing.map {
                (id: $0.id, cell: Int64(Grid.cell(lat: $0.lat, lon: $0.lon, level: 0).rawValue))
            })
            if missing.count < 5000 { return }
        }
    }

    /// Reads the regions again and rebuilds their index.
    public func reloadRegions() async throws(StoreError) {
        let definitions = try await database.regions()
        do {
            let fresh = try RegionIndex(definitions)
            regionIndex.withLock { $0 = fresh }
        } catch {
            logger.error("a stored region is invalid; keeping the previous regions", metadata: ["error": "\(error)"])
        }
    }

    // MARK: Reads

    /// The named region containing a point, if any.
    public func region(lat: Double, lon: Double) -> String? {
        regionIndex.withLock { $0 }.region(lat: lat, lon: lon)
    }

    /// Names of the defined regions.
    public var regionNames: [String] { regionIndex.withLock { $0 }.names }

    /// A page of NEARBY as borrowed records, handed to `body` while the index cannot change
    /// (under the read lock, so other readers go on): for writing a reply without copying pins.
    public func withNearby<Result>(_ query: NearbyQuery, _ body: (NearbyRecords) -> Result) throws(PinIndexError) -> Result {
        let now = clock.now
        return try index.read { index throws(PinIndexError) in body(try index.nearbyRecords(query, now: now)) }
    }

    /// A page of REGION as borrowed records, handed to `body` while the index cannot change;
    /// nil when no such region is defined.
    public func withRegionPage<Result>(
        named name: String, limit: Int, kind: PinKind?, after cursor: RegionCursor?, _ body: (RegionRecords) -> Result
    ) throws(PinIndexError) -> Result? {
        guard regionIndex.withLock({ $0 }).definitions[name] != nil else { return nil }
        let now = clock.now
        return try index.read { index throws(PinIndexError) in
            body(try index.regionRecords(named: name, limit: limit, kind: kind, after: cursor, now: now))
        }
    }

    /// Every defined region with its number of live pins, by name.
    public func regionCounts() -> [(name: String, pins: Int)] {
        let names = regionNames
        let now = clock.now
        let counts = index.read { $0.liveCounts(now: now) }
        return names.map { (name: $0, pins: counts[$0] ?? 0) }
    }

    /// How many pins are in memory (expired ones not yet purged included).
    public var count: Int { index.read { $0.count } }

    /// The pin index's sizes (pins, slots, text bytes, cells per level, memory held).
    public var indexStatistics: PinIndex.Statistics { index.read { $0.statistics } }

    // MARK: Writes (after they commit)

    /// A pin was written or changed.
    public func upsert(_ pin: IndexedPin) {
        publishing.withLock { _ in
            let seq = appliedChange ?? 0
            let transition = index.write { apply(id: pin.id, pin, to: $0, seq: seq, unannounced: unannounced(pin.id)) }
            if let transition { watches.publish([transition]) }
        }
    }

    /// A pin is gone.
    public func remove(id: String) {
        publishing.withLock { _ in
            let seq = appliedChange ?? 0
            let transition = index.write { apply(id: id, nil, to: $0, seq: seq, unannounced: unannounced(id)) }
            if let transition { watches.publish([transition]) }
        }
    }

    /// Whether one of this daemon's new pins is in the index but not yet announced to watches,
    /// taking that mark off (it is about to be announced).
    private func unannounced(_ id: String) -> Bool {
        ownPins.withLock { $0.unannounced.remove(id) != nil }
    }

    /// Puts a pin as it is now (nil: gone) into the index, under its write lock; returns how its
    /// visibility to watches changed when some watch exists, as change `seq` of the log. A pin
    /// not yet announced counts as unseen before. Every change to a pin goes through here.
    private func apply(id: String, _ now: IndexedPin?, to index: PinIndex, seq: Int64, unannounced: Bool) -> PinTransition? {
        let before = index.pin(id: id)
        if let now {
            do {
                try index.upsert(now)
            } catch {
                logger.error("a pin cannot be indexed", metadata: ["id": "\(id)", "error": "\(error)"])
                return nil
            }
        } else {
            guard before != nil else { return nil }
            index.remove(id: id)
            if unannounced { return nil }
        }
        return expiries.withLock { queue -> PinTransition? in
            if let now, before?.pin.expires != now.pin.expires {
                if let key = PinKey(id: id) { queue.push(expires: now.pin.expires.microseconds, key: key) }
            }
            guard watches.count > 0 else { return nil }
            let transition = PinTransition(before: unannounced ? nil : queue.visible(before), after: queue.visible(now), seq: seq)
            return transition.before == nil && transition.after == nil ? nil : transition
        }
    }

    /// Announces, as `gone` to the watches that saw them, the pins whose `expires` has passed
    /// since the last call; ``FeedListener`` calls it every second. Returns how many expired.
    @discardableResult
    public func announceExpiries() -> Int {
        let now = clock.now.microseconds
        return publishing.withLock { _ in announceExpiries(through: now) }
    }

    private func announceExpiries(through now: Int64) -> Int {
        let seq = appliedChange ?? 0
        // Under the write lock: MAP's counts lose the expired pins in the same step as the queue
        // hands them out, so a MAP that finds nothing due finds them gone from its counts.
        let transitions = index.write { index in
            var dueKeys: [PinKey] = []
            let due = expiries.withLock { queue -> [PinTransition] in
                var transitions: [PinTransition] = []
                while let due = queue.popDue(through: now) {
                    dueKeys.append(due.key)
                    guard let pin = index.pin(id: due.key.string), pin.pin.expires.microseconds == due.expires,
                          let seen = queue.visible(pin) else { continue }
                    transitions.append(PinTransition(before: seen, after: nil, seq: seq))
                }
                queue.announcedThrough = max(queue.announcedThrough, now)
                return transitions
            }
            index.expireMapped(dueKeys, through: Timestamp(microseconds: now))
            // Own new pins not yet announced were never seen: no `gone` for them.
            return ownPins.withLock { own in
                own.unannounced.isEmpty ? due : due.filter { !own.unannounced.contains($0.before!.id) }
            }
        }
        watches.publish(transitions)
        return transitions.count
    }

    /// A reply was added under a pin.
    public func replyAdded(pinID: String) {
        _ = index.write { $0.addReplies(id: pinID, delta: 1) }
    }

    /// Drops expired pins from memory; returns how many.
    @discardableResult
    public func purgeExpired() -> Int {
        // Only what watches have been told about: a pin not yet announced stays for its `gone`.
        let now = Timestamp(microseconds: expiries.withLock { $0.announcedThrough })
        return index.write { $0.removeExpired(now: now) }
    }
}

/// Pins by expiry time (swift-collections' min-heap; entries whose pin changed its expiry since
/// are skipped when they come due), and the time up to which expiries have been announced.
struct ExpiryQueue {
    /// One pin's expiry: 24 bytes, the pin's id as its compact key, not a string of its own.
    struct Entry: Comparable {
        var expires: Int64
        var key: PinKey

        static func < (lhs: Entry, rhs: Entry) -> Bool {
            lhs.expires != rhs.expires ? lhs.expires < rhs.expires : lhs.key < rhs.key
        }
    }

    private var heap = Heap<Entry>()
    var announcedThrough: Int64

    init(announcedThrough: Int64) {
        self.announcedThrough = announcedThrough
    }

    var count: Int { heap.count }

    /// Holds exactly these entries (built in linear time, as after a load).
    mutating func replaceAll(with entries: consuming [Entry]) {
        heap = Heap(entries)
    }

    /// The pin as watches count it: not hidden and not expired by their clock; nil otherwise.
    func visible(_ pin: IndexedPin?) -> Pin? {
        guard let pin, !pin.hidden, pin.pin.expires.microseconds > announcedThrough else { return nil }
        return pin.pin
    }

    mutating func push(expires: Int64, key: PinKey) {
        heap.insert(Entry(expires: expires, key: key))
    }

    /// The earliest entry when it is due by `time`, taken out.
    /// The earliest expiry queued, or nil when none is.
    var nextDue: Int64? { heap.min?.expires }

    mutating func popDue(through time: Int64) -> (expires: Int64, key: PinKey)? {
        guard let first = heap.min, first.expires <= time else { return nil }
        _ = heap.removeMin()
        return (first.expires, first.key)
    }
}

/// This daemon's new pins between sending their insert and going into the feed.
struct OwnPinsInFlight {
    /// Each pin's id, with the number of reloads begun before its insert was sent.
    var pins: [String: Int] = [:]
    var reloadsBegun = 0
    /// Put in the index but not yet announced to watches: the catch-up announces each when it
    /// applies its entry in the log, with its `seq`.
    var unannounced: Set<String> = []
    /// A write failed since the listener last looked.
    var failedWrites = false
}
