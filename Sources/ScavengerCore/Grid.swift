#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif

/// One cell of the ``Grid``: its level, row and column packed in one integer.
///
/// `rawValue` is `level << 48 | row << 24 | column`, always below 2^51, so it fits a PostgreSQL
/// `bigint` (see ``int64Value``), and sorting by it sorts by level, then row, then column.
public struct CellKey: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The packed level, row and column.
    public let rawValue: UInt64

    @inline(__always)
    init(level: Int, row: Int, column: Int) {
        rawValue = UInt64(level) << 48 | UInt64(row) << 24 | UInt64(column)
    }

    /// The cell with this packed value, or nil when it names no cell of the grid.
    public init?(rawValue: UInt64) {
        let level = Int(rawValue >> 48)
        let row = Int(rawValue >> 24 & 0xFF_FFFF)
        let column = Int(rawValue & 0xFF_FFFF)
        guard Grid.levels.contains(level), row < Grid.rowCount(level: level),
              column < Grid.columnCount(level: level, row: row)
        else { return nil }
        self.rawValue = rawValue
    }

    /// The cell stored as a PostgreSQL `bigint`, or nil when it names no cell.
    public init?(int64Value: Int64) {
        guard int64Value >= 0 else { return nil }
        self.init(rawValue: UInt64(int64Value))
    }

    /// `rawValue` as a signed integer (never negative), for a PostgreSQL `bigint`.
    public var int64Value: Int64 { Int64(rawValue) }

    /// 0 (finest, about 435 m) to 5 (coarsest, about 445 km).
    public var level: Int { Int(rawValue >> 48) }
    /// The latitude band, counted from the South Pole.
    public var row: Int { Int(rawValue >> 24 & 0xFF_FFFF) }
    /// The slice of the row, counted eastward from −180°.
    public var column: Int { Int(rawValue & 0xFF_FFFF) }

    public static func < (lhs: CellKey, rhs: CellKey) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String { "L\(level)/\(row)/\(column)" }
}

/// A hierarchical grid of roughly square cells over the whole sphere, poles and antimeridian
/// included.
///
/// Level `L` cuts latitude into rows 2^(2L−8) degrees high (2^−8° ≈ 435 m at level 0 up to 4° at
/// level 5), counted from the South Pole; the last row includes the North Pole. Each row has its
/// own number of columns, `max(1, ceil(360/Δ · cos φ))` with φ the row's edge nearest the
/// equator, so cells stay about as wide as they are high even near the poles. Columns start at
/// −180°; longitudes 180 and −180 fall in column 0.
public enum Grid {
    /// The levels, finest first.
    public static let levels: ClosedRange<Int> = 0 ... 5

    /// The most cells ``cover(lat:lon:radius:maxCells:)`` aims for by default.
    public static let defaultMaximumCells = 32

    /// Row height in degrees of latitude at `level` (0...5): 2^(2·level − 8).
    public static func rowHeight(level: Int) -> Double {
        precondition(levels.contains(level), "grid levels are 0...5")
        return Double(sign: .plus, exponent: 2 * level - 8, significand: 1)
    }

    /// How many rows `level` (0...5) has: 180 / ``rowHeight(level:)``.
    public static func rowCount(level: Int) -> Int {
        precondition(levels.contains(level), "grid levels are 0...5")
        return columnCounts[level].count
    }

    /// How many columns row `row` of `level` has.
    public static func columnCount(level: Int, row: Int) -> Int {
        precondition(levels.contains(level), "grid levels are 0...5")
        return Int(columnCounts[level][row])
    }

    /// The row of a latitude (degrees; clamped to [−90, 90]; NaN counts as 0).
    public static func row(lat: Double, level: Int) -> Int {
        let rows = rowCount(level: level)
        let scaled = ((lat.isNaN ? 0 : lat) + 90) / rowHeight(level: level)
        guard scaled > 0 else { return 0 }
        guard scaled < Double(rows) else { return rows - 1 }
        return Int(scaled)
    }

    /// The column of a longitude (degrees, any value; wrapped) in a row with `columns` columns.
    @inline(__always)
    static func column(lon: Double, columns: Int) -> Int {
        let scaled = ((lon + 180) / 360 * Double(columns)).rounded(.down)
        guard scaled.isFinite, abs(scaled) < 1e15 else { return 0 }
        let column = Int(scaled) % columns
        return column < 0 ? column + columns : column
    }

