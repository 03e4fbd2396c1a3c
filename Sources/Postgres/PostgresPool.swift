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
    private let state: Mutex<State>

    /// An idle connection and since when it has been idle.
    fileprivate struct Idle: Sendable {
        let connection: PostgresConnection
        let since: ContinuousClock.Instant
    }

    /// A task waiting for a lease; `deliver` is called outside the lock.
    private struct Waiter: Sendable {
        let id: Int
        let queuedAt: ContinuousClock.Instant
        let deliver: @Sendable (Result<Lease, PostgresError>) -> Void
    }

    private struct State: ~Copyable {
        var idle: [Idle] = []
        /// Leases out plus idle connections: each holds at most one connection and one thread.
        var open = 0
        var waiters: [Waiter] = []
        var nextWaiterID = 0
        var closed = false
        var backoff = ReconnectBackoff()
        /// Connects under way (each inside a lease).
        var connecting = 0
        /// Cancel requests being sent.
        var cancelling = 0
        /// Calls that found no connection free and queued, ever.
        var waits = 0
        /// The time queued calls spent queued, summed as each left the queue.
        var waited: Duration = .zero

        /// Takes the oldest waiter off the queue, counting the time it waited.
        mutating func dequeueFirst(at now: ContinuousClock.Instant) -> Waiter {
            let waiter = waiters.removeFirst()
            waited += now - waiter.queuedAt
            return waiter
        }

        /// Takes every waiter off the queue, counting the time they waited.
        mutating func dequeueAll(at now: ContinuousClock.Instant) -> [Waiter] {
            defer { waiters = [] }
            for waiter in waiters { waited += now - waiter.queuedAt }
            return waiters
        }
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
        state.withLock { WaitStatistics(waiting: $0.waiters.count, waits: $0.waits, waited: $0.waited) }
    }

    /// What a lease starts with. `openNew` has already counted itself in `connecting`.
    fileprivate enum Lease: Sendable {
        case existing(Idle)
        case openNew
    }

    /// - Parameters:
    ///   - maxConnections: at most this many connections (and blocking threads) at once; default 8.
    public init(configuration: PostgresConfiguration, maxConnections: Int = 8) {
        precondition(maxConnections > 0, "a pool needs at least one connection")
        self.configuration = configuration
        self.maxConnections = maxConnections
        self.threadPool = NIOThreadPool(numberOfThreads: maxConnections)
        self.threadPool.start()
        self.cancelThreadPool = NIOThreadPool(numberOfThreads: maxConnections)
        self.cancelThreadPool.start()
        self.state = Mutex(State())
    }

    /// Closes idle connections and stops the threads; later calls fail with `poolClosed`.
    /// Call once all users are done.
    public func shutdown() async {
        let (idle, waiters) = state.withLock { state in
            state.closed = true
            let idle = state.idle
            state.idle = []
            state.open -= idle.count
            return (idle, state.dequeueAll(at: .now))
        }
        for waiter in waiters {
            waiter.deliver(.failure(Self.closedError))
        }
        // Closing a connection (`PQfinish`) writes to its socket: do it on a pool thread.
        _ = try? await threadPool.runIfActive { withExtendedLifetime(idle) {} }
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
    public func transaction<T: Sendable>(
        _ body: @escaping @Sendable (PostgresConnection) throws -> T
    ) async throws -> T {
        try await withConnection { connection in
            try connection.transaction(body)
        }
    }

    /// Runs one statement; reads are retried once on a fresh connection if the first one broke.
    @discardableResult
    public func query(_ sql: SQL, binaryResults: Bool = false, idempotent: Bool = true) async throws -> PostgresRows {
        try await withConnection(retryOnConnectionFailure: idempotent) { connection in
            try connection.query(sql, binaryResults: binaryResults)
        }
    }

    /// How many connections are open (leased or idle) and idle, for diagnostics. A lease whose
    /// caller has timed out counts as open until its thread is back.
    public var statistics: (open: Int, idle: Int) {
        state.withLock { ($0.open, $0.idle.count) }
    }

    /// Closes every idle connection; new ones are opened on demand.
    public func discardIdleConnections() {
        let idle = state.withLock { state in
            let idle = state.idle
            state.idle = []
            state.open -= idle.count
            return idle
        }
        // Closing a connection (`PQfinish`) writes to its socket: do it on a pool thread.
        if !idle.isEmpty { threadPool.submit { _ in withExtendedLifetime(idle) {} } }
    }

    // MARK: Leasing

    private static let closedError = PostgresError(code: .poolClosed, message: "the connection pool is shut down")
    private static let unreachableError = PostgresError(
        code: .connectionFailure, message: "the database could not be reached a moment ago; not trying again yet")

    private func timeoutError(_ what: String) -> PostgresError {
        let seconds = configuration.commandTimeout.map { "\($0)" } ?? "the deadline"
        return PostgresError(code: .timeout, message: "\(what) within \(seconds)")
    }

    /// Deadlines fire on a thread of their own, never late because Swift's cooperative pool or a
    /// server's event loops are busy: one event loop for every pool of the process, woken only
    /// when a deadline is due (``DeadlineTimer``), not by each query.
    private static let deadlines = DeadlineTimer(loop: MultiThreadedEventLoopGroup(numberOfThreads: 1).next())

    private func leaseAndRun<T: Sendable>(
        _ body: @escaping @Sendable (PostgresConnection) throws -> T, deadline: ContinuousClock.Instant?
    ) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let call = PendingCall(continuation)
            start(call, body)
            guard let deadline, let timeout = configuration.commandTimeout else { return }
            let grace = Self.timeAmount(max(timeout, .seconds(1)))
            call.setTimer(Self.deadlines.schedule(at: .now() + Self.timeAmount(deadline - .now)) { [self] in
                expire(call)
                // Still blocked after the cancel request had its chance: cut the socket.
                call.setTimer(Self.deadlines.schedule(at: .now() + grace) {
                    call.runningConnection?.interrupt()
                }, evenIfFinished: true)
            })
        }
    }

    private static func timeAmount(_ duration: Duration) -> TimeAmount {
        let (seconds, attoseconds) = duration.components
        return .nanoseconds(max(0, seconds &* 1_000_000_000 &+ attoseconds / 1_000_000_000))
    }

    /// Leases at once, or queues the call for the next free connection.
    private func start<T: Sendable>(_ call: PendingCall<T>, _ body: @escaping @Sendable (PostgresConnection) throws -> T) {
        let now = ContinuousClock.now
        let leased: Result<Lease, PostgresError>? = state.withLock { state in
            if state.closed { return .failure(Self.closedError) }
            if let idle = state.idle.popLast() { return .success(.existing(idle)) }
            guard state.backoff.allowsConnect(at: now, connecting: state.connecting) else {
                return .failure(Self.unreachableError)
            }
            if state.open < maxConnections {
                state.open += 1
                state.connecting += 1
                return .success(.openNew)
            }
            let id = state.nextWaiterID
            state.nextWaiterID += 1
            state.waits += 1
            call.waiterID = id
            state.waiters.append(Waiter(id: id, queuedAt: now) { [self] result in
                switch result {
                case .success(let lease): run(call, lease, body)
                case .failure(let error): call.finish(.failure(error))
                }
            })
            return nil
        }
        switch leased {
        case .success(let lease): run(call, lease, body)
        case .failure(let error): call.finish(.failure(error))
        case nil: break
        }
    }

    /// The deadline passed: answer the caller now, whatever its lease's thread is doing.
    private func expire<T: Sendable>(_ call: PendingCall<T>) {
        if let id = call.waiterID {
            let removed = state.withLock { state in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return false }
                state.waited += .now - state.waiters.remove(at: index).queuedAt
                return true
            }
            if removed {
                call.finish(.failure(timeoutError("no database connection was free")))
                return
            }
        }
        guard let expired = call.expire() else { return }
        if expired.wasConnecting {
            // A connect that takes this long counts as failed: do not let every caller wait on
            // it. Recorded before the caller hears of it, so that its next call knows.
            state.withLock { $0.backoff.failed(at: .now) }
        }
        if let connection = expired.connection {
            connection.abandon()
        }
        expired.continuation.resume(throwing: timeoutError("no answer from the database"))
        if let connection = expired.connection {
            cancel(connection)
        }
    }

    /// Abandons the connection and sends a cancel request for its statement from a cancel
    /// thread (skipped when every cancel thread is busy: the socket is cut later anyway).
    private func cancel(_ connection: PostgresConnection) {
        connection.abandon()
        let admitted = state.withLock { state in
            guard state.cancelling < maxConnections else { return false }
            state.cancelling += 1
            return true
        }
        guard admitted else { return }
        cancelThreadPool.submit { [self] _ in
            connection.cancelRunningStatement()
            state.withLock { $0.cancelling -= 1 }
        }
    }

    private func run<T: Sendable>(
        _ call: PendingCall<T>, _ lease: Lease, _ body: @escaping @Sendable (PostgresConnection) throws -> T
    ) {
        threadPool.submit { [self] threadState in
            guard case .active = threadState else {
                if case .openNew = lease { connectFinished(succeeded: false, alreadyCounted: true) }
                release(nil)
                call.finish(.failure(Self.closedError))
                return
            }
            work(call, lease, body)
        }
    }

    /// On a pool thread: checks or opens the connection, runs `body`, hands the connection back.
    private func work<T: Sendable>(
        _ call: PendingCall<T>, _ lease: Lease, _ body: @escaping @Sendable (PostgresConnection) throws -> T
    ) {
        var lease = lease
        while true {
            let connection: PostgresConnection
            switch lease {
            case .existing(let idle):
                guard call.begin(idle.connection) else {
                    // The caller is gone; the connection was not touched.
                    release(idle.connection)
                    return
                }
                guard isUsable(idle) else {
                    call.end()
                    // A dead idle connection: the others most likely died with it (a restart).
                    discardIdleConnections()
                    guard reserveConnect() else {
                        release(nil)
                        call.finish(.failure(Self.unreachableError))
                        return
                    }
                    lease = .openNew
                    continue
                }
                connection = idle.connection
            case .openNew:
                guard call.beginConnecting() else {
                    connectFinished(succeeded: false, alreadyCounted: true)
                    release(nil)
                    return
                }
                do {
                    let opened = try PostgresConnection.connect(configuration)
                    call.endConnecting()
                    connectFinished(succeeded: true, alreadyCounted: false)
                    connection = opened
                } catch {
                    connectFinished(succeeded: false, alreadyCounted: call.endConnecting())
                    release(nil)
                    call.finish(.failure(error))
                    return
                }
                guard call.begin(connection) else {
                    release(connection.isHealthy ? connection : nil)
                    return
                }
            }
            let result = Result { try body(connection) }
            call.end()
            let healthy = connection.isHealthy
            if !healthy, !connection.isAbandoned, !connection.isConnected {
                // The server went away under this connection: idle ones are likely dead too.
                discardIdleConnections()
            }
            release(healthy ? connection : nil)
            call.finish(result)
            return
        }
    }

    /// Whether an idle connection may be handed out: quiet, and if idle for long, answering.
    private func isUsable(_ idle: Idle) -> Bool {
        guard idle.connection.isQuietWhileIdle else { return false }
        if ContinuousClock.now - idle.since >= configuration.validationIdleTime {
            return idle.connection.validate()
        }
        return true
    }

    /// Counts a connect about to start inside a lease already held; false while backing off.
    private func reserveConnect() -> Bool {
        let now = ContinuousClock.now
        return state.withLock { state in
            guard state.backoff.allowsConnect(at: now, connecting: state.connecting) else { return false }
            state.connecting += 1
            return true
        }
    }

    /// A connect ended (or was given up before it began). `alreadyCounted`: its failure was already
    /// recorded (it passed its caller's deadline), or it never ran.
    private func connectFinished(succeeded: Bool, alreadyCounted: Bool) {
        let now = ContinuousClock.now
        state.withLock { state in
            state.connecting -= 1
            if succeeded {
                state.backoff.succeeded()
            } else if !alreadyCounted {
                state.backoff.failed(at: now)
            }
        }
    }

    /// Hands a connection back (nil: it broke and was closed, or was never opened), to a waiter
    /// if there is one. A freed slot goes to a waiter as the right to connect, unless the pool is
    /// backing off: then every waiter fails at once.
    private func release(_ connection: PostgresConnection?) {
        let now = ContinuousClock.now
        let handOff: [(Waiter, Result<Lease, PostgresError>)] = state.withLock { state in
            guard let connection, !state.closed else {
                state.open -= 1
                guard !state.closed, !state.waiters.isEmpty else { return [] }
                guard state.backoff.allowsConnect(at: now, connecting: state.connecting) else {
                    return state.dequeueAll(at: now).map { ($0, .failure(Self.unreachableError)) }
                }
                state.open += 1
                state.connecting += 1
                return [(state.dequeueFirst(at: now), .success(.openNew))]
            }
            if !state.waiters.isEmpty {
                return [(state.dequeueFirst(at: now), .success(.existing(Idle(connection: connection, since: now))))]
            }
            state.idle.append(Idle(connection: connection, since: now))
            return []
        }
        for (waiter, lease) in handOff {
            waiter.deliver(lease)
        }
    }
}

