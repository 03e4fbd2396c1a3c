/// The bookkeeping of ``PostgresPool`` as a plain value: no lock, no thread, no socket. Events go
/// in (a lease asked for, a connection checked, opened or not, work finished, a deadline passed,
/// a cancel request done, the pool closed), and what the pool must do comes out: actions to
/// perform outside its lock, and, for the thread holding a lease, the next piece of work.
///
/// **Slots.** A request holding a lease, or an idle connection, takes one of `maxConnections`
/// slots. ``open`` and ``connecting`` are counted from the leases and the idle list, never kept
/// beside them, so they cannot drift. A slot freed while requests wait goes to the first of them
/// in the same step: with the connection, if it is still good, or as the right to open one.
///
/// **Answers.** Every request is answered exactly once. A queued request is answered when it
/// leaves the queue (given a lease, or failed). A leased one carries `callerWaiting` until the
/// step that answers it (a ``Action/fail(_:_:)`` or ``Work/done(answer:)`` with `answer`)
/// clears it; no step answers a request whose flag is clear. A lease whose caller was answered
/// by its deadline keeps its slot until its thread reports back, and its connection is never
/// reused.
///
/// **Time** comes with each event (`now`): a back-off ends when the first event after it
/// arrives, with no timer of its own.
struct PoolStateMachine<Connection: Sendable, Request: Identifiable & Sendable>: Sendable where Request.ID: Sendable {
    typealias Instant = ContinuousClock.Instant

    /// Limits fixed when the pool is made.
    struct Configuration: Sendable {
        /// Slots: leases plus idle connections.
        var maxConnections: Int
        /// An idle connection unused this long is checked with a round trip before it is handed out.
        var validationIdleTime: Duration
        /// When connects may be tried again after one failed.
        var backoff = ReconnectBackoff()
    }

    /// An idle connection and since when nobody used it.
    struct Idle: Sendable {
        var connection: Connection
        var since: Instant
    }

    /// A request waiting for a slot.
    struct Waiter: Sendable {
        var request: Request
        var queuedAt: Instant
    }

    /// Where a leased request's work stands.
    enum Phase: Sendable {
        /// Handed an idle connection; its thread has not started.
        case assigned(Connection, idleSince: Instant)
        /// Allowed to open a connection; its thread has not started. Counts as connecting.
        case connectAllowed
        /// Its thread checks the idle connection it was handed.
        case checking(Connection)
        /// Its thread opens a connection. `timedOut`: the caller's deadline passed meanwhile,
        /// and the back-off already counted the connect as failed.
        case connecting(timedOut: Bool)
        /// Its thread runs the call's work on the connection.
        case running(Connection)

        var isConnecting: Bool {
            switch self {
            case .connectAllowed, .connecting: true
            case .assigned, .checking, .running: false
            }
        }

        /// The connection the thread is using, if any (its statement can be cancelled).
        var connectionInUse: Connection? {
            switch self {
            case .checking(let connection), .running(let connection): connection
            case .assigned, .connectAllowed, .connecting: nil
            }
        }
    }

    /// A request holding a slot.
    struct Lease: Sendable {
        var request: Request
        var phase: Phase
        /// Until its caller is answered.
        var callerWaiting = true
    }

    /// Why a caller is answered with an error by the pool itself.
    enum Failure: Sendable, Equatable {
        /// The pool is shut down.
        case closed
        /// A connect failed a moment ago and the back-off has not passed: not trying now.
        case unreachable
        /// The deadline passed while the request waited for a slot.
        case timedOutWaiting
        /// The deadline passed while its lease was being worked on.
        case timedOutWorking
    }

    /// What the pool does, outside its lock, in this order.
    enum Action: Sendable {
        /// Run the request's work on a pool thread; it reports with ``workBegan(_:at:)``.
        case start(Request)
        /// Answer the request's caller with this error.
        case fail(Request, Failure)
        /// The pool no longer has these connections: close them (off the lock, on a pool thread).
        case close([Connection])
        /// Mark the connection given up on: its statements fail at once from now on.
        case abandon(Connection)
        /// Send a cancel request for the connection's statement, then report ``cancelFinished()``.
        case cancel(Connection)
        /// Arm the timer that reports ``interruptDue(_:)`` for this request a grace period from now.
        case scheduleInterrupt(Request)
        /// Cut the connection's socket, so that the thread blocked on it returns.
        case interrupt(Connection)
    }

