import ScavengerCore
import ScavengerStore
import Sodium
import Synchronization

/// A client's `REQUEST` key on a write, with how its front end writes the reply for the write's
/// result. The board stores the reply with the write, in its transaction (see ``KeyedWrite``), so
/// a retry of the same request is answered with the very same line, from any daemon.
public struct RequestKey<Result>: Sendable {
    /// 8–64 of `A-Z a-z 0-9 _ -`, chosen by the client; keys are per user.
    public let key: String
    /// The request in a canonical form (command, arguments, options in a fixed order): its
    /// digest tells a retry from another request under the same key.
    public let request: String
    /// The reply's payload (after `OK `) for a result.
    public let reply: @Sendable (Result) -> String

    public init(key: String, request: String, reply: @escaping @Sendable (Result) -> String) {
        self.key = key
        self.request = request
        self.reply = reply
    }
}

/// What is stored under a request key.
public enum StoredReply: Sendable, Equatable {
    /// Nothing (or nothing live): the request runs.
    case none
    /// The same request ran: its reply's payload (after `OK `).
    case reply(String)
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

    /// What is stored under the session user's `key`: the reply when `request` is the request that
    /// stored it, a conflict when another request did, none when nothing live is stored (or
    /// nobody is logged in: the write itself will say so).
    public func storedReply(key: String, request: String, session: Session) async throws(BoardError) -> StoredReply {
        try guardedNow { try Validation.requestKey(key) }
        guard let userID = session.login?.userID else { return .none }
        return try await guarded {
            try await loadRequestKeySecret()
            guard let digest = requestDigest(request) else { throw BoardError.databaseUnavailable }
            guard let stored = try await store.requestReply(
                userID: userID, key: key, digest: digest, retentionSeconds: requestKeySeconds)
            else { return .none }
            return stored.sameRequest ? .reply(stored.reply) : .conflict
        }
    }

    /// The store's side of a keyed write by `userID`: `transform` turns the store's result into the
    /// board's (nil: a refusal, which stores nothing) inside the transaction, and `made`, when the
    /// caller reads the result back, keeps it. Nil without a key.
    func keyedWrite<Stored, Result: Sendable>(
        _ request: RequestKey<Result>?, userID: Int, made: MadeInTransaction<Result>? = nil,
        _ transform: @escaping @Sendable (Stored) throws -> Result?
    ) throws(BoardError) -> KeyedWrite<Stored>? {
        guard let request else { return nil }
        let reply = request.reply
        guard let digest = requestDigest(request.request) else { throw BoardError.databaseUnavailable }
        return KeyedWrite<Stored>(
            userID: userID, key: request.key, digest: digest, retentionSeconds: requestKeySeconds
        ) { stored in
            guard let result = try transform(stored) else { return nil }
            made?.keep(result)
            return reply(result)
        }
    }
}
