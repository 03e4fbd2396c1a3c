/// Where a daemon reads the time of day: the one source of "now" for every rule that depends on
/// it in memory (a pin's expiry in the feed, a hunt's `STARTS` and `ENDS` as this daemon
/// announces them, whether a hunt is running, schedule checks). The daemon reads the system's
/// (``SystemWallClock``); tests hold one still and move it on, so nothing has to sleep for time
/// to pass. Rules the database judges (`now()` in SQL) keep the database's clock.
public protocol WallClock: Sendable {
    /// The current time, to the microsecond.
    var now: Timestamp { get }
}

/// The system's real-time clock (``Timestamp/now``).
public struct SystemWallClock: WallClock {
    public init() {}

    public var now: Timestamp { Timestamp.now }
}

extension WallClock where Self == SystemWallClock {
    /// The system's real-time clock: what the daemon runs on.
    public static var system: SystemWallClock { SystemWallClock() }
}
