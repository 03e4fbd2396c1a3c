import ScavengerCore

/// The slots of the pins in each cell of one grid level, compact for sparse data: a cell with
/// one or two pins costs one 12-byte table entry and nothing else; larger cells keep their
/// slots in an overflow list. Open addressing with linear probing in Robin Hood order, no
/// tombstones; the table may have any size (a hash is mapped onto it by multiplication), so it
/// can be sized to what it holds rather than to the next power of two.
struct CellBuckets {
    struct Entry {
        /// The cell's number within its level (``CellBuckets/number(_:)``), or `Entry.vacant`.
        var key: UInt32
        /// The first slot, or the overflow list's index when `second == Entry.overflow`.
        var first: UInt32
        /// The second slot, `Entry.none`, or `Entry.overflow`.
        var second: UInt32

        static let vacant = UInt32.max
        static let none = UInt32.max
        static let overflow = UInt32.max - 1
    }

    /// Columns of the level's widest row: a cell's number is `row × widest + column`, below
    /// 2^32 − 1 at every level (at level 0, 46,080 rows of at most 92,160 columns).
    private let widest: UInt64
    private(set) var entries: [Entry] = Array(repeating: Entry(key: Entry.vacant, first: 0, second: 0), count: 16)
    private var lists: [[UInt32]] = []
    private var freeLists: [Int] = []
    /// Cells holding at least one slot.
    private(set) var count = 0

    /// Empty buckets for the cells of grid level `level`.
    init(level: Int) {
        widest = UInt64((360 / Grid.rowHeight(level: level)).rounded(.up))
        precondition(UInt64(Grid.rowCount(level: level)) * widest < UInt64(Entry.vacant), "cell numbers must fit 32 bits")
    }

    /// The cell's number within its level: the table's key.
    @inline(__always)
    func number(_ cell: CellKey) -> UInt32 {
        UInt32(truncatingIfNeeded: UInt64(cell.row) &* widest &+ UInt64(cell.column))
    }

    /// The slots of one cell (in no particular order), for each in turn.
    @inline(__always)
    func forEachSlot(in cell: CellKey, _ body: (UInt32) -> Void) {
        guard let index = find(number(cell)) else { return }
        let entry = entries[index]
        if entry.second == Entry.overflow {
            lists[Int(entry.first)].withUnsafeBufferPointer { for slot in $0 { body(slot) } }
        } else {
            body(entry.first)
            if entry.second != Entry.none { body(entry.second) }
        }
    }

    /// Appends the slots of all `cells` to `slots`.
    ///
    /// The table is far larger than the processor's caches, so each lookup's first read is a
    /// miss. They are made first, for every cell, in a loop that branches on nothing it reads,
    /// so the processor has many of them in flight at once; each lookup then goes on from what
    /// its first read found. Overflow lists, elsewhere in memory, are read last for the same
    /// reason.
    func collectSlots(in cells: [CellKey], into slots: inout [UInt32]) {
        entries.withUnsafeBufferPointer { entries in
            let size = entries.count
            withUnsafeTemporaryAllocation(of: Probe.self, capacity: cells.count) { probes in
                for (position, cell) in cells.enumerated() {
                    let key = number(cell)
                    let home = Self.home(key, size: size)
                    probes.initializeElement(at: position, to: Probe(key: key, home: home, stored: entries[home].key))
                }
                var overflowing: [Int] = []
                for probe in probes {
                    guard let index = Self.find(probe.key, home: probe.home, stored: probe.stored, in: entries) else { continue }
                    let entry = entries[index]
                    if entry.second == Entry.overflow {
                        overflowing.append(Int(entry.first))
                    } else {
                        slots.append(entry.first)
                        if entry.second != Entry.none { slots.append(entry.second) }
                    }
                }
                lists.withUnsafeBufferPointer { lists in
                    for list in overflowing { slots.append(contentsOf: lists[list]) }
                }
            }
        }
    }

    /// A lookup's start: the key, its home entry and the key stored there.
    private struct Probe {
        var key: UInt32
        var home: Int
        var stored: UInt32
    }

    /// Whether `cell` holds at most two slots: one lookup, no overflow list read.
    func holdsAtMostTwo(_ cell: CellKey) -> Bool {
        guard let index = find(number(cell)) else { return true }
        return entries[index].second != Entry.overflow
    }

