import Foundation

/// One cell of a `MAP` answer: a Web Mercator tile of zoom z + 2 with the live pins in it.
public struct MapCell: Codable, Sendable, Hashable {
    /// The mean position of its pins.
    public var lat: Double
    public var lon: Double
    /// How many live, visible pins it holds.
    public var count: Int
    /// Its extent: south, west, north, east.
    public var box: [Double]
    /// The pin, when `count` is 1.
    public var pin: Pin?
}

/// A `MAP` answer: the fullest cells, fullest first, and the pins in every cell the box touches.
public struct MapCells: Codable, Sendable, Hashable {
    public var cells: [MapCell]
    public var total: Int
}

extension ScavengerClient {
    /// `MAP`: the live pins in a box (west > east crosses the antimeridian) counted per map cell
    /// at `zoom` (0–22), the fullest `limit` cells (default 500, at most 2,000).
    public func map(
        south: Double, west: Double, north: Double, east: Double, zoom: Int, kind: PinKind? = nil, limit: Int? = nil
    ) async throws -> MapCells {
        var line = Line("MAP")
        line.add(south)
        line.add(west)
        line.add(north)
        line.add(east)
        line.option("ZOOM", zoom)
        line.option("KIND", kind?.rawValue)
        line.option("LIMIT", limit)
        return try await read(line, as: MapCells.self)
    }
}
