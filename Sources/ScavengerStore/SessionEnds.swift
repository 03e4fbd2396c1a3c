import Postgres
import Synchronization

/// Which sessions a `LOGOUT` or `RESET` ended, as told to every daemon (the `NOTIFY` payload on
/// ``ChangeListener/sessionsChannel``): the daemons then check the sessions they hold.
public enum EndedSessions: Sendable, Equatable {
    /// The session of this token hash (`LOGOUT`).
    case token([UInt8])
    /// Every session of this user but the ones still in the database (`RESET`).
    case user(Int)
    /// Any: notifications may have been missed (the listener reconnected).
    case any

    /// The `NOTIFY` payload: `t:` and the hash in hex, `u:` and the user id, or `*`.
    public var payload: String {
        switch self {
        case .token(let hash): "t:" + hash.map { String($0, radix: 16).leftPadded(to: 2) }.joined()
        case .user(let id): "u:\(id)"
        case .any: "*"
        }
    }

    /// Reads a payload; anything unknown is ``any`` (the daemon then checks every session).
    public init(payload: String) {
        if payload.hasPrefix("u:"), let id = Int(payload.dropFirst(2)) {
            self = .user(id)
        } else if payload.hasPrefix("t:"), let hash = Self.bytes(hex: payload.dropFirst(2)) {
            self = .token(hash)
        } else {
            self = .any
        }
    }

    private static func bytes(hex: Substring) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let byte = UInt8(String(decoding: digits[index ..< index + 2], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
            index += 2
        }
        return bytes
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}

/// Where a daemon's listener hands the ended sessions it hears of (``EndedSessions``), for
/// whoever holds sessions (the board) to act on.
public final class SessionEndings: Sendable {
    private let handler = Mutex<(@Sendable ([EndedSessions]) -> Void)?>(nil)

    public init() {}

    /// Sets what is called with the ended sessions heard (one handler; a later one replaces it).
    public func onEnded(_ body: @escaping @Sendable ([EndedSessions]) -> Void) {
        handler.withLock { $0 = body }
    }

    /// Hands over what the listener heard (nothing when nobody listens).
    public func heard(_ ended: [EndedSessions]) {
        guard !ended.isEmpty, let body = handler.withLock({ $0 }) else { return }
        body(ended)
    }
}

extension Database {
    /// Tells every daemon (its ``ChangeListener``) that sessions ended. Sent after the commit
    /// that ended them, in a statement of its own (a `NOTIFY` inside a writing transaction
    /// would take the notification queue's lock until its commit).
    public func announce(_ ended: EndedSessions) async throws(StoreError) {
        try await mappingErrors {
            try await pool.query("SELECT pg_notify(\(ChangeListener.sessionsChannel), \(ended.payload))", idempotent: false)
        }
    }

    /// Which of `tokenHashes` are live sessions now (not expired, not ended).
    public func liveSessions(_ tokenHashes: Set<[UInt8]>) async throws(StoreError) -> Set<[UInt8]> {
        guard !tokenHashes.isEmpty else { return [] }
        let hexes = tokenHashes.map { EndedSessions.token($0).payload.dropFirst(2) }.map(String.init)
        return try await mappingErrors {
            let rows = try await pool.query("""
                SELECT encode(token_hash, 'hex') AS token FROM sessions
                WHERE token_hash = ANY (ARRAY(SELECT decode(h, 'hex') FROM unnest(\(PostgresArray.text(hexes))::text[]) AS h))
                  AND expires_at > now()
                """)
            var live = Set<[UInt8]>()
            for row in rows {
                if case .token(let hash) = EndedSessions(payload: "t:" + (try row.string("token") as String)) { live.insert(hash) }
            }
            return live
        }
    }
}
