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
        var parts: [MapGrid.Tile: [(tree: Int, first: Int, count: Int)]] = [:]
        for tree in request.kind.map({ [Self.mapTree($0)] }) ?? [0, 1] where !mapTrees[tree].isEmpty {
            let root = MapGrid.Tile(level: 0, x: 0, y: 0)
            descend(mapTrees[tree], root, ranks: 0 ..< mapTrees[tree].count, span: span) { tile, ranks in
                parts[tile, default: []].append((tree, ranks.lowerBound, ranks.count))
            }
        }
        var cells = parts.map { tile, parts in
            MapCell<Pin>(tile: tile, count: parts.reduce(0) { $0 + $1.count }, lat: 0, lon: 0, pin: nil)
        }
        let total = cells.reduce(0) { $0 + $1.count }
        cells.sort(by: MapAnswer<Pin>.isListedBefore)
        if cells.count > request.limit { cells.removeLast(cells.count - request.limit) }
        for index in cells.indices {
            let cellParts = parts[cells[index].tile] ?? []
            (cells[index].lat, cells[index].lon) = meanPosition(cellParts, total: cells[index].count)
            if cells[index].count == 1, let part = cellParts.first {
                cells[index].pin = makePin(Int(mapTrees[part.tree][part.first].slot))
            }
        }
        return MapAnswer(cells: cells, total: total)
    }

    /// Visits the tiles of the span's level inside `tile` that hold pins, with their ranks in
    /// `tree` (`ranks`: the ranks of `tile`'s keys).
    private func descend(
        _ tree: CountedTree<MapEntry>, _ tile: MapGrid.Tile, ranks: Range<Int>, span: MapGrid.Span,
        _ visit: (MapGrid.Tile, Range<Int>) -> Void
    ) {
        guard !ranks.isEmpty, span.overlaps(tile) else { return }
        guard tile.level < span.level else { return visit(tile, ranks) }
        let children = tile.children
        var start = ranks.lowerBound
        for (number, child) in children.enumerated() {
            let end: Int
            if number == children.count - 1 {
                end = ranks.upperBound
            } else if let upper = child.keys.upper {
                end = tree.prefixCount { $0.key < upper }
            } else {
                end = ranks.upperBound
            }
            descend(tree, child, ranks: start ..< end, span: span, visit)
            start = end
        }
    }

    /// The mean position of a cell's pins: of every pin when few, else of an even sample.
    private func meanPosition(_ parts: [(tree: Int, first: Int, count: Int)], total: Int) -> (lat: Double, lon: Double) {
        guard total > 0 else { return (0, 0) }
        let cold = cold.buffer
        var lat = 0.0
        var lon = 0.0
        if total <= Self.meanSample {
            for part in parts {
                for entry in mapTrees[part.tree].elements(from: part.first).prefix(part.count) {
                    lat += cold[Int(entry.slot)].lat
                    lon += cold[Int(entry.slot)].lon
                }
            }
            return (lat / Double(total), lon / Double(total))
        }
        // Each part weighs as its share of the cell; its sample is spread evenly over its ranks.
        for part in parts where part.count > 0 {
            let samples = max(1, min(part.count, Self.meanSample * part.count / total))
            var partLat = 0.0
            var partLon = 0.0
            for sample in 0 ..< samples {
                let rank = part.first + (2 * sample + 1) * part.count / (2 * samples)
                let slot = Int(mapTrees[part.tree][rank].slot)
                partLat += cold[slot].lat
                partLon += cold[slot].lon
            }
            lat += partLat / Double(samples) * Double(part.count)
            lon += partLon / Double(samples) * Double(part.count)
        }
        return (lat / Double(total), lon / Double(total))
    }
}
