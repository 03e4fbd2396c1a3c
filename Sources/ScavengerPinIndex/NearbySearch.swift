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
        // Then the exact test, keeping the first limit + 1 in feed order: the last of them is
        // the heap's max, and once they are that many nothing farther than `cutoff` can join.
        // A key is read only for a pin that may.
        var best = Heap<Candidate>(minimumCapacity: min(capacity, 256))
        var cutoff = Double.infinity
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
            if distance > cutoff { continue }
            let candidate = Candidate(distance: distance, key: cold[Int(slot)].key, slot: slot)
            if best.count < capacity {
                best.insert(candidate)
            } else if let last = best.max, candidate < last {
                best.replaceMax(with: candidate)
            } else {
                continue
            }
            if best.count == capacity, let last = best.max { cutoff = last.distance }
        }
        var page = best.unordered
        page.sort()
        let more = page.count > query.limit
        if more { page.removeLast() }
        let records = makeRecords(page.map { Int($0.slot) })
        let next = more ? page.last.map { NearbyCursor(distance: $0.distance, id: $0.key.string, fingerprint: query.fingerprint) } : nil
        return NearbyRecords(pins: records.indices.map { (record: records[$0], distance: page[$0].distance) }, next: next)
    }

    /// A pin that may make the page, with all that feed order compares: distance, then id
    /// (as its key), then slot, so the heap compares without looking anything up.
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
