import ScavengerCore
import Synchronization

/// A ``WallClock`` that stands still until the test moves it (in the spirit of postgres-nio's
/// `MockClock`): give it to a feed (and so to its hunts' feed and its board), and time passes
/// for them only when ``advance(seconds:)`` or ``set(to:)`` says so. Tests then assert on what
/// the time changed, never on how long they waited.
///
/// It starts at the real time it was made, so that what the database stamps with its own clock
/// (a pin's `expires`, a check-in) lies after it, as it would on a daemon's clock.
public final class HeldClock: WallClock {
    private let time: Mutex<Timestamp>

    public init(at start: Timestamp = .now) {
        time = Mutex(start)
    }

    public var now: Timestamp { time.withLock { $0 } }

    /// Moves the clock on by `seconds` (a fraction to the microsecond); returns the new time.
    @discardableResult
    public func advance(seconds: Double) -> Timestamp {
        precondition(seconds >= 0, "a held clock only moves forward")
        return time.withLock { time in
            time.microseconds += Int64((seconds * 1_000_000).rounded())
            return time
        }
    }

    /// Moves the clock on to `later` (never back: a time already passed leaves it where it is).
    public func set(to later: Timestamp) {
        time.withLock { $0 = max($0, later) }
    }

    /// The first whole second at least `seconds` after the clock's time, as a request's
    /// `STARTS` or `ENDS` gives it (RFC 3339 in whole seconds).
    public func wholeSecond(secondsFromNow seconds: Int) -> Timestamp {
        let micros = now.microseconds + Int64(seconds) * 1_000_000
        let whole = (micros + 999_999) / 1_000_000 * 1_000_000
        return Timestamp(microseconds: whole)
    }
}
