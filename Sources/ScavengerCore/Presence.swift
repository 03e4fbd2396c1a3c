/// A position a client reports with CHECKIN: where it is and how sure it is.
public struct Fix: Sendable, Equatable {
    /// Latitude in degrees, [-90, 90].
    public var lat: Double
    /// Longitude in degrees, [-180, 180].
    public var lon: Double
    /// The fix's reported accuracy in metres (`ACCURACY`, default 0).
    public var accuracyMeters: Double

    /// A fix from its fields.
    public init(lat: Double, lon: Double, accuracyMeters: Double = 0) {
        self.lat = lat
        self.lon = lon
        self.accuracyMeters = accuracyMeters
    }
}

/// The server's verdict on where a check-in was made (the code and photo are judged apart).
public enum PresenceVerdict: Sendable, Equatable {
    /// Close enough: a place or photo stop's fix within its radius, or any fix at a code stop
    /// (whose distance is recorded, not judged).
    case present(distanceMeters: Double)
    /// Farther than the stop's radius: `ERR TOO_FAR` with ``wholeMeters``.
    case tooFar(distanceMeters: Double)

    /// The distance from the fix to the stop, in metres, as recorded with the check-in.
    public var distanceMeters: Double {
        switch self {
        case .present(let distance), .tooFar(let distance): distance
        }
    }

    /// The distance in whole metres, rounded down: the first word after `TOO_FAR`.
    public var wholeMeters: Int { Int(distanceMeters.rounded(.down)) }
}

/// Proof of presence: the server's own judgement of a fix, never a client's.
public enum Presence {
    /// The great-circle distance in metres from `fix` to `stop`, on the same sphere as `NEARBY`
    /// (``Geodesy/distance(lat1:lon1:lat2:lon2:)``).
    public static func distance(from fix: Fix, to stop: HuntStop) -> Double {
        Geodesy.distance(lat1: fix.lat, lon1: fix.lon, lat2: stop.lat, lon2: stop.lon)
    }

    /// Judges `fix` at `stop`. Place and photo stops: a fix whose accuracy is not a number of
    /// metres at least 0, or is larger than the stop's radius, cannot prove presence (a
    /// ``ValidationError``, `BAD_ARGUMENT`; checked before the distance); otherwise the fix is
    /// present when its distance is at most the radius, else too far. Code stops: the distance
    /// is recorded and the accuracy not checked. A latitude or longitude out of range is a
    /// ``ValidationError`` for every stop.
    public static func judge(_ fix: Fix, at stop: HuntStop) throws(ValidationError) -> PresenceVerdict {
        try Validation.coordinates(lat: fix.lat, lon: fix.lon)
        let distance = distance(from: fix, to: stop)
        if stop.proof == .code { return .present(distanceMeters: distance) }
        try Validation.accuracy(fix.accuracyMeters)
        guard fix.accuracyMeters <= stop.radiusMeters else {
            throw ValidationError(
                "ACCURACY (\(plain(fix.accuracyMeters)) m) is larger than the stop's radius (\(plain(stop.radiusMeters)) m): such a fix cannot prove presence")
        }
        return distance <= stop.radiusMeters ? .present(distanceMeters: distance) : .tooFar(distanceMeters: distance)
    }

    /// A number as people write it: without a fraction when it has none (`50`, `12.5`).
    public static func plain(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}
