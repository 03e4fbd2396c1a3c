import Foundation
import GEOS

extension Geometry {
    /// Reads a region boundary from GeoJSON and checks it thoroughly.
    ///
    /// Accepts a Polygon or MultiPolygon, bare, as a Feature, or as a FeatureCollection of exactly
    /// one Feature. Positions must be `[lon, lat]` (an optional third number is ignored) with
    /// lon in [-180, 180] and lat in [-90, 90]; rings must be closed with at least 4 positions;
    /// the result must be valid. A region crossing the antimeridian must be split into a MultiPolygon.
    public static func region(geoJSON: String) throws(GEOSError) -> Geometry {
        let (polygons, multi) = try RegionGeoJSON.polygons(from: geoJSON)
        let operation = RegionGeoJSON.operation
        let geometry = multi
            ? try Geometry.multiPolygon(polygons, operation: operation)
            : try Geometry.polygon(exterior: polygons[0][0], holes: Array(polygons[0].dropFirst()), operation: operation)
        guard try geometry.isValid else {
            let reason = "invalid polygon: \(try geometry.validityReason)"
            throw GEOSError(.invalidGeometry(reason: reason), operation: operation, message: reason)
        }
        return geometry
    }
}

/// Unwraps and checks region GeoJSON into polygons of rings of coordinates.
enum RegionGeoJSON {
    static let operation = "read region GeoJSON"

    /// The polygons (each: exterior ring then holes) of a region document, and whether it was a MultiPolygon.
    static func polygons(from text: String) throws(GEOSError) -> (polygons: [[[Coordinate]]], multi: Bool) {
        let root: JSONValue
        do {
            root = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
        } catch {
            throw fail(.parse, "GeoJSON is not valid JSON")
        }
        let geometry = try unwrap(root)
        guard case .object(let fields) = geometry, case .string(let type)? = fields["type"] else {
            throw fail(.parse, "GeoJSON geometry must be an object with a \"type\"")
        }
        guard type == "Polygon" || type == "MultiPolygon" else {
            throw fail(.unsupportedGeometry, "\(quoted(type)) is not a region: expected Polygon or MultiPolygon")
        }
        guard let coordinates = fields["coordinates"] else {
            throw fail(.parse, "\(type) has no \"coordinates\"")
        }
        if type == "Polygon" {
            return ([try polygon(coordinates, label: "")], false)
        }
        guard case .array(let parts) = coordinates, !parts.isEmpty else {
            throw fail(.parse, "MultiPolygon coordinates must be a non-empty array of polygons")
        }
        var result: [[[Coordinate]]] = []
        for (index, part) in parts.enumerated() {
            result.append(try polygon(part, label: "polygon \(index + 1) "))
        }
        return (result, true)
    }

    private static let geometryTypes: Set<String> = [
        "Point", "MultiPoint", "LineString", "MultiLineString", "Polygon", "MultiPolygon", "GeometryCollection",
    ]

    /// Unwraps a FeatureCollection of one Feature, or a Feature, to its geometry object.
    private static func unwrap(_ root: JSONValue) throws(GEOSError) -> JSONValue {
        guard case .object(let fields) = root, case .string(let type)? = fields["type"] else {
            throw fail(.parse, "GeoJSON must be an object with a string \"type\"")
        }
        switch type {
        case "FeatureCollection":
            guard case .array(let features)? = fields["features"] else {
                throw fail(.parse, "FeatureCollection has no \"features\" array")
            }
            guard features.count == 1 else {
                throw fail(.unsupportedGeometry, "FeatureCollection must hold exactly one feature, found \(features.count)")
            }
            guard case .object(let feature) = features[0], case .string("Feature")? = feature["type"] else {
                throw fail(.parse, "FeatureCollection member is not a Feature")
            }
            return try geometry(ofFeature: feature)
        case "Feature":
            return try geometry(ofFeature: fields)
        case _ where geometryTypes.contains(type):
            return root
        default:
            throw fail(.parse, "Unknown GeoJSON type \(quoted(type))")
        }
    }

    private static func geometry(ofFeature fields: [String: JSONValue]) throws(GEOSError) -> JSONValue {
        switch fields["geometry"] {
        case nil, .null?:
            throw fail(.unsupportedGeometry, "Feature has no geometry")
        case .object(let geometry)?:
            return .object(geometry)
        default:
            throw fail(.parse, "Feature \"geometry\" must be an object or null")
        }
    }

    /// One polygon's rings, checked for shape, closure, length and coordinate ranges.
    private static func polygon(_ value: JSONValue, label: String) throws(GEOSError) -> [[Coordinate]] {
        guard case .array(let ringValues) = value, !ringValues.isEmpty else {
            throw fail(.parse, "\(label)coordinates must be a non-empty array of rings".capitalizedFirst)
        }
        var rings: [[Coordinate]] = []
        for (ringIndex, ringValue) in ringValues.enumerated() {
            let name = "\(label)\(ringIndex == 0 ? "exterior ring" : "hole \(ringIndex)")"
            guard case .array(let positionValues) = ringValue else {
                throw fail(.parse, "\(name) must be an array of positions".capitalizedFirst)
            }
            var ring: [Coordinate] = []
            ring.reserveCapacity(positionValues.count)
            for positionValue in positionValues {
                ring.append(try position(positionValue, in: name))
            }
            if let problem = Geometry.ringProblem(ring, name: name) {
                throw fail(.invalidGeometry(reason: problem.capitalizedFirst), problem.capitalizedFirst)
            }
            rings.append(ring)
        }
        return rings
    }

    private static func position(_ value: JSONValue, in name: String) throws(GEOSError) -> Coordinate {
        guard case .array(let numbers) = value, (2...3).contains(numbers.count),
              case .number(let lon) = numbers[0], case .number(let lat) = numbers[1] else {
            throw fail(.parse, "\(name) has a position that is not [longitude, latitude]".capitalizedFirst)
        }
        if numbers.count == 3 {
            guard case .number = numbers[2] else {
                throw fail(.parse, "\(name) has a position whose altitude is not a number".capitalizedFirst)
            }
        }
        guard (-180...180).contains(lon) else {
            let reason = "Longitude \(lon) in \(name) is outside [-180, 180]"
            throw fail(.invalidGeometry(reason: reason), reason)
        }
        guard (-90...90).contains(lat) else {
            let reason = "Latitude \(lat) in \(name) is outside [-90, 90]"
            throw fail(.invalidGeometry(reason: reason), reason)
        }
        return Coordinate(x: lon, y: lat)
    }

    private static func fail(_ kind: GEOSError.Kind, _ message: String) -> GEOSError {
        GEOSError(kind, operation: operation, message: message)
    }

    /// A user-supplied name, quoted and shortened for messages.
    private static func quoted(_ text: String) -> String {
        "\"\(text.count > 40 ? String(text.prefix(40)) + "…" : text)\""
    }
}

private extension String {
    var capitalizedFirst: String { prefix(1).uppercased() + dropFirst() }
}

/// A parsed JSON value that keeps numbers and booleans apart.
enum JSONValue: Decodable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else if let bool = try? container.decode(Bool.self) {
            self = .bool(bool)
        } else if let string = try? container.decode(String.self) {
            self = .string(string)
        } else if let array = try? container.decode([JSONValue].self) {
            self = .array(array)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }
}
