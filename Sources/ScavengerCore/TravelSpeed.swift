/// The travel-speed check of a check-in against the player's previous one (in any hunt): a fix
/// farther than ``HuntRules/travelCheckMinimumMeters`` from the previous check-in's fix that
/// would need more than ``HuntRules/maximumTravelSpeedKmh`` to reach in the time between is
/// flagged, and earns nothing until a review approves it. Distances are the canonical
/// great-circle ones (``Geodesy``).
public enum TravelSpeed {
    /// Whether going from `previous` (the previous check-in's fix, made at `previousTime`) to
    /// `fix` at `time` is too fast to be believed.
    public static func isImplausible(
        from previous: Fix, at previousTime: Timestamp, to fix: Fix, at time: Timestamp, rules: HuntRules
    ) -> Bool {
        let distance = Geodesy.distance(lat1: previous.lat, lon1: previous.lon, lat2: fix.lat, lon2: fix.lon)
        return isImplausible(distanceMeters: distance, elapsedMicroseconds: time.microseconds &- previousTime.microseconds, rules: rules)
    }

    /// Whether covering `distanceMeters` in `elapsedMicroseconds` is too fast to be believed:
    /// the distance is more than the rules' minimum and the speed it takes is more than their
    /// maximum (both strictly). No time at all, or a negative one (clocks of two daemons), covers
    /// no distance, so any distance over the minimum is then implausible.
    public static func isImplausible(distanceMeters: Double, elapsedMicroseconds: Int64, rules: HuntRules) -> Bool {
        guard distanceMeters > rules.travelCheckMinimumMeters else { return false }
        // distance / elapsed > limit, without dividing: metres × µs per hour > km/h × m per km × µs.
        let reachable = rules.maximumTravelSpeedKmh * 1000 * Double(max(0, elapsedMicroseconds))
        return distanceMeters * 3_600_000_000 > reachable
    }

    /// The speed in km/h that covering `distanceMeters` in `elapsedMicroseconds` takes (for
    /// logs and a reviewer's eyes); infinity when no time passed and the distance is not 0.
    public static func speedKmh(distanceMeters: Double, elapsedMicroseconds: Int64) -> Double {
        guard elapsedMicroseconds > 0 else { return distanceMeters == 0 ? 0 : .infinity }
        return distanceMeters * 3_600_000_000 / (1000 * Double(elapsedMicroseconds))
    }
}

/// The lockout after wrong codes at a code stop: once a player has entered
/// ``HuntRules/codeGuesses`` wrong codes for one stop within ``HuntRules/codeGuessWindowSeconds``,
/// every CHECKIN of that player at that stop is `RATE_LIMITED` until the window has passed
/// enough of them. The store counts wrong codes per player and stop before checking the next.
public enum CodeGuesses {
    /// Whole seconds (at least 1) before the player who entered wrong codes at `times` may try
    /// this stop again, or nil when they may try at `now`. A wrong code counts while it is less
    /// than the window old (one made exactly a window before `now` no longer does); the order of
    /// `times` does not matter.
    public static func lockout(wrongCodesAt times: some Sequence<Timestamp>, now: Timestamp, rules: HuntRules) -> Int? {
        lockout(triesAt: times, now: now, limit: rules.codeGuesses, windowSeconds: rules.codeGuessWindowSeconds)
    }

    /// The same for check-ins refused as too far (``HuntRules/tooFarTries`` in the same window).
    public static func lockout(tooFarAt times: some Sequence<Timestamp>, now: Timestamp, rules: HuntRules) -> Int? {
        lockout(triesAt: times, now: now, limit: rules.tooFarTries, windowSeconds: rules.codeGuessWindowSeconds)
    }

    /// Whole seconds (at least 1) until fewer than `limit` of the tries at `times` are less than
    /// `windowSeconds` old, or nil when they already are.
    static func lockout(triesAt times: some Sequence<Timestamp>, now: Timestamp, limit: Int, windowSeconds: Int) -> Int? {
        let window = Int64(windowSeconds) * 1_000_000
        let recent = times.filter { $0.microseconds > now.microseconds &- window }.sorted()
        guard recent.count >= limit else { return nil }
        // Fewer than the limit remain in the window once this one has left it.
        let leaving = recent[recent.count - limit]
        let wait = leaving.microseconds &+ window &- now.microseconds
        return max(1, Int((wait + 999_999) / 1_000_000))
    }
}
