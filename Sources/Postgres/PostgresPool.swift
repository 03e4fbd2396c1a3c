import NIOCore
import NIOPosix
import Synchronization

/// A bounded pool of connections. Every call runs on a dedicated thread pool, never on an event
/// loop or Swift's cooperative pool, with one connection leased to one task at a time.
///
/// Connections are opened lazily up to `maxConnections`; a task that finds them all busy waits.
/// A connection that broke (or was left inside a transaction) is closed and replaced, never reused.
///
/// **Deadlines.** With a ``PostgresConfiguration/commandTimeout``, a caller waits at most that
/// long in all (for a free connection, for one to open, for its work) and then gets
/// ``PostgresError/Code/timeout``, even when the thread doing its work is still blocked in libpq:
/// the work races a timer. The connection of work that passed its deadline is abandoned (closed,
/// never reused), its statement cancelled (`PQcancel`, from a thread of its own), and, if the
/// thread is still blocked one more timeout later (an unreachable server), its socket is cut so
/// that libpq returns. The slot (one connection, one thread) stays taken until the thread is back.
///
/// **Outages.** An idle connection is looked at before it is handed out (and, idle longer than
/// ``PostgresConfiguration/validationIdleTime``, checked with a round trip); a dead one is
/// replaced and every other idle connection discarded, so that the first write after a restart
/// runs on a fresh connection. After a failed connect, further connects wait a back-off (100 ms,
/// doubling up to 2 s, reset by a success; one attempt at a time): meanwhile calls that need a new
/// connection fail at once with ``PostgresError/Code/connectionFailure``.
public final class PostgresPool: Sendable {
    public let configuration: PostgresConfiguration
    public let maxConnections: Int
    private let threadPool: NIOThreadPool
    /// Sends cancel requests: `PQcancel` blocks for a round trip of its own.
    private let cancelThreadPool: NIOThreadPool
    /// Every decision about slots, waiters, back-off and answers: see ``PoolStateMachine``.
    private let machine: Mutex<Machine>
    /// The time as the pool's bookkeeping sees it (back-off, idle time, waits); deadlines are
    /// always real time.
    private let now: @Sendable () -> ContinuousClock.Instant
    private let nextCallID = Atomic<Int>(0)
    /// Counted by ``transaction(_:)``: see ``retryStatistics``.
    private let retried = Atomic<Int>(0)
    private let exhausted = Atomic<Int>(0)

    private typealias Machine = PoolStateMachine<PostgresConnection, Call>

    /// A call as the state machine keeps it, whatever its result type.
    private struct Call: Identifiable, Sendable {
        let id: Int
        let pending: any PoolCall
    }

    /// How often calls had to wait for a connection and for how long, since the pool started:
    /// `waiting` is the queue now, `waits` every call that queued, `waited` their summed wait.
    public struct WaitStatistics: Sendable, Equatable {
        public var waiting: Int
        public var waits: Int
        public var waited: Duration
    }

    /// The pool's queue, for metrics.
    public var waitStatistics: WaitStatistics {
        machine.withLock { WaitStatistics(waiting: $0.waiters.count, waits: $0.waits, waited: $0.waited) }
    }

    /// - Parameters:
    ///   - maxConnections: at most this many connections (and blocking threads) at once; default 8.
    public convenience init(configuration: PostgresConfiguration, maxConnections: Int = 8) {
        self.init(configuration: configuration, maxConnections: maxConnections, now: { .now })
    }

    /// A pool whose bookkeeping reads the time from `now` (tests hold it still to make the
    /// back-off last, or move it on to end it).
    init(
        configuration: PostgresConfiguration, maxConnections: Int,
        now: @escaping @Sendable () -> ContinuousClock.Instant
    ) {
        precondition(maxConnections > 0, "a pool needs at least one connection")
        self.configuration = configuration
        self.maxConnections = maxConnections
        self.now = now
        self.threadPool = NIOThreadPool(numberOfThreads: maxConnections)
        self.threadPool.start()
        self.cancelThreadPool = NIOThreadPool(numberOfThreads: maxConnections)
        self.cancelThreadPool.start()
        self.machine = Mutex(Machine(Machine.Configuration(
            maxConnections: maxConnections, validationIdleTime: configuration.validationIdleTime)))
    }

