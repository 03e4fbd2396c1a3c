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
                let pins = try await database.value.insertTextPins(batch.map(\.0))
                for (index, entry) in batch.enumerated() { entry.1.resume(returning: pins[index]) }
            } catch {
                // One bad pin must not fail its neighbours: write them one by one.
                if batch.count == 1 {
                    batch[0].1.resume(throwing: error)
                    continue
                }
                for entry in batch {
                    do {
                        entry.1.resume(returning: try await database.value.insertTextPins([entry.0])[0])
                    } catch {
                        entry.1.resume(throwing: error)
                    }
                }
            }
        }
    }
}

extension Database {
    /// Inserts text pins in one statement (one transaction) and announces each.
    func insertTextPins(_ pins: [NewPin]) async throws(StoreError) -> [Pin] {
        let ids = pins.map { _ in Identifier.newPin() }
        return try await mappingErrors {
            var sql: SQL = """
                WITH inserted AS (
                    INSERT INTO pins (id, author_id, lat, lon, kind, body, expires_at, cell, region) VALUES
                """
            for (index, new) in pins.enumerated() {
                sql.append(index == 0 ? " " : ", ")
                sql.append("""
                    (\(ids[index]), \(new.authorID), \(new.lat), \(new.lon), 'text', \(new.text),
                     now() + make_interval(secs => \(new.ttlSeconds)), \(new.cell), \(new.region))
                    """)
            }
            sql.append("""
                     RETURNING id, created_at, expires_at
                )
                SELECT id, (extract(epoch FROM created_at) * 1000000)::bigint,
                       (extract(epoch FROM expires_at) * 1000000)::bigint,
                       pg_notify(\(PinChange.channel), \(instanceID) || ' u ' || id)
                FROM inserted
                """)
            let rows = try await pool.query(sql, idempotent: false)
            var times: [String: (Int, Int)] = [:]
            for row in rows {
                times[try row.string(0)] = (try row.int(1), try row.int(2))
            }
            return try pins.enumerated().map { index, new in
                guard let (created, expires) = times[ids[index]] else {
                    throw StoreError.unexpected("a grouped pin was not written")
                }
                return Pin(
                    id: ids[index], lat: new.lat, lon: new.lon, kind: .text, text: new.text, author: new.authorName,
                    created: Timestamp(microseconds: Int64(created)), expires: Timestamp(microseconds: Int64(expires)),
                    region: new.region, photo: nil, replies: 0)
            }
        }
    }
}
