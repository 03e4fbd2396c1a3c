/// Rules for hunts that operators can configure; the defaults are the contract's.
public struct HuntRules: Sendable, Equatable {
    /// Stops one hunt may hold; default 100 (adding one more is `CONFLICT`).
    public var maximumStops: Int
    /// Wrong codes one player may enter for one stop within ``codeGuessWindowSeconds``; default
    /// 5. After that many, every check-in of that player at that stop is `RATE_LIMITED` until
    /// the window has passed them (``CodeGuesses/lockout(wrongCodesAt:now:rules:)``).
    public var codeGuesses: Int
    /// The window wrong codes are counted in; default 600 seconds (10 minutes).
    public var codeGuessWindowSeconds: Int
    /// A fix at most this far from the fix of the player's previous check-in is never flagged for
    /// speed; default 1,000 metres.
    public var travelCheckMinimumMeters: Double
    /// A fix farther than ``travelCheckMinimumMeters`` from the previous check-in's fix is
    /// flagged when reaching it in the time between would take more than this; default 200 km/h.
    public var maximumTravelSpeedKmh: Double
    /// Check-ins refused as too far (`TOO_FAR`) one player may make at one stop within
    /// ``codeGuessWindowSeconds``; default 30. After that many, every check-in of theirs there is
    /// `RATE_LIMITED` until the window has passed them (so a stop cannot be found by probing).
    public var tooFarTries: Int
    /// Teams one team hunt may hold; default 200 (making one more is `CONFLICT`).
    public var maximumTeams: Int

    /// Rules with the contract's defaults unless given.
    public init(
        maximumStops: Int = 100, codeGuesses: Int = 5, codeGuessWindowSeconds: Int = 600, travelCheckMinimumMeters: Double = 1000,
        maximumTravelSpeedKmh: Double = 200, tooFarTries: Int = 30, maximumTeams: Int = GameRules.defaultMaximumTeams
    ) {
        precondition(maximumTeams >= 1, "a team hunt must be able to hold a team")
        self.maximumTeams = maximumTeams
        precondition(tooFarTries >= 1, "too-far tries need a count of at least 1")
        self.tooFarTries = tooFarTries
        precondition(maximumStops >= 1, "a hunt must be able to hold a stop")
        precondition(codeGuesses >= 1 && codeGuessWindowSeconds >= 1, "code guesses need a count and a window of at least 1")
        precondition(travelCheckMinimumMeters >= 0 && travelCheckMinimumMeters.isFinite, "the travel check's distance must be at least 0")
        precondition(maximumTravelSpeedKmh > 0 && maximumTravelSpeedKmh.isFinite, "the travel speed limit must be above 0")
        self.maximumStops = maximumStops
        self.codeGuesses = codeGuesses
        self.codeGuessWindowSeconds = codeGuessWindowSeconds
        self.travelCheckMinimumMeters = travelCheckMinimumMeters
        self.maximumTravelSpeedKmh = maximumTravelSpeedKmh
    }

    /// Refuses a stop beyond ``maximumStops`` for a hunt that holds `stops` already.
    public func checkRoomForStop(holding stops: Int) throws(HuntConflict) {
        guard stops < maximumStops else {
            throw HuntConflict("a hunt holds at most \(maximumStops) stops")
        }
    }
}

/// A request the hunt's state or contents do not allow (the contract's `CONFLICT`): starting a
/// hunt that is running, extending one that ended, one stop too many. The message says why.
public struct HuntConflict: Error, Sendable, Equatable, CustomStringConvertible {
    /// Why, for people.
    public var message: String

    /// A conflict that `message` explains.
    public init(_ message: String) { self.message = message }

    /// The message.
    public var description: String { message }
}
