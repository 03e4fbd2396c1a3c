import ScavengerCore

// Writes: adding, changing and moving pins.

extension PinIndex {
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
        let mime = pin.photo.map { names.internMime($0.mime) } ?? 0
        let region = pin.region.map { internRegion($0) } ?? 0

        let slot: UInt32
        if let existing = ids.find(key, in: cold) {
            slot = existing
            unmap(slot)
            let old = cold[Int(slot)]
            if old.lat != pin.lat || old.lon != pin.lon, !movePending(slot, lat: pin.lat, lon: pin.lon) {
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
            if !texts.text(at: record.textOffset, equals: pin.text) {
                texts.discard(at: record.textOffset)
                record.textOffset = texts.append(pin.text)
            }
            if names.authors[Int(record.author)] != pin.author {
                names.releaseAuthor(record.author)
                record.author = names.internAuthor(pin.author)
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
                textOffset: texts.append(pin.text), author: names.internAuthor(pin.author),
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
            ids.insert(slot, key: key, cold: cold)
            if !addPending(slot, lat: pin.lat, lon: pin.lon) {
                for level in Self.levels {
                    buckets[level].insert(slot, into: Grid.cell(lat: pin.lat, lon: pin.lon, level: level))
                }
            }
            if region != 0 { addMember(slot, region: region) }
        }
        if flags & HotRecord.farExpiry != 0 { farExpiries[slot] = expires } else { farExpiries[slot] = nil }
        mapIfVisible(slot)
        photoDimensions[slot] = pin.photo.flatMap(PhotoPixels.init)
        compactArenaIfWasteful()
    }

    /// Hides or shows the pin; false when there is none with that id.
    @discardableResult
    func setHidden(id: String, _ hidden: Bool) -> Bool {
        guard let slot = slot(of: id) else { return false }
        if hidden { unmap(UInt32(slot)) }
        var record = hot[slot]
        let wasHidden = record.flags & HotRecord.hidden != 0
        record.setFlag(HotRecord.hidden, hidden)
        hot[slot] = record
        let region = cold[slot].region
        if region != 0, wasHidden != hidden { regionStates[Int(region)].unhidden += hidden ? -1 : 1 }
        if !hidden { mapIfVisible(UInt32(slot)) }
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
    func setReplies(id: String, _ replies: Int) -> Bool {
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
}