    /// The cell of `level` holding the point (degrees). Non-finite values count as 0.
    public static func cell(lat: Double, lon: Double, level: Int) -> CellKey {
        let row = row(lat: lat, level: level)
        return CellKey(level: level, row: row, column: column(lon: lon.isFinite ? lon : 0, columns: columnCount(level: level, row: row)))
    }

    /// The latitude and longitude ranges (degrees) of a cell. The last row's `maxLat` is 90 and
    /// belongs to it; otherwise the upper and eastern edges belong to the next cell.
    public static func bounds(of cell: CellKey) -> (minLat: Double, maxLat: Double, minLon: Double, maxLon: Double) {
        let height = rowHeight(level: cell.level)
        let columns = Double(columnCount(level: cell.level, row: cell.row))
        let minLat = -90 + Double(cell.row) * height
        return (minLat, min(90, minLat + height), -180 + Double(cell.column) * 360 / columns,
                -180 + Double(cell.column + 1) * 360 / columns)
    }

    /// Every cell of `level` that holds a point within `radius` metres (great-circle) of the
    /// centre: never misses one, may include a few extra. Sorted by raw value.
    public static func cover(lat: Double, lon: Double, radius: Double, level: Int) -> [CellKey] {
        var spans: [RowSpan] = []
        _ = coverSpans(lat: lat, lon: lon, radius: radius, level: level, maximumCells: Int.max, into: &spans)
        return cells(of: spans, level: level)
    }

    /// The finest level whose cover has at most `maxCells` cells (the coarsest level when none
    /// has), with that cover.
    public static func cover(lat: Double, lon: Double, radius: Double, maxCells: Int = defaultMaximumCells) -> (level: Int, cells: [CellKey]) {
        var spans: [RowSpan] = []
        let level = coverSpans(lat: lat, lon: lon, radius: radius, maximumCells: maxCells, into: &spans) ?? levels.upperBound
        return (level, cells(of: spans, level: level))
    }

    /// The level ``cover(lat:lon:radius:maxCells:)`` picks for a circle at this latitude and
    /// longitude 0 (at other longitudes it may differ by one where a circle straddles cells).
    public static func level(forRadius radius: Double, atLatitude lat: Double, maxCells: Int = defaultMaximumCells) -> Int {
        var spans: [RowSpan] = []
        return coverSpans(lat: lat, lon: 0, radius: radius, maximumCells: maxCells, into: &spans) ?? levels.upperBound
    }

    // MARK: - Internals (`package` ones serve the pin index)

    /// Columns `first ..< first + count` (modulo the row's column count) of one row.
    package struct RowSpan {
        var row: Int
        var first: Int
        var count: Int
        var columns: Int
    }

    /// The cells of `spans`, row by row.
    package static func cells(of spans: [RowSpan], level: Int) -> [CellKey] {
        var cells: [CellKey] = []
        cells.reserveCapacity(spans.reduce(0) { $0 + $1.count })
        for span in spans {
            let wraps = span.first + span.count > span.columns
            if wraps {
                for column in 0 ..< span.first + span.count - span.columns {
                    cells.append(CellKey(level: level, row: span.row, column: column))
                }
            }
            for column in span.first ..< min(span.columns, span.first + span.count) {
                cells.append(CellKey(level: level, row: span.row, column: column))
            }
        }
        return cells
    }

    /// Picks the finest of `candidates` whose cover fits `maximumCells` and leaves its spans in
    /// `spans`. The coarsest candidate takes up to `coarsestMaximumCells`; nil when even that
    /// is not enough (`spans` is then incomplete).
    package static func coverSpans(lat: Double, lon: Double, radius: Double, maximumCells: Int, levels candidates: ClosedRange<Int> = levels,
                           coarsestMaximumCells: Int = Int.max, into spans: inout [RowSpan]) -> Int? {
        for level in candidates.dropLast() {
            if coverSpans(lat: lat, lon: lon, radius: radius, level: level, maximumCells: maximumCells, into: &spans) {
                return level
            }
        }
        let coarsest = candidates.upperBound
        let fits = coverSpans(lat: lat, lon: lon, radius: radius, level: coarsest, maximumCells: max(maximumCells, coarsestMaximumCells), into: &spans)
        return fits ? coarsest : nil
    }

