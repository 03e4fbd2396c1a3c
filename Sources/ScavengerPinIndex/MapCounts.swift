import OrderStatistics
import ScavengerCore

// MAP: pins counted per Web Mercator cell at any zoom, from one ordered set of position keys per
// kind. A tile of any level is one contiguous key range, so its count is the difference of two
// ranks (O(log n)); a query walks the quadtree down from the whole world to the asked level,
// only into tiles that hold pins and touch the box. Only pins everyone may see are in the sets:
// a hidden pin leaves them, and an expired one leaves them when the feed announces its expiry
// (``expireMapped(_:through:)``), which the feed does before it answers a MAP.

/// One pin in the map's sets: its position key, then its slot (pins may share a key).
struct MapEntry: Comparable {
    var key: UInt64
    var slot: UInt32

    static func < (lhs: MapEntry, rhs: MapEntry) -> Bool {
        lhs.key != rhs.key ? lhs.key < rhs.key : lhs.slot < rhs.slot
    }
}

extension PinIndex {
    /// A cell's mean position is computed from every pin when it holds at most this many;
    /// above, from this many pins spread evenly over the cell's keys (see scripts/DEVELOPERS.md).
    static let meanSample = 16

    /// The set of a kind's pins.
    static func mapTree(_ kind: PinKind) -> Int { kind == .photo ? 1 : 0 }

    /// Puts the slot's pin in its kind's set when everyone may see it (occupied, not hidden, not
    /// expired by ``expireMapped(_:through:)``'s time) and it is not there yet.
    func mapIfVisible(_ slot: UInt32) {
        var record = hot[Int(slot)]
        let flags = record.flags
        guard flags & (HotRecord.occupied | HotRecord.hidden | HotRecord.mapped) == HotRecord.occupied,
              record.expires > mapExpiredThrough else { return }
        let coldRecord = cold[Int(slot)]
        let tree = flags & HotRecord.photoKind != 0 ? 1 : 0
        mapTrees[tree].insert(MapEntry(key: MapGrid.key(lat: coldRecord.lat, lon: coldRecord.lon), slot: slot))
        record.setFlag(HotRecord.mapped, true)
        hot[Int(slot)] = record
        mapVersion &+= 1
    }

    /// Takes the slot's pin out of its kind's set, if it is there (call before its position,
    /// kind or flags change).
    func unmap(_ slot: UInt32) {
        var record = hot[Int(slot)]
        guard record.flags & HotRecord.mapped != 0 else { return }
        let coldRecord = cold[Int(slot)]
        let tree = record.flags & HotRecord.photoKind != 0 ? 1 : 0
        mapTrees[tree].remove(MapEntry(key: MapGrid.key(lat: coldRecord.lat, lon: coldRecord.lon), slot: slot))
        record.setFlag(HotRecord.mapped, false)
        hot[Int(slot)] = record
        mapVersion &+= 1
    }

    /// From now on pins with `expires ≤ now` are not counted: takes those among `ids` out of the
    /// map (the feed passes the pins its expiry queue says are due) and keeps such pins out
    /// when they are written again. Every counted pin whose expiry has passed must be in `ids`.
    public func expireMapped(_ ids: some Sequence<PinKey>, through now: Timestamp) {
        let now = HotRecord.clamp(now.microseconds)
        mapExpiredThrough = max(mapExpiredThrough, now)
        for key in ids {
            guard let slot = self.ids.find(key, in: cold), hot[Int(slot)].expires <= mapExpiredThrough else { continue }
            unmap(slot)
        }
    }

    /// Pins counted by MAP, of a kind or of both.
    public func mappedCount(kind: PinKind? = nil) -> Int {
        kind.map { mapTrees[Self.mapTree($0)].count } ?? mapTrees.reduce(0) { $0 + $1.count }
    }

    /// Bytes held by MAP's sets.
    public var mapBytes: Int { mapTrees.reduce(0) { $0 + $1.storageBytes } }