    /// Closes idle connections and stops the threads; later calls fail with `poolClosed`.
    /// Call once all users are done.
    public func shutdown() async {
        let actions = machine.withLock { $0.closeRequested(at: now()) }
        var idle: [PostgresConnection] = []
        for action in actions {
            if case .close(let connections) = action { idle += connections } else { perform([action]) }
        }
        // Closing a connection (`PQfinish`) writes to its socket: do it on a pool thread.
        let closing = idle
        _ = try? await threadPool.runIfActive { withExtendedLifetime(closing) {} }
        try? await threadPool.shutdownGracefully()
        // A cancel request to an unreachable server may never return: do not wait for it.
        cancelThreadPool.shutdownGracefully { _ in }
    }

    /// Leases a connection for `body`, which runs on a pool thread and may block.
    ///
    /// With `retryOnConnectionFailure`, a body that failed because the connection broke is run
    /// once more on a fresh connection: only for work that is safe to repeat (reads). Both runs
    /// share one deadline.
    public func withConnection<T: Sendable>(
        retryOnConnectionFailure: Bool = false,
        _ body: @escaping @Sendable (PostgresConnection) throws -> T
    ) async throws -> T {
        let deadline = configuration.commandTimeout.map { ContinuousClock.now + $0 }
        do {
            return try await leaseAndRun(body, deadline: deadline)
        } catch let error as PostgresError where retryOnConnectionFailure && error.code == .connectionFailure {
            // Idle connections opened before the failure are likely dead too (a server restart
            // breaks them all): drop them so the retry opens a fresh one.
            discardIdleConnections()
            return try await leaseAndRun(body, deadline: deadline)
        }
    }

    /// Runs `body` in a transaction on a leased connection: committed when it returns,
    /// rolled back when it throws.
    ///
    /// A transaction the server ends with a deadlock or a serialization failure (SQLSTATE 40P01
    /// or 40001: the server rolled it back, nothing of it is written) is run again, from the
    /// start and on a fresh lease, up to ``PostgresConfiguration/transactionAttempts`` tries in
    /// all, each new try after a random wait of up to 2 ms, 4 ms, … 64 ms (full jitter, so the
    /// transactions that collided do not collide again in step). So `body` must be safe to run
    /// again: it may only read and write through the connection, and decide from what it read.
    /// Every new try is counted (``retryStatistics``).
    public func transaction<T: Sendable>(
        _ body: @escaping @Sendable (PostgresConnection) throws -> T
    ) async throws -> T {
        var attempt = 1
        while true {
            do {
                return try await withConnection { connection in
                    try connection.transaction(body)
                }
            } catch let error as PostgresError where error.code == .serializationFailure && attempt < configuration.transactionAttempts {
                retried.add(1, ordering: .relaxed)
                let ceiling = Self.retryBackOff(attempt: attempt)
                attempt += 1
                try await Task.sleep(for: .microseconds(Int64.random(in: 0 ... ceiling)))
            } catch let error as PostgresError where error.code == .serializationFailure {
                exhausted.add(1, ordering: .relaxed)
                throw error
            }
        }
    }

    /// The longest wait, in microseconds, before try `attempt + 1` of a transaction: 2 ms,
    /// doubling, at most 64 ms.
    static func retryBackOff(attempt: Int) -> Int64 {
        2_000 << Int64(min(max(attempt - 1, 0), 5))
    }

    /// Transactions run again after a deadlock or serialization failure, and those that failed
    /// every try, since the pool started: for metrics.
    public var retryStatistics: (retries: Int, exhausted: Int) {
        (retried.load(ordering: .relaxed), exhausted.load(ordering: .relaxed))
    }

    /// Runs one statement; reads are retried once on a fresh connection if the first one broke.
    @discardableResult
    public func query(_ sql: SQL, binaryResults: Bool = false, idempotent: Bool = true) async throws -> PostgresRows {
        try await withConnection(retryOnConnectionFailure: idempotent) { connection in
            try connection.query(sql, binaryResults: binaryResults)
        }
    }

    /// Runs `body` on a leased connection as ``withConnection(retryOnConnectionFailure:_:)`` does
    /// (same deadline, never retried), without a task waiting for it: `completion` gets the
    /// outcome on the thread that settles the call, usually the pool thread that ran `body`,
    /// right after the connection is handed back. So work that follows one call with another
    /// (the pins' group commit) goes on from that thread, with no hop to an executor in between.
    /// `completion` must not block; it may submit further calls. If the pool cannot take the
    /// call (shut down, or the database unreachable a moment ago), `completion` runs before this
    /// returns.
    public func submit<T: Sendable>(
        _ body: @escaping @Sendable (PostgresConnection) throws -> T,
        completion: @escaping @Sendable (Result<T, any Error>) -> Void
    ) {
        startCall(body, deadline: configuration.commandTimeout.map { ContinuousClock.now + $0 }, answer: .callback(completion))
    }

