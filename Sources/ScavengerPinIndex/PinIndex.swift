import OrderStatistics
import ScavengerCore

/// The daemon's in-memory index of pins: NEARBY and REGION feeds without touching the database.
///
/// PostgreSQL stays the source of truth: the daemon loads every live pin at start, in ranges of
/// the table's pages (`Database.livePins(pages:)`, a bulk load: ``beginBulkLoad(expectedPins:)``),
/// and applies every write. Pins are stored in the order they arrive, so neighbours on the map
/// do not end up next to each other in memory.
///
/// Not thread-safe, and deliberately not `Sendable`: keep it in a `Mutex<PinIndex>` (or behind
/// a lock of your own). The read methods (`nearby`, `region`, `pin`, `visiblePin`,
/// `liveCounts`, `statistics`, …) change nothing, so readers may also share it under a
/// readers–writer lock.
///
/// Storage: a slot per pin, reused through a free list. Per slot a 32-byte hot record (unit
/// vector, expiry and flags) that NEARBY scans, a 64-byte cold record (id as two integers,
/// position, times, interned author/region/MIME numbers, counts), the text length-prefixed in
/// one shared byte arena, and the slot number in one cell bucket per indexed grid level: about
/// 200 bytes per pin with 40-byte texts (1,000,000 clustered pins ≈ 200 MB), no object per pin.
public final class PinIndex {
    /// NEARBY uses the finest grid level whose cover needs at most this many cells.
    public let maximumCoverCells: Int

    // Slots.
    var hot = RecordArray<HotRecord>()
    var cold = RecordArray<ColdRecord>()
    var freeSlots: [UInt32] = []
    /// Expiry times too far from 1970 for a hot record (±1,142 years), by slot.
    var farExpiries: [UInt32: Int64] = [:]
    /// Photos' width and height (each at most 65,535), by slot: only for photos that have them,
    /// so text pins cost nothing and the cold record stays one cache line.
    var photoDimensions: [UInt32: PhotoPixels] = [:]
    /// Pin id → slot.
    var ids = IdTable()
    /// The pins' texts.
    var texts = TextArena()
    /// Authors, region names and MIME types, by number.
    var names = NameTable()
    /// Per region number: its pins, oldest first, and counts kept up to date.
    var regionStates: [RegionState] = [RegionState()]

    /// Per indexed level, cell → slots of the pins in it.
    var buckets: [CellBuckets] = PinIndex.levels.map { CellBuckets(level: $0) }
    /// MAP's sets of position keys, one per kind (text, photo): the pins everyone may see.
    var mapTrees = [CountedBTree<MapEntry>(), CountedBTree<MapEntry>()]
    /// Pins with `expires` up to this (microseconds) are kept out of MAP's sets.
    var mapExpiredThrough = Int64.min
    /// Changes with every pin that enters or leaves MAP's sets (a watch of a map box skips its
    /// recount while it stays the same).
    public internal(set) var mapVersion: UInt64 = 0
    /// During a bulk load, the cells of the pins added since it began (see ``beginBulkLoad()``).
    var pendingCells: PendingCells?

    /// The grid levels kept: 0 (≈ 435 m) to 3 (≈ 28 km) serve radii up to a few hundred
    /// kilometres in a few dozen cells. Coarser levels would cost memory for every pin and
    /// serve only radii far above the protocol's limit; such queries use level 3 with more
    /// cells, or past `fullScanCells` cells a scan of every pin.
    static let levels = 0 ... 3
    /// Beyond this many level-3 cells NEARBY scans every pin instead.
    static let fullScanCells = 4096

    /// An empty index. `maximumCoverCells` trades cells visited against pins examined.
    public init(maximumCoverCells: Int = Grid.defaultMaximumCells) {
        self.maximumCoverCells = max(1, maximumCoverCells)
    }

    /// Makes room for `count` pins in total, so a start-up load does not regrow its records and
    /// texts. Only address space until pins fill it (the system gives large allocations their
    /// pages as they are first written), so an estimate above the pins that come costs no
    /// memory; the id table, whose every entry is written when it is made, grows as pins arrive.
    public func reserveCapacity(_ count: Int) {
        hot.reserveCapacity(count)
        cold.reserveCapacity(count)
        texts.reserveCapacity(count * 48)
    }

    /// Pins held, hidden ones and expired ones not yet removed included.
    public var count: Int { ids.count }

    /// Sizes, for monitoring.
    public struct Statistics: Sendable, Equatable {
        /// Pins held.
        public var pins: Int
        /// Slots allocated (pins plus free slots).
        public var slots: Int
        /// Text bytes in the arena, of which `garbageBytes` belong to no pin any more.
        public var textBytes: Int
        /// Arena bytes that belong to no pin any more.
        public var garbageBytes: Int
        /// Non-empty cells per grid level.
        public var cells: [Int]
        /// A rough total of the memory held, in bytes.
        public var approximateBytes: Int
        /// Of which the cell buckets (tables and lists), roughly.
        public var cellBytes: Int
        /// Of which MAP's sets of position keys.
        public var mapBytes: Int
    }

    /// Sizes, for monitoring.
    public var statistics: Statistics {
        // Slots in use, not capacity: reserved room is address space until pins fill it.
        let records = hot.count * MemoryLayout<HotRecord>.stride + cold.count * MemoryLayout<ColdRecord>.stride
        let names = names.approximateBytes + regionStates.reduce(0) { $0 + $1.members.capacity * 4 + 48 }
        let cellBytes = buckets.reduce(0) { $0 + $1.approximateBytes }
        let total = records + texts.count + ids.approximateBytes + freeSlots.capacity * 4 + names + cellBytes + mapBytes
        return Statistics(
            pins: ids.count, slots: hot.count, textBytes: texts.count, garbageBytes: texts.garbage,
            cells: buckets.map(\.count), approximateBytes: total, cellBytes: cellBytes,
            mapBytes: mapBytes
        )
    }

    /// The stored pin, hidden or expired included; nil when there is none with that id.
    public func pin(id: String) -> IndexedPin? {
        guard let slot = slot(of: id) else { return nil }
        return IndexedPin(makePin(slot), hidden: hot[slot].flags & HotRecord.hidden != 0)
    }

    /// The pin as GET shows it: nil when unknown, expired (`expires ≤ now`) or hidden.
    public func visiblePin(id: String, now: Timestamp) -> Pin? {
        guard let slot = slot(of: id), hot[slot].isVisible(now: HotRecord.clamp(now.microseconds)) else { return nil }
        return makePin(slot)
    }

    static func isValid(lat: Double, lon: Double) -> Bool {
        lat >= -90 && lat <= 90 && lon >= -180 && lon <= 180
    }

    func slot(of id: String) -> Int? {
        guard let key = PinKey(id: id), let slot = ids.find(key, in: cold) else { return nil }
        return Int(slot)
    }
}
