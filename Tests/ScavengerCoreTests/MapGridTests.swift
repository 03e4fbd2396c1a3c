import Testing
import ScavengerCore
import ScavengerTestSupport

@Suite("MapGrid: Web Mercator cells for MAP")
struct MapGridTests {
    @Test("columns and rows of known places (zoom z is level z + 2)", arguments: [
        // lat, lon, level, x, y
        (0.0, 0.0, 2, UInt32(2), UInt32(2)),
        (0.0, -180.0, 2, 0, 2),
        (0.0, 180.0, 2, 3, 2),               // 180° is in the last column
        (90.0, 0.0, 3, 4, 0),                // a pole is drawn at Web Mercator's edge
        (-90.0, 0.0, 3, 4, 7),
        (85.0511287798, 10.0, 24, 8_854_641, 0),
        (48.8566, 2.3522, 14, 8_299, 5_636),  // Paris, as slippy-map tiles number it
    ])
    func columnsAndRows(lat: Double, lon: Double, level: Int, x: UInt32, y: UInt32) {
        #expect(MapGrid.column(longitude: lon, level: level) == x)
        #expect(MapGrid.row(latitude: lat, level: level) == y)
    }

    @Test("a tile's keys hold exactly the keys of the positions inside it, and a key names its tile")
    func tileKeys() {
        var generator = SplitMix64(seed: 7)
        for _ in 0 ..< 2_000 {
            let lat = generator.double(in: 0 ..< 1) * 170 - 85
            let lon = generator.double(in: 0 ..< 1) * 360 - 180
            let level = Int(generator.next() % 25)
            let tile = MapGrid.Tile(
                level: level, x: MapGrid.column(longitude: lon, level: level), y: MapGrid.row(latitude: lat, level: level))
            let key = MapGrid.key(lat: lat, lon: lon)
            let keys = tile.keys
            #expect(key >= keys.lower)
            if let upper = keys.upper { #expect(key < upper) }
            #expect(MapGrid.tile(ofKey: key, level: level) == tile, "tile(ofKey:) at level \(level)")
        }
        #expect(MapGrid.Tile(level: 0, x: 0, y: 0).keys.upper == nil)
        #expect(MapGrid.Tile(level: 1, x: 1, y: 1).keys.upper == nil)
        #expect(MapGrid.Tile(level: 1, x: 0, y: 1).keys.lower == 2 << 62)
        #expect(MapGrid.Tile(level: 1, x: 0, y: 1).keys.upper == 3 << 62)
    }

    @Test("a tile's box is its extent; children tile it in key order")
    func boxesAndChildren() {
        let tile = MapGrid.Tile(level: 2, x: 1, y: 1)
        let box = tile.box
        #expect(box.west == -90 && box.east == 0)
        #expect(abs(box.north - 66.51326) < 1e-4 && box.south == 0)
        let children = tile.children
        #expect(children.map(\.keys.lower) == children.map(\.keys.lower).sorted())
        #expect(children.first?.keys.lower == tile.keys.lower)
        #expect(children.last?.keys.upper == tile.keys.upper)
    }

    @Test("spans: one column range, two across the antimeridian, one when the two meet")
    func spans() {
        let paris = MapGrid.span(south: 48.8, west: 2.2, north: 48.9, east: 2.5, zoom: 10)
        #expect(paris.level == 12 && paris.columns.count == 1 && paris.cellCount >= 1)
        let fiji = MapGrid.span(south: -20, west: 170, north: -10, east: -170, zoom: 1)
        #expect(fiji.columns == [0 ... 0, 7 ... 7])
        #expect(fiji.overlaps(MapGrid.Tile(level: 3, x: 7, y: 4)))
        #expect(!fiji.overlaps(MapGrid.Tile(level: 3, x: 3, y: 4)))
        #expect(fiji.overlaps(MapGrid.Tile(level: 0, x: 0, y: 0)))
        let almostWorld = MapGrid.span(south: -10, west: 10, north: 10, east: 5, zoom: 0)
        #expect(almostWorld.columns == [0 ... 3])
        let world = MapGrid.span(south: -90, west: -180, north: 90, east: 180, zoom: 0)
        #expect(world.cellCount == 16)
    }

    @Test("requests are checked: the first problem is named", arguments: [
        (MapRequest(south: -91, west: 0, north: 1, east: 1, zoom: 3), "south must be a latitude"),
        (MapRequest(south: 0, west: 0, north: 90.5, east: 1, zoom: 3), "north must be a latitude"),
        (MapRequest(south: 0, west: -181, north: 1, east: 1, zoom: 3), "west must be a longitude"),
        (MapRequest(south: 0, west: 0, north: 1, east: .nan, zoom: 3), "east must be a longitude"),
        (MapRequest(south: 2, west: 0, north: 1, east: 1, zoom: 3), "south must not be north"),
        (MapRequest(south: 0, west: 0, north: 1, east: 1, zoom: 23), "ZOOM must be"),
        (MapRequest(south: 0, west: 0, north: 1, east: 1, zoom: -1), "ZOOM must be"),
        (MapRequest(south: 0, west: 0, north: 1, east: 1, zoom: 3, limit: 0), "LIMIT must be"),
        (MapRequest(south: 0, west: 0, north: 1, east: 1, zoom: 3, limit: 2_001), "LIMIT must be"),
        (MapRequest(south: -80, west: -180, north: 80, east: 180, zoom: 12), "the box covers"),
    ])
    func problems(request: MapRequest, problem: String) {
        #expect(request.problem?.hasPrefix(problem) == true, "\(request.problem ?? "nil")")
    }

    @Test("valid requests have no problem", arguments: [
        MapRequest(south: -90, west: -180, north: 90, east: 180, zoom: 5),
        MapRequest(south: 48.8, west: 2.2, north: 48.9, east: 2.5, zoom: 16, limit: 2_000),
        MapRequest(south: 0, west: 179.999, north: 0.001, east: -179.999, zoom: 22, limit: 1),
    ])
    func valid(request: MapRequest) {
        #expect(request.problem == nil)
    }
}
