/// When a hunt runs: the times CREATEHUNT, STARTHUNT, EXTEND and ENDHUNT set. Its state at any
/// moment follows from them and the clock alone (``state(at:)``), so every daemon reading the
/// same row agrees, and a hunt whose `STARTS` or `ENDS` passes starts or ends without anyone
/// writing: a hunt runs from `starts` (included) to `ends` (excluded).
///
/// A `DURATION` is kept as ``durationSeconds`` until the hunt starts; from then on it is `ends`
/// (``settled(at:)`` makes the change, and the store may write the settled schedule back).
public struct HuntSchedule: Sendable, Equatable {
    /// When the hunt starts (`STARTS`), or once it has started, the moment it did; nil while it
    /// waits for its host's STARTHUNT.
    public var starts: Timestamp?
    /// When it ends: `ENDS`, its start plus its `DURATION`, as EXTEND moved it, or the moment of
    /// ENDHUNT; nil: it runs until its host ends it.
    public var ends: Timestamp?
    /// The `DURATION` of a hunt that has not started; nil once it has (it is `ends` then) and for
    /// a hunt given none.
    public var durationSeconds: Int?

    /// A schedule from stored fields, as is (``init(starts:ends:durationSeconds:now:)`` checks a
    /// new hunt's).
    public init(starts: Timestamp? = nil, ends: Timestamp? = nil, durationSeconds: Int? = nil) {
        self.starts = starts
        self.ends = ends
        self.durationSeconds = durationSeconds
    }

    /// The schedule CREATEHUNT asks for at `now`: `STARTS` and `ENDS` in the future, `ENDS` after
    /// `STARTS`, a `DURATION` of 1 second to 30 days, and not both `ENDS` and `DURATION`.
    public init(starts: Timestamp?, ends: Timestamp?, durationSeconds: Int?, now: Timestamp) throws(ValidationError) {
        if let starts {
            try Self.checkFuture(starts, "STARTS", now: now)
        }
        if let ends {
            try Self.checkFuture(ends, "ENDS", now: now)
            if let starts, ends <= starts {
                throw ValidationError("ENDS must be after STARTS")
            }
        }
        if let durationSeconds {
            guard ends == nil else {
                throw ValidationError("give ENDS or DURATION, not both")
            }
            try Validation.huntDuration(durationSeconds)
            if let starts, Self.time(starts, plusSeconds: durationSeconds) == nil {
                throw ValidationError("STARTS plus DURATION must be before the year 10000")
            }
        }
        self.init(starts: starts, ends: ends, durationSeconds: durationSeconds)
    }

    private static func checkFuture(_ time: Timestamp, _ name: String, now: Timestamp) throws(ValidationError) {
        guard time > now else {
            throw ValidationError("\(name) must be in the future")
        }
        guard time.isStorable else {
            throw ValidationError("\(name) must be before the year 10000")
        }
    }

    /// The schedule as it stands at `now`: once `starts` has passed, a `DURATION` has become
    /// `ends` (the start plus the duration, at most the last storable instant). Otherwise the same.
    public func settled(at now: Timestamp) -> HuntSchedule {
        guard let durationSeconds, let starts, starts <= now else { return self }
        var settled = self
        settled.durationSeconds = nil
        if settled.ends == nil {
            settled.ends = Self.time(starts, plusSeconds: durationSeconds) ?? Self.lastStorable
        }
        return settled
    }

    /// The hunt's state at `now`: ended from `ends` on, running from `starts` on, scheduled before.
    public func state(at now: Timestamp) -> HuntState {
        let settled = settled(at: now)
        if let ends = settled.ends, ends <= now { return .ended }
        if let starts = settled.starts, starts <= now { return .running }
        return .scheduled
    }

    /// The next moment after `now` when the state changes by itself (its `STARTS` or `ENDS`
    /// arrives), for the timer that tells watchers; nil when only its host can change it (or it
    /// has ended).
    public func nextChange(after now: Timestamp) -> Timestamp? {
        let settled = settled(at: now)
        switch settled.state(at: now) {
        case .scheduled: return settled.starts ?? settled.ends
        case .running: return settled.ends
        case .ended: return nil
        }
    }

