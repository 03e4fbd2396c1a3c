// Pin id → slot: open addressing with linear probing, no tombstones.

extension PinIndex {
    static let emptyBucket = UInt32.max

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
}
