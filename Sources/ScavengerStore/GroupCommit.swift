import Postgres
import ScavengerCore
import Synchronization

/// Group commit for text pins: POSTs that arrive while a transaction is being written wait for
/// the next one and are written together (one multi-row INSERT, one commit, one flush). Every
/// caller still hears back only after the transaction holding its pin has committed.
///
/// A caller that finds a writer's place free leads: it writes its own pin with those waiting,
/// on its own executor (for a connection, its event loop), answers them, and hands the lead to
/// the next waiting caller, if any. So a group costs one trip to the database's threads and
/// back, with no task of its own in between.
///
/// A pin's NOTIFY takes a lock until its transaction's commit is flushed, so one transaction
/// per POST serialized every POST behind every other's flush; grouping shares that cost.
final class GroupCommit: Sendable {
    /// What a waiting caller is told: its pin's outcome, or that it leads the next group.
    enum Turn: Sendable {
        case written(Pin)
        case failed(StoreError)
        case lead
    }

    typealias Waiter = CheckedContinuation<Turn, Never>

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

    init(database: Database, maximumBatch: Int = 64, maximumWriters: Int = 1) {
        self.database = UnownedDatabase(value: database)
        self.maximumBatch = maximumBatch
        self.maximumWriters = maximumWriters
    }

    /// Writes the pin in the next group; returns once that group has committed.
    func write(_ pin: NewPin) async throws(StoreError) -> Pin {
        // A free writer's place is taken without suspending (a suspension is a trip through
        // the executor's queue).
        if state.withLock({ state in takeWriterPlace(&state) }) { return try await lead(with: pin).get() }
        let turn = await withCheckedContinuation { (waiter: Waiter) in
            let leads = state.withLock { state -> Bool in
                if takeWriterPlace(&state) { return true }
                state.pending.append((pin, waiter))
                return false
            }
            if leads { waiter.resume(returning: .lead) }
        }
        switch turn {
        case .written(let written): return written
        case .failed(let error): throw error
        case .lead: return try await lead(with: pin).get()
        }
    }

    /// Takes a writer's place if one is free (under the state's lock).
    private func takeWriterPlace(_ state: inout State) -> Bool {
        guard state.writers < maximumWriters else { return false }
        state.writers += 1
        return true
    }

    /// Writes `own` with the pins waiting, answers their callers, passes the lead on and
    /// returns the outcome for `own`.
    private func lead(with own: NewPin) async -> Result<Pin, StoreError> {
        let followers = state.withLock { state -> [(NewPin, Waiter)] in
            let count = min(state.pending.count, maximumBatch - 1)
            let taken = Array(state.pending.prefix(count))
            state.pending.removeFirst(count)
            return taken
        }
        let outcomes = await write([own] + followers.map(\.0))
        database.value.groupSizes?.record(followers.count + 1)
        for (index, follower) in followers.enumerated() {
            switch outcomes[index + 1] {
            case .success(let pin): follower.1.resume(returning: .written(pin))
            case .failure(let error): follower.1.resume(returning: .failed(error))
            }
        }
        let next = state.withLock { state -> Waiter? in
            guard !state.pending.isEmpty else {
                state.writers -= 1
                return nil
            }
            return state.pending.removeFirst().1
        }
        next?.resume(returning: .lead)
        return outcomes[0]
    }

    /// Writes a group in one statement; if that fails, each pin alone, so one bad pin does not
    /// fail its neighbours. A pin refused by its session check is ``StoreError/sessionRefused``,
    /// one over its author's rate ``StoreError/rateLimited(retryAfterSeconds:)``. When the
    /// database cannot be reached the whole group fails at once, not pin by pin.
    private func write(_ pins: [NewPin]) async -> [Result<Pin, StoreError>] {
        let database = self.database.value
        do {
            return try await database.insertPins(pins)
        } catch .unavailable(let message) {
            return pins.map { _ in .failure(.unavailable(message)) }
        } catch {
            if pins.count == 1 { return [.failure(error)] }
        }
        var outcomes: [Result<Pin, StoreError>] = []
        for pin in pins {
            do {
                outcomes.append(try await database.insertPins([pin])[0])
            } catch {
                outcomes.append(.failure(error))
            }
        }
        return outcomes
    }
}

extension Database {
    /// Inserts pins (with their photos) in one statement, so in one transaction; the change log's
    /// trigger records them (and wakes the daemons) in the same transaction.
    ///
    /// Idempotent: each pin's id is fixed before the first attempt (``NewPin/id``), a pin whose id
    /// is already stored is not written again but answered as written (an earlier attempt
    /// committed it, though its answer was lost with the connection), and takes no token. So the
    /// pool may run the statement again after a connection failure, and a pin is never written
    /// twice nor acknowledged without being stored. A pin whose ``NewPin/sessionTokenHash`` does not check out
    /// (the session is gone or its user banned, at commit time) is not written:
    /// ``StoreError/sessionRefused`` in its place; one whose author's bucket has no token left
    /// (``NewPin/rate``), ``StoreError/rateLimited(retryAfterSeconds:)``. Tokens are taken in
    /// the batch's order, so one author's pins in a group draw from the bucket one by one.
    func insertPins(_ pins: [NewPin]) async throws(StoreError) -> [Result<Pin, StoreError>] {
        return try await mappingErrors {
            let rows: PostgresRows
            do {
                rows = try await pool.query(Self.insertStatement(pins, writerID: writerID), idempotent: false)
            } catch let error as PostgresError where error.code == .connectionFailure {
                // The connection broke before the answer: the group may have committed, and a pin
                // of it been deleted since (by a moderator, or expiry). The retry settles what
                // happened first, from the change log, so such a pin stays deleted.
                rows = try await pool.query(Self.insertStatement(pins, writerID: writerID, settling: true), idempotent: true)
            }
            return try Self.insertedPins(pins, rows: rows)
        }
    }