    /// MAP: the cells of the request's zoom that its box touches, with their counts of pins
    /// everyone may see, the fullest `limit` of them with their mean position and, for a cell
    /// of one pin, the pin. The request must be valid (``MapRequest/problem`` nil).
    public func map(_ request: MapRequest) -> MapAnswer<Pin> {
        let span = request.span
        let start = Self.startingTile(of: span)
        var runs: [CellRun] = []
        let trees = request.kind.map { [Self.mapTree($0)] } ?? [0, 1]
        for tree in trees where !mapTrees[tree].isEmpty {
            let set = mapTrees[tree]
            let keys = start.keys
            let first = start.level == 0 ? 0 : set.prefixCount { $0.key < keys.lower }
            let last = keys.upper.map { upper in set.prefixCount { $0.key < upper } } ?? set.count
            descend(set, tree: tree, start, ranks: first ..< last, span: span, into: &runs)
        }
        // Each kind's runs come in key order: with both kinds, a cell's two runs side by side.
        if trees.count > 1 { runs.sort { $0.key != $1.key ? $0.key < $1.key : $0.tree < $1.tree } }
        var cells: [CountedCell] = []
        cells.reserveCapacity(runs.count)
        var index = 0
        var total = 0
        while index < runs.count {
            var end = index + 1
            var count = runs[index].count
            while end < runs.count, runs[end].key == runs[index].key {
                count += runs[end].count
                end += 1
            }
            cells.append(CountedCell(tile: runs[index].tile, count: count, runs: index ..< end))
            total += count
            index = end
        }
        // The fullest first, then north to south, west to east (MapAnswer.isListedBefore), sorted
        // as small records: the pins and positions are made only for the cells kept.
        cells.sort { $0.count != $1.count ? $0.count > $1.count : $0.tile < $1.tile }
        if cells.count > request.limit { cells.removeLast(cells.count - request.limit) }
        let answer = cells.map { cell -> MapCell<Pin> in
            let parts = runs[cell.runs]
            let (lat, lon) = meanPosition(parts, total: cell.count)
            var pin: Pin?
            if cell.count == 1, let part = parts.first { pin = makePin(Int(mapTrees[part.tree][part.first].slot)) }
            return MapCell(tile: cell.tile, count: cell.count, lat: lat, lon: lon, pin: pin)
        }
        return MapAnswer(cells: answer, total: total)
    }

    /// One kind's pins in one cell: ranks `first ..< first + count` of that kind's set.
    struct CellRun {
        var tile: MapGrid.Tile
        /// The tile's first key: the runs' order.
        var key: UInt64
        var tree: Int
        var first: Int
        var count: Int
    }

    /// A cell with its count, and its runs (indices into the runs).
    struct CountedCell {
        var tile: MapGrid.Tile
        var count: Int
        var runs: Range<Int>
    }

    /// The smallest tile holding every tile of the span (the whole world for a span across the
    /// antimeridian): the walk starts there rather than at the top, two ranks instead of three
    /// per level above it.
    static func startingTile(of span: MapGrid.Span) -> MapGrid.Tile {
        guard span.columns.count == 1 else { return MapGrid.Tile(level: 0, x: 0, y: 0) }
        var level = span.level
        var (west, east) = (span.columns[0].lowerBound, span.columns[0].upperBound)
        var (north, south) = (span.rows.lowerBound, span.rows.upperBound)
        while level > 0, west != east || north != south {
            west >>= 1
            east >>= 1
            north >>= 1
            south >>= 1
            level -= 1
        }
        return MapGrid.Tile(level: level, x: west, y: north)
    }