    /// The slots of one cell.
    func slots(in cell: CellKey) -> [UInt32] {
        var result: [UInt32] = []
        forEachSlot(in: cell) { result.append($0) }
        return result
    }

    /// How many slots all cells hold together.
    var slotCount: Int {
        entries.reduce(0) { total, entry in
            guard entry.key != Entry.vacant else { return total }
            if entry.second == Entry.overflow { return total + lists[Int(entry.first)].count }
            return total + (entry.second == Entry.none ? 1 : 2)
        }
    }

    /// Bytes held, roughly (table plus overflow lists).
    var approximateBytes: Int {
        entries.capacity * MemoryLayout<Entry>.stride
            + lists.reduce(lists.capacity * 8) { $0 + ($1.capacity > 0 ? 32 + $1.capacity * 4 : 0) }
    }

    mutating func insert(_ slot: UInt32, into cell: CellKey) {
        insert(slot, key: number(cell))
    }

    /// Adds many slots at once, given sorted by cell: each new cell's entry is made once, with
    /// its list (if it needs one) at its final size, and the table grows once beforehand. What a
    /// start-up load of a million pins does, without a million scattered appends.
    mutating func insertSorted(_ pairs: UnsafeBufferPointer<(cell: UInt32, slot: UInt32)>) {
        var distinct = 0
        var previous = Entry.vacant
        for pair in pairs where pair.cell != previous {
            distinct += 1
            previous = pair.cell
        }
        // Room for them all at 70 % full, at once.
        if (count + distinct) * 4 > entries.count * 3 { rehash((count + distinct) * 10 / 7 + 1) }
        var start = 0
        while start < pairs.count {
            let key = pairs[start].cell
            var end = start + 1
            while end < pairs.count, pairs[end].cell == key { end += 1 }
            if find(key) != nil {
                for position in start ..< end { insert(pairs[position].slot, key: key) }
            } else {
                let entry: Entry
                switch end - start {
                case 1: entry = Entry(key: key, first: pairs[start].slot, second: Entry.none)
                case 2: entry = Entry(key: key, first: pairs[start].slot, second: pairs[start + 1].slot)
                default:
                    let listIndex = store((start ..< end).map { pairs[$0].slot })
                    entry = Entry(key: key, first: UInt32(listIndex), second: Entry.overflow)
                }
                place(entry)
                count += 1
            }
            start = end
        }
    }

    private mutating func insert(_ slot: UInt32, key: UInt32) {
        if let index = find(key) {
            let entry = entries[index]
            if entry.second == Entry.overflow {
                Self.append(slot, to: &lists[Int(entry.first)])
            } else if entry.second == Entry.none {
                entries[index].second = slot
            } else {
                let listIndex = store([entry.first, entry.second, slot])
                entries[index].first = UInt32(listIndex)
                entries[index].second = Entry.overflow
            }
            return
        }
        if (count + 1) * 4 > entries.count * 3 { rehash(entries.count * 2) }
        place(Entry(key: key, first: slot, second: Entry.none))
        count += 1
    }

    mutating func remove(_ slot: UInt32, from cell: CellKey) {
        removeAll(from: cell) { $0 == slot }
    }

    /// Removes the slots of `cell` for which `shouldRemove` is true.
    mutating func removeAll(from cell: CellKey, where shouldRemove: (UInt32) -> Bool) {
        guard let index = find(number(cell)) else { return }
        let entry = entries[index]
        if entry.second == Entry.overflow {
            let listIndex = Int(entry.first)
            lists[listIndex].removeAll(where: shouldRemove)
            let list = lists[listIndex]
            if list.count <= 2 {
                lists[listIndex] = []
                freeLists.append(listIndex)
                switch list.count {
                case 0: erase(at: index)
                case 1: entries[index] = Entry(key: entry.key, first: list[0], second: Entry.none)
                default: entries[index] = Entry(key: entry.key, first: list[0], second: list[1])
                }
            } else if list.count * 2 < list.capacity, list.capacity > 8 {
                lists[listIndex] = list.withUnsafeBufferPointer { Array($0) }  // give back memory after many removals
            }
            return
        }
        let keepFirst = !shouldRemove(entry.first)
        let keepSecond = entry.second != Entry.none && !shouldRemove(entry.second)
        switch (keepFirst, keepSecond) {
        case (true, true): break
        case (true, false): entries[index].second = Entry.none
        case (false, true): entries[index] = Entry(key: entry.key, first: entry.second, second: Entry.none)
        case (false, false): erase(at: index)
        }
    }

