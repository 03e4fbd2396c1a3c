import GEOS

/// Shared shapes for the GEOS and region tests.
public enum GeoJSONFixtures {
    /// Square 0..10 with a 4..6 hole, plus square 20..30 × 0..10. Area 196.
    public static let multiPolygonWithHole = """
    {"type":"MultiPolygon","coordinates":[
      [[[0,0],[10,0],[10,10],[0,10],[0,0]],[[4,4],[6,4],[6,6],[4,6],[4,4]]],
      [[[20,0],[30,0],[30,10],[20,10],[20,0]]]
    ]}
    """

    /// Square 0..10. Area 100.
    public static let square = #"{"type":"Polygon","coordinates":[[[0,0],[10,0],[10,10],[0,10],[0,0]]]}"#

    /// The square `[west, west + size] × [south, south + size]` (longitude × latitude) as a
    /// GeoJSON Polygon.
    public static func square(west: Double, south: Double, size: Double) -> String {
        let ring = [[west, south], [west + size, south], [west + size, south + size], [west, south + size], [west, south]]
        return #"{"type":"Polygon","coordinates":[\#(ring)]}"#
    }

    public static func feature(_ geometry: String) -> String {
        #"{"type":"Feature","properties":{"name":"zone"},"geometry":"# + geometry + "}"
    }

    public static func collection(_ features: [String]) -> String {
        #"{"type":"FeatureCollection","features":["# + features.joined(separator: ",") + "]}"
    }

    public static func polygon(_ ring: String) -> String {
        #"{"type":"Polygon","coordinates":["# + ring + "]}"
    }
}

/// Expected category of a `GEOSError`.
public enum ExpectedKind: String, Sendable {
    case parse, invalid, unsupported, failed

    public func matches(_ kind: GEOSError.Kind) -> Bool {
        switch (self, kind) {
        case (.parse, .parse), (.invalid, .invalidGeometry), (.unsupported, .unsupportedGeometry),
             (.failed, .operationFailed):
            return true
        default:
            return false
        }
    }
}