    /// A keyed pin, written alone in a transaction with its `REQUEST` key (``KeyedWrite``). After a
    /// connection failure it is tried once more, settling as ``insertPins(_:)`` does: if the first
    /// attempt committed, its key is found taken and the caller answers from it.
    func insertKeyedPin(_ new: NewPin, request: KeyedWrite<Pin>) async throws(StoreError) -> Pin {
        let writerID = self.writerID
        @Sendable func attempt(settling: Bool) async throws -> Pin {
            try await pool.transaction { connection in
                let rows = try connection.query(Self.insertStatement([new], writerID: writerID, settling: settling))
                let pin = try Self.insertedPins([new], rows: rows)[0].get()
                try request.record(pin, on: connection)
                return pin
            }
        }
        return try await mappingErrors {
            do {
                return try await attempt(settling: false)
            } catch let error as PostgresError where error.code == .connectionFailure {
                pool.discardIdleConnections()
                return try await attempt(settling: true)
            }
        }
    }

    /// Each pin's outcome from the group insert's rows, in the pins' order.
    private static func insertedPins(_ pins: [NewPin], rows: PostgresRows) throws -> [Result<Pin, StoreError>] {
        let ids = pins.map(\.id)
        var times: [String: (Int, Int)] = [:]
        var waits: [String: Double] = [:]
        let (id, created, expires, wait) = try (
            rows.column("id"), rows.column("created_us"), rows.column("expires_us"), rows.column("wait"))
        for row in rows {
            if let seconds: Double = try row.double(wait) {
                waits[try row.string(id)] = seconds
            } else {
                times[try row.string(id)] = (try row.int(created), try row.int(expires))
            }
        }
        return pins.enumerated().map { index, new -> Result<Pin, StoreError> in
            if let wait = waits[ids[index]] { return .failure(.rateLimited(waiting: wait)) }
            guard let (created, expires) = times[ids[index]] else { return .failure(.sessionRefused) }
            return .success(Pin(
                id: ids[index], lat: new.lat, lon: new.lon, kind: new.photo == nil ? .text : .photo, text: new.text,
                author: new.authorName, created: Timestamp(microseconds: Int64(created)),
                expires: Timestamp(microseconds: Int64(expires)), region: new.region,
                photo: new.photo.map { PhotoInfo(mime: $0.mime, bytes: $0.data.count) }, replies: 0))
        }
    }
}

extension Database {
    /// The types of the group insert's `batch` columns, in order; a pin's values come in the
    /// same order from ``insertRow(_:index:)``.
    private static let batchColumns: [(name: String, type: String)] = [
        ("n", "int"), ("id", "text"), ("author_id", "bigint"), ("token_hash", "bytea"), ("lat", "float8"),
        ("lon", "float8"), ("kind", "text"), ("body", "text"), ("ttl", "float8"), ("photo_mime", "text"),
        ("photo_bytes", "int"), ("cell", "bigint"), ("region", "text"), ("rate_action", "text"),
        ("rate_capacity", "float8"), ("rate_per_second", "float8"),
    ]

    private static func insertRow(_ new: NewPin, index: Int) -> [PostgresValue] {
        [
            index.postgresValue, new.id.postgresValue, new.authorID.postgresValue, new.sessionTokenHash.postgresValue,
            new.lat.postgresValue, new.lon.postgresValue, (new.photo == nil ? PinKind.text : .photo).rawValue.postgresValue,
            new.text.postgresValue, new.ttlSeconds.postgresValue, new.photo?.mime.postgresValue ?? .null,
            new.photo?.data.count.postgresValue ?? .null, new.cell.postgresValue, new.region.postgresValue,
            new.rateAction.rawValue.postgresValue, new.rate.map { Double($0.count) }.postgresValue,
            new.rate?.perSecond.postgresValue ?? .null,
        ]
    }

    /// Which pins of a group carry a photo: the group insert's text depends on nothing else.
    private struct InsertShape: Hashable {
        var count: Int
        var photos: [Int]
        var settling: Bool
    }

    /// The group insert's text by shape, built once each (a group holds at most 64 text pins;
    /// a photo is written alone).
    private static let insertTexts = Mutex<[InsertShape: String]>([:])

