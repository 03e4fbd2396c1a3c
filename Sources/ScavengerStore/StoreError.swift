import Postgres

/// A failure of the store, in terms the protocol can answer with.
public enum StoreError: Error, Sendable, CustomStringConvertible {
    /// The database cannot be reached or the connection broke; retrying later may work.
    case unavailable(String)
    /// The write committed on the primary but its synchronous standby never confirmed it (the
    /// wait was cancelled): it may be lost in a failover. Not an acknowledgement; a retry under
    /// the same `REQUEST` key later finds out what stands.
    case commitUnconfirmed(String)
    /// A uniqueness rule was broken (the constraint's name).
    case conflict(constraint: String?)
    /// A value the database cannot take (for example text with a NUL character).
    case invalidInput(String)
    /// A migration could not be applied.
    case migration(String)
    /// A write made under a session was refused because, when it committed, the session was
    /// no longer live (expired or logged out) or its user was banned. Nothing was written.
    case sessionRefused
    /// The user's token bucket for this kind of write is empty: retry after that many seconds.
    /// Nothing was written.
    case rateLimited(retryAfterSeconds: Int)
    /// Anything else: a bug or an unexpected database state.
    case unexpected(String)
    /// A refusal by the caller's own rules, run inside a store transaction (``Database/checkIn(_:judge:)``
    /// and the like): the transaction rolled back and the caller gets its error back as it was.
    case refused(any Error & Sendable)

    public var description: String {
        switch self {
        case .unavailable(let message): return "database unavailable: \(message)"
        case .commitUnconfirmed(let message): return "commit unconfirmed: \(message)"
        case .conflict(let constraint): return "conflict on \(constraint ?? "a unique constraint")"
        case .invalidInput(let message): return "invalid input: \(message)"
        case .migration(let message): return "migration failed: \(message)"
        case .sessionRefused: return "the session is no longer live or its user is banned"
        case .rateLimited(let seconds): return "rate limited; retry in \(seconds) s"
        case .unexpected(let message): return message
        case .refused(let error): return "refused: \(error)"
        }
    }

    /// Classifies a client error. A command the database did not finish in time (the pool's
    /// deadline, `statement_timeout`, `lock_timeout`, a cancel) is `unavailable` like an
    /// unreachable database, and so is a write refused by a read-only server (a failover under
    /// way): the client may retry.
    public init(_ error: PostgresError) {
        switch error.code {
        case .connectionFailure, .poolClosed, .timeout, .queryCanceled, .readOnly: self = .unavailable(error.message)
        case .commitUnconfirmed: self = .commitUnconfirmed(error.message)
        case .uniqueViolation: self = .conflict(constraint: error.constraint)
        case .client: self = .invalidInput(error.message)
        default: self = .unexpected(error.description)
        }
    }
}

/// Runs `body`, turning database client errors into ``StoreError``.
@discardableResult
func mappingErrors<T>(_ body: () async throws -> T) async throws(StoreError) -> T {
    do {
        return try await body()
    } catch {
        throw StoreError(mapping: error)
    }
}

extension StoreError {
    /// Any error a store call met, as the store reports it: database client errors mapped, a
    /// caller's refusal kept, anything else unexpected.
    init(mapping error: any Error) {
        switch error {
        case let error as StoreError: self = error
        case let error as PostgresError: self.init(error)
        case let refusal as any CallerRefusal: self = .refused(refusal)
        default: self = .unexpected(String(describing: error))
        }
    }
}

extension StoreError {
    /// The whole seconds to wait, from the bucket function's fractional answer (at least 1).
    static func rateLimited(waiting seconds: Double) -> StoreError {
        .rateLimited(retryAfterSeconds: max(1, Int(seconds.rounded(.up))))
    }
}

/// An error a caller's rules throw inside a store transaction (the board's refusals): the store
/// hands it back as ``StoreError/refused(_:)`` instead of calling it unexpected.
public protocol CallerRefusal: Error, Sendable {}