/// When a new connection may be tried after connects failed: 100 ms after the first failure,
/// doubling up to 2 s, one attempt at a time; a successful connect resets it.
struct ReconnectBackoff: Sendable {
    static let first: Duration = .milliseconds(100)
    static let longest: Duration = .seconds(2)

    /// Nil while connects work.
    private(set) var delay: Duration?
    private(set) var retryAt: ContinuousClock.Instant?

    mutating func failed(at now: ContinuousClock.Instant) {
        let next = delay.map { min($0 * 2, Self.longest) } ?? Self.first
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

/// One call's answer, given exactly once: by its work, or by its deadline, whichever is first.
private final class PendingCall<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var timer: DeadlineTimer.Handle?
        var waiterID: Int?
        /// The connection the work is using (its statement can be cancelled).
        var connection: PostgresConnection?
        var connecting = false
        /// The deadline passed during the connect, and the pool counted it as a failed connect.
        var connectTimedOut = false
    }

    private let state: Mutex<State>

    init(_ continuation: CheckedContinuation<T, any Error>) {
        state = Mutex(State(continuation: continuation))
    }

    /// Set (under the pool's lock) when the call waits for a lease.
    var waiterID: Int? {
        get { state.withLock { $0.waiterID } }
        set { state.withLock { $0.waiterID = newValue } }
    }

