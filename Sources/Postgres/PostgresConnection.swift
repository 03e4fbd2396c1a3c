internal import CLibPQ

/// How to reach the database.
public struct PostgresConfiguration: Sendable {
    /// A libpq connection string or URI (`postgresql://user@host:port/db`), passed to libpq
    /// as is (never concatenated with other text).
    public var connectionString: String
    /// Reported in `pg_stat_activity`.
    public var applicationName: String
    /// Server options for every session, e.g. `-c search_path=foo` (libpq's `options`).
    public var options: String?
    /// Seconds to wait for a connection; libpq's `connect_timeout`.
    public var connectTimeoutSeconds: Int

    public init(
        connectionString: String,
        applicationName: String = "scavengerd",
        options: String? = nil,
        connectTimeoutSeconds: Int = 5
    ) {
        self.connectionString = connectionString
        self.applicationName = applicationName
        self.options = options
        self.connectTimeoutSeconds = connectTimeoutSeconds
    }
}

/// A `NOTIFY` received on a channel this connection listens to.
public struct PostgresNotification: Sendable, Equatable {
    public var channel: String
    public var payload: String
}

/// One libpq connection. Calls block: run them off the event loop (``PostgresPool`` does).
///
/// Not safe for concurrent use: one thread at a time, which the pool guarantees by leasing
/// each connection to one task at a time. Freed with `PQfinish` when released.
public final class PostgresConnection: @unchecked Sendable {
    private let handle: OpaquePointer
    /// Statements prepared on this connection, by their text: planned once, then executed.
    private var prepared: [String: String] = [:]

    /// Most statements kept prepared per connection; beyond, statements run unprepared (dynamic
    /// SQL, such as multi-row inserts of varying size, must not grow the server's memory).
    public static let maximumPreparedStatements = 256

    private init(handle: OpaquePointer) {
        self.handle = handle
    }

    deinit {
        PQfinish(handle)
    }

    /// Opens a connection (blocking); the session's time zone is UTC.
    public static func connect(_ configuration: PostgresConfiguration) throws(PostgresError) -> PostgresConnection {
        // Defaults first: what the connection string says overrides them (libpq expands `dbname`
        // in place); `options` from the configuration, last, overrides the string's.
        var pairs: [(String, String)] = [
            ("application_name", configuration.applicationName),
            ("connect_timeout", String(configuration.connectTimeoutSeconds)),
            ("dbname", configuration.connectionString),
            ("client_encoding", "UTF8"),
        ]
        if let options = configuration.options {
            pairs.append(("options", options))
        }
        let handle: OpaquePointer? = withCStrings(pairs.map(\.0)) { keywords in
            withCStrings(pairs.map(\.1)) { values in
                PQconnectdbParams(keywords, values, 1)
            }
        }
        guard let handle else {
            throw PostgresError(code: .connectionFailure, message: "libpq could not allocate a connection")
        }
        guard PQstatus(handle) == CONNECTION_OK else {
            let message = lastErrorMessage(handle)
            PQfinish(handle)
            throw PostgresError(code: .connectionFailure, message: message)
        }
        // libpq prints notices and warnings to stderr by default; errors reach callers as
        // typed errors, so the rest is dropped here.
        PQsetNoticeProcessor(handle, { _, _ in }, nil)
        let connection = PostgresConnection(handle: handle)
        // Times the server prints are in UTC, whatever the server's default.
        try connection.query("SET TimeZone = 'UTC'")
        return connection
    }

    /// Whether the connection is still usable. A broken one must be discarded, never reused.
    public var isHealthy: Bool {
        PQstatus(handle) == CONNECTION_OK && PQtransactionStatus(handle) == PQTRANS_IDLE
    }

    /// Whether a transaction is open on this connection.
    public var isInTransaction: Bool {
        let status = PQtransactionStatus(handle)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR
    }

    /// The server's process id for this session.
    public var backendPID: Int { Int(PQbackendPID(handle)) }

    /// Runs one parameterized statement (blocking). `binaryResults` asks for binary values
    /// (useful for `bytea`); otherwise values come in PostgreSQL's text format.
    @discardableResult
    public func query(_ sql: SQL, binaryResults: Bool = false) throws(PostgresError) -> PostgresRows {
        guard sql.binds.count <= 65535 else {
            throw PostgresError(code: .client, message: "too many parameters (\(sql.binds.count))")
        }
        let statement = sql.binds.isEmpty ? nil : try preparedName(for: sql)
        let result = ResultHandle(try execute(sql, statement: statement, binaryResults: binaryResults))
        do {
            return try result.rows(connection: handle)
        } catch {
            // A plan invalidated by a schema change (or a statement the server lost): forget it,
            // so the next call prepares it afresh.
            if let statement, error.sqlState == "0A000" || error.sqlState == "26000" {
                prepared[sql.text] = nil
                _ = PQexec(handle, "DEALLOCATE \(statement)").map { PQclear($0) }
            }
            throw error
        }
    }

