import Postgres
import ScavengerCore
import Synchronization

/// Group commit for text pins: POSTs that arrive while a transaction is being written wait for
/// the next one and are written together (one multi-row INSERT, one commit, one flush). Every
/// caller still hears back only after the transaction holding its pin has committed.
///
/// A pin's NOTIFY takes a lock until its transaction's commit is flushed, so one transaction
/// per POST serialized every POST behind every other's flush; grouping shares that cost.
final class GroupCommit: Sendable {
    typealias Waiter = CheckedContinuation<Pin, any Error>

    private let database: UnownedDatabase
    private let maximumBatch: Int
    private let maximumWriters: Int
    private let state = Mutex(State())

    private struct State: ~Copyable {
        var pending: [(NewPin, Waiter)] = []
        var writers = 0
    }

    /// Breaks the reference cycle with the database that owns this.
    struct UnownedDatabase: @unchecked Sendable {
        unowned let value: Database
    }

    init(database: Database, maximumBatch: Int = 64, maximumWriters: Int = 2) {
        self.database = UnownedDatabase(value: database)
        self.maximumBatch = maximumBatch
        self.maximumWriters = maximumWriters
    }

    /// Writes the pin in the next group; returns once that group has committed.
    func write(_ pin: NewPin) async throws -> Pin {
        try await withCheckedThrowingContinuation { (waiter: Waiter) in
            let startWriter = state.withLock { state -> Bool in
                state.pending.append((pin, waiter))
                guard state.writers < maximumWriters else { return false }
                state.writers += 1
                return true
            }
            if startWriter {
                Task { await self.drain() }
            }
        }
    }

    /// Writes groups until nothing is waiting.
    private func drain() async {
        while true {
            let batch = state.withLock { state -> [(NewPin, Waiter)] in
                let count = min(state.pending.count, maximumBatch)
                guard count > 0 else {
                    state.writers -= 1
                    return []
                }
                let batch = Array(state.pending.prefix(count))
                state.pending.removeFirst(count)
                return batch
            }
            if batch.isEmpty { return }
            do {
                let pins = try await database.value.insertPins(batch.map(\.0))
                for (index, entry) in batch.enumerated() { Self.resume(entry.1, with: pins[index]) }
            } catch {
                // One bad pin must not fail its neighbours: write them one by one.
                if batch.count == 1 {
                    batch[0].1.resume(throwing: error)
                    continue
                }
                for entry in batch {
                    do {
                        Self.resume(entry.1, with: try await database.value.insertPins([entry.0])[0])
                    } catch {
                        entry.1.resume(throwing: error)
                    }
                }
            }
        }
    }

    private static func resume(_ waiter: Waiter, with pin: Pin?) {
        if let pin {
            waiter.resume(returning: pin)
        } else {
            waiter.resume(throwing: StoreError.sessionRefused)
        }
    }
}

extension Database {
    /// Inserts pins (with their photos) in one statement, so in one transaction, and announces
    /// them in one notification. A pin whose ``NewPin/sessionTokenHash`` does not check out
    /// (the session is gone or its user banned, at commit time) is not written: nil in its place.
    func insertPins(_ pins: [NewPin]) async throws(StoreError) -> [Pin?] {
        let ids = pins.map { _ in Identifier.newPin() }
        return try await mappingErrors {
            var sql: SQL = """
                WITH batch (id, author_id, token_hash, lat, lon, kind, body, ttl, photo_mime, photo_bytes, cell, region) AS (
                    VALUES
                """
            for (index, new) in pins.enumerated() {
                sql.append(index == 0 ? " " : ", ")
                sql.append("""
                    (\(ids[index])::text, \(new.authorID)::bigint, \(new.sessionTokenHash)::bytea, \(new.lat)::float8,
                     \(new.lon)::float8, \((new.photo == nil ? PinKind.text : .photo).rawValue)::text, \(new.text)::text,
                     \(new.ttlSeconds)::float8, \(new.photo?.mime)::text, \(new.photo?.data.count)::int, \(new.cell)::bigint,
                     \(new.region)::text)
                    """)
            }
            sql.append("""
                ), inserted AS (
                    INSERT INTO pins (id, author_id, lat, lon, kind, body, expires_at, photo_mime, photo_bytes, cell, region)
                    SELECT b.id, b.author_id, b.lat, b.lon, b.kind, b.body, now() + make_interval(secs => b.ttl),
                           b.photo_mime, b.photo_bytes, b.cell, b.region
                    FROM batch b
                    WHERE b.token_hash IS NULL OR EXISTS (
                        SELECT 1 FROM sessions s JOIN users u ON u.id = s.user_id
                        WHERE s.token_hash = b.token_hash AND s.user_id = b.author_id AND s.expires_at > now()
                          AND (u.banned_until IS NULL OR u.banned_until <= now()))
                    RETURNING id, created_at, expires_at
                ), announced AS (
                    SELECT pg_notify(\(PinChange.channel), \(instanceID) || ' u ' || string_agg(id, ' ')) FROM inserted
                    HAVING count(*) > 0
                )
                """)
            for (index, new) in pins.enumerated() {
                guard let photo = new.photo else { continue }
                sql.append(", photo\(unescaped: String(index)) AS (INSERT INTO photos (pin_id, data) SELECT id, \(photo.data) FROM inserted WHERE id = \(ids[index]))")
            }
            sql.append("""
                 SELECT id, (extract(epoch FROM created_at) * 1000000)::bigint,
                        (extract(epoch FROM expires_at) * 1000000)::bigint,
                        (SELECT count(*) FROM announced)
                FROM inserted
                """)
            let rows = try await pool.query(sql, idempotent: false)
            var times: [String: (Int, Int)] = [:]
            for row in rows {
                times[try row.string(0)] = (try row.int(1), try row.int(2))
            }
            return pins.enumerated().map { index, new -> Pin? in
                guard let (created, expires) = times[ids[index]] else { return nil }
                return Pin(
                    id: ids[index], lat: new.lat, lon: new.lon, kind: new.photo == nil ? .text : .photo, text: new.text,
                    author: new.authorName, created: Timestamp(microseconds: Int64(created)),
                    expires: Timestamp(microseconds: Int64(expires)), region: new.region,
                    photo: new.photo.map { PhotoInfo(mime: $0.mime, bytes: $0.data.count) }, replies: 0)
            }
        }
    }
}
