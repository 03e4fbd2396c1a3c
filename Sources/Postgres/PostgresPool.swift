import NIOPosix
import Synchronization

/// A bounded pool of connections. Every call runs on a dedicated thread pool, never on an event
/// loop or Swift's cooperative pool, with one connection leased to one task at a time.
///
/// Connections are opened lazily up to `maxConnections`; a task that finds them all busy waits.
/// A connection that broke (or was left inside a transaction) is closed and replaced, never reused.
public final class PostgresPool: Sendable {
    public let configuration: PostgresConfiguration
    public let maxConnections: Int
    private let threadPool: NIOThreadPool
    private let state: Mutex<State>

    private struct State: ~Copyable {
        var idle: [PostgresConnection] = []
        var open = 0
        var waiters: [CheckedContinuation<Lease, any Error>] = []
        var closed = false
    }

    private enum Lease: Sendable {
        case existing(PostgresConnection)
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
            let waiters = state.waiters
            state.waiters = []
            return (idle, waiters)
        }
        for waiter in waiters {
            waiter.resume(throwing: PostgresError(code: .poolClosed, message: "the connection pool is shut down"))
        }
        // Closing a connection (`PQfinish`) writes to its socket: do it on a pool thread.
        _ = try? await threadPool.runIfActive { withExtendedLifetime(idle) {} }
        try? await threadPool.shutdownGracefully()
    }

    /// Leases a connection for `body`, which runs on a pool thread and may block.
    ///
    /// With `retryOnConnectionFailure`, a body that failed because the connection broke is run
    /// once more on a fresh connection: only for work that is safe to repeat (reads).
    public func withConnection<T: Sendable>(
        retryOnConnectionFailure: Bool = false,
        _ body: @escaping @Sendable (PostgresConnection) throws -> T
    ) async throws -> T {
        do {
            return try await leaseAndRun(body)
        } catch let error as PostgresError where retryOnConnectionFailure && error.code == .connectionFailure {
            // Idle connections opened before the failure are likely dead too (a server restart
            // breaks them all): drop them so the retry opens a fresh one.
            discardIdleConnections()
            return try await leaseAndRun(body)
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

    /// How many connections are open and idle, for diagnostics.
    public var statistics: (open: Int, idle: Int) {
        state.withLock { ($0.open, $0.idle.count) }
    }

    private func leaseAndRun<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        let lease = try await acquire()
        let configuration = self.configuration
        let outcome: Result<(T, PostgresConnection?), any Error>
        do {
            let value = try await threadPool.runIfActive { () throws -> (T, PostgresConnection?) in
                let connection: PostgresConnection
                switch lease {
                case .existing(let existing): connection = existing
                case .openNew: connection = try PostgresConnection.connect(configuration)
                }
                // A broken connection is closed here, on the pool's thread, and not handed back.
                do {
                    let value = try body(connection)
                    return (value, connection.isHealthy ? connection : nil)
                } catch {
                    throw LeasedFailure(error: error, connection: connection.isHealthy ? connection : nil)
                }
            }
            outcome = .success(value)
        } catch let failure as LeasedFailure {
            release(failure.connection)
            throw failure.error
        } catch {
            // The connection could not be opened, or the thread pool is gone.
            if case .existing(let connection) = lease {
                release(connection)
            } else {
                release(nil)
            }
            throw error
        }
        let (value, connection) = try outcome.get()
        release(connection)
        return value
    }

    private struct LeasedFailure: Error, @unchecked Sendable {
        let error: any Error
        /// Nil when the connection broke and was closed.
        let connection: PostgresConnection?
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

    /// A connection, or the right to open one; waits (suspends) only when none is free.
    private func acquire() async throws -> Lease {
        if let immediate = state.withLock({ state in Self.leaseAtOnce(&state, maxConnections: maxConnections) }) {
            return try immediate.get()
        }
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Lease, any Error>) in
            let immediate: Result<Lease, PostgresError>? = state.withLock { state in
                if let immediate = Self.leaseAtOnce(&state, maxConnections: maxConnections) { return immediate }
                state.waiters.append(continuation)
                return nil
            }
            if let immediate {
                continuation.resume(with: immediate)
            }
        }
    }

    private static func leaseAtOnce(_ state: inout State, maxConnections: Int) -> Result<Lease, PostgresError>? {
        if state.closed {
            return .failure(PostgresError(code: .poolClosed, message: "the connection pool is shut down"))
        }
        if let connection = state.idle.popLast() {
            return .success(.existing(connection))
        }
        if state.open < maxConnections {
            state.open += 1
            return .success(.openNew)
        }
        return nil
    }

    /// Hands a connection back (nil: it broke and was closed, or was never opened), to a waiter
    /// if there is one.
    private func release(_ connection: PostgresConnection?) {
        let handOff: (CheckedContinuation<Lease, any Error>, Lease)? = state.withLock { state in
            guard let connection, !state.closed else {
                state.open -= 1
                guard !state.closed, !state.waiters.isEmpty else { return nil }
                state.open += 1
                return (state.waiters.removeFirst(), .openNew)
            }
            if !state.waiters.isEmpty {
                return (state.waiters.removeFirst(), .existing(connection))
            }
            state.idle.append(connection)
            return nil
        }
        handOff?.0.resume(returning: handOff!.1)
    }
}
