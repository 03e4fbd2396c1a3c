internal import CGEOS

/// The GEOS geometry types.
public enum GeometryKind: String, Sendable, CaseIterable {
    case point = "Point"
    case lineString = "LineString"
    case linearRing = "LinearRing"
    case polygon = "Polygon"
    case multiPoint = "MultiPoint"
    case multiLineString = "MultiLineString"
    case multiPolygon = "MultiPolygon"
    case geometryCollection = "GeometryCollection"
}

/// An owned GEOS geometry (planar; x = longitude, y = latitude for geographic data).
///
/// Not `Sendable`: GEOS caches state inside geometries, so share one only behind a lock.
public final class Geometry: CustomStringConvertible {
    /// Owned `GEOSGeometry*`, destroyed in deinit.
    let raw: OpaquePointer

    /// Takes ownership of `raw`.
    init(owning raw: OpaquePointer) {
        self.raw = raw
    }

    deinit {
        let raw = self.raw
        // Destroying needs no particular context; if none can be created the geometry leaks.
        try? ContextPool.shared.withContext("destroy geometry") { context in context.destroy(raw) }
    }

    /// Reads Well-Known Text.
    public convenience init(wkt: String) throws(GEOSError) {
        let raw = try ContextPool.shared.withContext("read WKT") { context throws(GEOSError) in
            try context.geometry(try context.readWKT(wkt), "read WKT", kind: .parse)
        }
        self.init(owning: raw)
    }

    /// Reads any GeoJSON geometry or Feature with GEOS's reader (no further checks: region rules live above this wrapper).
    public convenience init(geoJSON: String) throws(GEOSError) {
        let raw = try ContextPool.shared.withContext("read GeoJSON") { context throws(GEOSError) in
            try Context.rejectNUL(geoJSON, "read GeoJSON")
            let reader = try context.geoJSONReader()
            return try context.geometry(GEOSGeoJSONReader_readGeometry_r(context.handle, reader, geoJSON),
                                        "read GeoJSON", kind: .parse)
        }
        self.init(owning: raw)
    }

    /// A point; coordinates must be finite.
    public static func point(x: Double, y: Double) throws(GEOSError) -> Geometry {
        guard x.isFinite, y.isFinite else {
            throw GEOSError(.invalidGeometry(reason: "point coordinates must be finite"),
                            operation: "create point", message: "point coordinates must be finite")
        }
        return Geometry(owning: try ContextPool.shared.withContext("create point") { context throws(GEOSError) in
            try context.makePoint(x: x, y: y, "create point")
        })
    }

    /// An axis-aligned rectangle polygon; requires finite bounds with minX < maxX and minY < maxY.
    public static func rectangle(minX: Double, minY: Double, maxX: Double, maxY: Double) throws(GEOSError) -> Geometry {
        let envelope = Envelope(minX: minX, minY: minY, maxX: maxX, maxY: maxY)
        guard envelope.isFinite, minX < maxX, minY < maxY else {
            let reason = "rectangle needs finite bounds with min < max, got \(envelope)"
            throw GEOSError(.invalidGeometry(reason: reason), operation: "create rectangle", message: reason)
        }
        return Geometry(owning: try ContextPool.shared.withContext("create rectangle") { context throws(GEOSError) in
            try context.geometry(GEOSGeom_createRectangle_r(context.handle, minX, minY, maxX, maxY), "create rectangle")
        })
    }

    /// A polygon from closed rings of at least 4 finite positions (not checked for validity; see `isValid`).
    public static func polygon(
        exterior: [Coordinate], holes: [[Coordinate]] = [], operation: String = "create polygon"
    ) throws(GEOSError) -> Geometry {
        try multiPolygon([[exterior] + holes], single: true, operation: operation)
    }

    /// A MultiPolygon from polygons given as rings (exterior first, then holes), each ring closed
    /// with at least 4 finite positions (not checked for validity; see `isValid`).
    public static func multiPolygon(_ polygons: [[[Coordinate]]], operation: String = "create multipolygon") throws(GEOSError) -> Geometry {
        try multiPolygon(polygons, single: false, operation: operation)
    }