    /// How many connections are open (leased or idle) and idle, for diagnostics. A lease whose
    /// caller has timed out counts as open until its thread is back.
    public var statistics: (open: Int, idle: Int) {
        machine.withLock { ($0.open, $0.idle.count) }
    }

    /// Connects the pool has started, ever: what tests count instead of timing calls.
    var connectAttempts: Int {
        machine.withLock { $0.connectsStarted }
    }

    /// Closes every idle connection; new ones are opened on demand.
    public func discardIdleConnections() {
        perform(machine.withLock { $0.discardIdle() })
    }

    // MARK: Leasing

    private static let closedError = PostgresError(code: .poolClosed, message: "the connection pool is shut down")
    private static let unreachableError = PostgresError(
        code: .connectionFailure, message: "the database could not be reached a moment ago; not trying again yet")

    private func timeoutError(_ what: String) -> PostgresError {
        let seconds = configuration.commandTimeout.map { "\($0)" } ?? "the deadline"
        return PostgresError(code: .timeout, message: "\(what) within \(seconds)")
    }

    private func error(_ failure: Machine.Failure) -> PostgresError {
        switch failure {
        case .closed: Self.closedError
        case .unreachable: Self.unreachableError
        case .timedOutWaiting: timeoutError("no database connection was free")
        case .timedOutWorking: timeoutError("no answer from the database")
        }
    }

    /// Deadlines fire on a thread of their own, never late because Swift's cooperative pool or a
    /// server's event loops are busy: one event loop for every pool of the process, woken only
    /// when a deadline is due (``DeadlineTimer``), not by each query.
    private static let deadlines = DeadlineTimer(loop: MultiThreadedEventLoopGroup(numberOfThreads: 1).next())

    private func leaseAndRun<T: Sendable>(
        _ body: @escaping @Sendable (PostgresConnection) throws -> T, deadline: ContinuousClock.Instant?
    ) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            startCall(body, deadline: deadline, answer: .continuation(continuation))
        }
    }

    /// Queues a call for a lease and arms its deadline.
    private func startCall<T: Sendable>(
        _ body: @escaping @Sendable (PostgresConnection) throws -> T, deadline: ContinuousClock.Instant?,
        answer: PendingCall<T>.Answer
    ) {
        let id = nextCallID.wrappingAdd(1, ordering: .relaxed).newValue
        let call = PendingCall(id: id, pool: self, body: body, answer: answer)
        perform(machine.withLock { $0.leaseRequested(Call(id: id, pending: call), at: now()) })
        guard let deadline, configuration.commandTimeout != nil else { return }
        call.setDeadlineTimer(Self.deadlines.schedule(at: .now() + Self.timeAmount(deadline - .now)) { [self] in
            perform(machine.withLock { $0.deadlinePassed(id, at: now()) })
        })
    }

    private static func timeAmount(_ duration: Duration) -> TimeAmount {
        let (seconds, attoseconds) = duration.components
        return .nanoseconds(max(0, seconds &* 1_000_000_000 &+ attoseconds / 1_000_000_000))
    }

    /// Carries out the state machine's actions, in order, outside its lock.
    private func perform(_ actions: [Machine.Action]) {
        for action in actions {
            switch action {
            case .start(let call):
                call.pending.start()
            case .fail(let call, let failure):
                call.pending.fail(error(failure))
            case .close(let connections):
                // Closing a connection (`PQfinish`) writes to its socket: do it on a pool thread.
                threadPool.submit { _ in withExtendedLifetime(connections) {} }
            case .abandon(let connection):
                connection.abandon()
            case .cancel(let connection):
                cancelThreadPool.submit { [self] _ in
                    connection.cancelRunningStatement()
                    machine.withLock { $0.cancelFinished() }
                }
            case .scheduleInterrupt(let call):
                // Still blocked after the cancel request had its chance: cut the socket.
                let grace = Self.timeAmount(max(configuration.commandTimeout ?? .zero, .seconds(1)))
                call.pending.setInterruptTimer(Self.deadlines.schedule(at: .now() + grace) { [self] in
                    perform(machine.withLock { $0.interruptDue(call.id) })
                })
            case .interrupt(let connection):
                connection.interrupt()
            }
        }
    }

    /// Runs a leased call's work on a pool thread.
    fileprivate func submit<T: Sendable>(_ call: PendingCall<T>) {
        threadPool.submit { [self] threadState in
            guard case .active = threadState else {
                perform(machine.withLock { $0.workRejected(call.id, at: now()) })
                call.workEnded()
                return
            }
            work(call)
        }
    }

    /// On a pool thread: checks or opens the connection, runs the call's body, hands the
    /// connection back, each step as the state machine says.
    private func work<T: Sendable>(_ call: PendingCall<T>) {
        var step = machine.withLock { $0.workBegan(call.id, at: now()) }
        var outcome: Result<T, any Error>?
        while true {
            perform(step.actions)
            switch step.work {
            case .check(let connection, let roundTrip):
                // Quiet while idle, and if idle for long, answering.
                let usable = connection.isQuietWhileIdle && (!roundTrip || connection.validate())
                step = machine.withLock { $0.connectionChecked(call.id, usable: usable, at: now()) }
            case .connect:
                do {
                    let connection = try PostgresConnection.connect(configuration)
                    step = machine.withLock { $0.connectSucceeded(call.id, connection, at: now()) }
                } catch {
                    outcome = .failure(error)
                    step = machine.withLock { $0.connectFailed(call.id, at: now()) }
                }
            case .run(let connection):
                outcome = Result { try call.body(connection) }
                let returned: Machine.Returned
                if connection.isHealthy {
                    returned = .reusable
                } else if !connection.isAbandoned, !connection.isConnected {
                    returned = .serverGone
                } else {
                    returned = .broken
                }
                step = machine.withLock { $0.workFinished(call.id, returned, at: now()) }
            case .done(let answer):
                if answer, let outcome { call.answer(outcome) }
                call.workEnded()
                return
            }
        }
    }
}

