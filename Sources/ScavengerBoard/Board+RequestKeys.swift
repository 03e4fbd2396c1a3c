#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ScavengerCore
import ScavengerStore
import Sodium
import Synchronization

/// A client's `REQUEST` key on a write whose result is a `Result`. The board stores the result
/// with the write, in its transaction (see ``KeyedWrite``), so that a retry of the same request
/// gets the very same result, from any daemon, and its front end answers it as it answered the
/// first.
public struct RequestKey<Result>: Sendable {
    /// 8–64 of `A-Z a-z 0-9 _ -`, chosen by the client; keys are per user.
    public let key: String
    /// The request in a canonical form (command, arguments, options in a fixed order): its
    /// digest tells a retry from another request under the same key.
    public let request: String

    public init(key: String, request: String) {
        self.key = key
        self.request = request
    }
}

/// What is stored under a request key.
public enum StoredReply: Sendable, Equatable {
    /// Nothing (or nothing live): the request runs.
    case none
    /// The same request ran: its result, as the board encoded it.
    case result(String)
    /// Another request holds the key.
    case conflict
}

/// Where a keyed write's result is kept as its transaction made it, so that the caller gets the
/// very result whose reply was stored (a hunt's state, say, is read from the clock once).
final class MadeInTransaction<Value: Sendable>: Sendable {
    private let made = Mutex<Value?>(nil)

    func keep(_ value: Value) { made.withLock { $0 = value } }

    /// The value the transaction made, or `otherwise` when it made none (no key).
    func value(otherwise: () throws -> Value) rethrows -> Value {
        if let value = made.withLock({ $0 }) { return value }
        return try otherwise()
    }
}

extension Board {
    /// A canonical request as stored with its key: an HMAC under the request-key secret, never a
    /// bare hash (a request may carry a stop's code or a password). Nil until the secret is
    /// known (``loadRequestKeySecret()``, which every keyed request's ``storedReply(key:request:session:)``
    /// runs first).
    func requestDigest(_ request: String) -> [UInt8]? {
        requestKeySecret.withLock { $0 }.map { Digest.hmacSHA256(key: $0, request) }
    }

    /// The HMAC key of `REQUEST` keys: the operator's (``BoardRules/requestKeySecret``, the same on
    /// every daemon, so that a copy of the database tests no guess) or else one made once and kept
    /// in the database, so that daemons agree without setup. Read once, then kept.
    func loadRequestKeySecret() async throws {
        if requestKeySecret.withLock({ $0 }) != nil { return }
        let secret: [UInt8]
        if let configured = rules.requestKeySecret, !configured.isEmpty {
            secret = Digest.sha256(configured)
        } else {
            secret = try await store.requestKeySecret(new: SecureRandom.bytes(32))
        }
        requestKeySecret.withLock { $0 = secret }
    }

    /// How long a `REQUEST` key holds, in seconds (``BoardRules/requestKeySeconds``).
    var requestKeySeconds: Int { rules.requestKeySeconds }

    /// What is stored under the session user's `key`: the result when `request` is the request
    /// that stored it, a conflict when another request did, none when nothing live is stored (or
    /// nobody is logged in: the write itself will say so).
    func storedReply(key: String, request: String, session: Session) async throws(BoardError) -> StoredReply {
        try guardedNow { try Validation.requestKey(key) }
        guard let userID = session.login?.userID else { return .none }
        return try await guarded {
            try await loadRequestKeySecret()
            guard let digest = requestDigest(request) else { throw BoardError.databaseUnavailable }
            guard let stored = try await store.requestReply(
                userID: userID, key: key, digest: digest, retentionSeconds: requestKeySeconds)
            else { return .none }
            guard stored.sameRequest else { return .conflict }
            // A key stored by a daemon older than results kept as such (db/0025) holds only the
            // line it answered: the request ran, but what it made is not here to answer with.
            guard let result = stored.result else { throw Self.resultNotKept }
            return .result(result)
        }
    }

