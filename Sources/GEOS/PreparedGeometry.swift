internal import CGEOS

/// A geometry indexed for fast repeated predicates against it.
///
/// Not `Sendable`: GEOS builds its indexes lazily on first use.
public final class PreparedGeometry {
    /// The geometry this was prepared from; kept alive as long as the prepared form.
    public let base: Geometry
    /// Owned `const GEOSPreparedGeometry*`.
    private let raw: OpaquePointer

    /// Prepares `geometry` (which stays alive as long as this object).
    public init(_ geometry: Geometry) throws(GEOSError) {
        base = geometry
        raw = try ContextPool.shared.withContext("prepare") { context throws(GEOSError) in
            try context.geometry(GEOSPrepare_r(context.handle, geometry.raw), "prepare")
        }
    }

    deinit {
        let raw = self.raw
        try? ContextPool.shared.withContext("destroy prepared geometry") { context in
            GEOSPreparedGeom_destroy_r(context.handle, raw)
        }
        // `base` is released only after this, so the prepared form never outlives it.
    }

    /// Whether `other` lies inside the base geometry (boundary-only contact does not count).
    public func contains(_ other: Geometry) throws(GEOSError) -> Bool {
        try predicate(other, "prepared contains", GEOSPreparedContains_r)
    }

    /// Whether the geometries share at least one point.
    public func intersects(_ other: Geometry) throws(GEOSError) -> Bool {
        try predicate(other, "prepared intersects", GEOSPreparedIntersects_r)
    }

    /// Whether no point of `other` lies outside the base geometry.
    public func covers(_ other: Geometry) throws(GEOSError) -> Bool {
        try predicate(other, "prepared covers", GEOSPreparedCovers_r)
    }

    /// Whether the point lies in the interior (a point on the boundary is not contained).
    public func containsPoint(x: Double, y: Double) throws(GEOSError) -> Bool {
        try pointPredicate(x: x, y: y, "prepared contains point", GEOSPreparedContains_r)
    }

    /// Whether the point lies in the interior or on the boundary.
    public func coversPoint(x: Double, y: Double) throws(GEOSError) -> Bool {
        try pointPredicate(x: x, y: y, "prepared covers point", GEOSPreparedCovers_r)
    }

    private func predicate(
        _ other: Geometry, _ operation: String,
        _ function: (GEOSContextHandle_t?, OpaquePointer?, OpaquePointer?) -> CChar
    ) throws(GEOSError) -> Bool {
        try withExtendedLifetime(other) { () throws(GEOSError) -> Bool in
            try ContextPool.shared.withContext(operation) { context throws(GEOSError) in
                try context.predicate(function(context.handle, raw, other.raw), operation)
            }
        }
    }

    private func pointPredicate(
        x: Double, y: Double, _ operation: String,
        _ function: (GEOSContextHandle_t?, OpaquePointer?, OpaquePointer?) -> CChar
    ) throws(GEOSError) -> Bool {
        guard x.isFinite, y.isFinite else {
            throw GEOSError(.invalidGeometry(reason: "point coordinates must be finite"),
                            operation: operation, message: "point coordinates must be finite")
        }
        // GEOSPreparedContainsXY_r is 3.12+; build a temporary point in the same context.
        return try ContextPool.shared.withContext(operation) { context throws(GEOSError) in
            let point = try context.makePoint(x: x, y: y, operation)
            defer { context.destroy(point) }
            return try context.predicate(function(context.handle, raw, point), operation)
        }
    }
}

@available(*, unavailable, message: "GEOS prepared geometries are not thread-safe; share one behind a Mutex")
extension PreparedGeometry: Sendable {}
