import Postgres
import ScavengerCore
import Synchronization

/// Group commit for text pins: POSTs that arrive while a transaction is being written wait for
/// the next one and are written together (one multi-row INSERT, one commit, one flush). Every
/// caller still hears back only after the transaction holding its pin has committed.
///
/// A caller that finds a writer's place free starts a chain of groups: its own pin with those
/// waiting goes to the pool as a callback call (``PostgresPool/submit(_:completion:)``). When a
/// group's commit returns, the pool thread answers its callers and at once submits the pins that
/// arrived meanwhile as the next group, until none wait, and then gives the place back. So
/// between two groups there is no trip to an event loop or a task: the callers' answers and the
/// next group's statement leave from the same thread.
///
/// Grouping shares a commit's flush (and a synchronous standby's wait) among the pins that
/// arrive together; groups from several writers (and daemons) commit side by side, since no
/// writer holds a lock of the change log (`db/0037`).
///
/// A keyed pin (`REQUEST`, as every client sends its writes) is grouped too: the group is then
/// written in a transaction that stores each key with its pin after the insert. A key another
/// request holds fails the group, which is then written pin by pin, so that the one meets its key
/// alone (its caller answers from the stored reply) and the others are written.
final class GroupCommit: Sendable {
    typealias Waiter = CheckedContinuation<Result<Pin, StoreError>, Never>
    /// A pin waiting for its group, with its key when it has one.
    typealias Member = (pin: NewPin, request: KeyedWrite<Pin>?, waiter: Waiter)
    private typealias Group = [Member]

    private let database: UnownedDatabase
    private let queue: Mutex<GroupQueue<Member>>

    /// Breaks the reference cycle with the database that owns this.
    struct UnownedDatabase: @unchecked Sendable {
        unowned let value: Database
    }

    init(database: Database, maximumBatch: Int = 64, maximumWriters: Int = 1) {
        self.database = UnownedDatabase(value: database)
        queue = Mutex(GroupQueue(maximumBatch: maximumBatch, maximumWriters: maximumWriters))
    }

    /// Writes the pin in the next group (with its key, stored in the group's transaction);
    /// returns once that group has committed.
    func write(_ pin: NewPin, request: KeyedWrite<Pin>? = nil) async throws(StoreError) -> Pin {
        let outcome = await withCheckedContinuation { (waiter: Waiter) in
            let group = queue.withLock { $0.arrive((pin, request, waiter)) }
            if let group { start(group) }
        }
        return try outcome.get()
    }

    /// Writes `group` from a pool thread (a keyed group from a task); then answers its callers
    /// and goes on with the next.
    private func start(_ group: Group) {
        let database = self.database.value
        let pins = group.map(\.pin)
        if group.contains(where: { $0.request != nil }) {
            let members = group.map { (pin: $0.pin, request: $0.request) }
            Task { [self] in finish(group, await database.writeKeyedPinGroup(members)) }
            return
        }
        database.submitPinGroup(pins) { [self] result in
            switch result {
            case .success(let outcomes):
                finish(group, outcomes)
            case .failure(let error):
                // Rare (the connection broke, the deadline passed, a pin the statement refused):
                // settled by the awaiting path, from a task of its own.
                Task { [self] in finish(group, await database.settlePins(pins, after: error)) }
            }
        }
    }

    /// Answers a written group's callers, then starts the next group, or gives the writer's
    /// place back if none waits.
    private func finish(_ group: Group, _ outcomes: [Result<Pin, StoreError>]) {
        database.value.groupSizes?.record(group.count)
        for (index, member) in group.enumerated() {
            member.waiter.resume(returning: outcomes[index])
        }
        let next = queue.withLock { $0.next() }
        if let next { start(next) }
    }
}

extension Database {
    /// Runs a group's statement as a callback call (``PostgresPool/submit(_:completion:)``):
    /// `completion` gets each pin's outcome, or the error that stopped the statement (then
    /// ``settlePins(_:after:)`` says what became of each pin).
    func submitPinGroup(
        _ pins: [NewPin], completion: @escaping @Sendable (Result<[Result<Pin, StoreError>], any Error>) -> Void
    ) {
        let statement = Self.insertStatement(pins)
        pool.submit({ connection in
            try Self.insertedPins(pins, rows: connection.query(statement))
        }, completion: completion)
    }