    // MARK: - Table

    /// Where a key's probe run starts in a table of `size` entries: its hash scaled to the size.
    @inline(__always)
    static func home(_ key: UInt32, size: Int) -> Int {
        Int(truncatingIfNeeded: FNV1a.mix(UInt64(key)).multipliedFullWidth(by: UInt64(size)).high)
    }

    /// How far `index` is past the home of the key stored there (wrapping around the table).
    @inline(__always)
    static func displacement(_ key: UInt32, at index: Int, size: Int) -> Int {
        let home = Self.home(key, size: size)
        return index >= home ? index - home : index + size - home
    }

    // Robin Hood order: along a probe run, entries never sit closer to their home than the entry
    // before them sits to its own. So a search for a key the table does not hold stops at the
    // first entry nearer its home than the search has come, not at the next vacant entry: at
    // 70 % full that is about 2 probes instead of about 6, and most of the cells a NEARBY cover
    // asks for on sparse data are empty.

    @inline(__always)
    private func find(_ key: UInt32) -> Int? {
        entries.withUnsafeBufferPointer { Self.find(key, in: $0) }
    }

    @inline(__always)
    static func find(_ key: UInt32, in entries: UnsafeBufferPointer<Entry>) -> Int? {
        let home = home(key, size: entries.count)
        return find(key, home: home, stored: entries[home].key, in: entries)
    }

    /// The lookup of `key` from its home entry, whose stored key (`stored`) was read already.
    @inline(__always)
    static func find(_ key: UInt32, home: Int, stored: UInt32, in entries: UnsafeBufferPointer<Entry>) -> Int? {
        let size = entries.count
        var index = home
        var stored = stored
        var distance = 0
        while true {
            if stored == key { return index }
            if stored == Entry.vacant || displacement(stored, at: index, size: size) < distance { return nil }
            index += 1
            if index == size { index = 0 }
            distance += 1
            stored = entries[index].key
        }
    }

    /// Puts an entry whose key the table does not hold into its probe run, in Robin Hood order:
    /// it takes the place of the first entry nearer its own home, which moves on the same way.
    private mutating func place(_ entry: Entry) {
        let size = entries.count
        var carried = entry
        var index = Self.home(carried.key, size: size)
        var distance = 0
        while true {
            let stored = entries[index]
            if stored.key == Entry.vacant {
                entries[index] = carried
                return
            }
            let storedDistance = Self.displacement(stored.key, at: index, size: size)
            if storedDistance < distance {
                entries[index] = carried
                carried = stored
                distance = storedDistance
            }
            index += 1
            if index == size { index = 0 }
            distance += 1
        }
    }

    /// Empties one table entry, shifting the rest of its probe run back by one (each of those
    /// entries is past its home), which keeps the Robin Hood order.
    private mutating func erase(at start: Int) {
        let size = entries.count
        var hole = start
        while true {
            var next = hole + 1
            if next == size { next = 0 }
            let key = entries[next].key
            if key == Entry.vacant || Self.displacement(key, at: next, size: size) == 0 { break }
            entries[hole] = entries[next]
            hole = next
        }
        entries[hole].key = Entry.vacant
        count -= 1
    }

    /// Keeps an overflow list, in a freed place if there is one; returns its index.
    private mutating func store(_ list: [UInt32]) -> Int {
        if let reused = freeLists.popLast() {
            lists[reused] = list
            return reused
        }
        lists.append(list)
        return lists.count - 1
    }

    /// Moves every entry into a table of `size` entries.
    private mutating func rehash(_ size: Int) {
        let old = entries
        entries = Array(repeating: Entry(key: Entry.vacant, first: 0, second: 0), count: size)
        for entry in old where entry.key != Entry.vacant { place(entry) }
    }

    /// Appends, growing by half rather than doubling: less slack in big cells.
    private static func append(_ slot: UInt32, to list: inout [UInt32]) {
        if list.count == list.capacity { list.reserveCapacity(list.count + list.count / 2 + 2) }
        list.append(slot)
    }
}