    /// Why `ring` cannot be a polygon ring (fewer than 4 positions, a non-finite one, not
    /// closed), in one line naming it `name`; nil when it can.
    public static func ringProblem(_ ring: [Coordinate], name: String) -> String? {
        RingCheck.problem(ring, name: name)
    }

    private static func multiPolygon(_ polygons: [[[Coordinate]]], single: Bool, operation: String) throws(GEOSError) -> Geometry {
        guard !polygons.isEmpty else {
            throw GEOSError(.invalidGeometry(reason: "no polygons"), operation: operation, message: "no polygons")
        }
        for rings in polygons {
            for (index, ring) in rings.enumerated() {
                if let problem = RingCheck.problem(ring, name: index == 0 ? "exterior ring" : "hole \(index)") {
                    throw GEOSError(.invalidGeometry(reason: problem), operation: operation, message: problem)
                }
            }
        }
        return Geometry(owning: try ContextPool.shared.withContext(operation) { context throws(GEOSError) in
            var made: [OpaquePointer] = []
            do throws(GEOSError) {
                for rings in polygons { made.append(try context.makePolygon(rings, operation)) }
            } catch let failure {
                for polygon in made { context.destroy(polygon) }
                throw failure
            }
            if single { return made[0] }
            return try context.makeMultiPolygon(made, operation)
        })
    }

    // MARK: Properties

    /// The geometry type.
    public var kind: GeometryKind {
        let id = (try? ContextPool.shared.withContext("geometry type") { context in
            GEOSGeomTypeId_r(context.handle, raw)
        }) ?? -1
        switch id {
        case 0: return .point
        case 1: return .lineString
        case 2: return .linearRing
        case 3: return .polygon
        case 4: return .multiPoint
        case 5: return .multiLineString
        case 6: return .multiPolygon
        default: return .geometryCollection  // 7; GEOS reports -1 only for a null pointer, never held here.
        }
    }

    /// The GEOS type name, e.g. "Polygon".
    public var typeName: String { kind.rawValue }

    /// Whether the geometry has no points.
    public var isEmpty: Bool {
        (try? ContextPool.shared.withContext("isEmpty") { context in GEOSisEmpty_r(context.handle, raw) == 1 }) ?? false
    }

    /// Whether the geometry is topologically valid (OGC rules).
    public var isValid: Bool {
        get throws(GEOSError) {
            try ContextPool.shared.withContext("isValid") { context throws(GEOSError) in
                try context.predicate(GEOSisValid_r(context.handle, raw), "isValid")
            }
        }
    }

    /// GEOS's explanation of validity, e.g. "Valid Geometry" or "Self-intersection[1 1]".
    public var validityReason: String {
        get throws(GEOSError) {
            try ContextPool.shared.withContext("isValidReason") { context throws(GEOSError) in
                try context.takeString(GEOSisValidReason_r(context.handle, raw), "isValidReason")
            }
        }
    }

    /// The bounding box, or nil when the geometry is empty.
    public var envelope: Envelope? {
        try? ContextPool.shared.withContext("envelope") { context throws(GEOSError) in
            try context.envelope(of: raw)
        }
    }

    /// The planar area (square degrees for lon/lat data).
    public var area: Double {
        get throws(GEOSError) {
            try ContextPool.shared.withContext("area") { context throws(GEOSError) in
                var value = 0.0
                guard GEOSArea_r(context.handle, raw, &value) == 1 else { throw context.failure("area") }
                return value
            }
        }
    }

    /// Number of direct parts (1 for a simple geometry).
    public var partCount: Int {
        let count = (try? ContextPool.shared.withContext("parts") { context in
            GEOSGetNumGeometries_r(context.handle, raw)
        }) ?? 0
        return max(0, Int(count))
    }

