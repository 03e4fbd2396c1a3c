import ScavengerCore

// Removing pins and freeing their slots.

extension PinIndex {
    /// Removes the pin; false when there is none with that id.
    @discardableResult
    public func remove(id: String) -> Bool {
        finishBulkLoad()
        guard let key = PinKey(id: id), let slot = ids.find(key, in: cold) else { return false }
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
        finishBulkLoad()
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

    /// Frees a slot already taken out of its buckets and region list.
    func release(_ slot: UInt32) {
        unmap(slot)
        let record = cold[Int(slot)]
        ids.remove(record.key, cold: cold)
        texts.discard(at: record.textOffset)
        names.releaseAuthor(record.author)
        if hot[Int(slot)].flags & HotRecord.farExpiry != 0 { farExpiries[slot] = nil }
        if hot[Int(slot)].flags & HotRecord.photoKind != 0 { photoDimensions[slot] = nil }
        hot[Int(slot)] = HotRecord(vector: Geodesy.UnitVector(x: 0, y: 0, z: 0), expires: 0, flags: 0)
        cold[Int(slot)].region = 0
        freeSlots.append(slot)
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
}