    /// What the thread holding a lease does next.
    enum Work: Sendable {
        /// Check the idle connection: a look at its socket, and with `roundTrip` an empty
        /// statement; report with ``connectionChecked(_:usable:at:)``.
        case check(Connection, roundTrip: Bool)
        /// Open a connection; report with ``connectSucceeded(_:_:at:)`` or ``connectFailed(_:at:)``.
        case connect
        /// Run the call's work on the connection; report with ``workFinished(_:_:at:)``.
        case run(Connection)
        /// Nothing more: the lease has ended. With `answer`, give the caller the work's own
        /// outcome (its result, or the connect's error); without, the caller has its answer.
        case done(answer: Bool)
    }

    /// The thread's next work and what the pool does first.
    struct Step: Sendable {
        var work: Work
        var actions: [Action]

        init(_ work: Work, _ actions: [Action] = []) {
            self.work = work
            self.actions = actions
        }
    }

    /// How a connection came back from the work.
    enum Returned: Sendable, Equatable {
        /// Healthy and out of any transaction: it may be used again.
        case reusable
        /// Not to be used again (failed, left in a transaction, given up on).
        case broken
        /// The server closed it: the idle ones most likely died with it (a restart).
        case serverGone
    }

    let configuration: Configuration
    /// Most recently used last: the next lease takes the last.
    private(set) var idle: [Idle] = []
    private var leases: [Request.ID: Lease] = [:]
    /// First come, first served.
    private(set) var waiters: [Waiter] = []
    private(set) var isClosed = false
    private(set) var backoff: ReconnectBackoff
    /// Cancel requests being sent: at most `maxConnections`.
    private(set) var cancelling = 0
    /// Requests that found no slot and queued, ever.
    private(set) var waits = 0
    /// The time queued requests spent queued, summed as each left the queue.
    private(set) var waited: Duration = .zero
    /// Connects started, ever.
    private(set) var connectsStarted = 0

    init(_ configuration: Configuration) {
        precondition(configuration.maxConnections > 0, "a pool needs at least one connection")
        self.configuration = configuration
        self.backoff = configuration.backoff
    }

    /// Slots taken: leases (a lease whose caller has timed out included, until its thread is
    /// back) plus idle connections.
    var open: Int { leases.count + idle.count }

    /// Leases opening a connection, or allowed to.
    var connecting: Int { leases.values.reduce(0) { $0 + ($1.phase.isConnecting ? 1 : 0) } }

    /// Leases, whether or not their caller still waits.
    var leased: Int { leases.count }

    /// Where a leased request's work stands; nil when it holds no lease.
    func phase(of id: Request.ID) -> Phase? { leases[id]?.phase }

    /// Whether the request is queued for a slot.
    func isQueued(_ id: Request.ID) -> Bool { waiters.contains { $0.request.id == id } }

    // MARK: Events

    /// A call asks for a connection: an idle one, a new one if a slot is free and connects are
    /// not backing off, else a place in the queue.
    mutating func leaseRequested(_ request: Request, at now: Instant) -> [Action] {
        assert(leases[request.id] == nil && !isQueued(request.id), "a request asks once")
        if isClosed { return [.fail(request, .closed)] }
        if let last = idle.popLast() {
            leases[request.id] = Lease(request: request, phase: .assigned(last.connection, idleSince: last.since))
            return [.start(request)]
        }
        guard mayConnect(at: now) else { return [.fail(request, .unreachable)] }
        if open < configuration.maxConnections {
            leases[request.id] = Lease(request: request, phase: .connectAllowed)
            return [.start(request)]
        }
        waiters.append(Waiter(request: request, queuedAt: now))
        waits += 1
        return []
    }

    /// A pool thread took up the request's lease. A caller answered meanwhile (its deadline)
    /// ends the lease untouched.
    mutating func workBegan(_ id: Request.ID, at now: Instant) -> Step {
        guard var lease = leases[id] else { return unexpected("work began without a lease") }
        switch lease.phase {
        case .assigned(let connection, let since):
            guard lease.callerWaiting else { return Step(.done(answer: false), endLease(id, returning: connection, at: now)) }
            lease.phase = .checking(connection)
            leases[id] = lease
            return Step(.check(connection, roundTrip: now - since >= configuration.validationIdleTime))
        case .connectAllowed:
            guard lease.callerWaiting else { return Step(.done(answer: false), endLease(id, returning: nil, at: now)) }
            lease.phase = .connecting(timedOut: false)
            leases[id] = lease
            connectsStarted += 1
            return Step(.connect)
        case .checking, .connecting, .running:
            return unexpected("work began twice")
        }
    }

