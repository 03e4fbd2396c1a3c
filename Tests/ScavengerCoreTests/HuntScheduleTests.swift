import ScavengerCore
import Testing

/// Times in whole seconds from a fixed instant, to keep the tables readable; `lasting` is a hunt's
/// DURATION in seconds, a value of the schedule (no clock is read anywhere in these tests).
private let origin: Int64 = 1_800_000_000_000_000
private func t(_ seconds: Int64) -> Timestamp { Timestamp(microseconds: origin + seconds * 1_000_000) }
private func schedule(starts: Int64? = nil, ends: Int64? = nil, lasting: Int? = nil) -> HuntSchedule {
    HuntSchedule(starts: starts.map(t), ends: ends.map(t), durationSeconds: lasting)
}
private let lastStorable = Timestamp(microseconds: Timestamp.storableMicroseconds.upperBound)

@Suite("Hunt schedules: state by the clock, STARTHUNT, ENDHUNT, EXTEND")
struct HuntScheduleTests {
    // MARK: CREATEHUNT

    @Test("what CREATEHUNT accepts", arguments: [
        (nil, nil, nil), (1, nil, nil), (nil, 1, nil), (1, 2, nil), (nil, nil, 1), (nil, nil, 2_592_000), (100, nil, 60),
        (1, nil, 2_592_000),
    ] as [(Int64?, Int64?, Int?)])
    func accepted(starts: Int64?, ends: Int64?, lasting: Int?) throws {
        let made = try HuntSchedule(starts: starts.map(t), ends: ends.map(t), durationSeconds: lasting, now: t(0))
        #expect(made == schedule(starts: starts, ends: ends, lasting: lasting))
    }

