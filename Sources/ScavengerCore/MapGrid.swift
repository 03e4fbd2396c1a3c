#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// The Web Mercator grid MAP counts pins in: at zoom z a cell is a tile of level z + 2 (256 px
/// tiles cut in four each way, about 64 screen pixels), numbered x from the antimeridian east
/// and y from the north edge (85.0511° N) south, as slippy-map tiles are.
///
/// Positions are also 64-bit keys: x and y scaled to 2^32 and interleaved (y's bit above x's,
/// as in Bing quadkeys), so every tile of every level up to 32 is one contiguous key range.
public enum MapGrid {
    /// The zooms MAP takes.
    public static let zooms = 0 ... 22
    /// Latitudes beyond this are drawn at it (Web Mercator's edge).
    public static let maximumLatitude = 85.051_128_779_806_59
    /// The most cells one request may cover (the box's tiles at its zoom, empty ones included).
    public static let maximumCells = 65_536

    /// A tile of level `level`.
    public struct Tile: Sendable, Hashable, Comparable {
        public var level: Int
        public var x: UInt32
        public var y: UInt32

        public init(level: Int, x: UInt32, y: UInt32) {
            self.level = level
            self.x = x
            self.y = y
        }

        /// Its extent in degrees: south, west, north, east.
        public var box: (south: Double, west: Double, north: Double, east: Double) {
            let side = Double(UInt64(1) << UInt64(level))
            return (MapGrid.latitude(y: Double(y + 1) / side), Double(x) / side * 360 - 180,
                    MapGrid.latitude(y: Double(y) / side), Double(x + 1) / side * 360 - 180)
        }

        /// Its keys: `lower ..< upper`, upper nil for the end of the key space.
        public var keys: (lower: UInt64, upper: UInt64?) {
            let shift = UInt64(64 - 2 * level)
            let prefix = MapGrid.interleave(x: UInt64(x), y: UInt64(y))
            let lower = level == 0 ? 0 : prefix << shift
            let next = prefix + 1
            let upper: UInt64? = level == 0 || next >> UInt64(2 * level) != 0 ? nil : next << shift
            return (lower, upper)
        }

        /// The four tiles of the next level inside this one, in key order.
        public var children: [Tile] {
            [(0, 0), (1, 0), (0, 1), (1, 1)].map { Tile(level: level + 1, x: x * 2 + $0.0, y: y * 2 + $0.1) }
        }

        public static func < (lhs: Tile, rhs: Tile) -> Bool {
            (lhs.level, lhs.y, lhs.x) < (rhs.level, rhs.y, rhs.x)
        }
    }

    /// The tiles of one level inside a box: columns `x` (one or two ranges: a box across the
    /// antimeridian) by rows `y`.
    public struct Span: Sendable, Equatable {
        public var level: Int
        public var columns: [ClosedRange<UInt32>]
        public var rows: ClosedRange<UInt32>

        /// How many tiles it holds.
        public var cellCount: Int { columns.reduce(0) { $0 + $1.count } * rows.count }

        /// Whether some tile of level `tile.level` (≤ `level`) inside `tile` is in the span.
        public func overlaps(_ tile: Tile) -> Bool {
            let shift = UInt32(level - tile.level)
            let first = { (value: UInt32) in value << shift }
            let last = { (value: UInt32) in ((value + 1) << shift) &- 1 }
            guard first(tile.y) <= rows.upperBound, last(tile.y) >= rows.lowerBound else { return false }
            return columns.contains { first(tile.x) <= $0.upperBound && last(tile.x) >= $0.lowerBound }
        }
    }

    /// The tiles of zoom `zoom`'s cells that a box touches. `west > east` is a box across the
    /// antimeridian; latitudes are clamped to Web Mercator's edge. The box must be valid
    /// (``MapRequest/validate``).
    public static func span(south: Double, west: Double, north: Double, east: Double, zoom: Int) -> Span {
        let level = zoom + 2
        let rows = row(latitude: north, level: level) ... row(latitude: south, level: level)
        var columns: [ClosedRange<UInt32>]
        if west <= east {
            columns = [column(longitude: west, level: level) ... column(longitude: east, level: level)]
        } else {
            let eastern = column(longitude: west, level: level) ... column(longitude: 180, level: level)
            let western = column(longitude: -180, level: level) ... column(longitude: east, level: level)
            // The two parts meet or overlap when the box is almost the whole world: one range.
            columns = western.upperBound + 1 >= eastern.lowerBound
                ? [western.lowerBound ... eastern.upperBound] : [western, eastern]
        }
        return Span(level: level, columns: columns, rows: rows)
    }

    /// The column of a longitude at `level` (180° is in the last column).
    public static func column(longitude: Double, level: Int) -> UInt32 {
        let side = Double(UInt64(1) << UInt64(level))
        let value = ((longitude + 180) / 360 * side).rounded(.down)
        return UInt32(min(side - 1, max(0, value)))
    }

    /// The row of a latitude at `level` (clamped to Web Mercator's edge).
    public static func row(latitude: Double, level: Int) -> UInt32 {
        let side = Double(UInt64(1) << UInt64(level))
        let value = (y(latitude: latitude) * side).rounded(.down)
        return UInt32(min(side - 1, max(0, value)))
    }

    /// Web Mercator y of a latitude, 0 at the north edge to 1 at the south edge.
    public static func y(latitude: Double) -> Double {
        let clamped = min(maximumLatitude, max(-maximumLatitude, latitude))
        let radians = clamped * .pi / 180
        return (1 - log(tan(radians) + 1 / cos(radians)) / .pi) / 2
    }

    /// The latitude of Web Mercator y (0…1 from the north edge).
    public static func latitude(y: Double) -> Double {
        atan(sinh(.pi * (1 - 2 * y))) * 180 / .pi
    }