    /// The idle connection was checked. A dead one is closed with every other idle connection
    /// (a restart breaks them all) and replaced by a new one, unless connects are backing off.
    mutating func connectionChecked(_ id: Request.ID, usable: Bool, at now: Instant) -> Step {
        guard var lease = leases[id], case .checking(let connection) = lease.phase else {
            return unexpected("a check reported without one under way")
        }
        if usable && lease.callerWaiting {
            lease.phase = .running(connection)
            leases[id] = lease
            return Step(.run(connection))
        }
        // Dead, or given up on by its deadline (then abandoned, never reused).
        var actions: [Action] = [.close(usable ? [connection] : takeIdle() + [connection])]
        guard lease.callerWaiting else {
            return Step(.done(answer: false), actions + endLease(id, returning: nil, at: now))
        }
        guard mayConnect(at: now) else {
            actions += endLease(id, returning: nil, at: now)
            actions.append(.fail(lease.request, .unreachable))
            return Step(.done(answer: false), actions)
        }
        lease.phase = .connecting(timedOut: false)
        leases[id] = lease
        connectsStarted += 1
        return Step(.connect, actions)
    }

    /// A connect worked: the back-off is over. The connection serves the caller, or, if its
    /// deadline passed meanwhile, the next waiter or the idle list.
    mutating func connectSucceeded(_ id: Request.ID, _ connection: Connection, at now: Instant) -> Step {
        guard var lease = leases[id], case .connecting = lease.phase else {
            return unexpected("a connect reported without one under way", closing: connection)
        }
        backoff.succeeded()
        guard lease.callerWaiting else { return Step(.done(answer: false), endLease(id, returning: connection, at: now)) }
        lease.phase = .running(connection)
        leases[id] = lease
        return Step(.run(connection))
    }

    /// A connect failed: connects back off (unless the deadline already counted this one),
    /// the slot is freed, the caller gets the connect's error.
    mutating func connectFailed(_ id: Request.ID, at now: Instant) -> Step {
        guard let lease = leases[id], case .connecting(let timedOut) = lease.phase else {
            return unexpected("a connect reported without one under way")
        }
        if !timedOut { backoff.failed(at: now) }
        return Step(.done(answer: lease.callerWaiting), endLease(id, returning: nil, at: now))
    }

    /// The work is done with its connection: kept if it is reusable and was not given up on,
    /// closed otherwise; the caller gets the work's result unless its deadline answered it.
    mutating func workFinished(_ id: Request.ID, _ returned: Returned, at now: Instant) -> Step {
        guard let lease = leases[id], case .running(let connection) = lease.phase else {
            return unexpected("work finished without running")
        }
        var actions: [Action] = []
        let keep = returned == .reusable && lease.callerWaiting
        if !keep {
            // A connection given up on went away by the pool's own doing, which says nothing
            // of the others.
            let gone = returned == .serverGone && lease.callerWaiting
            actions.append(.close(gone ? takeIdle() + [connection] : [connection]))
        }
        actions += endLease(id, returning: keep ? connection : nil, at: now)
        return Step(.done(answer: lease.callerWaiting), actions)
    }

    /// The thread pool refused the work (it is shutting down): the lease ends unused.
    mutating func workRejected(_ id: Request.ID, at now: Instant) -> [Action] {
        guard let lease = leases[id] else { return [] }
        var actions: [Action] = []
        if case .assigned(let connection, _) = lease.phase { actions.append(.close([connection])) }
        actions += endLease(id, returning: nil, at: now)
        if lease.callerWaiting { actions.append(.fail(lease.request, .closed)) }
        return actions
    }

    /// The request's deadline passed: its caller is answered now, whatever its thread is doing.
    /// A connect under way counts as failed (no other caller should wait on it); a statement
    /// under way is abandoned and cancelled, and its socket cut a grace period later if the
    /// thread is still blocked.
    mutating func deadlinePassed(_ id: Request.ID, at now: Instant) -> [Action] {
        if let index = waiters.firstIndex(where: { $0.request.id == id }) {
            let waiter = waiters.remove(at: index)
            waited += now - waiter.queuedAt
            return [.fail(waiter.request, .timedOutWaiting)]
        }
        guard var lease = leases[id], lease.callerWaiting else { return [] }
        lease.callerWaiting = false
        var actions: [Action] = []
        switch lease.phase {
        case .connecting:
            // Recorded before the caller hears of it, so that its next call knows.
            backoff.failed(at: now)
            lease.phase = .connecting(timedOut: true)
            actions = [.fail(lease.request, .timedOutWorking)]
        case .checking(let connection), .running(let connection):
            actions = [.abandon(connection), .fail(lease.request, .timedOutWorking)]
            // Every cancel thread busy: skipped, the socket is cut later anyway.
            if cancelling < configuration.maxConnections {
                cancelling += 1
                actions.append(.cancel(connection))
            }
            actions.append(.scheduleInterrupt(lease.request))
        case .assigned, .connectAllowed:
            actions = [.fail(lease.request, .timedOutWorking)]
        }
        leases[id] = lease
        return actions
    }