    @Test("what CREATEHUNT refuses, and why", arguments: [
        (0, nil, nil, "STARTS must be in the future"),
        (-1, nil, nil, "STARTS must be in the future"),
        (nil, 0, nil, "ENDS must be in the future"),
        (nil, -3600, nil, "ENDS must be in the future"),
        (10, 10, nil, "ENDS must be after STARTS"),
        (10, 9, nil, "ENDS must be after STARTS"),
        (nil, 10, 60, "give ENDS or DURATION, not both"),
        (nil, nil, 0, "DURATION must be between 1 and 2592000, got 0"),
        (nil, nil, -1, "DURATION must be between 1 and 2592000, got -1"),
        (nil, nil, 2_592_001, "DURATION must be between 1 and 2592000, got 2592001"),
        (5, nil, 2_592_001, "DURATION must be between 1 and 2592000, got 2592001"),
    ] as [(Int64?, Int64?, Int?, String)])
    func refused(starts: Int64?, ends: Int64?, lasting: Int?, expected: String) {
        #expect(throws: ValidationError(expected)) {
            try HuntSchedule(starts: starts.map(t), ends: ends.map(t), durationSeconds: lasting, now: t(0))
        }
    }

    @Test("in the future means after now by even a microsecond")
    func futureByAMicrosecond() throws {
        let now = t(0)
        let next = Timestamp(microseconds: now.microseconds + 1)
        #expect(throws: Never.self) { try HuntSchedule(starts: next, ends: nil, durationSeconds: nil, now: now) }
        #expect(throws: Never.self) { try HuntSchedule(starts: next, ends: Timestamp(microseconds: next.microseconds + 1), durationSeconds: nil, now: now) }
        #expect(throws: ValidationError("STARTS must be in the future")) {
            try HuntSchedule(starts: now, ends: nil, durationSeconds: nil, now: now)
        }
    }

    @Test("times past the year 9999 are refused")
    func unstorable() {
        let beyond = Timestamp(microseconds: lastStorable.microseconds + 1)
        #expect(throws: ValidationError("STARTS must be before the year 10000")) {
            try HuntSchedule(starts: beyond, ends: nil, durationSeconds: nil, now: t(0))
        }
        #expect(throws: ValidationError("ENDS must be before the year 10000")) {
            try HuntSchedule(starts: nil, ends: beyond, durationSeconds: nil, now: t(0))
        }
        #expect(throws: ValidationError("STARTS plus DURATION must be before the year 10000")) {
            try HuntSchedule(starts: lastStorable, ends: nil, durationSeconds: 1, now: t(0))
        }
        #expect(throws: Never.self) { try HuntSchedule(starts: lastStorable, ends: nil, durationSeconds: nil, now: t(0)) }
    }

    // MARK: State by the clock

    @Test("the state at a moment: running from starts (included) to ends (excluded)", arguments: [
        // (starts, ends, lasting, now, state)
        (nil, nil, nil, 0, HuntState.scheduled),
        (nil, nil, nil, 1_000_000, .scheduled),  // waits for its host forever
        (10, nil, nil, 9, .scheduled),
        (10, nil, nil, 10, .running),
        (10, nil, nil, 1_000_000, .running),  // runs until its host ends it
        (10, 20, nil, 19, .running),
        (10, 20, nil, 20, .ended),
        (10, 20, nil, 5, .scheduled),
        (nil, 20, nil, 19, .scheduled),  // never started by hand
        (nil, 20, nil, 20, .ended),  // its end passes anyway
        (10, nil, 30, 9, .scheduled),
        (10, nil, 30, 10, .running),
        (10, nil, 30, 39, .running),
        (10, nil, 30, 40, .ended),
        (nil, nil, 30, 1_000_000, .scheduled),  // a lasting counts from a start that has not come
    ] as [(Int64?, Int64?, Int?, Int64, HuntState)])
    func state(starts: Int64?, ends: Int64?, lasting: Int?, now: Int64, expected: HuntState) {
        #expect(schedule(starts: starts, ends: ends, lasting: lasting).state(at: t(now)) == expected)
    }

    @Test("a microsecond before ends it runs, at ends it has ended")
    func microsecondEdges() {
        let plan = schedule(starts: 10, ends: 20)
        #expect(plan.state(at: Timestamp(microseconds: t(10).microseconds - 1)) == .scheduled)
        #expect(plan.state(at: Timestamp(microseconds: t(20).microseconds - 1)) == .running)
        #expect(plan.state(at: t(20)) == .ended)
    }

    @Test("a DURATION becomes ends once the start has passed, not before")
    func settled() {
        let plan = schedule(starts: 10, lasting: 30)
        #expect(plan.settled(at: t(9)) == plan)
        #expect(plan.settled(at: t(10)) == schedule(starts: 10, ends: 40))
        #expect(plan.settled(at: t(100)) == schedule(starts: 10, ends: 40))
        #expect(schedule(lasting: 30).settled(at: t(100)) == schedule(lasting: 30))
        #expect(schedule(starts: 10, ends: 20).settled(at: t(15)) == schedule(starts: 10, ends: 20))
    }

    @Test("the next change by itself: the start, the end, or none", arguments: [
        (nil, nil, nil, 0, nil),
        (10, nil, nil, 0, 10),
        (10, nil, nil, 10, nil),  // running until its host ends it
        (10, 20, nil, 0, 10),
        (10, 20, nil, 15, 20),
        (10, 20, nil, 20, nil),
        (nil, 20, nil, 0, 20),
        (10, nil, 30, 0, 10),
        (10, nil, 30, 10, 40),
        (nil, nil, 30, 0, nil),
    ] as [(Int64?, Int64?, Int?, Int64, Int64?)])
    func nextChange(starts: Int64?, ends: Int64?, lasting: Int?, now: Int64, expected: Int64?) {
        #expect(schedule(starts: starts, ends: ends, lasting: lasting).nextChange(after: t(now)) == expected.map(t))
    }

    @Test("a hunt seen at a moment shows the settled times and state")
    func huntAtAMoment() {
        func hunt(at now: Int64) -> Hunt {
            Hunt(
                id: "h1", name: "Walk", description: "", host: "alice", schedule: schedule(starts: 10, lasting: 30), at: t(now),
                ordered: false, isPublic: true, stops: 3, players: 2)
        }
        #expect(hunt(at: 0).state == .scheduled)
        #expect(hunt(at: 0).starts == t(10))
        #expect(hunt(at: 0).ends == nil)
        #expect(hunt(at: 10).state == .running)
        #expect(hunt(at: 10).ends == t(40))
        #expect(hunt(at: 40).state == .ended)
    }

    // MARK: STARTHUNT and ENDHUNT

    @Test("STARTHUNT starts a scheduled hunt now, even before its STARTS", arguments: [
        // (starts, ends, lasting, now, started starts, started ends)
        (nil, nil, nil, 5, 5, nil),
        (100, nil, nil, 5, 5, nil),
        (100, 200, nil, 5, 5, 200),
        (nil, 200, nil, 5, 5, 200),
        (nil, nil, 60, 5, 5, 65),
        (100, nil, 60, 5, 5, 65),
    ] as [(Int64?, Int64?, Int?, Int64, Int64, Int64?)])
    func start(starts: Int64?, ends: Int64?, lasting: Int?, now: Int64, newStarts: Int64, newEnds: Int64?) throws {
        let started = try schedule(starts: starts, ends: ends, lasting: lasting).started(at: t(now))
        #expect(started == schedule(starts: newStarts, ends: newEnds))
        #expect(started.state(at: t(now)) == .running)
    }

    @Test("STARTHUNT on a running or ended hunt is a conflict", arguments: [
        (10, nil, nil, 10, "the hunt is already running"),
        (10, 20, nil, 15, "the hunt is already running"),
        (10, nil, 30, 20, "the hunt is already running"),
        (10, 20, nil, 20, "the hunt has ended"),
        (nil, 20, nil, 25, "the hunt has ended"),
        (10, nil, 30, 40, "the hunt has ended"),
    ] as [(Int64?, Int64?, Int?, Int64, String)])
    func startRefused(starts: Int64?, ends: Int64?, lasting: Int?, now: Int64, expected: String) {
        #expect(throws: HuntConflict(expected)) { try schedule(starts: starts, ends: ends, lasting: lasting).started(at: t(now)) }
    }

    @Test("ENDHUNT ends a hunt now; one that never started loses its planned start", arguments: [
        (10, nil, nil, 15, 10 as Int64?),
        (10, 20, nil, 15, 10),
        (10, nil, 30, 15, 10),
        (100, 200, nil, 15, nil),
        (nil, nil, nil, 15, nil),
        (nil, nil, 30, 15, nil),
    ] as [(Int64?, Int64?, Int?, Int64, Int64?)])
    func end(starts: Int64?, ends: Int64?, lasting: Int?, now: Int64, keptStarts: Int64?) throws {
        let ended = try schedule(starts: starts, ends: ends, lasting: lasting).ended(at: t(now))
        #expect(ended == schedule(starts: keptStarts, ends: now))
        #expect(ended.state(at: t(now)) == .ended)
        #expect(ended.nextChange(after: t(now)) == nil)
    }

    @Test("ENDHUNT on an ended hunt is a conflict", arguments: [
        (10, 20, nil, 20), (nil, 20, nil, 30), (10, nil, 30, 40),
    ] as [(Int64?, Int64?, Int?, Int64)])
    func endRefused(starts: Int64?, ends: Int64?, lasting: Int?, now: Int64) {
        #expect(throws: HuntConflict("the hunt has already ended")) {
            try schedule(starts: starts, ends: ends, lasting: lasting).ended(at: t(now))
        }
    }

    // MARK: EXTEND

    @Test("EXTEND in each case the contract names", arguments: [
        // (starts, ends, lasting, now, seconds) → (starts, ends, lasting)
        // a running hunt with an end: the end moves later
        ((10, 100, nil, 50, 30), (10, 130, nil)),
        // a running hunt whose DURATION became its end
        ((10, nil, 60, 50, 30), (10, 100, nil)),
        // a running hunt with no end: it gets one, that many seconds from now
        ((10, nil, nil, 50, 30), (10, 80, nil)),
        // a scheduled hunt with a DURATION: it gets that much longer
        ((100, nil, 60, 50, 30), (100, nil, 90)),
        ((nil, nil, 60, 50, 30), (nil, nil, 90)),
        // a scheduled hunt with neither: it ends that many seconds after it starts
        ((100, nil, nil, 50, 30), (100, nil, 30)),
        ((nil, nil, nil, 50, 30), (nil, nil, 30)),
        // a scheduled hunt with an end: the end moves later
        ((100, 200, nil, 50, 30), (100, 230, nil)),
        ((nil, 200, nil, 50, 1), (nil, 201, nil)),
    ] as [((Int64?, Int64?, Int?, Int64, Int), (Int64?, Int64?, Int?))])
    func extend(given: (Int64?, Int64?, Int?, Int64, Int), expected: (Int64?, Int64?, Int?)) throws {
        let (starts, ends, lasting, now, seconds) = given
        let extended = try schedule(starts: starts, ends: ends, lasting: lasting).extended(bySeconds: seconds, at: t(now))
        #expect(extended == schedule(starts: expected.0, ends: expected.1, lasting: expected.2))
    }

    @Test("an extended scheduled hunt with neither runs that long once started")
    func extendThenStart() throws {
        let extended = try schedule().extended(bySeconds: 600, at: t(0))
        let started = try extended.started(at: t(50))
        #expect(started == schedule(starts: 50, ends: 650))
        #expect(started.state(at: t(649)) == .running)
        #expect(started.state(at: t(650)) == .ended)
    }

    @Test("EXTEND after the end is a conflict, at the very instant too", arguments: [
        (10, 20, nil, 20), (10, 20, nil, 1000), (nil, 20, nil, 20), (10, nil, 30, 40),
    ] as [(Int64?, Int64?, Int?, Int64)])
    func extendEnded(starts: Int64?, ends: Int64?, lasting: Int?, now: Int64) {
        #expect(throws: HuntConflict("the hunt has ended")) {
            try schedule(starts: starts, ends: ends, lasting: lasting).extended(bySeconds: 60, at: t(now))
        }
    }

    @Test("EXTEND past what a hunt may last is a bad argument: a scheduled DURATION past 30 days, any end past 100 years from now", arguments: [
        // (starts, ends, lasting, seconds): each too much
        (nil, nil, nil, 30 * 24 * 3600 + 1),
        (nil, nil, 30 * 24 * 3600, 1),
        (100, nil, 29 * 24 * 3600, 2 * 24 * 3600),
        (0, 50, nil, 100 * 365 * 24 * 3600),
        (0, nil, nil, 100 * 365 * 24 * 3600 + 1),
    ] as [(Int64?, Int64?, Int?, Int)])
    func extendTooFar(starts: Int64?, ends: Int64?, lasting: Int?, seconds: Int) {
        guard HuntLimits.extendSeconds.contains(seconds) else {
            #expect(throws: ValidationError.self) { try Validation.extendSeconds(seconds) }
            return
        }
        #expect(throws: ValidationError.self) {
            try schedule(starts: starts, ends: ends, lasting: lasting).extended(bySeconds: seconds, at: t(10))
        }
    }

    @Test("EXTEND up to the bounds: a scheduled hunt's DURATION to exactly 30 days, a running hunt's end to exactly 100 years from now")
    func extendToTheBounds() throws {
        let waiting = try schedule(lasting: 29 * 24 * 3600).extended(bySeconds: 24 * 3600, at: t(0))
        #expect(waiting.durationSeconds == 30 * 24 * 3600)
        let running = try schedule(starts: 0).extended(bySeconds: HuntLimits.farthestEndSeconds, at: t(5))
        #expect(running.ends == t(5 + Int64(HuntLimits.farthestEndSeconds)))
    }

    @Test("the state follows the clock through a whole life: create, start by itself, extend, end by itself")
    func wholeLife() throws {
        var plan = try HuntSchedule(starts: t(100), ends: nil, durationSeconds: 3600, now: t(0))
        #expect(plan.state(at: t(99)) == .scheduled)
        plan = try plan.extended(bySeconds: 600, at: t(50))
        #expect(plan.durationSeconds == 4200)
        #expect(plan.state(at: t(100)) == .running)
        plan = try plan.extended(bySeconds: 60, at: t(200))
        #expect(plan == schedule(starts: 100, ends: 4360))
        #expect(plan.state(at: t(4359)) == .running)
        #expect(plan.state(at: t(4360)) == .ended)
        #expect(throws: HuntConflict("the hunt has ended")) { try plan.extended(bySeconds: 60, at: t(4360)) }
    }
}
