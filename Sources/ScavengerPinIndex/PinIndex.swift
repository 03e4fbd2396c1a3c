import ScavengerCore

/// The daemon's in-memory index of pins: NEARBY and REGION feeds without touching the database.
///
/// PostgreSQL stays the source of truth: the daemon loads every live pin at start and applies
/// every write. Loading in level-0 cell order (`ORDER BY cell`) puts neighbours next to each
/// other in memory, which makes NEARBY a little faster until pins churn.
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
    /// id → slot, open addressing with linear probing; `emptyBucket` marks a free bucket.
    var table: [UInt32] = Array(repeating: PinIndex.emptyBucket, count: 16)
    var live = 0

    // Texts: a LEB128 length, then the UTF-8 bytes; `garbage` bytes belong to no pin any more.
    var arena: [UInt8] = []
    var garbage = 0

    // Interned names.
    var authors: [String] = []
    var authorUses: [UInt32] = []
    var authorNumbers: [String: UInt32] = [:]
    var freeAuthors: [UInt32] = []
    /// Region 0 is "none".
    var regions: [String] = [""]
    var regionNumbers: [String: UInt32] = [:]
    /// Per region number: its pins, oldest first, and counts kept up to date.
    var regionStates: [RegionState] = [RegionState()]
    /// Photo MIME types; 0 is "no photo".
    var mimes: [String] = [""]
    var mimeNumbers: [String: UInt16] = [:]

    /// Per indexed level, cell → slots of the pins in it.
    var buckets: [CellBuckets] = Array(repeating: CellBuckets(), count: PinIndex.levels.count)

    /// The grid levels kept: 0 (≈ 435 m) to 3 (≈ 28 km) serve radii up to a few hundred
    /// kilometres in a few dozen cells. Coarser levels would cost memory for every pin and
    /// serve only radii far above the protocol's limit; such queries use level 3 with more
    /// cells, or past `fullScanCells` cells a scan of every pin.
    static let levels = 0 ... 3
    /// Beyond this many level-3 cells NEARBY scans every pin instead.
    static let fullScanCells = 4096

    static let emptyBucket = UInt32.max

    /// An empty index. `maximumCoverCells` trades cells visited against pins examined.
    public init(maximumCoverCells: Int = Grid.defaultMaximumCells) {
        self.maximumCoverCells = max(1, maximumCoverCells)
    }

    deinit {
        hot.deallocate()
        cold.deallocate()
    }

    /// Makes room for `count` pins in total, so a start-up load does not regrow.
    public func reserveCapacity(_ count: Int) {
        hot.reserveCapacity(count)
        cold.reserveCapacity(count)
        arena.reserveCapacity(count * 48)
        while count * 2 > table.count { growTable() }
    }

    /// Pins held, hidden ones and expired ones not yet removed included.
    public var count: Int { live }

    /// Sizes, for monitoring.
    public struct Statistics: Sendable, Equatable {
        /// Pins held.
        public var pins: Int
        /// Slots allocated (pins plus free slots).
        public var slots: Int
        /// Text bytes in the arena, of which `garbageBytes` belong to no pin any more.
        public var textBytes: Int
        public var garbageBytes: Int
        /// Non-empty cells per grid level.
        public var cells: [Int]
        /// A rough total of the memory held, in bytes.
        public var approximateBytes: Int
    }

    /// Sizes, for monitoring.
    public var statistics: Statistics {
        let records = hot.capacity * MemoryLayout<HotRecord>.stride + cold.capacity * MemoryLayout<ColdRecord>.stride
        let names = (authors.capacity + regions.capacity + mimes.capacity) * 16 + authorNumbers.capacity * 24
            + regionStates.reduce(0) { $0 + $1.members.capacity * 4 + 48 }
        let total = records + arena.capacity + table.capacity * 4 + freeSlots.capacity * 4 + names
            + buckets.reduce(0) { $0 + $1.approximateBytes }
        return Statistics(
            pins: live, slots: hot.count, textBytes: arena.count, garbageBytes: garbage,
            cells: buckets.map(\.count), approximateBytes: total
        )
    }

    // MARK: - Writing

    /// Adds the pin, or replaces the one with its id (moving it when its position changed).
    public func upsert(_ pin: IndexedPin) throws(PinIndexError) {
        guard let key = PinKey(id: pin.id) else { throw .invalidID(pin.id) }
        guard Self.isValid(lat: pin.lat, lon: pin.lon) else { throw .invalidCoordinates }
        var flags = HotRecord.occupied
        if pin.hidden { flags |= HotRecord.hidden }
        if pin.kind == .photo { flags |= HotRecord.photoKind }
        let expires = pin.expires.microseconds
        if HotRecord.clamp(expires) != expires { flags |= HotRecord.farExpiry }
        let hotRecord = HotRecord(vector: Geodesy.UnitVector(lat: pin.lat, lon: pin.lon), expires: expires, flags: flags)
        let mime = pin.photo.map { internMime($0.mime) } ?? 0
        let region = pin.region.map { internRegion($0) } ?? 0

        let slot: UInt32
        if let existing = find(key) {
            slot = existing
            let old = cold[Int(slot)]
            if old.lat != pin.lat || old.lon != pin.lon {
                for level in Self.levels {
                    let before = Grid.cell(lat: old.lat, lon: old.lon, level: level)
                    let after = Grid.cell(lat: pin.lat, lon: pin.lon, level: level)
                    if before != after {
                        buckets[level].remove(slot, from: before)
                        buckets[level].insert(slot, into: after)
                    }
                }
            }
            if old.region != 0 { removeMember(slot, region: old.region) }
            var record = old
            if !textEquals(Int(slot), pin.text) {
                garbage += storedTextSize(Int(slot))
                record.textOffset = appendText(pin.text)
            }
            if authors[Int(record.author)] != pin.author {
                releaseAuthor(record.author)
                record.author = internAuthor(pin.author)
            }
            record.lat = pin.lat
            record.lon = pin.lon
            record.created = pin.created.microseconds
            record.replies = Int32(clamping: pin.replies)
            record.photoBytes = UInt32(clamping: pin.photo?.bytes ?? 0)
            record.region = region
            record.mime = mime
            cold[Int(slot)] = record
            hot[Int(slot)] = hotRecord
            if region != 0 { addMember(slot, region: region) }
        } else {
            let record = ColdRecord(
                high: key.high, low: key.low, lat: pin.lat, lon: pin.lon, created: pin.created.microseconds,
                textOffset: appendText(pin.text), author: internAuthor(pin.author),
                replies: Int32(clamping: pin.replies), photoBytes: UInt32(clamping: pin.photo?.bytes ?? 0),
                region: region, mime: mime
            )
            if let reused = freeSlots.popLast() {
                slot = reused
                cold[Int(slot)] = record
                hot[Int(slot)] = hotRecord
            } else {
                precondition(hot.count < Int(UInt32.max - 2), "PinIndex is full")
                slot = UInt32(hot.count)
                cold.append(record)
                hot.append(hotRecord)
            }
            insertIntoTable(slot, key: key)
            live += 1
            for level in Self.levels {
                buckets[level].insert(slot, into: Grid.cell(lat: pin.lat, lon: pin.lon, level: level))
            }
            if region != 0 { addMember(slot, region: region) }
        }
        if flags & HotRecord.farExpiry != 0 { farExpiries[slot] = expires } else { farExpiries[slot] = nil }
        compactArenaIfWasteful()
    }

    /// Removes the pin; false when there is none with that id.
    @discardableResult
    public func remove(id: String) -> Bool {
        guard let key = PinKey(id: id), let slot = find(key) else { return false }
        let record = cold[Int(slot)]
        for level in Self.levels {
            buckets[level].remove(slot, from: Grid.cell(lat: record.lat, lon: record.lon, level: level))
        }
        if record.region != 0 { removeMember(slot, region: record.region) }
        release(slot)
        compactArenaIfWasteful()
        return true
    }

    /// Removes every pin with `expires ≤ now` and frees its memory; returns how many.
    /// (Reads never show expired pins, whether or not this has run.)
    @discardableResult
    public func removeExpired(now: Timestamp) -> Int {
        let nowMicros = HotRecord.clamp(now.microseconds)
        var expired: [UInt32] = []
        for (slot, record) in hot.buffer.enumerated() where record.flags & HotRecord.occupied != 0 && record.expires <= nowMicros {
            expired.append(UInt32(slot))
        }
        // In batches, so the bookkeeping of a huge sweep stays small.
        for start in stride(from: 0, to: expired.count, by: 1 << 16) {
            removeSlots(Array(expired[start ..< min(expired.count, start + 1 << 16)]))
        }
        let hot = hot.buffer
        for number in regionStates.indices.dropFirst() where regionStates[number].earliestExpiry <= nowMicros {
            regionStates[number].earliestExpiry = regionStates[number].members.reduce(Int64.max) { min($0, hot[Int($1)].expires) }
        }
        return expired.count
    }

    /// Hides or shows the pin; false when there is none with that id.
    @discardableResult
    public func setHidden(id: String, _ hidden: Bool) -> Bool {
        guard let slot = slot(of: id) else { return false }
        var record = hot[slot]
        let wasHidden = record.flags & HotRecord.hidden != 0
        record.setFlag(HotRecord.hidden, hidden)
        hot[slot] = record
        let region = cold[slot].region
        if region != 0, wasHidden != hidden { regionStates[Int(region)].unhidden += hidden ? -1 : 1 }
        return true
    }

    /// Puts the pin in a region, or in none; false when there is no pin with that id.
    @discardableResult
    public func setRegion(id: String, _ region: String?) -> Bool {
        guard let slot = slot(of: id) else { return false }
        let number = region.map { internRegion($0) } ?? 0
        let old = cold[slot].region
        guard old != number else { return true }
        if old != 0 { removeMember(UInt32(slot), region: old) }
        cold[slot].region = number
        if number != 0 { addMember(UInt32(slot), region: number) }
        return true
    }

    /// Sets the pin's reply count; false when there is no pin with that id.
    @discardableResult
    public func setReplies(id: String, _ replies: Int) -> Bool {
        guard let slot = slot(of: id) else { return false }
        cold[slot].replies = Int32(clamping: max(0, replies))
        return true
    }

    /// Adds `delta` (may be negative) to the pin's reply count, never below 0; false when there
    /// is no pin with that id.
    @discardableResult
    public func addReplies(id: String, delta: Int) -> Bool {
        guard let slot = slot(of: id) else { return false }
        cold[slot].replies = Int32(clamping: max(0, Int(cold[slot].replies) + delta))
        return true
    }

    // MARK: - Reading

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

    /// NEARBY: the live (`expires > now`), visible pins of the query's kind whose canonical
    /// distance is ≤ its radius, ordered by (distance, id), strictly after its cursor, at most
    /// `limit`; `next` is set when more follow.
    ///
    /// Throws ``PinIndexError/cursorMismatch`` for a cursor of another query, and
    /// ``PinIndexError/invalidQuery(_:)`` or ``PinIndexError/invalidCoordinates`` for bad values.
    public func nearby(_ query: NearbyQuery, now: Timestamp) throws(PinIndexError) -> NearbyPage {
        try nearbyRecords(query, now: now).map { (pin: Pin($0.record), distance: $0.distance) }
    }

    /// ``nearby(_:now:)`` as borrowed records, which copy nothing: use them before the index
    /// changes again.
    public func nearbyRecords(_ query: NearbyQuery, now: Timestamp) throws(PinIndexError) -> NearbyRecords {
        guard Self.isValid(lat: query.lat, lon: query.lon) else { throw .invalidCoordinates }
        guard query.radius.isFinite, query.radius > 0 else { throw .invalidQuery("radius must be a positive number of metres") }
        guard query.limit >= 1 else { throw .invalidQuery("limit must be at least 1") }
        var afterDistance = -Double.infinity
        var afterKey = PinKey(high: 0, low: 0)
        if let cursor = query.after {
            guard cursor.fingerprint == query.fingerprint, let key = PinKey(id: cursor.id) else { throw .cursorMismatch }
            afterDistance = cursor.distance
            afterKey = key
        }
        let hasCursor = query.after != nil
        let center = Geodesy.UnitVector(lat: query.lat, lon: query.lon)
        let bound = Geodesy.chordSquaredBound(forDistance: query.radius)
        let radius = query.radius
        let nowMicros = HotRecord.clamp(now.microseconds)
        let flagMask = HotRecord.hidden | (query.kind == nil ? 0 : HotRecord.photoKind)
        let flagsWanted = query.kind == .photo ? HotRecord.photoKind : 0
        let capacity = query.limit < Int.max ? query.limit + 1 : Int.max

        var spans: [Grid.RowSpan] = []
        var slots: [UInt32] = []
        slots.reserveCapacity(256)
        let hot = hot.buffer
        if let level = Grid.coverSpans(lat: query.lat, lon: query.lon, radius: radius, maximumCells: maximumCoverCells, levels: Self.levels,
                                       coarsestMaximumCells: Self.fullScanCells, into: &spans) {
            buckets[level].collectSlots(in: Grid.cells(of: spans, level: level), into: &slots)
        } else {
            for (slot, record) in hot.enumerated() where record.flags & HotRecord.occupied != 0 { slots.append(UInt32(slot)) }
        }

        let cold = cold.buffer
        /// Whether (d1, s1) comes before (d2, s2) in feed order.
        func precedes(_ d1: Double, _ s1: UInt32, _ d2: Double, _ s2: UInt32) -> Bool {
            if d1 != d2 { return d1 < d2 }
            return cold[Int(s1)].key < cold[Int(s2)].key
        }
        // A first pass without data-dependent branches, so the processor can fetch many
        // records at once: keep the slots within the chord bound, in place.
        var inside = 0
        slots.withUnsafeMutableBufferPointer { slots in
            for index in slots.indices {
                let slot = slots[index]
                let record = hot[Int(slot)]
                let dx = record.x - center.x
                let dy = record.y - center.y
                let dz = record.z - center.z
                slots[inside] = slot
                inside += dx * dx + dy * dy + dz * dz <= bound ? 1 : 0
            }
        }
        // Then the exact test and a bounded max-heap of the first limit + 1 in feed order.
        var heap: [Candidate] = []
        heap.reserveCapacity(min(capacity, 256))
        for slot in slots[..<inside] {
            let record = hot[Int(slot)]
            if record.expires <= nowMicros || record.flags & flagMask != flagsWanted { continue }
            let dx = record.x - center.x
            let dy = record.y - center.y
            let dz = record.z - center.z
            let distance = Geodesy.distance(chordSquared: dx * dx + dy * dy + dz * dz)
            if distance > radius { continue }
            if hasCursor {
                if distance < afterDistance { continue }
                if distance == afterDistance, !(afterKey < cold[Int(slot)].key) { continue }
            }
            if heap.count < capacity {
                heap.append(Candidate(distance: distance, slot: slot))
                Self.siftUp(&heap, from: heap.count - 1) { precedes($0.distance, $0.slot, $1.distance, $1.slot) }
            } else if precedes(distance, slot, heap[0].distance, heap[0].slot) {
                heap[0] = Candidate(distance: distance, slot: slot)
                Self.siftDown(&heap, from: 0) { precedes($0.distance, $0.slot, $1.distance, $1.slot) }
            }
        }
        heap.sort { precedes($0.distance, $0.slot, $1.distance, $1.slot) }
        let more = heap.count > query.limit
        if more { heap.removeLast() }
        let records = makeRecords(heap.map { Int($0.slot) })
        let next = more ? heap.last.map { NearbyCursor(distance: $0.distance, id: cold[Int($0.slot)].key.string, fingerprint: query.fingerprint) } : nil
        return NearbyRecords(pins: records.indices.map { (record: records[$0], distance: heap[$0].distance) }, next: next)
    }

    /// REGION: the live, visible pins in region `name` (of `kind` when given), newest first
    /// (created, then id, descending), strictly after `after`, at most `limit`. A region without
    /// pins gives an empty page: whether the region exists is not the index's business.
    /// Costs a binary search plus the pins walked over (returned, hidden, expired or of the
    /// other kind), not the whole region.
    ///
    /// Throws ``PinIndexError/cursorMismatch`` for a cursor of another region or kind.
    public func region(named name: String, limit: Int, kind: PinKind? = nil, after: RegionCursor? = nil, now: Timestamp) throws(PinIndexError) -> RegionPage {
        try regionRecords(named: name, limit: limit, kind: kind, after: after, now: now).map(Pin.init)
    }

    /// ``region(named:limit:kind:after:now:)`` as borrowed records, which copy nothing: use
    /// them before the index changes again.
    public func regionRecords(named name: String, limit: Int, kind: PinKind? = nil, after: RegionCursor? = nil, now: Timestamp)
        throws(PinIndexError) -> RegionRecords
    {
        guard limit >= 1 else { throw .invalidQuery("limit must be at least 1") }
        let fingerprint = RegionCursor.fingerprint(region: name, kind: kind)
        var afterCreated = Int64.max
        var afterKey = PinKey(high: .max, low: .max)
        if let after {
            guard after.fingerprint == fingerprint, let key = PinKey(id: after.id) else { throw .cursorMismatch }
            afterCreated = after.created.microseconds
            afterKey = key
        }
        let hasCursor = after != nil
        guard let number = regionNumbers[name] else { return RegionRecords(pins: [], next: nil) }
        let nowMicros = HotRecord.clamp(now.microseconds)
        let flagMask = HotRecord.hidden | (kind == nil ? 0 : HotRecord.photoKind)
        let flagsWanted = kind == .photo ? HotRecord.photoKind : 0
        let hot = hot.buffer
        let cold = cold.buffer
        let members = regionStates[Int(number)].members
        // Members are sorted oldest first: walk back from the cursor (or the end).
        var index = hasCursor ? Self.firstMember(members, notBefore: afterCreated, afterKey, cold: cold) : members.count
        var page: [UInt32] = []
        while index > 0, page.count <= limit {
            index -= 1
            let slot = members[index]
            let record = hot[Int(slot)]
            if record.expires <= nowMicros || record.flags & flagMask != flagsWanted { continue }
            page.append(slot)
        }
        let more = page.count > limit
        if more { page.removeLast() }
        let next = more ? page.last.map { RegionCursor(created: Timestamp(microseconds: cold[Int($0)].created), id: cold[Int($0)].key.string, fingerprint: fingerprint) } : nil
        return RegionRecords(pins: makeRecords(page.map { Int($0) }), next: next)
    }

    /// Live (`expires > now`), visible pins per region name; regions without any are absent.
    /// Counts are kept as pins come and go; only a region holding pins that expired since the
    /// last ``removeExpired(now:)`` is counted one by one.
    public func liveCounts(now: Timestamp) -> [String: Int] {
        let nowMicros = HotRecord.clamp(now.microseconds)
        let hot = hot.buffer
        var counts: [String: Int] = [:]
        for (number, state) in regionStates.enumerated().dropFirst() {
            let visible = state.earliestExpiry > nowMicros
                ? state.unhidden
                : state.members.reduce(0) { $0 + (hot[Int($1)].isVisible(now: nowMicros) ? 1 : 0) }
            if visible > 0 { counts[regions[number]] = visible }
        }
        return counts
    }

    /// Ids of the pins (hidden and expired included) whose region is `name`.
    public func pinIDs(inRegion name: String) -> [String] {
        guard let number = regionNumbers[name] else { return [] }
        return regionStates[Int(number)].members.map { cold[Int($0)].key.string }
    }

    /// Positions of the pins (hidden and expired included) in a latitude/longitude box, in
    /// degrees; `minLon > maxLon` means a box across the antimeridian. For assigning regions.
    public func locations(minLat: Double, maxLat: Double, minLon: Double, maxLon: Double) -> [(id: String, lat: Double, lon: Double)] {
        var result: [(id: String, lat: Double, lon: Double)] = []
        let cold = cold.buffer
        for (slot, hotRecord) in hot.buffer.enumerated() where hotRecord.flags & HotRecord.occupied != 0 {
            let record = cold[slot]
            guard record.lat >= minLat, record.lat <= maxLat else { continue }
            let inside = minLon <= maxLon
                ? record.lon >= minLon && record.lon <= maxLon
                : record.lon >= minLon || record.lon <= maxLon
            if inside { result.append((record.key.string, record.lat, record.lon)) }
        }
        return result
    }

    /// Ids of the pins (hidden and expired included) in the given cells.
    public func pinIDs(inCells cells: [CellKey]) -> [String] {
        cells.flatMap { cell in
            if Self.levels.contains(cell.level) {
                return buckets[cell.level].slots(in: cell).map { cold[Int($0)].key.string }
            }
            var ids: [String] = []
            for (slot, record) in hot.buffer.enumerated() where record.flags & HotRecord.occupied != 0 {
                let coldRecord = cold[slot]
                if Grid.cell(lat: coldRecord.lat, lon: coldRecord.lon, level: cell.level) == cell { ids.append(coldRecord.key.string) }
            }
            return ids
        }
    }

    // MARK: - Internals: records

    /// What NEARBY reads for every candidate: one half of a cache line.
    struct HotRecord: BitwiseCopyable {
        var x: Double
        var y: Double
        var z: Double
        /// The expiry in microseconds (56 bits, signed) and the flags (top 8 bits).
        var meta: UInt64

        static let occupied: UInt8 = 1
        static let hidden: UInt8 = 2
        static let photoKind: UInt8 = 4
        /// The true expiry is in `farExpiries`; `expires` holds it clamped.
        static let farExpiry: UInt8 = 8
        /// Marked for removal (within `removeSlots` only).
        static let dying: UInt8 = 0x80

        static let expiryLimit: Int64 = 1 << 55

        /// The expiry as the hot record can hold it.
        @inline(__always)
        static func clamp(_ microseconds: Int64) -> Int64 {
            min(expiryLimit - 1, max(-expiryLimit, microseconds))
        }

        init(vector: Geodesy.UnitVector, expires: Int64, flags: UInt8) {
            x = vector.x
            y = vector.y
            z = vector.z
            meta = UInt64(bitPattern: Self.clamp(expires)) & 0x00FF_FFFF_FFFF_FFFF | UInt64(flags) << 56
        }

        var expires: Int64 {
            @inline(__always) get { Int64(bitPattern: meta << 8) >> 8 }
        }

        var flags: UInt8 {
            @inline(__always) get { UInt8(truncatingIfNeeded: meta >> 56) }
        }

        mutating func setFlag(_ flag: UInt8, _ on: Bool) {
            let bits = UInt64(flag) << 56
            meta = on ? meta | bits : meta & ~bits
        }

        func isVisible(now: Int64) -> Bool {
            flags & (Self.occupied | Self.hidden) == Self.occupied && expires > now
        }
    }

    /// Everything else about a pin: one cache line.
    struct ColdRecord: BitwiseCopyable {
        var high: UInt64
        var low: UInt64
        var lat: Double
        var lon: Double
        var created: Int64
        /// Where the text starts in the arena.
        var textOffset: UInt32
        var author: UInt32
        var replies: Int32
        var photoBytes: UInt32
        var region: UInt32
        var mime: UInt16

        var key: PinKey { PinKey(high: high, low: low) }
    }

    struct Candidate {
        var distance: Double
        var slot: UInt32
    }

    static func isValid(lat: Double, lon: Double) -> Bool {
        lat >= -90 && lat <= 90 && lon >= -180 && lon <= 180
    }

    func slot(of id: String) -> Int? {
        guard let key = PinKey(id: id), let slot = find(key) else { return nil }
        return Int(slot)
    }

    /// Where the text stored at `offset` lies in the arena (after its LEB128 length).
    static func textRange(_ arena: UnsafeBufferPointer<UInt8>, at offset: Int) -> Range<Int> {
        var index = offset
        var length = 0
        var shift = 0
        while true {
            let byte = arena[index]
            index += 1
            length |= Int(byte & 0x7F) << shift
            if byte < 0x80 { break }
            shift += 7
        }
        return index ..< index + length
    }

    func textRange(_ slot: Int) -> Range<Int> {
        let offset = Int(cold[slot].textOffset)
        return arena.withUnsafeBufferPointer { Self.textRange($0, at: offset) }
    }

    /// Arena bytes of a slot's text, length prefix included.
    func storedTextSize(_ slot: Int) -> Int {
        textRange(slot).upperBound - Int(cold[slot].textOffset)
    }

    func textEquals(_ slot: Int, _ text: String) -> Bool {
        arena[textRange(slot)].elementsEqual(text.utf8)
    }

    /// The pins of some slots, in order.
    /// The records of some slots. Finds every text before building any record, so the
    /// processor can fetch many at once.
    func makeRecords(_ slots: [Int]) -> [PinRecord] {
        let hot = hot.buffer
        let cold = cold.buffer
        let texts = arena.withUnsafeBufferPointer { arena in slots.map { Self.textRange(arena, at: Int(cold[$0].textOffset)) } }
        return slots.indices.map { position in
            let slot = slots[position]
            let record = cold[slot]
            let hotRecord = hot[slot]
            let expires = hotRecord.flags & HotRecord.farExpiry != 0 ? farExpiries[UInt32(slot)] ?? hotRecord.expires : hotRecord.expires
            return PinRecord(
                key: record.key, lat: record.lat, lon: record.lon,
                kind: hotRecord.flags & HotRecord.photoKind != 0 ? .photo : .text,
                textUTF8: arena[texts[position]],
                author: authors[Int(record.author)], created: Timestamp(microseconds: record.created),
                expires: Timestamp(microseconds: expires),
                region: record.region == 0 ? nil : regions[Int(record.region)],
                photo: record.mime == 0 ? nil : PhotoInfo(mime: mimes[Int(record.mime)], bytes: Int(record.photoBytes)),
                replies: Int(record.replies))
        }
    }

    func makePin(_ slot: Int) -> Pin { Pin(makeRecords([slot])[0]) }

    // MARK: - Internals: freeing

    /// Frees a slot already taken out of its buckets and region list.
    func release(_ slot: UInt32) {
        let record = cold[Int(slot)]
        removeFromTable(record.key)
        garbage += storedTextSize(Int(slot))
        releaseAuthor(record.author)
        if hot[Int(slot)].flags & HotRecord.farExpiry != 0 { farExpiries[slot] = nil }
        hot[Int(slot)] = HotRecord(vector: Geodesy.UnitVector(x: 0, y: 0, z: 0), expires: 0, flags: 0)
        cold[Int(slot)].region = 0
        freeSlots.append(slot)
        live -= 1
    }

    /// Frees many slots at once, each bucket and region list filtered in one pass.
    func removeSlots(_ slots: [UInt32]) {
        guard !slots.isEmpty else { return }
        var touched: [Set<CellKey>] = Array(repeating: [], count: Self.levels.count)
        var touchedRegions: Set<UInt32> = []
        for slot in slots {
            var record = hot[Int(slot)]
            record.setFlag(HotRecord.dying, true)
            hot[Int(slot)] = record
            let coldRecord = cold[Int(slot)]
            for level in Self.levels { touched[level].insert(Grid.cell(lat: coldRecord.lat, lon: coldRecord.lon, level: level)) }
            if coldRecord.region != 0 { touchedRegions.insert(coldRecord.region) }
        }
        let hot = hot.buffer
        for level in Self.levels {
            for cell in touched[level] {
                buckets[level].removeAll(from: cell) { hot[Int($0)].flags & HotRecord.dying != 0 }
            }
        }
        for region in touchedRegions {
            regionStates[Int(region)].members.removeAll { hot[Int($0)].flags & HotRecord.dying != 0 }
        }
        for slot in slots {
            let region = cold[Int(slot)].region
            if region != 0, hot[Int(slot)].flags & HotRecord.hidden == 0 { regionStates[Int(region)].unhidden -= 1 }
        }
        for slot in slots { release(slot) }
        compactArenaIfWasteful()
    }

    // MARK: - Internals: regions

    struct RegionState {
        /// Slots ordered by (created, id), oldest first.
        var members: [UInt32] = []
        /// Members not hidden, expired or not.
        var unhidden = 0
        /// No member expires before this (it may be lower than the true minimum).
        var earliestExpiry = Int64.max
    }

    /// The first position in `members` whose (created, id) is not before (`created`, `key`).
    static func firstMember(_ members: [UInt32], notBefore created: Int64, _ key: PinKey, cold: UnsafeBufferPointer<ColdRecord>) -> Int {
        var low = 0
        var high = members.count
        while low < high {
            let middle = (low + high) / 2
            let record = cold[Int(members[middle])]
            if record.created < created || (record.created == created && record.key < key) {
                low = middle + 1
            } else {
                high = middle
            }
        }
        return low
    }

    /// Adds a slot whose records are written to a region's list, in order.
    func addMember(_ slot: UInt32, region: UInt32) {
        let record = cold[Int(slot)]
        let hotRecord = hot[Int(slot)]
        let position = Self.firstMember(regionStates[Int(region)].members, notBefore: record.created, record.key, cold: cold.buffer)
        regionStates[Int(region)].members.insert(slot, at: position)
        if hotRecord.flags & HotRecord.hidden == 0 { regionStates[Int(region)].unhidden += 1 }
        regionStates[Int(region)].earliestExpiry = min(regionStates[Int(region)].earliestExpiry, hotRecord.expires)
    }

    /// Takes a slot out of a region's list, while its records still say where it is.
    func removeMember(_ slot: UInt32, region: UInt32) {
        let record = cold[Int(slot)]
        let members = regionStates[Int(region)].members
        var position = Self.firstMember(members, notBefore: record.created, record.key, cold: cold.buffer)
        if position >= members.count || members[position] != slot {
            guard let found = members.firstIndex(of: slot) else { return }
            position = found
        }
        regionStates[Int(region)].members.remove(at: position)
        if hot[Int(slot)].flags & HotRecord.hidden == 0 { regionStates[Int(region)].unhidden -= 1 }
    }

    // MARK: - Internals: texts and names

    /// Appends a length-prefixed text; returns its offset.
    func appendText(_ text: String) -> UInt32 {
        let offset = arena.count
        var length = text.utf8.count
        while length >= 0x80 {
            arena.append(UInt8(length & 0x7F) | 0x80)
            length >>= 7
        }
        arena.append(UInt8(length))
        arena.append(contentsOf: text.utf8)
        precondition(arena.count <= Int(UInt32.max), "PinIndex text arena is full")
        return UInt32(offset)
    }

    /// Rewrites the arena once more than half of it is garbage.
    func compactArenaIfWasteful() {
        guard garbage > 1 << 16, garbage * 2 > arena.count else { return }
        var compacted: [UInt8] = []
        compacted.reserveCapacity(arena.count - garbage)
        arena.withUnsafeBufferPointer { arena in
            for (slot, record) in hot.buffer.enumerated() where record.flags & HotRecord.occupied != 0 {
                let start = Int(cold[slot].textOffset)
                let end = Self.textRange(arena, at: start).upperBound
                cold[slot].textOffset = UInt32(compacted.count)
                compacted.append(contentsOf: UnsafeBufferPointer(rebasing: arena[start ..< end]))
            }
        }
        arena = compacted
        garbage = 0
    }

    func internAuthor(_ name: String) -> UInt32 {
        if let number = authorNumbers[name] {
            authorUses[Int(number)] += 1
            return number
        }
        let number: UInt32
        if let reused = freeAuthors.popLast() {
            number = reused
            authors[Int(number)] = name
            authorUses[Int(number)] = 1
        } else {
            number = UInt32(authors.count)
            authors.append(name)
            authorUses.append(1)
        }
        authorNumbers[name] = number
        return number
    }

    func releaseAuthor(_ number: UInt32) {
        authorUses[Int(number)] -= 1
        if authorUses[Int(number)] == 0 {
            authorNumbers[authors[Int(number)]] = nil
            authors[Int(number)] = ""
            freeAuthors.append(number)
        }
    }

    func internRegion(_ name: String) -> UInt32 {
        if let number = regionNumbers[name] { return number }
        let number = UInt32(regions.count)
        regions.append(name)
        regionStates.append(RegionState())
        regionNumbers[name] = number
        return number
    }

    func internMime(_ mime: String) -> UInt16 {
        if let number = mimeNumbers[mime] { return number }
        guard mimes.count <= Int(UInt16.max) else { return 0 }
        let number = UInt16(mimes.count)
        mimes.append(mime)
        mimeNumbers[mime] = number
        return number
    }

    // MARK: - Internals: id table

    func find(_ key: PinKey) -> UInt32? {
        let cold = cold.buffer
        return table.withUnsafeBufferPointer { table in
            let mask = table.count - 1
            var index = Int(truncatingIfNeeded: key.hashValue64) & mask
            while true {
                let slot = table[index]
                if slot == Self.emptyBucket { return nil }
                let record = cold[Int(slot)]
                if record.high == key.high, record.low == key.low { return slot }
                index = (index + 1) & mask
            }
        }
    }

    func insertIntoTable(_ slot: UInt32, key: PinKey) {
        if (live + 1) * 2 > table.count { growTable() }
        let mask = table.count - 1
        var index = Int(truncatingIfNeeded: key.hashValue64) & mask
        while table[index] != Self.emptyBucket { index = (index + 1) & mask }
        table[index] = slot
    }

    func growTable() {
        let old = table
        table = Array(repeating: Self.emptyBucket, count: old.count * 2)
        let mask = table.count - 1
        for slot in old where slot != Self.emptyBucket {
            var index = Int(truncatingIfNeeded: cold[Int(slot)].key.hashValue64) & mask
            while table[index] != Self.emptyBucket { index = (index + 1) & mask }
            table[index] = slot
        }
    }

    /// Linear-probing deletion with backward shift: no tombstones.
    func removeFromTable(_ key: PinKey) {
        let mask = table.count - 1
        var hole = Int(truncatingIfNeeded: key.hashValue64) & mask
        while true {
            let slot = table[hole]
            if slot == Self.emptyBucket { return }
            if cold[Int(slot)].high == key.high, cold[Int(slot)].low == key.low { break }
            hole = (hole + 1) & mask
        }
        var probe = hole
        while true {
            probe = (probe + 1) & mask
            let slot = table[probe]
            if slot == Self.emptyBucket { break }
            let home = Int(truncatingIfNeeded: cold[Int(slot)].key.hashValue64) & mask
            // The entry at `probe` may move into the hole unless its home lies in (hole, probe].
            let staysPut = hole <= probe ? (home > hole && home <= probe) : (home > hole || home <= probe)
            if !staysPut {
                table[hole] = slot
                hole = probe
            }
        }
        table[hole] = Self.emptyBucket
    }

    // MARK: - Internals: heap

    /// Max-heap on `precedes`: the element that comes last in feed order sits on top.
    static func siftUp<T>(_ heap: inout [T], from start: Int, precedes: (T, T) -> Bool) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard precedes(heap[parent], heap[child]) else { return }
            heap.swapAt(parent, child)
            child = parent
        }
    }

    static func siftDown<T>(_ heap: inout [T], from start: Int, precedes: (T, T) -> Bool) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < heap.count else { return }
            var latest = left
            if left + 1 < heap.count, precedes(heap[left], heap[left + 1]) { latest = left + 1 }
            guard precedes(heap[parent], heap[latest]) else { return }
            heap.swapAt(parent, latest)
            parent = latest
        }
    }
}