    /// Number of polygons: 1 for a non-empty Polygon, the part count for a MultiPolygon, else 0.
    public var polygonCount: Int {
        switch kind {
        case .polygon: return isEmpty ? 0 : 1
        case .multiPolygon: return partCount
        default: return 0
        }
    }

    /// Well-Known Text (trimmed numbers).
    public var wkt: String {
        get throws(GEOSError) {
            try ContextPool.shared.withContext("write WKT") { context throws(GEOSError) in
                let writer = try context.wktWriter()
                return try context.takeString(GEOSWKTWriter_write_r(context.handle, writer, raw), "write WKT")
            }
        }
    }

    /// WKT, or the type name if writing fails.
    public var description: String { (try? wkt) ?? "<\(typeName)>" }

    // MARK: Predicates

    /// Whether `other` lies in this geometry's interior-or-boundary with at least one interior point shared.
    public func contains(_ other: Geometry) throws(GEOSError) -> Bool {
        try binaryPredicate(other, "contains", GEOSContains_r)
    }

    /// Whether the geometries share at least one point.
    public func intersects(_ other: Geometry) throws(GEOSError) -> Bool {
        try binaryPredicate(other, "intersects", GEOSIntersects_r)
    }

    /// Whether no point of `other` lies outside this geometry (boundary counts as inside).
    public func covers(_ other: Geometry) throws(GEOSError) -> Bool {
        try binaryPredicate(other, "covers", GEOSCovers_r)
    }

    // MARK: Operations

    /// The shared part of both geometries.
    public func intersection(_ other: Geometry) throws(GEOSError) -> Geometry {
        try binaryOperation(other, "intersection", GEOSIntersection_r)
    }

    /// The union of both geometries.
    public func union(_ other: Geometry) throws(GEOSError) -> Geometry {
        try binaryOperation(other, "union", GEOSUnion_r)
    }

    /// The area within `distance` (planar units) of this geometry.
    public func buffer(distance: Double, quadrantSegments: Int = 8) throws(GEOSError) -> Geometry {
        guard distance.isFinite else {
            throw GEOSError(.operationFailed, operation: "buffer", message: "buffer distance must be finite")
        }
        let segments = Int32(clamping: max(1, quadrantSegments))
        return Geometry(owning: try ContextPool.shared.withContext("buffer") { context throws(GEOSError) in
            try context.geometry(GEOSBuffer_r(context.handle, raw, distance, segments), "buffer")
        })
    }

    // MARK: Helpers

    private func binaryPredicate(
        _ other: Geometry, _ operation: String,
        _ function: (GEOSContextHandle_t?, OpaquePointer?, OpaquePointer?) -> CChar
    ) throws(GEOSError) -> Bool {
        try withExtendedLifetime(other) { () throws(GEOSError) -> Bool in
            try ContextPool.shared.withContext(operation) { context throws(GEOSError) in
                try context.predicate(function(context.handle, raw, other.raw), operation)
            }
        }
    }

    private func binaryOperation(
        _ other: Geometry, _ operation: String,
        _ function: (GEOSContextHandle_t?, OpaquePointer?, OpaquePointer?) -> OpaquePointer?
    ) throws(GEOSError) -> Geometry {
        let result = try withExtendedLifetime(other) { () throws(GEOSError) -> OpaquePointer in
            try ContextPool.shared.withContext(operation) { context throws(GEOSError) in
                try context.geometry(function(context.handle, raw, other.raw), operation)
            }
        }
        return Geometry(owning: result)
    }
}

@available(*, unavailable, message: "GEOS geometries are not thread-safe; share one behind a Mutex")
extension Geometry: Sendable {}

