import GEOS
import ScavengerGeography
import ScavengerTestSupport
import Testing

@Suite("Named regions")
struct RegionIndexTests {
    @Test("names", arguments: [
        ("berlin", true), ("a", true), ("mitte-2", true), (String(repeating: "x", count: 64), true),
        ("", false), ("Berlin", false), ("new york", false), ("über", false), ("a_b", false),
        (String(repeating: "x", count: 65), false),
    ])
    func names(name: String, valid: Bool) {
        #expect(((try? RegionDefinition.parse(name: name, geoJSON: GeoJSONFixtures.square(west: 0, south: 0, size: 1))) != nil) == valid)
    }

    @Test("each accepted form", arguments: [
        GeoJSONFixtures.square(west: 13, south: 52, size: 1),
        #"{"type":"Feature","properties":{},"geometry":\#(GeoJSONFixtures.square(west: 13, south: 52, size: 1))}"#,
        #"{"type":"FeatureCollection","features":[{"type":"Feature","properties":null,"geometry":\#(GeoJSONFixtures.square(west: 13, south: 52, size: 1))}]}"#,
        #"{"type":"MultiPolygon","coordinates":[[[[13,52],[14,52],[14,53],[13,53],[13,52]]]]}"#,
    ])
    func accepted(geoJSON: String) throws {
        let region = try RegionDefinition.parse(name: "r", geoJSON: geoJSON)
        #expect(region.envelope == Envelope(minX: 13, minY: 52, maxX: 14, maxY: 53))
        #expect(abs(region.area - 1) < 1e-9)
    }

    @Test("each rejected form", arguments: [
        "not json",
        #"{"type":"Point","coordinates":[1,2]}"#,
        #"{"type":"LineString","coordinates":[[1,2],[3,4]]}"#,
        #"{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1]]]}"#,
        #"{"type":"Polygon","coordinates":[[[0,0],[1,1],[0,0]]]}"#,
        #"{"type":"Polygon","coordinates":[[[0,0],[2,2],[2,0],[0,2],[0,0]]]}"#,
        #"{"type":"Polygon","coordinates":[[[0,0],[200,0],[200,1],[0,1],[0,0]]]}"#,
        #"{"type":"FeatureCollection","features":[]}"#,
        #"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":\#(GeoJSONFixtures.square(west: 0, south: 0, size: 1))},{"type":"Feature","geometry":\#(GeoJSONFixtures.square(west: 2, south: 2, size: 1))}]}"#,
        #"{"type":"Feature","geometry":null}"#,
        #"{"type":"GeometryCollection","geometries":[]}"#,
    ])
    func rejected(geoJSON: String) {
        #expect(throws: RegionError.self) { try RegionDefinition.parse(name: "r", geoJSON: geoJSON) }
    }

    @Test("containment, holes, boundaries and the most specific of overlapping regions")
    func containment() throws {
        let withHole = #"{"type":"MultiPolygon","coordinates":[[[[0,0],[10,0],[10,10],[0,10],[0,0]],[[4,4],[6,4],[6,6],[4,6],[4,4]]],[[[20,20],[21,20],[21,21],[20,21],[20,20]]]]}"#
        let index = try RegionIndex([
            try RegionDefinition.parse(name: "big", geoJSON: withHole),
            try RegionDefinition.parse(name: "small", geoJSON: GeoJSONFixtures.square(west: 1, south: 1, size: 2)),
            try RegionDefinition.parse(name: "east", geoJSON: GeoJSONFixtures.square(west: 170, south: -10, size: 10)),
            try RegionDefinition.parse(name: "west", geoJSON: GeoJSONFixtures.square(west: -180, south: -10, size: 10)),
        ])
        #expect(index.names == ["big", "east", "small", "west"])
        #expect(index.region(lat: 8, lon: 8) == "big")
        #expect(index.region(lat: 5, lon: 5) == nil)  // in the hole
        #expect(index.region(lat: 20.5, lon: 20.5) == "big")  // second polygon
        #expect(index.region(lat: 2, lon: 2) == "small")  // overlap: the smaller wins
        #expect(index.region(lat: 0, lon: 5) == "big")  // on the boundary
        #expect(index.region(lat: -5, lon: 179.5) == "east")
        #expect(index.region(lat: -5, lon: -179.5) == "west")
        #expect(index.region(lat: 50, lon: 50) == nil)
        #expect(RegionIndex.empty.region(lat: 0, lon: 0) == nil)
    }

    @Test("an index is safe to use from many tasks at once")
    func concurrent() async throws {
        let index = try RegionIndex([try RegionDefinition.parse(name: "r", geoJSON: GeoJSONFixtures.square(west: 0, south: 0, size: 1))])
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0 ..< 8 {
                group.addTask {
                    for step in 0 ..< 300 {
                        let inside = (task + step) % 2 == 0
                        let found = index.region(lat: inside ? 0.5 : 1.5, lon: 0.5)
                        #expect(found == (inside ? "r" : nil))
                    }
                }
            }
            try await group.waitForAll()
        }
    }
}
