#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif

/// Great-circle geometry on a sphere of radius ``earthRadius``.
///
/// ``distance(_:_:)`` is *the* distance of the product: feed order, `distance_m`, cursors and
/// tests all use it, so the same data gives the same order on every server.
public enum Geodesy {
    /// The sphere's radius in metres (the mean Earth radius, IUGG).
    public static let earthRadius: Double = 6_371_008.8

    /// A point on the unit sphere: x toward (0°, 0°), y toward (0°, 90°E), z toward the North Pole.
    public struct UnitVector: Sendable, Equatable {
        public var x: Double
        public var y: Double
        public var z: Double

        /// The components as given (not normalised).
        public init(x: Double, y: Double, z: Double) {
            self.x = x
            self.y = y
            self.z = z
        }

        /// The point at latitude `lat` and longitude `lon`, in degrees. Longitudes 180 and −180
        /// give the same vector, and so do all longitudes at a pole.
        public init(lat: Double, lon: Double) {
            let (sinLat, cosLat) = Geodesy.sinCos(degrees: lat)
            let (sinLon, cosLon) = Geodesy.sinCos(degrees: lon)
            if cosLat == 0 {
                self.init(x: 0, y: 0, z: sinLat)
            } else {
                self.init(x: cosLat * cosLon, y: cosLat * sinLon, z: sinLat)
            }
        }
    }

    /// The canonical great-circle distance in metres: 2R·asin(min(1, |a − b| / 2)).
    @inlinable
    public static func distance(_ a: UnitVector, _ b: UnitVector) -> Double {
        distance(chordSquared: chordSquared(a, b))
    }

    /// The canonical distance in metres between two points given in degrees.
    public static func distance(lat1: Double, lon1: Double, lat2: Double, lon2: Double) -> Double {
        distance(UnitVector(lat: lat1, lon: lon1), UnitVector(lat: lat2, lon: lon2))
    }

    /// |a − b|², the squared chord between two unit vectors.
    @inlinable
    public static func chordSquared(_ a: UnitVector, _ b: UnitVector) -> Double {
        let dx = a.x - b.x
        let dy = a.y - b.y
        let dz = a.z - b.z
        return dx * dx + dy * dy + dz * dz
    }

    /// The canonical distance in metres for a squared chord (see ``chordSquared(_:_:)``).
    @inlinable
    public static func distance(chordSquared: Double) -> Double {
        2 * earthRadius * _asin(min(1, chordSquared.squareRoot() / 2))
    }

    /// A squared chord that every point within `distance` metres (by the canonical distance)
    /// stays under, with a small margin for rounding: a safe prefilter bound.
    public static func chordSquaredBound(forDistance distance: Double) -> Double {
        let half = max(0, distance) / (2 * earthRadius)
        if !(half < .pi / 2) { return 4.000_001 }
        let chord = 2 * sin(half)
        return chord * chord * (1 + 1e-9) + 1e-24
    }

    /// Haversine distance in metres, for cross-checking; not used for ordering.
    public static func haversine(lat1: Double, lon1: Double, lat2: Double, lon2: Double) -> Double {
        let phi1 = lat1 * .pi / 180
        let phi2 = lat2 * .pi / 180
        let dPhi = (lat2 - lat1) * .pi / 180
        let dLambda = (lon2 - lon1) * .pi / 180
        let a = sin(dPhi / 2) * sin(dPhi / 2) + cos(phi1) * cos(phi2) * sin(dLambda / 2) * sin(dLambda / 2)
        return 2 * earthRadius * asin(min(1, a.squareRoot()))
    }

    /// The point `distance` metres from (`lat`, `lon`) along the initial `bearing` (degrees
    /// clockwise from north), in degrees with the longitude in [−180, 180].
    public static func destination(lat: Double, lon: Double, bearing: Double, distance: Double) -> (lat: Double, lon: Double) {
        let delta = distance / earthRadius
        let (sinPhi, cosPhi) = sinCos(degrees: lat)
        let (sinTheta, cosTheta) = sinCos(degrees: bearing)
        let sinDelta = sin(delta)
        let cosDelta = cos(delta)
        let sinPhi2 = max(-1, min(1, sinPhi * cosDelta + cosPhi * sinDelta * cosTheta))
        let phi2 = asin(sinPhi2)
        let y = sinTheta * sinDelta * cosPhi
        let x = cosDelta - sinPhi * sinPhi2
        var lon2 = lon + atan2(y, x) * 180 / .pi
        if lon2 > 180 { lon2 -= 360 }
        if lon2 < -180 { lon2 += 360 }
        return (min(90, max(-90, phi2 * 180 / .pi)), lon2)
    }

    /// Sine and cosine of an angle in degrees, exact at multiples of 90° (so 180° and −180°
    /// agree, and the poles have a cosine of exactly 0).
    public static func sinCos(degrees: Double) -> (sin: Double, cos: Double) {
        guard degrees.isFinite else { return (.nan, .nan) }
        var reduced = degrees.truncatingRemainder(dividingBy: 360)
        let quadrant = (reduced / 90).rounded()
        reduced -= quadrant * 90
        let radians = reduced * .pi / 180
        let s = sin(radians)
        let c = cos(radians)
        switch Int(quadrant) & 3 {
        case 0: return (s + 0, c + 0)
        case 1: return (c + 0, -s + 0)
        case 2: return (-s + 0, -c + 0)
        default: return (-c + 0, s + 0)
        }
    }

    @usableFromInline
    static func _asin(_ value: Double) -> Double { asin(value) }
}
