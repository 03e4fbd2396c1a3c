/// An axis-aligned bounding box.
public struct Envelope: Sendable, Hashable, CustomStringConvertible {
    /// Western / left bound.
    public var minX: Double
    /// Southern / lower bound.
    public var minY: Double
    /// Eastern / right bound.
    public var maxX: Double
    /// Northern / upper bound.
    public var maxY: Double

    /// Creates a box. For `STRTree.query`, `minX > maxX` means the box crosses the antimeridian.
    public init(minX: Double, minY: Double, maxX: Double, maxY: Double) {
        self.minX = minX
        self.minY = minY
        self.maxX = maxX
        self.maxY = maxY
    }

    /// Whether all four bounds are finite numbers.
    public var isFinite: Bool { minX.isFinite && minY.isFinite && maxX.isFinite && maxY.isFinite }

    /// "Envelope(minX minY, maxX maxY)".
    public var description: String { "Envelope(\(minX) \(minY), \(maxX) \(maxY))" }
}

/// A planar x/y (longitude/latitude) position.
public struct Coordinate: Sendable, Hashable {
    /// Longitude or planar x.
    public var x: Double
    /// Latitude or planar y.
    public var y: Double

    /// Creates a position.
    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }
}