    /// STARTHUNT at `now`: a scheduled hunt starts now, even before its `STARTS`; its `starts`
    /// becomes now and a `DURATION` becomes `ends`. A running or ended hunt is a conflict.
    public func started(at now: Timestamp) throws(HuntConflict) -> HuntSchedule {
        switch state(at: now) {
        case .scheduled: break
        case .running: throw HuntConflict("the hunt is already running")
        case .ended: throw HuntConflict("the hunt has ended")
        }
        var started = self
        started.starts = now
        if let durationSeconds {
            started.ends = Self.time(now, plusSeconds: durationSeconds) ?? Self.lastStorable
            started.durationSeconds = nil
        }
        return started
    }

    /// ENDHUNT at `now`: the hunt ends now, whatever its state (an ended hunt is a conflict). A
    /// hunt that had not started loses its planned `starts` (it never started) and its `DURATION`.
    public func ended(at now: Timestamp) throws(HuntConflict) -> HuntSchedule {
        var ended = settled(at: now)
        switch ended.state(at: now) {
        case .scheduled: ended.starts = nil
        case .running: break
        case .ended: throw HuntConflict("the hunt has already ended")
        }
        ended.ends = now
        ended.durationSeconds = nil
        return ended
    }

    /// EXTEND by `seconds` (checked by ``Validation/extendSeconds(_:)``) at `now`:
    /// - a hunt with an end (running or scheduled): `ends` moves later by `seconds`;
    /// - a running hunt with no end: it gets one, `seconds` from now;
    /// - a scheduled hunt with a `DURATION`: the duration grows by `seconds`;
    /// - a scheduled hunt with neither: it ends `seconds` after it starts (a `DURATION` of `seconds`).
    ///
    /// An ended hunt is a ``HuntConflict``. Past what a hunt may last is a ``ValidationError``
    /// (the request asks too much): a scheduled hunt's `DURATION` past 30 days
    /// (``HuntLimits/durationSeconds``), or any end more than 100 years from now
    /// (``HuntLimits/farthestEndSeconds``).
    public func extended(bySeconds seconds: Int, at now: Timestamp) throws -> HuntSchedule {
        precondition(HuntLimits.extendSeconds.contains(seconds), "EXTEND's seconds must be checked first")
        var extended = settled(at: now)
        let state = extended.state(at: now)
        let farthest = Self.time(now, plusSeconds: HuntLimits.farthestEndSeconds) ?? Self.lastStorable
        let tooFar = ValidationError("the hunt cannot end more than 100 years from now")
        switch (state, extended.ends, extended.durationSeconds) {
        case (.ended, _, _):
            throw HuntConflict("the hunt has ended")
        case (_, let ends?, _):
            guard let later = Self.time(ends, plusSeconds: seconds), later <= farthest else { throw tooFar }
            extended.ends = later
        case (.running, nil, _):
            guard let later = Self.time(now, plusSeconds: seconds), later <= farthest else { throw tooFar }
            extended.ends = later
        case (.scheduled, nil, let duration):
            let longer = (duration ?? 0) + seconds
            guard HuntLimits.durationSeconds.contains(longer) else {
                throw ValidationError("a scheduled hunt's DURATION is at most 30 days (it would be \(longer) s)")
            }
            // The end is at least this far from now (later if the start is later).
            guard let end = Self.time(extended.starts.map { max($0, now) } ?? now, plusSeconds: longer), end <= farthest else { throw tooFar }
            extended.durationSeconds = longer
        }
        return extended
    }

    static let lastStorable = Timestamp(microseconds: Timestamp.storableMicroseconds.upperBound)

    /// `seconds` after `time`, or nil when that is not a storable instant.
    static func time(_ time: Timestamp, plusSeconds seconds: Int) -> Timestamp? {
        let (micros, overflow) = Int64(seconds).multipliedReportingOverflow(by: 1_000_000)
        let (sum, sumOverflow) = time.microseconds.addingReportingOverflow(micros)
        guard !overflow, !sumOverflow else { return nil }
        let later = Timestamp(microseconds: sum)
        return later.isStorable ? later : nil
    }
}