    var runningConnection: PostgresConnection? {
        state.withLock { $0.connection }
    }

    /// Keeps the timer to cancel once the work is done. Unless `evenIfFinished` (the timer that
    /// cuts the socket of work still running past its deadline), a call already answered needs
    /// none.
    func setTimer(_ timer: DeadlineTimer.Handle, evenIfFinished: Bool = false) {
        let keep = state.withLock { state in
            guard state.continuation != nil || (evenIfFinished && state.connection != nil) else { return false }
            state.timer = timer
            return true
        }
        if !keep { timer.cancel() }
    }

    /// Answers the caller, unless it was answered already.
    func finish(_ result: Result<T, any Error>) {
        let (continuation, timer) = state.withLock { state in
            defer {
                state.continuation = nil
                state.timer = nil
            }
            return (state.continuation, state.timer)
        }
        timer?.cancel()
        continuation?.resume(with: result)
    }

    /// The deadline passed: takes the caller's continuation (to be resumed by the pool) and
    /// says what the work was doing; nil when the caller was answered already.
    func expire() -> (continuation: CheckedContinuation<T, any Error>, connection: PostgresConnection?, wasConnecting: Bool)? {
        state.withLock { state in
            guard let continuation = state.continuation else { return nil }
            state.continuation = nil
            if state.connecting { state.connectTimedOut = true }
            return (continuation, state.connection, state.connecting)
        }
    }

    /// The work starts using `connection`; false when the caller was answered already.
    func begin(_ connection: PostgresConnection) -> Bool {
        state.withLock { state in
            guard state.continuation != nil else { return false }
            state.connection = connection
            return true
        }
    }

    /// The work is done with its connection. Once the caller has its answer, nothing is left
    /// for the timer to do.
    func end() {
        let timer: DeadlineTimer.Handle? = state.withLock { state in
            state.connection = nil
            guard state.continuation == nil else { return nil }
            defer { state.timer = nil }
            return state.timer
        }
        timer?.cancel()
    }

    /// The work starts opening a connection; false when the caller was answered already.
    func beginConnecting() -> Bool {
        state.withLock { state in
            guard state.continuation != nil else { return false }
            state.connecting = true
            return true
        }
    }

    /// The connect ended; whether its failure was already counted (it passed the deadline).
    @discardableResult
    func endConnecting() -> Bool {
        state.withLock { state in
            state.connecting = false
            return state.connectTimedOut
        }
    }
}
