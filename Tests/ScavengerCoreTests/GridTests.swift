import Testing
@testable import ScavengerCore
import ScavengerTestSupport

@Suite("Grid")
struct GridTests {
    @Test("shape of the levels")
    func shape() {
        #expect(Grid.rowHeight(level: 0) == 1.0 / 256)
        #expect(Grid.rowHeight(level: 5) == 4)
        #expect(Grid.rowCount(level: 0) == 46080)
        #expect(Grid.rowCount(level: 5) == 45)
        for level in Grid.levels {
            let rows = Grid.rowCount(level: level)
            let equator = Grid.row(lat: 0, level: level)
            #expect(Grid.columnCount(level: level, row: equator) == Int(360 / Grid.rowHeight(level: level)))
            for row in [0, 1, rows / 3, rows - 2, rows - 1] {
                #expect(Grid.columnCount(level: level, row: row) >= 1)
                #expect(Grid.columnCount(level: level, row: row) == Grid.columnCount(level: level, row: rows - 1 - row))
            }
        }
        // A level-0 cell is about 435 m high and at most that wide.
        let height = Geodesy.distance(lat1: 45, lon1: 0, lat2: 45 + Grid.rowHeight(level: 0), lon2: 0)
        #expect(abs(height - 434.4) < 1)
        let cell = Grid.cell(lat: 45.1, lon: 7.3, level: 0)
        let bounds = Grid.bounds(of: cell)
        let width = Geodesy.distance(lat1: bounds.minLat, lon1: bounds.minLon, lat2: bounds.minLat, lon2: bounds.maxLon)
        #expect(width <= height && width > 0.9 * height)
        // Polar rows have few columns.
        #expect(Grid.columnCount(level: 0, row: Grid.rowCount(level: 0) - 1) < 10)
        #expect(Grid.columnCount(level: 5, row: 0) < 10)
    }

    @Test("longitudes 180 and -180 share a cell", arguments: [-90.0, -89.999, -45, 0, 10, 60, 89.99, 90])
    func antimeridian(lat: Double) {
        for level in Grid.levels {
            let east = Grid.cell(lat: lat, lon: 180, level: level)
            #expect(east == Grid.cell(lat: lat, lon: -180, level: level))
            #expect(east.column == 0)
            let almost = Grid.cell(lat: lat, lon: 179.999_999, level: level)
            #expect(almost.column == Grid.columnCount(level: level, row: almost.row) - 1 || Grid.columnCount(level: level, row: almost.row) == 1)
        }
    }

    @Test("cells pack into a non-negative bigint and unpack again")
    func packing() {
        var random = SplitMix64(seed: 11)
        for _ in 0 ..< 2000 {
            let lat = random.double(in: -90 ... 90)
            let lon = random.double(in: -180 ... 180)
            for level in Grid.levels {
                let cell = Grid.cell(lat: lat, lon: lon, level: level)
                #expect(cell.level == level)
                #expect(cell.int64Value >= 0 && cell.rawValue < 1 << 63)
                #expect(CellKey(rawValue: cell.rawValue) == cell)
                #expect(CellKey(int64Value: cell.int64Value) == cell)
                let bounds = Grid.bounds(of: cell)
                #expect(lat >= bounds.minLat && lat <= bounds.maxLat)
                #expect(lon >= bounds.minLon - 1e-9 && lon <= bounds.maxLon + 1e-9)
            }
        }
        #expect(Grid.cell(lat: 90, lon: 0, level: 0).row == Grid.rowCount(level: 0) - 1)
        #expect(Grid.cell(lat: -90, lon: 0, level: 0).row == 0)
        #expect(CellKey(rawValue: 7 << 48) == nil)
        #expect(CellKey(rawValue: 46080 << 24) == nil)
        #expect(CellKey(int64Value: -1) == nil)
    }

    static let centres: [(Double, Double)] = [
        (0, 179.999), (0, -180), (10, 180), (89.9999, 0), (90, 0), (-90, 45), (-89.99, 170),
        (48.8566, 2.3522), (-33.86, 151.21), (0, 0), (-60, -179.9995), (70, 179.9),
    ]
    static let radii: [Double] = [1, 10, 100, 1000, 10_000, 50_000]

    @Test("a cover holds every point of the circle", arguments: centres.indices)
    func coverIsComplete(centreIndex: Int) {
        let (lat, lon) = Self.centres[centreIndex]
        var random = SplitMix64(seed: UInt64(centreIndex) + 100)
        for radius in Self.radii {
            for level in Grid.levels {
                let cells = Grid.cover(lat: lat, lon: lon, radius: radius, level: level)
                #expect(Set(cells).count == cells.count, "duplicate cells")
                #expect(cells.allSatisfy { $0.level == level })
                let covered = Set(cells)
                #expect(covered.contains(Grid.cell(lat: lat, lon: lon, level: level)))
                for sample in 0 ..< 300 {
                    // A third on the circle itself, the rest inside.
                    let distance = sample % 3 == 0 ? radius : radius * random.double(in: 0 ... 1).squareRoot()
                    let point = Geodesy.destination(lat: lat, lon: lon, bearing: random.double(in: 0 ..< 360), distance: distance)
                    let cell = Grid.cell(lat: point.lat, lon: point.lon, level: level)
                    #expect(covered.contains(cell), "(\(lat), \(lon)) r=\(radius) L\(level): point \(point) in \(cell) not covered")
                }
            }
        }
    }

