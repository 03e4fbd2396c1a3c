import Testing
import GEOS
import ScavengerTestSupport

@Suite("WKT and basic geometry")
struct WKTTests {
    @Test func parsesPolygon() throws {
        let square = try Geometry(wkt: "POLYGON((0 0, 10 0, 10 10, 0 10, 0 0))")
        #expect(square.kind == .polygon)
        #expect(square.typeName == "Polygon")
        #expect(try square.isValid)
        #expect(try square.validityReason == "Valid Geometry")
        #expect(!square.isEmpty)
        #expect(try square.area == 100)
        #expect(square.envelope == Envelope(minX: 0, minY: 0, maxX: 10, maxY: 10))
        #expect(square.polygonCount == 1)
        #expect(try square.wkt == "POLYGON ((0 0, 10 0, 10 10, 0 10, 0 0))")
    }

    @Test func roundTripsThroughWKT() throws {
        let original = try Geometry(wkt: "MULTIPOLYGON(((0 0, 1 0, 1 1, 0 0)), ((5 5, 6 5, 6 6, 5 5)))")
        let copy = try Geometry(wkt: try original.wkt)
        #expect(copy.kind == .multiPolygon)
        #expect(copy.polygonCount == 2)
        #expect(copy.partCount == 2)
        #expect(try copy.area == original.area)
    }

    @Test(arguments: [
        ("", "end of stream"),
        ("POLYGON((0 0, 1 1", "end of stream"),
        ("NOTATYPE(1 2)", "NOTATYPE"),
        ("POINT(1)", "Expected number"),
        ("POLYGON((0 0, 1 0, 1 1, 0 0.5))", "closed"),
        ("LINESTRING(0 0)", "point array"),
        ("POINT(1 2)\u{0}", "NUL"),
    ])
    func rejectsBadWKT(text: String, fragment: String) {
        #expect {
            _ = try Geometry(wkt: text)
        } throws: { error in
            guard let error = error as? GEOSError else { return false }
            return error.kind == .parse && error.operation == "read WKT" && error.message.contains(fragment)
                && !error.description.contains("\n")
        }
    }

    @Test func bowTieIsInvalidWithReason() throws {
        let bowTie = try Geometry(wkt: "POLYGON((0 0, 1 1, 1 0, 0 1, 0 0))")
        #expect(try !bowTie.isValid)
        #expect(try bowTie.validityReason.hasPrefix("Self-intersection"))
    }

    @Test func emptyGeometryHasNoEnvelope() throws {
        let empty = try Geometry(wkt: "POLYGON EMPTY")
        #expect(empty.isEmpty)
        #expect(empty.envelope == nil)
        #expect(empty.polygonCount == 0)
        #expect(try empty.area == 0)
    }

    @Test func pointAndRectangle() throws {
        let point = try Geometry.point(x: 3, y: -4)
        #expect(point.kind == .point)
        #expect(point.envelope == Envelope(minX: 3, minY: -4, maxX: 3, maxY: -4))
        let box = try Geometry.rectangle(minX: -1, minY: -2, maxX: 3, maxY: 4)
        #expect(box.kind == .polygon)
        #expect(try box.area == 24)
        #expect(box.envelope == Envelope(minX: -1, minY: -2, maxX: 3, maxY: 4))
        #expect(try box.contains(point) == false)
        #expect(try box.contains(try Geometry.point(x: 0, y: 0)))
    }

    @Test(arguments: [
        (0.0, 0.0, 0.0, 1.0),      // zero width
        (0.0, 1.0, 1.0, 1.0),      // zero height
        (2.0, 0.0, 1.0, 1.0),      // min > max
        (0.0, 0.0, Double.infinity, 1.0),
        (Double.nan, 0.0, 1.0, 1.0),
    ])
    func rejectsBadRectangles(minX: Double, minY: Double, maxX: Double, maxY: Double) {
        #expect {
            _ = try Geometry.rectangle(minX: minX, minY: minY, maxX: maxX, maxY: maxY)
        } throws: { error in
            guard let error = error as? GEOSError else { return false }
            return ExpectedKind.invalid.matches(error.kind)
        }
    }

    @Test func rejectsNonFinitePoint() {
        #expect(throws: GEOSError.self) { _ = try Geometry.point(x: .nan, y: 0) }
    }

    @Test func polygonFromCoordinates() throws {
        func ring(_ values: [(Double, Double)]) -> [Coordinate] { values.map { Coordinate(x: $0.0, y: $0.1) } }
        let polygon = try Geometry.polygon(
            exterior: ring([(0, 0), (10, 0), (10, 10), (0, 10), (0, 0)]),
            holes: [ring([(2, 2), (4, 2), (4, 4), (2, 4), (2, 2)])])
        #expect(try polygon.area == 96)
        #expect(try polygon.isValid)
        #expect(try !polygon.contains(try Geometry.point(x: 3, y: 3)))

        #expect {
            _ = try Geometry.polygon(exterior: ring([(0, 0), (1, 0), (1, 1), (0, 1)]))
        } throws: { error in
            (error as? GEOSError)?.message.contains("not closed") == true
        }
        #expect {
            _ = try Geometry.polygon(exterior: ring([(0, 0), (1, 0), (0, 0)]))
        } throws: { error in
            (error as? GEOSError)?.message.contains("at least 4") == true
        }
    }

    @Test func overlayOperations() throws {
        let a = try Geometry.rectangle(minX: 0, minY: 0, maxX: 10, maxY: 10)
        let b = try Geometry.rectangle(minX: 5, minY: 0, maxX: 15, maxY: 10)
        let far = try Geometry.rectangle(minX: 50, minY: 50, maxX: 60, maxY: 60)
        #expect(try a.intersects(b))
        #expect(try !a.intersects(far))
        #expect(try a.intersection(b).area == 50)
        #expect(try a.union(b).area == 150)
        #expect(try a.intersection(far).isEmpty)
        #expect(try a.covers(try Geometry.point(x: 0, y: 5)))
        #expect(try !a.contains(try Geometry.point(x: 0, y: 5)))

        let disc = try Geometry.point(x: 0, y: 0).buffer(distance: 1, quadrantSegments: 64)
        #expect(abs(try disc.area - Double.pi) < 0.001)
        #expect(disc.envelope == Envelope(minX: -1, minY: -1, maxX: 1, maxY: 1))
        #expect(throws: GEOSError.self) { _ = try a.buffer(distance: .infinity) }
    }

    @Test func readsGenericGeoJSON() throws {
        let point = try Geometry(geoJSON: #"{"type":"Point","coordinates":[1,2]}"#)
        #expect(point.kind == .point)
        #expect(throws: GEOSError.self) { _ = try Geometry(geoJSON: "{") }
    }
}