    static let keyConflict = BoardError(.conflict, "this REQUEST key was used for a different request")
    static let resultNotKept = BoardError(
        .conflict, "this REQUEST key's request ran on an earlier version of the server, which kept no result to answer with")

    /// Runs a use case that may carry a `REQUEST` key: with a key, answers from the result stored
    /// under it when the same request already ran, refuses when another request holds it, and runs
    /// `body` otherwise. A failed run looks once more: the first run of the request, still going
    /// when this one began (on this daemon or another), may have committed since, which is what
    /// made this one fail (its key taken, or the first's effect in its way). A commit that may yet
    /// be lost (``BoardError/commitUnconfirmed``) is never answered from its stored result.
    func replaying<Result: Codable & Sendable>(
        _ request: RequestKey<Result>?, by session: Session, _ body: () async throws(BoardError) -> Result
    ) async throws(BoardError) -> Result {
        guard let request else { return try await body() }
        if let stored = try await storedResult(request, session: session) { return stored }
        do {
            return try await body()
        } catch {
            if error.commitUnconfirmed { throw error }
            if let stored = try? await storedResult(request, session: session) { return stored }
            throw error
        }
    }

    /// ``replaying(_:by:_:)`` for a use case whose result is only that it happened.
    func replaying(_ request: RequestKey<Void>?, by session: Session, _ body: () async throws(BoardError) -> Void) async throws(BoardError) {
        let done: RequestKey<Done>? = request.map { RequestKey(key: $0.key, request: $0.request) }
        _ = try await replaying(done, by: session) { () async throws(BoardError) -> Done in
            try await body()
            return Done()
        }
    }

    /// What a use case with no result stores under its key.
    struct Done: Codable, Sendable {}

    /// The result stored under `request`'s key by the same request; nil when none is.
    private func storedResult<Result: Decodable>(_ request: RequestKey<Result>, session: Session) async throws(BoardError) -> Result? {
        switch try await storedReply(key: request.key, request: request.request, session: session) {
        case .none:
            return nil
        case .conflict:
            throw Self.keyConflict
        case .result(let encoded):
            return try guardedNow { try JSONDecoder().decode(Result.self, from: Data(encoded.utf8)) }
        }
    }

    /// The store's side of a keyed write by `userID`: `transform` turns the store's result into the
    /// board's (nil: a refusal, which stores nothing) inside the transaction, where it is encoded
    /// and stored with the key; `made`, when the caller reads the result back, keeps it. Nil
    /// without a key.
    func keyedWrite<Stored, Result: Codable & Sendable>(
        _ request: RequestKey<Result>?, userID: Int, made: MadeInTransaction<Result>? = nil,
        _ transform: @escaping @Sendable (Stored) throws -> Result?
    ) throws(BoardError) -> KeyedWrite<Stored>? {
        guard let request else { return nil }
        guard let digest = requestDigest(request.request) else { throw BoardError.databaseUnavailable }
        return KeyedWrite<Stored>(
            userID: userID, key: request.key, digest: digest, retentionSeconds: requestKeySeconds
        ) { stored in
            guard let result = try transform(stored) else { return nil }
            made?.keep(result)
            return String(decoding: try JSONEncoder().encode(result), as: UTF8.self)
        }
    }

    /// ``keyedWrite(_:userID:made:_:)`` for a use case whose result is only that it happened.
    func keyedWrite<Stored>(
        _ request: RequestKey<Void>?, userID: Int, _ transform: @escaping @Sendable (Stored) throws -> Void?
    ) throws(BoardError) -> KeyedWrite<Stored>? {
        let done: RequestKey<Done>? = request.map { RequestKey(key: $0.key, request: $0.request) }
        return try keyedWrite(done, userID: userID) { (stored: Stored) -> Done? in try transform(stored).map { Done() } }
    }
}
