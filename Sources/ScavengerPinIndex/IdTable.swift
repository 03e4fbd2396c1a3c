import ScavengerCore

/// Pin id → slot: open addressing with linear probing, deletion by backward shift (no
/// tombstones). Buckets hold only slot numbers; each call is given the cold records, which
/// hold the keys.
struct IdTable {
    /// Marks a free bucket.
    static let empty = UInt32.max

    /// A power of two, at least twice ``count``.
    private var buckets: [UInt32] = Array(repeating: IdTable.empty, count: 16)
    /// Slots held.
    private(set) var count = 0

    /// Bytes held.
    var approximateBytes: Int { buckets.capacity * 4 }

    /// The slot of the pin with `key`; nil when there is none.
    func find(_ key: PinKey, in cold: borrowing RecordArray<ColdRecord>) -> UInt32? {
        let cold = cold.buffer
        return buckets.withUnsafeBufferPointer { buckets in
            let mask = buckets.count - 1
            var index = Int(truncatingIfNeeded: key.hashValue64) & mask
            while true {
                let slot = buckets[index]
                if slot == Self.empty { return nil }
                let record = cold[Int(slot)]
                if record.high == key.high, record.low == key.low { return slot }
                index = (index + 1) & mask
            }
        }
    }

    /// Adds a slot whose cold record holds `key`, which the table must not hold yet.
    mutating func insert(_ slot: UInt32, key: PinKey, cold: borrowing RecordArray<ColdRecord>) {
        if (count + 1) * 2 > buckets.count { grow(cold) }
        let mask = buckets.count - 1
        var index = Int(truncatingIfNeeded: key.hashValue64) & mask
        while buckets[index] != Self.empty { index = (index + 1) & mask }
        buckets[index] = slot
        count += 1
    }

    private mutating func grow(_ cold: borrowing RecordArray<ColdRecord>) {
        let old = buckets
        buckets = Array(repeating: Self.empty, count: old.count * 2)
        let mask = buckets.count - 1
        for slot in old where slot != Self.empty {
            var index = Int(truncatingIfNeeded: cold[Int(slot)].key.hashValue64) & mask
            while buckets[index] != Self.empty { index = (index + 1) & mask }
            buckets[index] = slot
        }
    }

    /// Removes the slot of `key`, while its cold record still holds the key.
    mutating func remove(_ key: PinKey, cold: borrowing RecordArray<ColdRecord>) {
        let mask = buckets.count - 1
        var hole = Int(truncatingIfNeeded: key.hashValue64) & mask
        while true {
            let slot = buckets[hole]
            if slot == Self.empty { return }
            if cold[Int(slot)].high == key.high, cold[Int(slot)].low == key.low { break }
            hole = (hole + 1) & mask
        }
        var probe = hole
        while true {
            probe = (probe + 1) & mask
            let slot = buckets[probe]
            if slot == Self.empty { break }
            let home = Int(truncatingIfNeeded: cold[Int(slot)].key.hashValue64) & mask
            // The entry at `probe` may move into the hole unless its home lies in (hole, probe].
            let staysPut = hole <= probe ? (home > hole && home <= probe) : (home > hole || home <= probe)
            if !staysPut {
                buckets[hole] = slot
                hole = probe
            }
        }
        buckets[hole] = Self.empty
        count -= 1
    }
}
