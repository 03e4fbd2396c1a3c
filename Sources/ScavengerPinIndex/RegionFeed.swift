import ScavengerCore

// REGION: newest first, from the region's member list.

extension PinIndex {
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
        guard let number = names.regionNumber(name) else { return RegionRecords(pins: [], next: nil) }
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
}
