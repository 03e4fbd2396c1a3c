import Testing
import GEOS
import ScavengerTestSupport

@Suite("STRtree")
struct STRTreeTests {
    struct Cell: Hashable, Sendable {
        let x: Int
        let y: Int
    }

    /// 10 × 10 unit cells, with 0.1 gaps so each point falls in at most one cell.
    static func grid() -> [(Envelope, Cell)] {
        (0..<10).flatMap { x in
            (0..<10).map { y in
                (Envelope(minX: Double(x), minY: Double(y), maxX: Double(x) + 0.9, maxY: Double(y) + 0.9), Cell(x: x, y: y))
            }
        }
    }

    @Test func pointQueryFindsOneCell() throws {
        let tree = try STRTree(envelopes: Self.grid())
        #expect(tree.count == 100)
        #expect(try tree.query(x: 3.5, y: 4.5) == [Cell(x: 3, y: 4)])
        #expect(try tree.query(x: 3.95, y: 4.5).isEmpty)
        #expect(try tree.query(x: 50, y: 50).isEmpty)
    }

    @Test func envelopeQueryMatchesBruteForce() throws {
        let grid = Self.grid()
        let tree = try STRTree(envelopes: grid, nodeCapacity: 4)
        var random = SplitMix64(seed: 0x9E37_79B9_7F4A_7C15)
        func next() -> Double { random.double(in: -1 ..< 11) }
        var nonEmpty = 0
        for _ in 0..<300 {
            let (a, b, c, d) = (next(), next(), next(), next())
            let box = Envelope(minX: min(a, b), minY: min(c, d), maxX: max(a, b), maxY: max(c, d))
            let expected = grid.filter { cell, _ in
                cell.minX <= box.maxX && cell.maxX >= box.minX && cell.minY <= box.maxY && cell.maxY >= box.minY
            }.map(\.1)
            let found = try tree.query(box)
            #expect(found == expected, "query \(box)")  // also checks entry order
            if !found.isEmpty { nonEmpty += 1 }
        }
        #expect(nonEmpty > 100)
    }

    @Test func buildsFromGeometriesAndSkipsEmpty() throws {
        let entries: [(Geometry, String)] = [
            (try Geometry(geoJSON: GeoJSONFixtures.square), "square"),
            (try Geometry(wkt: "POLYGON EMPTY"), "empty"),
            (try Geometry.point(x: 25, y: 5), "point"),
            (try Geometry.rectangle(minX: 20, minY: 0, maxX: 30, maxY: 10), "east"),
        ]
        let tree = try STRTree(entries)
        #expect(tree.count == 3)
        #expect(try tree.query(x: 5, y: 5) == ["square"])
        #expect(try tree.query(x: 25, y: 5) == ["point", "east"])
        #expect(try tree.query(Envelope(minX: -100, minY: -100, maxX: 100, maxY: 100)) == ["square", "point", "east"])
        // Degenerate query boxes (a vertical segment) still work.
        #expect(try tree.query(Envelope(minX: 25, minY: -5, maxX: 25, maxY: 1)) == ["east"])
    }

    @Test func antimeridianQuerySplits() throws {
        let tree = try STRTree(envelopes: [
            (Envelope(minX: 175, minY: 0, maxX: 179, maxY: 5), "east of dateline"),
            (Envelope(minX: -179, minY: 0, maxX: -175, maxY: 5), "west of dateline"),
            (Envelope(minX: -5, minY: 0, maxX: 5, maxY: 5), "greenwich"),
            (Envelope(minX: 170, minY: 10, maxX: -170, maxY: 12), "crossing"),
        ])
        let across = try tree.query(Envelope(minX: 170, minY: -10, maxX: -170, maxY: 9))
        #expect(across == ["east of dateline", "west of dateline"])
        #expect(try tree.query(x: 0, y: 2) == ["greenwich"])
        #expect(try tree.query(x: 179.5, y: 11) == ["crossing"])
        #expect(try tree.query(x: -179.5, y: 11) == ["crossing"])
        #expect(try tree.query(x: 0, y: 11).isEmpty)
    }

    @Test func emptyTreeAndOddInputs() throws {
        let empty = try STRTree<Int>(envelopes: [])
        #expect(try empty.query(x: 0, y: 0).isEmpty)
        let tiny = try STRTree(envelopes: [(Envelope(minX: 0, minY: 0, maxX: 1, maxY: 1), 7)], nodeCapacity: 0)
        #expect(tiny.count == 1)
        #expect(try tiny.query(x: 0.5, y: 0.5) == [7])
    }

    @Test(arguments: [
        Envelope(minX: .nan, minY: 0, maxX: 1, maxY: 1),
        Envelope(minX: 0, minY: 0, maxX: .infinity, maxY: 1),
        Envelope(minX: 0, minY: 2, maxX: 1, maxY: 1),
    ])
    func rejectsMalformedBoxes(_ box: Envelope) throws {
        #expect(throws: GEOSError.self) { _ = try STRTree(envelopes: [(box, 1)]) }
        let tree = try STRTree(envelopes: [(Envelope(minX: 0, minY: 0, maxX: 1, maxY: 1), 1)])
        let error = try #require(throws: GEOSError.self) { _ = try tree.query(box) }
        #expect(error.message.contains("query box must be finite"))
    }

    @Test func sharedAcrossTasks() async throws {
        let tree = try STRTree(envelopes: Self.grid())
        let mismatches = await withTaskGroup(of: Int.self) { group in
            for task in 0..<8 {
                group.addTask {
                    var bad = 0
                    for i in 0..<200 {
                        let x = (task + i) % 10, y = (task * 3 + i) % 10
                        let found = (try? tree.query(x: Double(x) + 0.5, y: Double(y) + 0.5)) ?? []
                        if found != [Cell(x: x, y: y)] { bad += 1 }
                    }
                    return bad
                }
            }
            return await group.reduce(0, +)
        }
        #expect(mismatches == 0)
    }
}
