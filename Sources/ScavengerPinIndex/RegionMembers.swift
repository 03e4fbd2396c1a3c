import ScavengerCore

// Each region's pins, oldest first, with counts kept up to date.

extension PinIndex {
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

    /// The region's number, with an empty member list for a name not seen before.
    func internRegion(_ name: String) -> UInt32 {
        let number = names.internRegion(name)
        if Int(number) == regionStates.count { regionStates.append(RegionState()) }
        return number
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
            if visible > 0 { counts[names.regions[number]] = visible }
        }
        return counts
    }

    /// Ids of the pins (hidden and expired included) whose region is `name`.
    func pinIDs(inRegion name: String) -> [String] {
        guard let number = names.regionNumber(name) else { return [] }
        return regionStates[Int(number)].members.map { cold[Int($0)].key.string }
    }
}
