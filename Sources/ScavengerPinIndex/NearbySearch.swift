import HeapModule
import ScavengerCore

// NEARBY: the cells of a cover, a branch-free chord test, then the exact distance.

extension PinIndex {
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
        spans.reserveCapacity(32)
        var slots: [UInt32] = []
        slots.reserveCapacity(256)
        let hot = hot.buffer
        if var level = Grid.coverSpans(lat: query.lat, lon: query.lon, radius: radius, maximumCells: maximumCoverCells, levels: Self.levels,
                                       coarsestMaximumCells: Self.fullScanCells, into: &spans) {
            // Where pins are few, the next level up costs fewer lookups than its extra pins cost
            // distance checks: each cell looked up is a cache miss, as is each pin checked. Its
            // cells are 16 times larger (about 6 instead of about 25 for a 1 km circle), so it
            // pays when the finer cover would hold under about 4 pins; a coarser cell around the
            // centre with at most two is taken as the sign of that.
            if level < Self.levels.upperBound,
               buckets[level + 1].holdsAtMostTwo(Grid.cell(lat: query.lat, lon: query.lon, level: level + 1)) {
                if Grid.coverSpans(lat: query.lat, lon: query.lon, radius: radius, level: level + 1, maximumCells: maximumCoverCells, into: &spans) {
                    level += 1
                } else {
                    // Never so far (a coarser cover needs fewer cells), but the spans were overwritten.
                    _ = Grid.coverSpans(lat: query.lat, lon: query.lon, radius: radius, level: level, maximumCells: .max, into: &spans)
                }
            }
            buckets[level].collectSlots(in: Grid.cells(of: spans, level: level), into: &slots)
        } else {
            for (slot, record) in hot.enumerated() where record.flags & HotRecord.occupied != 0 { slots.append(UInt32(slot)) }
        }

        let cold = cold.buffer
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
        // Then the exact test. `nearest` keeps the limit + 1 smallest distances (a bounded
        // max-heap): once full, a pin farther than its max, `cutoff`, cannot make the page.
        // Pins within reach wait in `reached`, and only those still within reach at the end
        // have their keys read, so a pin passed over costs no cold record.
        var nearest = Heap<Double>(minimumCapacity: min(capacity, 256))
        var cutoff = Double.infinity
        var reached: [(distance: Double, slot: UInt32)] = []
        reached.reserveCapacity(min(capacity, 256) * 2)
        for slot in slots[..<inside] {
            let record = hot[Int(slot)]
            if record.expires <= nowMicros || record.flags & flagMask != flagsWanted { continue }
            let dx = record.x - center.x
            let dy = record.y - center.y
            let dz = record.z - center.z
            let distance = Geodesy.distance(chordSquared: dx * dx + dy * dy + dz * dz)
            if distance > radius || distance > cutoff { continue }
            if hasCursor {
                if distance < afterDistance { continue }
                if distance == afterDistance, !(afterKey < cold[Int(slot)].key) { continue }
            }
            reached.append((distance, slot))
            // A tie with the cutoff may still make the page (by its id) but leaves it as it is.
            if nearest.count < capacity {
                nearest.insert(distance)
            } else if distance < cutoff {
                nearest.replaceMax(with: distance)
            } else {
                continue
            }
            if nearest.count == capacity { cutoff = nearest.max ?? cutoff }
        }
        // The page: the first limit + 1 of those within reach, in feed order.
        var page: [Candidate] = []
        page.reserveCapacity(min(capacity, reached.count))
        for (distance, slot) in reached where distance <= cutoff {
            page.append(Candidate(distance: distance, key: cold[Int(slot)].key, slot: slot))
        }
        page.sort()
        if page.count > capacity { page.removeLast(page.count - capacity) }
        let more = page.count > query.limit
        if more { page.removeLast() }
        let pins = makeRecords(count: page.count, slot: { Int(page[$0].slot) }) { record, position in
            (record: record, distance: page[position].distance)
        }
        let next = more ? page.last.map { NearbyCursor(distance: $0.distance, id: $0.key.string, fingerprint: query.fingerprint) } : nil
        return NearbyRecords(pins: pins, next: next)
    }

    /// A pin that may make the page, with all that feed order compares: distance, then id
    /// (as its key), then slot, so sorting looks nothing up.
    struct Candidate: Comparable {
        var distance: Double
        var high: UInt64
        var low: UInt64
        var slot: UInt32

        init(distance: Double, key: PinKey, slot: UInt32) {
            self.distance = distance
            high = key.high
            low = key.low
            self.slot = slot
        }

        var key: PinKey { PinKey(high: high, low: low) }

        static func < (lhs: Candidate, rhs: Candidate) -> Bool {
            if lhs.distance != rhs.distance { return lhs.distance < rhs.distance }
            if lhs.high != rhs.high { return lhs.high < rhs.high }
            if lhs.low != rhs.low { return lhs.low < rhs.low }
            return lhs.slot < rhs.slot
        }
    }
}