/// What the pool's state machine keeps of a call, whatever its result type.
private protocol PoolCall: AnyObject, Sendable {
    /// Runs the call's work on a pool thread: it holds a lease.
    func start()
    /// Answers the caller with an error.
    func fail(_ error: PostgresError)
    /// Keeps the timer that cuts the socket of work still blocked past its deadline.
    func setInterruptTimer(_ timer: DeadlineTimer.Handle)
}

/// One call: its work, how its caller is answered and its timers. The caller is answered when
/// the pool's state machine says so, which it does once per call.
private final class PendingCall<T: Sendable>: PoolCall {
    /// How the caller hears the outcome: an awaiting task, or a callback (``PostgresPool/submit(_:completion:)``).
    enum Answer: Sendable {
        case continuation(CheckedContinuation<T, any Error>)
        case callback(@Sendable (Result<T, any Error>) -> Void)
    }

    let id: Int
    let body: @Sendable (PostgresConnection) throws -> T
    private let pool: PostgresPool
    private let answerer: Answer
    private let timers = Mutex(Timers())

    private struct Timers {
        var deadline: DeadlineTimer.Handle?
        var interrupt: DeadlineTimer.Handle?
        var answered = false
        var workEnded = false
    }

    init(
        id: Int, pool: PostgresPool, body: @escaping @Sendable (PostgresConnection) throws -> T,
        answer: Answer
    ) {
        self.id = id
        self.pool = pool
        self.body = body
        self.answerer = answer
    }

    func start() {
        pool.submit(self)
    }

    func fail(_ error: PostgresError) {
        answer(.failure(error))
    }

    /// Answers the caller; its deadline has nothing left to do.
    func answer(_ result: Result<T, any Error>) {
        let timer = timers.withLock { timers in
            timers.answered = true
            defer { timers.deadline = nil }
            return timers.deadline
        }
        timer?.cancel()
        switch answerer {
        case .continuation(let continuation): continuation.resume(with: result)
        case .callback(let completion): completion(result)
        }
    }

    /// Keeps the deadline's timer, to cancel once the caller is answered (at once if it is).
    func setDeadlineTimer(_ timer: DeadlineTimer.Handle) {
        let keep = timers.withLock { timers in
            guard !timers.answered else { return false }
            timers.deadline = timer
            return true
        }
        if !keep { timer.cancel() }
    }

    func setInterruptTimer(_ timer: DeadlineTimer.Handle) {
        let keep = timers.withLock { timers in
            guard !timers.workEnded else { return false }
            timers.interrupt = timer
            return true
        }
        if !keep { timer.cancel() }
    }

    /// The lease has ended: no socket is left to cut.
    func workEnded() {
        let timer = timers.withLock { timers in
            timers.workEnded = true
            defer { timers.interrupt = nil }
            return timers.interrupt
        }
        timer?.cancel()
    }
}