    /// Each pin's outcome after the group statement failed with `error`. A broken connection
    /// may have committed the group: the statement is run again settling (as
    /// ``insertPins(_:)`` does). When the database cannot be reached the whole group fails at
    /// once; any other failure is tried pin by pin, so one bad pin does not fail its neighbours.
    /// A pin refused by its session check is ``StoreError/sessionRefused``, one over its
    /// author's rate ``StoreError/rateLimited(retryAfterSeconds:)``.
    func settlePins(_ pins: [NewPin], after error: any Error) async -> [Result<Pin, StoreError>] {
        var failure = StoreError(mapping: error)
        if let error = error as? PostgresError, error.code == .connectionFailure {
            do {
                return try await mappingErrors { try await insertSettling(pins) }
            } catch {
                failure = error
            }
        }
        if case .unavailable = failure { return pins.map { _ in .failure(failure) } }
        if pins.count == 1 { return [.failure(failure)] }
        var outcomes: [Result<Pin, StoreError>] = []
        for pin in pins {
            do {
                outcomes.append(try await insertPins([pin])[0])
            } catch {
                outcomes.append(.failure(error))
            }
        }
        return outcomes
    }

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
            do {
                return try Self.insertedPins(pins, rows: try await pool.query(Self.insertStatement(pins), idempotent: false))
            } catch let error as PostgresError where error.code == .connectionFailure {
                return try await insertSettling(pins)
            }
        }
    }

    /// The insert again after a connection broke before its answer: the group may have
    /// committed, and a pin of it been deleted since (by a moderator, or expiry). This run
    /// settles what happened first, from the change log, so such a pin stays deleted.
    private func insertSettling(_ pins: [NewPin]) async throws -> [Result<Pin, StoreError>] {
        let rows = try await pool.query(Self.insertStatement(pins, settling: true), idempotent: true)
        return try Self.insertedPins(pins, rows: rows)
    }

    /// A group with keyed pins, in one transaction: the insert, then each key with its pin. When
    /// it fails for another reason than the database being away or a commit a synchronous
    /// standby did not confirm (a key another request holds, a connection broken mid-commit),
    /// each pin is written alone: a keyed one as
    /// ``insertKeyedPin(_:request:)`` (its key then found, if the group committed, and answered
    /// from), another as ``insertPins(_:)`` (a pin already stored is answered as written).
    func writeKeyedPinGroup(_ members: [(pin: NewPin, request: KeyedWrite<Pin>?)]) async -> [Result<Pin, StoreError>] {
        let pins = members.map(\.pin)
        do {
            return try await mappingErrors {
                try await pool.transaction { connection in
                    let outcomes = try Self.insertedPins(pins, rows: connection.query(Self.insertStatement(pins)))
                    for (member, outcome) in zip(members, outcomes) {
                        if case .success(let pin) = outcome { try member.request.record(pin, on: connection) }
                    }
                    return outcomes
                }
            }
        } catch {
            switch error {
            case .unavailable, .commitUnconfirmed:
                // Away, or committed on the primary alone (a synchronous standby's wait was
                // cancelled): never answered as written, not even by a retry finding its own key.
                return members.map { _ in .failure(error) }
            default:
                break
            }
            var outcomes: [Result<Pin, StoreError>] = []
            for member in members {
                do {
                    if let request = member.request {
                        outcomes.append(.success(try await insertKeyedPin(member.pin, request: request)))
                    } else {
                        outcomes.append(try await insertPins([member.pin])[0])
                    }
                } catch {
                    outcomes.append(.failure(error))
                }
            }
            return outcomes
        }
    }

    /// A keyed pin, written alone in a transaction with its `REQUEST` key (``KeyedWrite``). After a
    /// connection failure it is tried once more, settling as ``insertPins(_:)`` does: if the first
    /// attempt committed, its key is found taken and the caller answers from it.
    func insertKeyedPin(_ new: NewPin, request: KeyedWrite<Pin>) async throws(StoreError) -> Pin {
        @Sendable func attempt(settling: Bool) async throws -> Pin {
            try await pool.transaction { connection in
                let rows = try connection.query(Self.insertStatement([new], settling: settling))
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
                photo: new.photo.map(PhotoInfo.init(storing:)), replies: 0))
        }
    }
}

