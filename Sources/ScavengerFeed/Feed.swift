import Foundation
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
/// PostgreSQL stays the source of truth. The feed loads all live pins at start, applies this
/// daemon's own writes right after they commit (before the client hears `OK`), and hears of
/// other processes' writes through `LISTEN`/`NOTIFY` (see ``FeedListener``). Expiry needs no
/// sweep: a pin whose `expires` has passed is skipped on every read.
public final class Feed: Sendable {
    public let database: Database
    private let index: ReadWriteLock<PinIndex>
    private let regionIndex: Mutex<RegionIndex>
    private let logger: Logger

    public init(database: Database, logger: Logger) {
        self.database = database
        self.index = ReadWriteLock(PinIndex())
        self.regionIndex = Mutex(RegionIndex.empty)
        self.logger = logger
    }

    /// The current time, as pins' times are kept.
    public static func now() -> Timestamp {
        Timestamp(microseconds: Int64((Date().timeIntervalSince1970 * 1_000_000).rounded(.down)))
    }

    // MARK: Loading

    /// Opens a ``ChangeListener`` for ``FeedListener``, on a thread pool's thread (libpq blocks).
    /// Open it before ``load(batchSize:)``, so a change made in between is heard, not lost.
    public func startListening() async throws -> ChangeListener {
        try await NIOThreadPool.singleton.runIfActive { [database] in try database.listenForChanges() }
    }

    /// Loads the regions and every live pin (in bounded batches); returns the number of pins.
    /// The next batch is fetched while the current one is indexed, so the database's work and
    /// the daemon's overlap.
    @discardableResult
    public func load(batchSize: Int = 5000) async throws(StoreError) -> Int {
        try await reloadRegions()
        try await fillMissingCells()
        let fresh = PinIndex()
        let database = self.database
        var batch = try await database.livePins(after: nil, limit: batchSize)
        while !batch.isEmpty {
            let after = batch.count == batchSize ? batch.last?.id : nil
            let next = Task { () throws(StoreError) -> [IndexedPin] in
                guard let after else { return [] }
                return try await database.livePins(after: after, limit: batchSize)
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
        let count = fresh.count
        index.write { $0 = fresh }
        return count
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
        let now = Self.now()
        return try index.read { index throws(PinIndexError) in body(try index.nearbyRecords(query, now: now)) }
    }

    /// A page of REGION as borrowed records, handed to `body` while the index cannot change;
    /// nil when no such region is defined.
    public func withRegionPage<Result>(
        named name: String, limit: Int, kind: PinKind?, after cursor: RegionCursor?, _ body: (RegionRecords) -> Result
    ) throws(PinIndexError) -> Result? {
        guard regionIndex.withLock({ $0 }).definitions[name] != nil else { return nil }
        let now = Self.now()
        return try index.read { index throws(PinIndexError) in
            body(try index.regionRecords(named: name, limit: limit, kind: kind, after: cursor, now: now))
        }
    }

    /// Every defined region with its number of live pins, by name.
    public func regionCounts() -> [(name: String, pins: Int)] {
        let names = regionNames
        let now = Self.now()
        let counts = index.read { $0.liveCounts(now: now) }
        return names.map { (name: $0, pins: counts[$0] ?? 0) }
    }

    /// How many pins are in memory (expired ones not yet purged included).
    public var count: Int { index.read { $0.count } }

    // MARK: Writes (after they commit)

    /// A pin was written or changed.
    public func upsert(_ pin: IndexedPin) {
        index.write { index in
            do {
                try index.upsert(pin)
            } catch {
                logger.error("a pin cannot be indexed", metadata: ["id": "\(pin.id)", "error": "\(error)"])
            }
        }
    }

    /// A pin is gone.
    public func remove(id: String) {
        _ = index.write { $0.remove(id: id) }
    }

    /// A reply was added under a pin.
    public func replyAdded(pinID: String) {
        _ = index.write { $0.addReplies(id: pinID, delta: 1) }
    }

    /// Drops expired pins from memory; returns how many.
    @discardableResult
    public func purgeExpired() -> Int {
        let now = Self.now()
        return index.write { $0.removeExpired(now: now) }
    }

    // MARK: Other processes' changes

    /// Applies a change another process announced: the pin is read again from the database.
    public func apply(_ change: PinChange) async throws(StoreError) {
        switch change {
        case .deleted(let id):
            remove(id: id)
        case .upserted(let id):
            if let pin = try await database.indexedPin(id: id) {
                upsert(pin)
            } else {
                remove(id: id)
            }
        }
    }

    /// A region was defined, replaced or deleted: rebuild the regions, then take the region of
    /// every pin it touched (before and after) from the database.
    public func regionChanged(named name: String) async throws(StoreError) {
        let before = regionIndex.withLock { $0 }.definitions[name]?.envelope
        try await reloadRegions()
        let after = regionIndex.withLock { $0 }.definitions[name]?.envelope
        let boxes = [before, after].compactMap { $0 }
        var changes: [(id: String, region: String?)] = []
        if boxes.isEmpty {
            changes = try await database.pinRegions(minLat: 1, minLon: 1, maxLat: 0, maxLon: 0, orRegion: name)
        }
        for box in boxes {
            changes += try await database.pinRegions(
                minLat: box.minY, minLon: box.minX, maxLat: box.maxY, maxLon: box.maxX, orRegion: name)
        }
        index.write { index in
            for change in changes { _ = index.setRegion(id: change.id, change.region) }
        }
        logger.info("region changed", metadata: ["region": "\(name)", "pins": "\(changes.count)"])
    }
}


