import Testing
import GEOS
import ScavengerGeography
import ScavengerTestSupport

@Suite("Region GeoJSON")
struct RegionGeoJSONTests {
    struct Accepted: Sendable, CustomTestStringConvertible {
        let name: String
        let json: String
        let kind: GeometryKind
        let polygons: Int
        let area: Double
        var testDescription: String { name }
    }

    static let accepted: [Accepted] = [
        Accepted(name: "bare Polygon", json: GeoJSONFixtures.square, kind: .polygon, polygons: 1, area: 100),
        Accepted(name: "MultiPolygon with a hole", json: GeoJSONFixtures.multiPolygonWithHole,
                 kind: .multiPolygon, polygons: 2, area: 196),
        Accepted(name: "Feature", json: GeoJSONFixtures.feature(GeoJSONFixtures.square), kind: .polygon, polygons: 1, area: 100),
        Accepted(name: "FeatureCollection of one",
                 json: GeoJSONFixtures.collection([GeoJSONFixtures.feature(GeoJSONFixtures.multiPolygonWithHole)]),
                 kind: .multiPolygon, polygons: 2, area: 196),
        Accepted(name: "positions with altitude",
                 json: GeoJSONFixtures.polygon("[[0,0,5],[10,0,5],[10,10,5],[0,10,5],[0,0,5]]"),
                 kind: .polygon, polygons: 1, area: 100),
        Accepted(name: "one-part MultiPolygon stays multi",
                 json: #"{"type":"MultiPolygon","coordinates":[[[[0,0],[10,0],[10,10],[0,10],[0,0]]]]}"#,
                 kind: .multiPolygon, polygons: 1, area: 100),
        Accepted(name: "extreme coordinates",
                 json: GeoJSONFixtures.polygon("[[-180,-90],[180,-90],[180,90],[-180,90],[-180,-90]]"),
                 kind: .polygon, polygons: 1, area: 360 * 180),
    ]

    @Test(arguments: accepted)
    func accepts(_ input: Accepted) throws {
        let region = try Geometry.region(geoJSON: input.json)
        #expect(region.kind == input.kind)
        #expect(region.polygonCount == input.polygons)
        #expect(try region.area == input.area)
        #expect(try region.isValid)
    }

    struct Rejected: Sendable, CustomTestStringConvertible {
        let name: String
        let json: String
        let kind: ExpectedKind
        let fragment: String
        var testDescription: String { name }
    }