    /// Appends the runs of the span's level inside `tile` that hold pins of `set` (`ranks`:
    /// the ranks of `tile`'s keys), in key order. A child's ranks are found only when it
    /// touches the span, and a child that follows one found starts where that one ended.
    private func descend(
        _ set: CountedBTree<MapEntry>, tree: Int, _ tile: MapGrid.Tile, ranks: Range<Int>, span: MapGrid.Span,
        into runs: inout [CellRun]
    ) {
        guard !ranks.isEmpty, span.overlaps(tile) else { return }
        guard tile.level < span.level else {
            runs.append(CellRun(tile: tile, key: tile.keys.lower, tree: tree, first: ranks.lowerBound, count: ranks.count))
            return
        }
        // Few pins: stepping through them costs less than the ranks of the tiles below.
        if ranks.count <= Self.walkBelow { return walk(set, tree: tree, ranks: ranks, span: span, into: &runs) }
        var ended: Int? = ranks.lowerBound   // where the previous child ended, when known
        for number in 0 ..< 4 {
            let child = MapGrid.Tile(level: tile.level + 1, x: tile.x * 2 + UInt32(number & 1), y: tile.y * 2 + UInt32(number >> 1))
            guard span.overlaps(child) else {
                ended = nil
                continue
            }
            let keys = child.keys
            let first = ended ?? set.prefixCount { $0.key < keys.lower }
            if first == ranks.upperBound { return }
            let last = number == 3 ? ranks.upperBound : keys.upper.map { upper in set.prefixCount { $0.key < upper } } ?? ranks.upperBound
            descend(set, tree: tree, child, ranks: first ..< last, span: span, into: &runs)
            ended = last
        }
    }

    /// A tile holding at most this many pins is cut into cells by stepping through its pins in
    /// key order (each step a neighbour in the tree) rather than by the ranks of its children
    /// (each a walk from the root of a set of a million).
    static let walkBelow = 64

    /// Appends the runs of the span's cells among the pins at `ranks` of `set`, stepping
    /// through them in key order.
    private func walk(_ set: CountedBTree<MapEntry>, tree: Int, ranks: Range<Int>, span: MapGrid.Span, into runs: inout [CellRun]) {
        var entries = set.elements(from: ranks.lowerBound)
        var run: (tile: MapGrid.Tile, first: Int)?
        for rank in ranks {
            guard let entry = entries.next() else { break }
            let tile = MapGrid.tile(ofKey: entry.key, level: span.level)
            if let open = run, open.tile == tile { continue }
            if let open = run, span.overlaps(open.tile) {
                runs.append(CellRun(tile: open.tile, key: open.tile.keys.lower, tree: tree, first: open.first, count: rank - open.first))
            }
            run = (tile, rank)
        }
        if let open = run, span.overlaps(open.tile) {
            runs.append(CellRun(tile: open.tile, key: open.tile.keys.lower, tree: tree, first: open.first, count: ranks.upperBound - open.first))
        }
    }

    /// The mean position of a cell's pins: of every pin when few, else of an even sample.
    private func meanPosition(_ parts: ArraySlice<CellRun>, total: Int) -> (lat: Double, lon: Double) {
        guard total > 0 else { return (0, 0) }
        let cold = cold.buffer
        var lat = 0.0
        var lon = 0.0
        // Each part weighs as its share of the cell; its sample (every pin when the cell is
        // small) is spread evenly over its ranks and read in one walk of the set.
        for part in parts where part.count > 0 {
            let ranks: [Int]
            if total <= Self.meanSample {
                ranks = Array(part.first ..< part.first + part.count)
            } else {
                let samples = max(1, min(part.count, Self.meanSample * part.count / total))
                ranks = (0 ..< samples).map { part.first + (2 * $0 + 1) * part.count / (2 * samples) }
            }
            if total <= Self.meanSample {
                mapTrees[part.tree].forEach(atAscendingRanks: ranks) { entry in
                    lat += cold[Int(entry.slot)].lat
                    lon += cold[Int(entry.slot)].lon
                }
                continue
            }
            var partLat = 0.0
            var partLon = 0.0
            mapTrees[part.tree].forEach(atAscendingRanks: ranks) { entry in
                partLat += cold[Int(entry.slot)].lat
                partLon += cold[Int(entry.slot)].lon
            }
            lat += partLat / Double(ranks.count) * Double(part.count)
            lon += partLon / Double(ranks.count) * Double(part.count)
        }
        return (lat / Double(total), lon / Double(total))
    }
}