    /// A position's key: x and y scaled to 2^32, interleaved.
    public static func key(lat: Double, lon: Double) -> UInt64 {
        let scale = 4_294_967_296.0
        let x = UInt64(min(scale - 1, max(0, ((lon + 180) / 360 * scale).rounded(.down))))
        let y = UInt64(min(scale - 1, max(0, (self.y(latitude: lat) * scale).rounded(.down))))
        return interleave(x: x, y: y)
    }

    /// The tile of level `level` (0…32) whose key range holds `key`.
    public static func tile(ofKey key: UInt64, level: Int) -> Tile {
        guard level > 0 else { return Tile(level: 0, x: 0, y: 0) }
        let prefix = key >> UInt64(64 - 2 * level)
        return Tile(level: level, x: UInt32(compact(prefix)), y: UInt32(compact(prefix >> 1)))
    }

    /// The bits at even positions, packed together (the inverse of `spread`).
    private static func compact(_ value: UInt64) -> UInt64 {
        var bits = value & 0x5555_5555_5555_5555
        bits = (bits | bits >> 1) & 0x3333_3333_3333_3333
        bits = (bits | bits >> 2) & 0x0F0F_0F0F_0F0F_0F0F
        bits = (bits | bits >> 4) & 0x00FF_00FF_00FF_00FF
        bits = (bits | bits >> 8) & 0x0000_FFFF_0000_FFFF
        bits = (bits | bits >> 16) & 0x0000_0000_FFFF_FFFF
        return bits
    }

    /// The bits of x (below 2^32) at even positions, y's at odd ones.
    public static func interleave(x: UInt64, y: UInt64) -> UInt64 {
        spread(x) | spread(y) << 1
    }

    private static func spread(_ value: UInt64) -> UInt64 {
        var bits = value & 0xFFFF_FFFF
        bits = (bits | bits << 16) & 0x0000_FFFF_0000_FFFF
        bits = (bits | bits << 8) & 0x00FF_00FF_00FF_00FF
        bits = (bits | bits << 4) & 0x0F0F_0F0F_0F0F_0F0F
        bits = (bits | bits << 2) & 0x3333_3333_3333_3333
        bits = (bits | bits << 1) & 0x5555_5555_5555_5555
        return bits
    }
}

/// A MAP request: a box, a zoom, a kind and how many cells to keep.
public struct MapRequest: Sendable, Equatable {
    public var south: Double
    public var west: Double
    public var north: Double
    public var east: Double
    public var zoom: Int
    /// Only pins of this kind; nil for both.
    public var kind: PinKind?
    /// The fullest cells kept (1…2,000).
    public var limit: Int

    /// The default and the largest `LIMIT`.
    public static let defaultLimit = 500
    public static let maximumLimit = 2_000

    public init(south: Double, west: Double, north: Double, east: Double, zoom: Int, kind: PinKind? = nil, limit: Int = MapRequest.defaultLimit) {
        self.south = south
        self.west = west
        self.north = north
        self.east = east
        self.zoom = zoom
        self.kind = kind
        self.limit = limit
    }

    /// Why the request cannot be answered, or nil when it can: latitudes in −90…90 with south ≤
    /// north, longitudes in −180…180, a zoom in 0…22, a limit in 1…2,000, and at most
    /// ``MapGrid/maximumCells`` cells in the box at that zoom.
    public var problem: String? {
        for (name, value) in [("south", south), ("north", north)] where !(value >= -90 && value <= 90) {
            return "\(name) must be a latitude within [-90, 90]"
        }
        for (name, value) in [("west", west), ("east", east)] where !(value >= -180 && value <= 180) {
            return "\(name) must be a longitude within [-180, 180]"
        }
        if south > north { return "south must not be north of north" }
        if !MapGrid.zooms.contains(zoom) { return "ZOOM must be a whole number within [0, 22]" }
        if !(1 ... Self.maximumLimit).contains(limit) { return "LIMIT must be a whole number within [1, 2000]" }
        let cells = span.cellCount
        if cells > MapGrid.maximumCells {
            return "the box covers \(cells) cells at zoom \(zoom), at most \(MapGrid.maximumCells): zoom out or ask a smaller box"
        }
        return nil
    }

    /// The box's tiles at the request's zoom (valid requests only).
    public var span: MapGrid.Span {
        MapGrid.span(south: south, west: west, north: north, east: east, zoom: zoom)
    }
}

/// One cell of a MAP answer: its tile, how many pins, and where they are on average.
public struct MapCell<PinValue>: Sendable, Equatable where PinValue: Sendable & Equatable {
    public var tile: MapGrid.Tile
    public var count: Int
    public var lat: Double
    public var lon: Double
    /// The pin itself when the cell holds exactly one.
    public var pin: PinValue?

    public init(tile: MapGrid.Tile, count: Int, lat: Double, lon: Double, pin: PinValue?) {
        self.tile = tile
        self.count = count
        self.lat = lat
        self.lon = lon
        self.pin = pin
    }
}

/// A MAP answer: the fullest cells (fullest first, then north to south, west to east) and the
/// pins in every cell the box touches.
public struct MapAnswer<PinValue>: Sendable where PinValue: Sendable & Equatable {
    public var cells: [MapCell<PinValue>]
    public var total: Int

    public init(cells: [MapCell<PinValue>], total: Int) {
        self.cells = cells
        self.total = total
    }

    /// The order cells are kept and listed in: fullest first, then by tile.
    public static func isListedBefore(_ lhs: MapCell<PinValue>, _ rhs: MapCell<PinValue>) -> Bool {
        lhs.count != rhs.count ? lhs.count > rhs.count : lhs.tile < rhs.tile
    }
}