    /// A grace period after the deadline: a thread still using its connection is blocked on an
    /// unreachable server; its socket is cut.
    func interruptDue(_ id: Request.ID) -> [Action] {
        guard let lease = leases[id], !lease.callerWaiting, let connection = lease.phase.connectionInUse else { return [] }
        return [.interrupt(connection)]
    }

    /// A cancel request was sent (or failed to be).
    mutating func cancelFinished() {
        guard cancelling > 0 else {
            assertionFailure("a cancel finished that never started")
            return
        }
        cancelling -= 1
    }

    /// Every idle connection is closed; new ones are opened on demand.
    mutating func discardIdle() -> [Action] {
        let connections = takeIdle()
        return connections.isEmpty ? [] : [.close(connections)]
    }

    /// The pool shuts down: every waiter fails, idle connections close, later requests fail,
    /// and connections coming back from work are closed.
    mutating func closeRequested(at now: Instant) -> [Action] {
        isClosed = true
        return dequeueAll(at: now).map { .fail($0.request, .closed) } + discardIdle()
    }

    // MARK: Slots

    /// Ends a lease. Its slot goes to the first waiter: with `connection` if the pool keeps it,
    /// else as the right to open one, unless connects are backing off; then every waiter fails
    /// at once rather than wait for a connect nobody will try.
    private mutating func endLease(_ id: Request.ID, returning connection: Connection?, at now: Instant) -> [Action] {
        leases[id] = nil
        if let connection {
            if isClosed { return [.close([connection])] }
            guard !waiters.isEmpty else {
                idle.append(Idle(connection: connection, since: now))
                return []
            }
            let waiter = dequeueFirst(at: now)
            leases[waiter.request.id] = Lease(request: waiter.request, phase: .assigned(connection, idleSince: now))
            return [.start(waiter.request)]
        }
        guard !isClosed, !waiters.isEmpty else { return [] }
        guard mayConnect(at: now) else {
            return dequeueAll(at: now).map { .fail($0.request, .unreachable) }
        }
        let waiter = dequeueFirst(at: now)
        leases[waiter.request.id] = Lease(request: waiter.request, phase: .connectAllowed)
        return [.start(waiter.request)]
    }

    /// Whether a connect may start now (the leases are counted only while backing off).
    private func mayConnect(at now: Instant) -> Bool {
        backoff.retryAt == nil || backoff.allowsConnect(at: now, connecting: connecting)
    }

    private mutating func takeIdle() -> [Connection] {
        defer { idle = [] }
        return idle.map(\.connection)
    }

    /// Takes the oldest waiter off the queue, counting the time it waited.
    private mutating func dequeueFirst(at now: Instant) -> Waiter {
        let waiter = waiters.removeFirst()
        waited += now - waiter.queuedAt
        return waiter
    }

    /// Takes every waiter off the queue, counting the time they waited.
    private mutating func dequeueAll(at now: Instant) -> [Waiter] {
        defer { waiters = [] }
        for waiter in waiters { waited += now - waiter.queuedAt }
        return waiters
    }

    /// An event that cannot happen in this state: a bug in the pool. The thread stops, closing
    /// what it brought; nothing else changes.
    private func unexpected(_ what: String, closing connection: Connection? = nil) -> Step {
        assertionFailure(what)
        return Step(.done(answer: false), connection.map { [.close([$0])] } ?? [])
    }
}

extension PoolStateMachine.Phase: Equatable where Connection: Equatable {}
extension PoolStateMachine.Action: Equatable where Connection: Equatable, Request: Equatable {}
extension PoolStateMachine.Work: Equatable where Connection: Equatable {}
extension PoolStateMachine.Step: Equatable where Connection: Equatable, Request: Equatable {}

/// When a new connection may be tried after connects failed: `first` (100 ms) after the first
/// failure, doubling up to `longest` (2 s), one attempt at a time; a successful connect resets it.
struct ReconnectBackoff: Sendable, Equatable {
    var first: Duration = .milliseconds(100)
    var longest: Duration = .seconds(2)

    /// Nil while connects work.
    private(set) var delay: Duration?
    private(set) var retryAt: ContinuousClock.Instant?

    mutating func failed(at now: ContinuousClock.Instant) {
        let next = delay.map { min($0 * 2, longest) } ?? first
        delay = next
        retryAt = now + next
    }

    mutating func succeeded() {
        delay = nil
        retryAt = nil
    }

    /// Whether a connect may start now, given how many are under way.
    func allowsConnect(at now: ContinuousClock.Instant, connecting: Int) -> Bool {
        guard let retryAt else { return true }
        return connecting == 0 && now >= retryAt
    }
}