extension Database {
    /// The types of the group insert's `batch` columns, in order; a pin's values come in the
    /// same order from ``insertRow(_:index:)``.
    private static let batchColumns: [(name: String, type: String)] = [
        ("n", "int"), ("id", "text"), ("author_id", "bigint"), ("token_hash", "bytea"), ("lat", "float8"),
        ("lon", "float8"), ("kind", "text"), ("body", "text"), ("ttl", "float8"), ("photo_mime", "text"),
        ("photo_bytes", "int"), ("photo_width", "int"), ("photo_height", "int"), ("cell", "bigint"), ("region", "text"), ("rate_action", "text"),
        ("rate_capacity", "float8"), ("rate_per_second", "float8"),
    ]

    private static func insertRow(_ new: NewPin, index: Int) -> [PostgresValue] {
        [
            index.postgresValue, new.id.postgresValue, new.authorID.postgresValue, new.sessionTokenHash.postgresValue,
            new.lat.postgresValue, new.lon.postgresValue, (new.photo == nil ? PinKind.text : .photo).rawValue.postgresValue,
            new.text.postgresValue, new.ttlSeconds.postgresValue, new.photo?.mime.postgresValue ?? .null,
            new.photo?.data.count.postgresValue ?? .null, new.photo?.dimensions?.width.postgresValue ?? .null,
            new.photo?.dimensions?.height.postgresValue ?? .null, new.cell.postgresValue, new.region.postgresValue,
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
    /// order (each pin's row, then each photo's bytes and pin id). `settling`: the
    /// retry after an attempt whose outcome is unknown, which also takes as written (and answers
    /// as such) a pin that attempt wrote and something deleted since, found in the change log.
    static func insertStatement(_ pins: [NewPin], settling: Bool = false) -> SQL {
        let photos = pins.indices.filter { pins[$0].photo != nil }
        var binds: [PostgresValue] = []
        binds.reserveCapacity(pins.count * batchColumns.count + photos.count * 2)
        for (index, new) in pins.enumerated() { binds += insertRow(new, index: index) }
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
        let photoInserts = shape.photos.enumerated().map { number, _ in
            let data = next()
            return ", photo\(number) AS (INSERT INTO photos (pin_id, data) SELECT id, \(data) FROM inserted WHERE id = \(next()))"
        }
        return """
            WITH batch (\(batchColumns.map(\.name).joined(separator: ", "))) AS (
                VALUES \(rows.joined(separator: ",\n       "))
            ), existing AS MATERIALIZED (
                SELECT p.id, p.created_at, p.expires_at FROM pins p JOIN batch b ON b.id = p.id\(shape.settling ? settledDeletions : "")
            ), checked AS MATERIALIZED (
                -- Each pin's session looked up by its key (LATERAL … LIMIT 1): as EXISTS, the
                -- planner may hash every live session and user for a handful of pins.
                SELECT b.*, NOT EXISTS (SELECT 1 FROM existing e WHERE e.id = b.id)
                            AND (b.token_hash IS NULL OR coalesce(s.valid, false)) AS allowed
                FROM batch b LEFT JOIN LATERAL (
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
                INSERT INTO pins (id, author_id, lat, lon, kind, body, expires_at, photo_mime, photo_bytes, photo_width, photo_height, cell, region)
                SELECT b.id, b.author_id, b.lat, b.lon, b.kind, b.body, now() + make_interval(secs => b.ttl),
                       b.photo_mime, b.photo_bytes, b.photo_width, b.photo_height, b.cell, b.region
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
