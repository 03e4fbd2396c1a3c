import Logging
import ScavengerCore
import ScavengerStore

/// Why the board did not do what was asked; nothing was changed. The only error the board's
/// public calls throw: every front end shows its code its own way (the line protocol as
/// `ERR <CODE> <message>`, the console as an HTTP status and a page); the message is for people
/// and never carries internal detail (that goes to the daemon's log, once, where it happened).
public struct BoardError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure it is.
    public enum Code: Sendable, Equatable {
        /// Not logged in, a session that ended, or wrong credentials.
        case unauthorized
        /// Logged in, but not allowed to do this.
        case forbidden
        /// The account is banned; the message says until when.
        case banned
        case notFound
        case conflict
        /// Too many requests of this kind; ``retryAfterSeconds`` says when the next can succeed.
        case rateLimited
        /// A value out of range or of the wrong form.
        case badArgument
        /// A value larger than the configured limit (a photo).
        case tooLarge
        /// The database cannot be reached just now, or the server is saturated (e.g. its
        /// password-hashing queue is full); retrying later may work.
        case unavailable
        /// A bug or an unexpected state; logged with its cause where it happened.
        case internalError
        /// A check-in's fix is farther from the stop than its radius; ``distanceMeters`` says how far.
        case tooFar
    }

    public var code: Code
    public var message: String
    /// For ``Code/rateLimited``: whole seconds to wait before the same kind of request can succeed.
    public var retryAfterSeconds: Int?
    /// For ``Code/tooFar``: the distance from the fix to the stop in whole metres, rounded down.
    public var distanceMeters: Int?
    /// For ``Code/unavailable``: the write committed on the primary, but its synchronous standby
    /// never confirmed it, so it may be lost in a failover. Its `REQUEST` key's stored reply must
    /// not answer this very request (that would acknowledge it); a later retry may.
    public var commitUnconfirmed = false

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The game's refusal, with its code.
    public init(_ refusal: GameRefusal) {
        switch refusal.kind {
        case .conflict: self.init(.conflict, refusal.message)
        case .forbidden: self.init(.forbidden, refusal.message)
        case .badArgument: self.init(.badArgument, refusal.message)
        }
    }

    /// A rate-limit refusal: retry after `seconds` (at least 1).
    public static func rateLimited(retryAfter seconds: Int, _ message: String) -> BoardError {
        var error = BoardError(.rateLimited, message)
        error.retryAfterSeconds = max(1, seconds)
        return error
    }

    /// A check-in made `meters` (whole, rounded down) from the stop.
    public static func tooFar(meters: Int, _ message: String) -> BoardError {
        var error = BoardError(.tooFar, message)
        error.distanceMeters = meters
        return error
    }

    /// The database's absence, in the words every front end shows.
    static let databaseUnavailable = BoardError(.unavailable, "the database is unavailable; retry")
    /// A write not confirmed by the synchronous standby (``commitUnconfirmed``).
    static let unconfirmedCommit: BoardError = {
        var error = BoardError(
            .unavailable, "the write was not confirmed by the database's standby; send it again with the same REQUEST key to learn whether it stands")
        error.commitUnconfirmed = true
        return error
    }()
    /// A failure whose cause is in the log.
    static let internalFailure = BoardError(.internalError, "internal error")

    /// A keyed write found its key taken by another run of the same request whose result could not
    /// be read (the database went away between the two): retrying gets that result.
    static let requestKeyBusy = BoardError(.unavailable, "this REQUEST key's other run has not answered yet; retry")

    public var description: String { "\(code): \(message)" }
}

/// The board's refusals may be thrown by its rules inside a store transaction.
extension BoardError: CallerRefusal {}

extension Board {
    /// Runs the body of a use case, turning whatever a lower layer threw into a ``BoardError``.
    /// Failures that are not the caller's (an unreachable database, a bug) are logged here, once,
    /// with their cause and the use case's name.
    func guarded<T>(_ useCase: String = #function, _ body: () async throws -> T) async throws(BoardError) -> T {
        do {
            return try await body()
        } catch {
            throw boardError(for: error, useCase: useCase)
        }
    }

    /// ``guarded(_:_:)`` for a use case that does not suspend.
    func guardedNow<T>(_ useCase: String = #function, _ body: () throws -> T) throws(BoardError) -> T {
        do {
            return try body()
        } catch {
            throw boardError(for: error, useCase: useCase)
        }
    }

    /// The ``BoardError`` for a failure of a lower layer (logged when it is not the caller's).
    func boardError(for error: any Error, useCase: String) -> BoardError {
        switch error {
        case let error as BoardError:
            return error
        case let error as StoreError:
            switch error {
            case .unavailable(let message):
                logger.warning("database unavailable", metadata: ["use_case": "\(useCase)", "error": "\(message)"])
                return .databaseUnavailable
            case .commitUnconfirmed(let message):
                logger.warning("a commit was not confirmed by the synchronous standby", metadata: [
                    "use_case": "\(useCase)", "error": "\(message)",
                ])
                return .unconfirmedCommit
            case .conflict(constraint: requestKeyConstraint):
                // Another run of the request holds its key and committed (``Board/replaying(_:by:_:)``
                // answers from its result), or cannot be read just now: the client retries.
                return .requestKeyBusy
            case .conflict:
                return BoardError(.conflict, "already exists")
            case .sessionRefused:
                return BoardError(
                    .unauthorized, "the session has expired or was logged out, or the account is banned; log in again")
            case .rateLimited(let seconds):
                return .rateLimited(retryAfter: seconds, "too many requests of this kind; retry later")
            case .invalidInput:
                return BoardError(.badArgument, "a value contains a character that cannot be stored (NUL)")
            case .refused(let refusal):
                return boardError(for: refusal, useCase: useCase)
            case .migration, .unexpected:
                logger.error("use case failed", metadata: ["use_case": "\(useCase)", "error": "\(error)"])
                return .internalFailure
            }
        case let invalid as ValidationError:
            return BoardError(.badArgument, invalid.message)
        case let conflict as HuntConflict:
            return BoardError(.conflict, conflict.message)
        default:
            logger.error("use case failed", metadata: ["use_case": "\(useCase)", "error": "\(error)"])
            return .internalFailure
        }
    }
}