    static let rejected: [Rejected] = [
        Rejected(name: "bad JSON", json: #"{"type": "Polygon", "#, kind: .parse, fragment: "not valid JSON"),
        Rejected(name: "not an object", json: "[1, 2]", kind: .parse, fragment: "object"),
        Rejected(name: "no type", json: #"{"coordinates": []}"#, kind: .parse, fragment: "type"),
        Rejected(name: "unknown type", json: #"{"type":"Circle","radius":3}"#, kind: .parse, fragment: "Circle"),
        Rejected(name: "Point", json: #"{"type":"Point","coordinates":[1,2]}"#,
                 kind: .unsupported, fragment: "Point"),
        Rejected(name: "LineString", json: #"{"type":"LineString","coordinates":[[1,2],[3,4]]}"#,
                 kind: .unsupported, fragment: "LineString"),
        Rejected(name: "GeometryCollection",
                 json: #"{"type":"GeometryCollection","geometries":[\#(GeoJSONFixtures.square)]}"#,
                 kind: .unsupported, fragment: "GeometryCollection"),
        Rejected(name: "FeatureCollection of 0", json: GeoJSONFixtures.collection([]),
                 kind: .unsupported, fragment: "found 0"),
        Rejected(name: "FeatureCollection of 2",
                 json: GeoJSONFixtures.collection([GeoJSONFixtures.feature(GeoJSONFixtures.square), GeoJSONFixtures.feature(GeoJSONFixtures.square)]),
                 kind: .unsupported, fragment: "found 2"),
        Rejected(name: "FeatureCollection holding a bare geometry", json: GeoJSONFixtures.collection([GeoJSONFixtures.square]),
                 kind: .parse, fragment: "not a Feature"),
        Rejected(name: "Feature with null geometry", json: #"{"type":"Feature","properties":{},"geometry":null}"#,
                 kind: .unsupported, fragment: "no geometry"),
        Rejected(name: "Feature with a Point", json: GeoJSONFixtures.feature(#"{"type":"Point","coordinates":[1,2]}"#),
                 kind: .unsupported, fragment: "Point"),
        Rejected(name: "non-closed ring", json: GeoJSONFixtures.polygon("[[0,0],[10,0],[10,10],[0,10]]"),
                 kind: .invalid, fragment: "not closed"),
        Rejected(name: "too few points", json: GeoJSONFixtures.polygon("[[0,0],[10,0],[0,0]]"),
                 kind: .invalid, fragment: "at least 4"),
        Rejected(name: "self-intersecting bow-tie", json: GeoJSONFixtures.polygon("[[0,0],[10,10],[10,0],[0,10],[0,0]]"),
                 kind: .invalid, fragment: "Self-intersection"),
        Rejected(name: "hole outside shell",
                 json: #"{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1],[0,0]],[[5,5],[6,5],[6,6],[5,6],[5,5]]]}"#,
                 kind: .invalid, fragment: "Hole lies outside shell"),
        Rejected(name: "overlapping MultiPolygon parts",
                 json: #"{"type":"MultiPolygon","coordinates":[[[[0,0],[2,0],[2,2],[0,2],[0,0]]],[[[1,1],[3,1],[3,3],[1,3],[1,1]]]]}"#,
                 kind: .invalid, fragment: "invalid polygon"),
        Rejected(name: "longitude out of range", json: GeoJSONFixtures.polygon("[[170,0],[200,0],[200,10],[170,10],[170,0]]"),
                 kind: .invalid, fragment: "Longitude 200"),
        Rejected(name: "latitude out of range", json: GeoJSONFixtures.polygon("[[0,80],[10,80],[10,95],[0,95],[0,80]]"),
                 kind: .invalid, fragment: "Latitude 95"),
        Rejected(name: "string coordinate", json: GeoJSONFixtures.polygon(#"[["0",0],[10,0],[10,10],[0,10],["0",0]]"#),
                 kind: .parse, fragment: "[longitude, latitude]"),
        Rejected(name: "boolean coordinate", json: GeoJSONFixtures.polygon("[[true,0],[10,0],[10,10],[0,10],[true,0]]"),
                 kind: .parse, fragment: "[longitude, latitude]"),
        Rejected(name: "one-number position", json: GeoJSONFixtures.polygon("[[0],[10,0],[10,10],[0,10],[0]]"),
                 kind: .parse, fragment: "[longitude, latitude]"),
        Rejected(name: "no rings", json: #"{"type":"Polygon","coordinates":[]}"#,
                 kind: .parse, fragment: "non-empty array of rings"),
        Rejected(name: "missing coordinates", json: #"{"type":"Polygon"}"#, kind: .parse, fragment: "coordinates"),
        Rejected(name: "empty MultiPolygon", json: #"{"type":"MultiPolygon","coordinates":[]}"#,
                 kind: .parse, fragment: "MultiPolygon"),
    ]

    @Test(arguments: rejected)
    func rejects(_ input: Rejected) {
        #expect {
            _ = try Geometry.region(geoJSON: input.json)
        } throws: { error in
            guard let error = error as? GEOSError else { return false }
            return input.kind.matches(error.kind) && error.message.contains(input.fragment)
                && error.operation == "read region GeoJSON"
                && !error.description.contains("\n") && !error.message.isEmpty
        }
    }

    @Test func invalidGeometryCarriesReason() throws {
        let error = try #require(throws: GEOSError.self) {
            _ = try Geometry.region(geoJSON: GeoJSONFixtures.polygon("[[0,0],[10,10],[10,0],[0,10],[0,0]]"))
        }
        guard case .invalidGeometry(let reason) = error.kind else {
            Issue.record("expected invalidGeometry, got \(error.kind)")
            return
        }
        #expect(reason == error.message)
        #expect(error.description == "read region GeoJSON: \(reason)")
    }

    @Test func longUnknownTypeIsTruncatedInMessage() throws {
        let name = String(repeating: "X", count: 500)
        let error = try #require(throws: GEOSError.self) {
            _ = try Geometry.region(geoJSON: #"{"type":"\#(name)"}"#)
        }
        #expect(error.message.count < 120)
    }
}