    /// The name of the prepared statement for `sql`'s text, preparing it on first use; nil
    /// when the cache is full.
    private func preparedName(for sql: SQL) throws(PostgresError) -> String? {
        if let name = prepared[sql.text] { return name }
        guard prepared.count < Self.maximumPreparedStatements else { return nil }
        let name = "scavenger_\(prepared.count + 1)"
        let result = ResultHandle(PQprepare(handle, name, sql.text, Int32(sql.binds.count), nil))
        _ = try result.rows(connection: handle)
        prepared[sql.text] = name
        return name
    }

    /// Runs SQL text with no parameters through the simple-query protocol, which allows several
    /// statements in one string (migrations). Never pass input here.
    public func execute(script: String) throws(PostgresError) {
        let result = ResultHandle(PQexec(handle, script))
        _ = try result.rows(connection: handle)
    }

    /// Runs `body` inside `BEGIN`/`COMMIT`; rolls back when it throws.
    public func transaction<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        try query("BEGIN")
        do {
            let value = try body(self)
            try query("COMMIT")
            return value
        } catch {
            if PQstatus(handle) == CONNECTION_OK {
                _ = try? query("ROLLBACK")
            }
            throw error
        }
    }

    /// Notifications received so far, without waiting.
    public func drainNotifications() throws(PostgresError) -> [PostgresNotification] {
        guard PQconsumeInput(handle) == 1 else {
            throw PostgresError(code: .connectionFailure, message: Self.lastErrorMessage(handle))
        }
        var received: [PostgresNotification] = []
        while let notify = PQnotifies(handle) {
            let channel = String(cString: notify.pointee.relname)
            let payload = String(cString: notify.pointee.extra)
            PQfreemem(notify)
            received.append(PostgresNotification(channel: channel, payload: payload))
        }
        return received
    }

    /// Waits up to `timeoutMilliseconds` for notifications (blocking), then returns what arrived.
    /// Queued notifications are drained before waiting on the socket.
    public func waitForNotifications(timeoutMilliseconds: Int) throws(PostgresError) -> [PostgresNotification] {
        let queued = try drainNotifications()
        if !queued.isEmpty { return queued }
        let socket = PQsocket(handle)
        guard socket >= 0 else {
            throw PostgresError(code: .connectionFailure, message: "connection has no socket")
        }
        guard SocketWait.readable(socket, timeoutMilliseconds: timeoutMilliseconds) else { return [] }
        return try drainNotifications()
    }

    private func execute(_ sql: SQL, statement: String?, binaryResults: Bool) throws(PostgresError) -> OpaquePointer? {
        let count = sql.binds.count
        if count == 0 {
            return PQexecParams(handle, sql.text, 0, nil, nil, nil, nil, binaryResults ? 1 : 0)
        }
        // Every parameter is one NUL-terminated buffer, alive for the whole call.
        var lengths = [Int32](repeating: 0, count: count)
        var formats = [Int32](repeating: 0, count: count)
        var buffers: [[CChar]?] = []
        buffers.reserveCapacity(count)
        for (index, bind) in sql.binds.enumerated() {
            switch bind {
            case .null:
                buffers.append(nil)
            case .text(let text):
                // Text travels NUL-terminated, and PostgreSQL text cannot hold NUL: refuse it
                // rather than let the value be cut short.
                if text.utf8.contains(0) {
                    throw PostgresError(code: .client, message: "text parameter $\(index + 1) contains a NUL character")
                }
                let bytes = Array(text.utf8CString)
                lengths[index] = Int32(bytes.count - 1)
                buffers.append(bytes)
            case .bytes(let data):
                formats[index] = 1
                lengths[index] = Int32(clamping: data.count)
                buffers.append(data.isEmpty ? [0] : data.map { CChar(bitPattern: $0) })
            }
        }
        return withParameterPointers(buffers) { values in
            if let statement {
                return PQexecPrepared(handle, statement, Int32(count), values, lengths, formats, binaryResults ? 1 : 0)
            }
            return PQexecParams(handle, sql.text, Int32(count), nil, values, lengths, formats, binaryResults ? 1 : 0)
        }
    }

    fileprivate static func lastErrorMessage(_ handle: OpaquePointer) -> String {
        guard let message = PQerrorMessage(handle) else { return "unknown libpq error" }
        return String(cString: message).trimmingTrailingWhitespace()
    }
}

/// Owns a `PGresult` and frees it exactly once.
private struct ResultHandle: ~Copyable {
    let raw: OpaquePointer?