    /// The cover of one level as row spans; false (spans incomplete) when it needs more than
    /// `maximumCells` cells.
    package static func coverSpans(lat rawLat: Double, lon rawLon: Double, radius: Double, level: Int, maximumCells: Int,
                           into spans: inout [RowSpan]) -> Bool {
        spans.removeAll(keepingCapacity: true)
        let lat = rawLat.isFinite ? min(90, max(-90, rawLat)) : 0
        let lon = rawLon.isFinite ? rawLon : 0
        // Angular radius, inflated a little so rounding can never lose a cell.
        let theta = (radius.isFinite ? max(0, radius) : (radius > 0 ? .pi * Geodesy.earthRadius : 0)) / Geodesy.earthRadius
        let inflated = min(.pi, theta * (1 + 1e-9) + 1e-12)
        let thetaDegrees = inflated * 180 / .pi
        let latLow = max(-90, lat - thetaDegrees)
        let latHigh = min(90, lat + thetaDegrees)
        let height = rowHeight(level: level)
        let rowLow = row(lat: latLow, level: level)
        let rowHigh = row(lat: latHigh, level: level)
        if rowHigh - rowLow + 1 > maximumCells { return false }

        let (sinLat, cosLat) = Geodesy.sinCos(degrees: lat)
        // Everything in the rows when the cap is huge or centred on a pole.
        let wholeRows = inflated >= .pi / 4 || cosLat == 0
        // The latitude where the cap's longitude extent is widest, when the cap holds no pole.
        let tangentSine = sinLat / cos(inflated)
        let tangent: Double? = abs(tangentSine) < 1 ? asin(tangentSine) * 180 / .pi : nil

        /// sin²(half the longitude half-width) of the cap at latitude `phi` (≥ 1: all of it).
        func halfWidthMeasure(_ phi: Double) -> Double {
            let cosPhi = Geodesy.sinCos(degrees: phi).cos
            if cosPhi <= 0 { return .infinity }
            let d = (phi - lat) * .pi / 180
            let numerator = sin((inflated + d) / 2) * sin((inflated - d) / 2)
            return max(0, numerator) / (cosLat * cosPhi)
        }

        var total = 0
        var lowerMeasure = wholeRows ? 0 : halfWidthMeasure(latLow)
        for row in rowLow ... rowHigh {
            let columns = columnCount(level: level, row: row)
            let bandTop = min(latHigh, -90 + Double(row + 1) * height)
            var count = columns
            var first = 0
            if !wholeRows {
                let bandBottom = max(latLow, -90 + Double(row) * height)
                let upperMeasure = halfWidthMeasure(bandTop)
                var measure = max(lowerMeasure, upperMeasure)
                if let tangent, tangent > bandBottom, tangent < bandTop {
                    measure = max(measure, halfWidthMeasure(tangent))
                }
                lowerMeasure = upperMeasure
                if measure < 1 {
                    let halfWidth = 2 * asin(measure.squareRoot()) * 180 / .pi
                    let widened = halfWidth * (1 + 1e-9) + 1e-9
                    if widened < 180 {
                        let west = column(unwrappedLon: lon - widened, columns: columns)
                        let east = column(unwrappedLon: lon + widened, columns: columns)
                        if east - west + 1 < columns {
                            count = east - west + 1
                            first = (west % columns + columns) % columns
                        }
                    }
                }
            }
            total += count
            if total > maximumCells { return false }
            spans.append(RowSpan(row: row, first: first, count: count, columns: columns))
        }
        return true
    }

    /// The column a longitude past ±180 would have if the row went on around the sphere.
    @inline(__always)
    static func column(unwrappedLon lon: Double, columns: Int) -> Int {
        Int(((lon + 180) / 360 * Double(columns)).rounded(.down))
    }

    /// Columns per row for each level, fixed at first use.
    static let columnCounts: [[UInt32]] = levels.map { level in
        let height = rowHeight(level: level)
        let rows = Int(180 / height)
        let perCircle = 360 / height
        return (0 ..< rows).map { row in
            let bottom = -90 + Double(row) * height
            let top = bottom + height
            let nearEquator = bottom >= 0 ? bottom : (top <= 0 ? top : 0)
            let cosine = Geodesy.sinCos(degrees: nearEquator).cos
            // The small slack keeps counts that are whole numbers in exact arithmetic (cos 60°)
            // from depending on the last bit of the platform's cosine.
            return UInt32(max(1, (perCircle * cosine - 1e-9).rounded(.up)))
        }
    }
}