    /// The statement that inserts `pins`: its text from ``insertTexts``, its values bound in
    /// order (each pin's row, the writer, then each photo's bytes and pin id). `settling`: the
    /// retry after an attempt whose outcome is unknown, which also takes as written (and answers
    /// as such) a pin that attempt wrote and something deleted since, found in the change log.
    static func insertStatement(_ pins: [NewPin], writerID: String, settling: Bool = false) -> SQL {
        let photos = pins.indices.filter { pins[$0].photo != nil }
        var binds: [PostgresValue] = []
        binds.reserveCapacity(pins.count * batchColumns.count + 1 + photos.count * 2)
        for (index, new) in pins.enumerated() { binds += insertRow(new, index: index) }
        binds.append(writerID.postgresValue)
        for index in photos {
            binds.append(pins[index].photo!.data.postgresValue)
            binds.append(pins[index].id.postgresValue)
        }
        let shape = InsertShape(count: pins.count, photos: photos, settling: settling)
        let text = insertTexts.withLock { texts in
            if let text = texts[shape] { return text }
            let text = insertText(shape)
            texts[shape] = text
            return text
        }
        return SQL(text, binds: binds)
    }

    /// The part of `existing` a settling retry adds: pins of the batch that are gone but whose
    /// insertion the change log holds (the log is written by the inserting transaction, and its
    /// `at`, like the pin's `created_at`, is that transaction's `now()`).
    private static let settledDeletions = """

                UNION ALL
                SELECT b.id, min(f.at), min(f.at) + make_interval(secs => b.ttl)
                FROM batch b JOIN feed_changes f ON f.kind = 'pin' AND f.subject = b.id
                WHERE NOT EXISTS (SELECT 1 FROM pins p WHERE p.id = b.id)
                GROUP BY b.id, b.ttl
        """

    private static func insertText(_ shape: InsertShape) -> String {
        var parameter = 0
        func next() -> String {
            parameter += 1
            return "$\(parameter)"
        }
        let rows = (0 ..< shape.count).map { _ in
            "(" + batchColumns.map { "\(next())::\($0.type)" }.joined(separator: ", ") + ")"
        }
        let writer = next()
        let photoInserts = shape.photos.enumerated().map { number, _ in
            let data = next()
            return ", photo\(number) AS (INSERT INTO photos (pin_id, data) SELECT id, \(data) FROM inserted WHERE id = \(next()))"
        }
        return """
            WITH batch (\(batchColumns.map(\.name).joined(separator: ", "))) AS (
                VALUES \(rows.joined(separator: ",\n       "))
            ), existing AS MATERIALIZED (
                SELECT p.id, p.created_at, p.expires_at FROM pins p JOIN batch b ON b.id = p.id\(shape.settling ? settledDeletions : "")
            ), writer AS MATERIALIZED (
                -- Read by the change log's trigger: its wake-up names this writer.
                SELECT set_config('scavenger.writer', \(writer)::text, true)
            ), checked AS MATERIALIZED (
                -- Each pin's session looked up by its key (LATERAL … LIMIT 1): as EXISTS, the
                -- planner may hash every live session and user for a handful of pins.
                SELECT b.*, NOT EXISTS (SELECT 1 FROM existing e WHERE e.id = b.id)
                            AND (b.token_hash IS NULL OR coalesce(s.valid, false)) AS allowed
                FROM batch b CROSS JOIN writer LEFT JOIN LATERAL (
                    SELECT true AS valid FROM sessions s JOIN users u ON u.id = s.user_id
                    WHERE s.token_hash = b.token_hash AND s.user_id = b.author_id AND s.expires_at > now()
                      AND (u.banned_until IS NULL OR u.banned_until <= now())
                    LIMIT 1
                ) s ON true
            ), charged AS MATERIALIZED (
                SELECT c.*, CASE WHEN c.allowed AND c.rate_capacity IS NOT NULL
                                 THEN take_rate_token(c.author_id, c.rate_action, c.rate_capacity, c.rate_per_second)
                                 ELSE 0 END AS wait
                FROM (SELECT * FROM checked ORDER BY n) c
            ), inserted AS (
                INSERT INTO pins (id, author_id, lat, lon, kind, body, expires_at, photo_mime, photo_bytes, cell, region)
                SELECT b.id, b.author_id, b.lat, b.lon, b.kind, b.body, now() + make_interval(secs => b.ttl),
                       b.photo_mime, b.photo_bytes, b.cell, b.region
                FROM charged b
                WHERE b.allowed AND b.wait = 0
                ON CONFLICT (id) DO NOTHING
                RETURNING id, created_at, expires_at
            )\(photoInserts.joined())
            SELECT id, (extract(epoch FROM created_at) * 1000000)::bigint AS created_us,
                   (extract(epoch FROM expires_at) * 1000000)::bigint AS expires_us, NULL::float8 AS wait
            FROM inserted
            UNION ALL
            SELECT id, (extract(epoch FROM created_at) * 1000000)::bigint,
                   (extract(epoch FROM expires_at) * 1000000)::bigint, NULL::float8
            FROM existing
            UNION ALL
            SELECT id, NULL, NULL, wait FROM charged WHERE allowed AND wait > 0
            """
    }
}