    init(_ raw: OpaquePointer?) {
        self.raw = raw
    }

    deinit {
        if let raw { PQclear(raw) }
    }

    func rows(connection: OpaquePointer) throws(PostgresError) -> PostgresRows {
        guard let raw else {
            throw PostgresError(code: .connectionFailure, message: PostgresConnection.lastErrorMessage(connection))
        }
        switch PQresultStatus(raw) {
        case PGRES_COMMAND_OK, PGRES_EMPTY_QUERY:
            return PostgresRows(columns: [], affectedRows: affectedRows(raw), storage: [], cells: [], count: 0)
        case PGRES_TUPLES_OK, PGRES_SINGLE_TUPLE:
            return copyRows(raw)
        default:
            throw error(raw, connection: connection)
        }
    }

    private func affectedRows(_ raw: OpaquePointer) -> Int {
        guard let text = PQcmdTuples(raw) else { return 0 }
        return Int(String(cString: text)) ?? 0
    }

    private func copyRows(_ raw: OpaquePointer) -> PostgresRows {
        let rowCount = Int(PQntuples(raw))
        let columnCount = Int(PQnfields(raw))
        var columns: [String] = []
        columns.reserveCapacity(columnCount)
        for column in 0 ..< columnCount {
            columns.append(PQfname(raw, Int32(column)).map { String(cString: $0) } ?? "")
        }
        var total = 0
        for row in 0 ..< rowCount {
            for column in 0 ..< columnCount {
                total += Int(PQgetlength(raw, Int32(row), Int32(column)))
            }
        }
        var storage: [UInt8] = []
        storage.reserveCapacity(total)
        var cells: [(start: Int, length: Int)] = []
        cells.reserveCapacity(rowCount * columnCount)
        for row in 0 ..< rowCount {
            for column in 0 ..< columnCount {
                let r = Int32(row), c = Int32(column)
                if PQgetisnull(raw, r, c) == 1 {
                    cells.append((start: storage.count, length: -1))
                    continue
                }
                let length = Int(PQgetlength(raw, r, c))
                cells.append((start: storage.count, length: length))
                if length > 0, let value = PQgetvalue(raw, r, c) {
                    value.withMemoryRebound(to: UInt8.self, capacity: length) { pointer in
                        storage.append(contentsOf: UnsafeBufferPointer(start: pointer, count: length))
                    }
                }
            }
        }
        return PostgresRows(
            columns: columns, affectedRows: affectedRows(raw), storage: storage, cells: cells, count: rowCount)
    }

    private func error(_ raw: OpaquePointer, connection: OpaquePointer) -> PostgresError {
        func field(_ code: Int32) -> String? {
            PQresultErrorField(raw, code).map { String(cString: $0) }
        }
        let sqlState = field(CLIBPQ_DIAG_SQLSTATE)
        let message = field(CLIBPQ_DIAG_MESSAGE_PRIMARY)
            ?? PQresultErrorMessage(raw).map { String(cString: $0).trimmingTrailingWhitespace() }
            ?? "unknown error"
        let code: PostgresError.Code
        if PQstatus(connection) != CONNECTION_OK {
            code = .connectionFailure
        } else if let sqlState {
            code = PostgresError.code(forSQLState: sqlState)
        } else {
            code = PQresultStatus(raw) == PGRES_FATAL_ERROR ? .connectionFailure : .server
        }
        return PostgresError(
            code: code, sqlState: sqlState, message: message, constraint: field(CLIBPQ_DIAG_CONSTRAINT_NAME))
    }
}

/// Keeps C strings alive for the duration of `body`, NULL-terminated as libpq's arrays are.
private func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
    withParameterPointers(strings.map { Array($0.utf8CString) } + [nil], body)
}

/// Copies every buffer into one contiguous block and passes pointers into it (NULL for nil):
/// all of them stay valid for the whole of `body`, and no longer.
private func withParameterPointers<R>(
    _ buffers: [[CChar]?], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R
) -> R {
    var block: [CChar] = []
    block.reserveCapacity(buffers.reduce(0) { $0 + ($1?.count ?? 0) })
    var offsets: [Int?] = []
    offsets.reserveCapacity(buffers.count)
    for buffer in buffers {
        guard let buffer else {
            offsets.append(nil)
            continue
        }
        offsets.append(block.count)
        block += buffer
    }
    return block.withUnsafeBufferPointer { base in
        let pointers: [UnsafePointer<CChar>?] = offsets.map { offset in
            offset.map { base.baseAddress! + $0 }
        }
        return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}

extension String {
    func trimmingTrailingWhitespace() -> String {
        var text = Substring(self)
        while let last = text.last, last.isWhitespace { text.removeLast() }
        return String(text)
    }
}