    @Test("random circles: covers hold their points")
    func randomCovers() {
        var random = SplitMix64(seed: 2024)
        for _ in 0 ..< 300 {
            let lat = random.next() % 4 == 0 ? random.double(in: 89 ... 90) * (random.next() % 2 == 0 ? 1 : -1) : random.double(in: -90 ... 90)
            let lon = random.next() % 4 == 0 ? 180 - random.double(in: 0 ... 0.5) : random.double(in: -180 ... 180)
            let radius = random.logUniform(1 ... 50_000)
            let (level, cells) = Grid.cover(lat: lat, lon: lon, radius: radius)
            #expect(cells.count <= Grid.defaultMaximumCells || level == Grid.levels.upperBound)
            let covered = Set(cells)
            for _ in 0 ..< 50 {
                let point = Geodesy.destination(lat: lat, lon: lon, bearing: random.double(in: 0 ..< 360), distance: radius * random.double(in: 0 ... 1))
                #expect(covered.contains(Grid.cell(lat: point.lat, lon: point.lon, level: level)))
            }
        }
    }

    @Test("a cap around a pole takes its polar row whole")
    func polarRows() {
        for level in Grid.levels {
            let top = Grid.rowCount(level: level) - 1
            let cells = Set(Grid.cover(lat: 90, lon: 0, radius: 1, level: level))
            #expect(cells.count == Grid.columnCount(level: level, row: top))
            #expect(cells.allSatisfy { $0.row == top })
            let south = Set(Grid.cover(lat: -89.9999, lon: 45, radius: 100, level: level))
            #expect(south.count == Grid.columnCount(level: level, row: 0))
        }
    }

    @Test("a small cap near the pole does not take a whole row")
    func nearPoleIsNarrow() {
        // 1 km around a point 2 km from the pole, at level 0 (rows of about 435 m).
        let cells = Grid.cover(lat: 90 - 2000 / (Geodesy.earthRadius * .pi / 180), lon: 30, radius: 1000, level: 0)
        for row in Set(cells.map(\.row)) {
            #expect(cells.filter { $0.row == row }.count < Grid.columnCount(level: 0, row: row))
        }
    }

    @Test("a kilometre at mid-latitudes takes a handful of cells", arguments: [-60.0, -45, -10, 0, 30, 45, 52.5, 60])
    func coverSizes(lat: Double) {
        let (level, cells) = Grid.cover(lat: lat, lon: 13.4, radius: 1000)
        #expect(level <= 1)
        #expect(cells.count <= Grid.defaultMaximumCells)
        let finest = Grid.cover(lat: lat, lon: 13.4, radius: 1000, level: 0)
        #expect(finest.count <= 49)
        #expect(Grid.cover(lat: lat, lon: 13.4, radius: 1000, level: 1).count <= 12)
        #expect(Grid.cover(lat: lat, lon: 13.4, radius: 1, level: 0).count <= 4)
        #expect(Grid.cover(lat: lat, lon: 13.4, radius: 50_000).cells.count <= Grid.defaultMaximumCells)
    }

    @Test("coarser levels for larger radii")
    func levelChoice() {
        var previous = 0
        for radius in [1.0, 10, 100, 300, 1000, 3000, 10_000, 30_000, 50_000, 200_000, 1_000_000, 20_000_000] {
            let level = Grid.level(forRadius: radius, atLatitude: 40)
            #expect(level >= previous)
            previous = level
        }
        #expect(Grid.level(forRadius: 1, atLatitude: 40) == 0)
        #expect(Grid.level(forRadius: 20_000_000, atLatitude: 40) == 5)
        // Half the planet: the whole coarsest level.
        let everything = Grid.cover(lat: 0, lon: 0, radius: 20_100_000)
        #expect(everything.cells.count == (0 ..< 45).reduce(0) { $0 + Grid.columnCount(level: 5, row: $1) })
    }

    @Test("a cover across the antimeridian wraps its columns")
    func wrapping() {
        let cells = Grid.cover(lat: 0, lon: 180, radius: 1000, level: 0)
        let columns = Set(cells.map(\.column))
        #expect(columns.contains(0))
        #expect(columns.contains(Grid.columnCount(level: 0, row: cells[0].row) - 1))
        #expect(cells.count <= 49)
    }
}