/// Structural checks on a ring of positions.
enum RingCheck {
    /// A one-line problem description, or nil if the ring is closed, finite and has at least 4 positions.
    static func problem(_ ring: [Coordinate], name: String) -> String? {
        if ring.count < 4 {
            return "\(name) has \(ring.count) positions; a ring needs at least 4"
        }
        if let bad = ring.first(where: { !$0.x.isFinite || !$0.y.isFinite }) {
            return "\(name) has a non-finite position (\(bad.x), \(bad.y))"
        }
        if ring.first != ring.last {
            return "\(name) is not closed: its first and last positions differ"
        }
        return nil
    }
}

extension Context {
    /// A new point owned by the caller.
    func makePoint(x: Double, y: Double, _ operation: String) throws(GEOSError) -> OpaquePointer {
        try geometry(GEOSGeom_createPointFromXY_r(handle, x, y), operation)
    }

    /// The envelope of `raw`, or an error when it is empty.
    func envelope(of raw: OpaquePointer) throws(GEOSError) -> Envelope {
        guard GEOSisEmpty_r(handle, raw) == 0 else {
            throw GEOSError(.operationFailed, operation: "envelope", message: "empty geometry has no envelope")
        }
        var minX = 0.0, minY = 0.0, maxX = 0.0, maxY = 0.0
        guard GEOSGeom_getXMin_r(handle, raw, &minX) == 1, GEOSGeom_getYMin_r(handle, raw, &minY) == 1,
              GEOSGeom_getXMax_r(handle, raw, &maxX) == 1, GEOSGeom_getYMax_r(handle, raw, &maxY) == 1
        else { throw failure("envelope") }
        return Envelope(minX: minX, minY: minY, maxX: maxX, maxY: maxY)
    }

    /// A new linear ring owned by the caller; `ring` must already pass `RingCheck`.
    func makeRing(_ ring: [Coordinate], _ operation: String) throws(GEOSError) -> OpaquePointer {
        var buffer: [Double] = []
        buffer.reserveCapacity(ring.count * 2)
        for position in ring { buffer.append(position.x); buffer.append(position.y) }
        let sequence = buffer.withUnsafeBufferPointer { pointer in
            GEOSCoordSeq_copyFromBuffer_r(handle, pointer.baseAddress, UInt32(ring.count), 0, 0)
        }
        guard let sequence else { throw failure(operation) }
        // The ring takes ownership of the sequence.
        return try geometry(GEOSGeom_createLinearRing_r(handle, sequence), operation)
    }

    /// A new polygon owned by the caller from exterior + holes, each already passing `RingCheck`.
    func makePolygon(_ rings: [[Coordinate]], _ operation: String) throws(GEOSError) -> OpaquePointer {
        var made: [OpaquePointer?] = []
        made.reserveCapacity(rings.count)
        do throws(GEOSError) {
            for ring in rings { made.append(try makeRing(ring, operation)) }
        } catch let failure {
            // Still ours: nothing has been handed to a polygon yet.
            for case let ring? in made { destroy(ring) }
            throw failure
        }
        guard let shell = made.first ?? nil else {
            throw GEOSError(.invalidGeometry(reason: "polygon has no rings"), operation: operation,
                            message: "polygon has no rings")
        }
        var holes = Array(made.dropFirst())
        // The polygon takes ownership of shell and holes. Not freed here on failure: GEOS's
        // contract is to free them itself, and a leak beats a double free if it does not.
        let polygon = holes.withUnsafeMutableBufferPointer { pointer in
            GEOSGeom_createPolygon_r(handle, shell, pointer.baseAddress, UInt32(pointer.count))
        }
        return try geometry(polygon, operation)
    }

    /// A new MultiPolygon owned by the caller; takes ownership of `polygons`.
    func makeMultiPolygon(_ polygons: [OpaquePointer], _ operation: String) throws(GEOSError) -> OpaquePointer {
        var parts: [OpaquePointer?] = polygons
        let collection = parts.withUnsafeMutableBufferPointer { pointer in
            GEOSGeom_createCollection_r(handle, Int32(GEOS_MULTIPOLYGON.rawValue), pointer.baseAddress,
                                        UInt32(pointer.count))
        }
        return try geometry(collection, operation)
    }
}
