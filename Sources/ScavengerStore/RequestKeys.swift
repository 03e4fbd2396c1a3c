import Postgres

/// A write's `REQUEST` key, handed to the store write that carries it out: the write's own
/// transaction stores the key, the request's digest and the write's result (as the board encoded
/// it), so that neither is ever committed without the other.
///
/// The key row goes in last, just before the commit. A second transaction writing the same key
/// (a retry that came while the first still ran, on this daemon or another) waits there for the
/// first to end; if the first committed, the second rolls back with
/// ``StoreError/conflict(constraint:)`` ``requestKeyConstraint``, and its caller answers from
/// the stored row instead (``Database/requestReply(userID:key:retentionSeconds:)``).
public struct KeyedWrite<Result>: Sendable {
    /// The user the key belongs to: keys are per user.
    public let userID: Int
    /// The client's key: 8–64 of `A-Z a-z 0-9 _ -`.
    public let key: String
    /// A digest of the request (its command, arguments and options), to tell a retry from another
    /// request under the same key.
    public let digest: [UInt8]
    /// How long a key holds, in seconds; a row older than that is replaced by the next write with
    /// its key.
    public let retentionSeconds: Int
    /// The caller's encoding of the write's result, made inside the transaction; nil for a
    /// result that is a refusal, which records nothing.
    let encode: @Sendable (Result) throws -> String?

    public init(
        userID: Int, key: String, digest: [UInt8], retentionSeconds: Int, encode: @escaping @Sendable (Result) throws -> String?
    ) {
        self.userID = userID
        self.key = key
        self.digest = digest
        self.retentionSeconds = retentionSeconds
        self.encode = encode
    }

    /// Stores the key with `result` encoded, in the caller's transaction; throws the key's
    /// conflict when a live row holds it (after waiting for a transaction still writing it).
    func record(_ result: Result, on connection: PostgresConnection) throws {
        guard let encoded = try encode(result) else { return }
        let rows = try connection.query("""
            INSERT INTO request_keys AS k (user_id, key, digest, result) VALUES (\(userID), \(key), \(digest), \(encoded))
            ON CONFLICT (user_id, key) DO UPDATE SET digest = excluded.digest, result = excluded.result, reply = NULL, created_at = now()
                WHERE k.created_at <= now() - \(retentionSeconds)::integer * interval '1 second'
            RETURNING 1 AS recorded
            """)
        if rows.isEmpty { throw StoreError.conflict(constraint: requestKeyConstraint) }
    }
}

/// The constraint named by the conflict a keyed write meets when its key is taken.
public let requestKeyConstraint = "request_keys_pkey"

extension Optional {
    /// Records a keyed write's result in the caller's transaction; nothing without a key.
    func record<Result>(_ result: Result, on connection: PostgresConnection) throws where Wrapped == KeyedWrite<Result> {
        try self?.record(result, on: connection)
    }
}

extension Database {
    /// What is stored under `userID`'s `key`, when it was written within the last
    /// `retentionSeconds`: whether it was stored by the request of `digest`, and the result it
    /// stored (nil in a row written before results were kept, `db/0025`).
    public func requestReply(userID: Int, key: String, digest: [UInt8], retentionSeconds: Int) async throws(StoreError)
        -> (sameRequest: Bool, result: String?)?
    {
        try await mappingErrors {
            let rows = try await pool.query("""
                SELECT digest = \(digest) AS same, result FROM request_keys
                WHERE user_id = \(userID) AND key = \(key) AND created_at > now() - \(retentionSeconds)::integer * interval '1 second'
                """)
            guard let row = rows.first else { return nil }
            return (try row.bool("same"), try row.string("result"))
        }
    }

    /// Deletes up to `limit` request keys older than `keepSeconds`, oldest first; returns how many.
    public func trimRequestKeys(keepSeconds: Int, limit: Int) async throws(StoreError) -> Int {
        try await mappingErrors {
            try await pool.query("""
                DELETE FROM request_keys WHERE (user_id, key) IN (
                    SELECT user_id, key FROM request_keys WHERE created_at <= now() - \(keepSeconds)::integer * interval '1 second'
                    ORDER BY created_at LIMIT \(limit) FOR UPDATE SKIP LOCKED
                )
                """, idempotent: false).affectedRows
        }
    }
}

extension Database {
    /// The HMAC key of `REQUEST` keys' digests kept in the database: `new` when none is kept yet
    /// (the first daemon's), the one kept otherwise, so every daemon gets the same.
    public func requestKeySecret(new: [UInt8]) async throws(StoreError) -> [UInt8] {
        try await mappingErrors {
            // A daemon that inserts at the same moment as another waits for it, inserts nothing,
            // and (its statement's snapshot taken before that commit) reads nothing: the next
            // statement reads the other's.
            for _ in 0 ..< 3 {
                let rows = try await pool.query("""
                    WITH made AS (
                        INSERT INTO daemon_secrets (name, value) VALUES ('request_keys', \(new)) ON CONFLICT (name) DO NOTHING RETURNING value
                    )
                    SELECT value FROM made UNION ALL SELECT value FROM daemon_secrets WHERE name = 'request_keys'
                    """, binaryResults: true, idempotent: true)
                if let row = rows.first, let value = try row.bytes("value") { return value }
            }
            throw StoreError.unexpected("no request-key secret was kept")
        }
    }
}
