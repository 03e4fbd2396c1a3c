import Testing
import GEOS
import ScavengerTestSupport

@Suite("Containment and prepared predicates")
struct PredicateTests {
    @Test(arguments: [
        (2.0, 2.0, true),     // inside the first square
        (5.0, 5.0, false),    // inside the hole: outside the region
        (4.5, 5.5, false),    // inside the hole
        (25.0, 5.0, true),    // inside the second square
        (15.0, 5.0, false),   // between the squares
        (-1.0, 5.0, false),   // left of everything
    ])
    func pointInMultiPolygonWithHole(x: Double, y: Double, inside: Bool) throws {
        let region = try Geometry(geoJSON: GeoJSONFixtures.multiPolygonWithHole)
        let point = try Geometry.point(x: x, y: y)
        #expect(try region.contains(point) == inside)
        #expect(try region.covers(point) == inside)
        #expect(try region.intersects(point) == inside)
        let prepared = try PreparedGeometry(region)
        #expect(try prepared.containsPoint(x: x, y: y) == inside)
        #expect(try prepared.coversPoint(x: x, y: y) == inside)
        #expect(try prepared.contains(point) == inside)
    }

    @Test func boundaryIsCoveredButNotContained() throws {
        let region = try Geometry(geoJSON: GeoJSONFixtures.multiPolygonWithHole)
        let prepared = try PreparedGeometry(region)
        for (x, y) in [(0.0, 5.0), (4.0, 5.0), (20.0, 0.0)] {
            #expect(try !prepared.containsPoint(x: x, y: y))
            #expect(try prepared.coversPoint(x: x, y: y))
            #expect(try !region.contains(try Geometry.point(x: x, y: y)))
            #expect(try region.covers(try Geometry.point(x: x, y: y)))
        }
    }

    @Test func preparedAgreesWithPlainOverManyPoints() throws {
        let region = try Geometry(geoJSON: GeoJSONFixtures.multiPolygonWithHole)
        let prepared = try PreparedGeometry(region)
        var inside = 0, outside = 0
        for i in 0...136 {
            for j in 0...56 {
                let x = -2 + Double(i) * 0.25 + 0.01, y = -2 + Double(j) * 0.25 + 0.01
                let point = try Geometry.point(x: x, y: y)
                let plain = try region.contains(point)
                #expect(try prepared.containsPoint(x: x, y: y) == plain, "at \(x) \(y)")
                #expect(try prepared.contains(point) == plain, "at \(x) \(y)")
                #expect(try prepared.covers(point) == region.covers(point), "at \(x) \(y)")
                #expect(try prepared.intersects(point) == region.intersects(point), "at \(x) \(y)")
                if plain { inside += 1 } else { outside += 1 }
            }
        }
        #expect(inside > 1000)
        #expect(outside > 1000)
    }

    @Test func preparedKeepsBaseAlive() throws {
        var prepared: PreparedGeometry?
        do {
            let temporary = try Geometry.rectangle(minX: 0, minY: 0, maxX: 1, maxY: 1)
            prepared = try PreparedGeometry(temporary)
        }
        // The only reference to the base is now the prepared geometry's.
        let survivor = try #require(prepared)
        #expect(try survivor.containsPoint(x: 0.5, y: 0.5))
        #expect(try survivor.base.area == 1)
    }

    @Test func preparedPolygonPredicates() throws {
        let prepared = try PreparedGeometry(try Geometry(geoJSON: GeoJSONFixtures.multiPolygonWithHole))
        #expect(try prepared.contains(try Geometry.rectangle(minX: 1, minY: 1, maxX: 3, maxY: 3)))
        #expect(try !prepared.contains(try Geometry.rectangle(minX: 3, minY: 3, maxX: 5, maxY: 5)))  // overlaps hole
        #expect(try prepared.intersects(try Geometry.rectangle(minX: 3, minY: 3, maxX: 5, maxY: 5)))
        #expect(try !prepared.intersects(try Geometry.rectangle(minX: 12, minY: 1, maxX: 18, maxY: 3)))
        #expect(try prepared.covers(try Geometry.rectangle(minX: 20, minY: 0, maxX: 30, maxY: 10)))
        #expect(throws: GEOSError.self) { _ = try prepared.containsPoint(x: .nan, y: 1) }
    }
}
