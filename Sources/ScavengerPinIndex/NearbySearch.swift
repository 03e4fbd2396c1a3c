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

    struct Candidate {
        var distance: Double
        var slot: UInt32
    }

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
