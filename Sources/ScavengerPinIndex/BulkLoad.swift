import ScavengerCore

// Bulk loading: a start-up load adds a million pins before anyone reads them. Their cells are
// collected per level and put in the buckets at the end, sorted by cell, so each cell's entry
// and list are made once at their final size instead of growing by a million scattered appends.

/// The cells of the slots added since a bulk load began, per indexed level, by slot.
struct PendingCells {
    /// The first slot added during the load; slots from here on are in `cells`.
    let firstSlot: Int
    /// Per level, the cell (its number in the level's buckets) of slot `firstSlot + i` at `i`.
    var cells: [[UInt32]]
}

extension PinIndex {
    /// Starts a bulk load: pins added from now on go into the cell buckets only at
    /// ``finishBulkLoad()``. Until then NEARBY and REGION do not see them, so call it on an index
    /// no one reads yet (a load's fresh index). Removing a pin finishes the load first.
    public func beginBulkLoad(expectedPins: Int = 0) {
        guard pendingCells == nil else { return }
        var cells = Array(repeating: [UInt32](), count: Self.levels.count)
        for level in cells.indices { cells[level].reserveCapacity(expectedPins) }
        pendingCells = PendingCells(firstSlot: hot.count, cells: cells)
    }

    /// Puts the pins added since ``beginBulkLoad(expectedPins:)`` in the cell buckets; does
    /// nothing when no bulk load is going on.
    public func finishBulkLoad() {
        guard let pending = pendingCells else { return }
        pendingCells = nil
        for level in Self.levels {
            var pairs: [(cell: UInt32, slot: UInt32)] = []
            pairs.reserveCapacity(pending.cells[level].count)
            for (offset, cell) in pending.cells[level].enumerated() {
                pairs.append((cell, UInt32(pending.firstSlot + offset)))
            }
            pairs.sort { $0.cell < $1.cell }
            pairs.withUnsafeBufferPointer { buckets[level].insertSorted($0) }
        }
        // MAP's sets grew leaf by leaf during the load: pack them (every node full, as a fresh sorted load).
        for tree in mapTrees.indices { mapTrees[tree].shrinkToFit() }
    }

    /// During a bulk load, records the cells of a slot just added (the next one in order);
    /// false when there is no bulk load, so the caller puts it in the buckets itself.
    func addPending(_ slot: UInt32, lat: Double, lon: Double) -> Bool {
        guard var pending = pendingCells, Int(slot) == pending.firstSlot + pending.cells[0].count else { return false }
        pendingCells = nil  // no second reference while the arrays grow
        for level in Self.levels {
            pending.cells[level].append(buckets[level].number(Grid.cell(lat: lat, lon: lon, level: level)))
        }
        pendingCells = pending
        return true
    }

    /// During a bulk load, moves a slot added during it to the cells of a new position; false
    /// when the slot's cells are in the buckets (the caller moves it there).
    func movePending(_ slot: UInt32, lat: Double, lon: Double) -> Bool {
        guard var pending = pendingCells, Int(slot) >= pending.firstSlot else { return false }
        let offset = Int(slot) - pending.firstSlot
        guard offset < pending.cells[0].count else { return false }
        pendingCells = nil
        for level in Self.levels {
            pending.cells[level][offset] = buckets[level].number(Grid.cell(lat: lat, lon: lon, level: level))
        }
        pendingCells = pending
        return true
    }
}

extension PinIndex {
    /// Calls `body` with the expiry (microseconds) and key of every pin held, hidden and expired
    /// ones included, in slot order: what a load's expiry list is built from, once the pins
    /// read twice have settled.
    public func forEachExpiry(_ body: (Int64, PinKey) -> Void) {
        let hot = hot.buffer
        let cold = cold.buffer
        for slot in hot.indices where hot[slot].flags & HotRecord.occupied != 0 {
            let record = hot[slot]
            let expires = record.flags & HotRecord.farExpiry != 0 ? farExpiries[UInt32(slot)] ?? record.expires : record.expires
            body(expires, cold[slot].key)
        }
    }
}
