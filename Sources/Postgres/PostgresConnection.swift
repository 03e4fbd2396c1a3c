internal import CLibPQ
import Synchronization

/// How to reach the database, and how long to wait for it.
public struct PostgresConfiguration: Sendable {
    /// A libpq connection string or URI (`postgresql://user@host:port/db`), passed to libpq
    /// as is (never concatenated with other text).
    public var connectionString: String
    /// Reported in `pg_stat_activity`.
    public var applicationName: String
    /// Server options for every session, e.g. `-c search_path=foo` (libpq's `options`).
    public var options: String?
    /// Seconds to wait for a connection; libpq's `connect_timeout` (libpq waits at least 2).
    public var connectTimeoutSeconds: Int
    /// The longest a pool caller waits for a command, everything included: a free connection,
    /// opening one, and the work itself. Past it the caller gets ``PostgresError/Code/timeout``,
    /// the running statement is cancelled and its connection closed. Sessions also get it as
    /// `statement_timeout`, and three quarters of it as `lock_timeout` (a lock wait then fails
    /// on its own, as ``PostgresError/Code/timeout``), and as `idle_in_transaction_session_timeout`
    /// (a transaction whose client went quiet ends and frees its locks). Nil (the default): no
    /// deadline.
    public var commandTimeout: Duration?
    /// TCP keepalives (libpq's `keepalives_idle`, `keepalives_interval`, `keepalives_count`):
    /// a silent peer is given up after about idle + interval × count seconds. Default 15, 5, 3.
    public var keepalivesIdleSeconds: Int
    /// Seconds between unanswered keepalive probes.
    public var keepalivesIntervalSeconds: Int
    /// Unanswered keepalive probes before the connection is dropped.
    public var keepalivesCount: Int
    /// Seconds sent data may stay unacknowledged before the kernel drops the connection
    /// (libpq's `tcp_user_timeout`); default 30.
    public var tcpUserTimeoutSeconds: Int
    /// A pooled connection idle longer than this is checked with a round trip before it is
    /// handed out (one idle less long only by a look at its socket); default 10 seconds.
    public var validationIdleTime: Duration
    /// How many times ``PostgresPool/transaction(_:)`` runs a transaction that the server ended
    /// with a deadlock or a serialization failure (SQLSTATE 40P01, 40001) before giving the error
    /// to its caller; each new try waits a short random back-off first. Default 10.
    public var transactionAttempts: Int
    /// Which of a multi-host URL's servers a session may open on (libpq's `target_session_attrs`),
    /// unless the connection string says: `read-write` (the default: the primary only) for the
    /// pool that writes and listens, `prefer-standby` for one that only reads.
    public var targetSessionAttributes: String = "read-write"

    public init(
        connectionString: String,
        applicationName: String = "scavengerd",
        options: String? = nil,
        connectTimeoutSeconds: Int = 5,
        commandTimeout: Duration? = nil,
        keepalivesIdleSeconds: Int = 15,
        keepalivesIntervalSeconds: Int = 5,
        keepalivesCount: Int = 3,
        tcpUserTimeoutSeconds: Int = 30,
        validationIdleTime: Duration = .seconds(10),
        transactionAttempts: Int = 10
    ) {
        self.connectionString = connectionString
        self.applicationName = applicationName
        self.options = options
        self.connectTimeoutSeconds = connectTimeoutSeconds
        self.commandTimeout = commandTimeout
        self.keepalivesIdleSeconds = keepalivesIdleSeconds
        self.keepalivesIntervalSeconds = keepalivesIntervalSeconds
        self.keepalivesCount = keepalivesCount
        self.tcpUserTimeoutSeconds = tcpUserTimeoutSeconds
        self.validationIdleTime = validationIdleTime
        self.transactionAttempts = max(1, transactionAttempts)
    }

    /// ``commandTimeout`` in whole milliseconds (at least 1), for the server's settings.
    var commandTimeoutMilliseconds: Int? {
        commandTimeout.map { timeout in
            let (seconds, attoseconds) = timeout.components
            return max(1, Int(clamping: seconds) &* 1000 &+ Int(attoseconds / 1_000_000_000_000_000))
        }
    }

    /// libpq's `connect_timeout`: never longer than the command deadline (rounded up).
    var effectiveConnectTimeoutSeconds: Int {
        guard let milliseconds = commandTimeoutMilliseconds else { return connectTimeoutSeconds }
        return min(connectTimeoutSeconds, (milliseconds + 999) / 1000)
    }
}

/// A `NOTIFY` received on a channel this connection listens to.
public struct PostgresNotification: Sendable, Equatable {
    public var channel: String
    public var payload: String

    public init(channel: String, payload: String) {
        self.channel = channel
        self.payload = payload
    }
}

/// One libpq connection. Calls block: run them off the event loop (``PostgresPool`` does).
///
/// Not safe for concurrent use: one thread at a time, which the pool guarantees by leasing
/// each connection to one task at a time. Freed with `PQfinish` when released.
public final class PostgresConnection: @unchecked Sendable {
    private let handle: OpaquePointer
    /// Statements prepared on this connection, by their text: planned once, then executed.
    private var prepared: [StatementText: String] = [:]
    /// What `PQcancel` needs, made once on the owning thread; read-only afterwards, so any
    /// thread may cancel with it.
    private let cancelHandle: OpaquePointer?
    /// A duplicate of the socket's descriptor, ours until `deinit`: shutting it down from another
    /// thread is safe even after libpq closed (and the system reused) its own descriptor.
    private let interruptDescriptor: Int32
    /// Set once a caller stopped waiting for this connection: it is closed, never reused.
    private let abandoned = Atomic<Bool>(false)
    /// Set by the notice receiver when a commit's wait for a synchronous standby was cancelled.
    private let replicationWaitCancelled = Atomic<Bool>(false)

    /// Whether a warning's primary message is PostgreSQL's for a cancelled wait for synchronous
    /// replication ("canceling wait for synchronous replication …" or "canceling the wait for
    /// synchronous replication and terminating connection …"): the commit stands locally only.
    static func isCancelledReplicationWait(_ message: String) -> Bool {
        message.hasPrefix("canceling wait for synchronous replication")
            || message.hasPrefix("canceling the wait for synchronous replication")
    }

    /// Throws ``PostgresError/Code/commitUnconfirmed`` when the statement just run committed
    /// without its synchronous standby's confirmation.
    private func checkReplicationConfirmed() throws(PostgresError) {
        guard replicationWaitCancelled.exchange(false, ordering: .relaxed) else { return }
        throw PostgresError(
            code: .commitUnconfirmed,
            message: "the commit was not confirmed by the synchronous standby (its wait was cancelled); it may be lost in a failover")
    }
    /// Set when the server refused a write as read-only (SQLSTATE 25006): not reused.
    private let refusedWrites = Atomic<Bool>(false)

    /// Most statements kept prepared per connection; beyond, statements run unprepared (dynamic
    /// SQL, such as multi-row inserts of varying size, must not grow the server's memory).
    public static let maximumPreparedStatements = 256

    private init(handle: OpaquePointer) {
        self.handle = handle
        self.cancelHandle = PQgetCancel(handle)
        self.interruptDescriptor = SocketWait.duplicate(PQsocket(handle))
    }

    deinit {
        PQfinish(handle)
        if let cancelHandle { PQfreeCancel(cancelHandle) }
        SocketWait.close(interruptDescriptor)
    }

    /// Opens a connection (blocking); the session's time zone is UTC, and with a
    /// ``PostgresConfiguration/commandTimeout`` the session has a `statement_timeout` and a
    /// `lock_timeout` to match.
    public static func connect(_ configuration: PostgresConfiguration) throws(PostgresError) -> PostgresConnection {
        // Defaults first: what the connection string says overrides them (libpq expands `dbname`
        // in place); `options` from the configuration, last, overrides the string's.
        var pairs: [(String, String)] = [
            ("application_name", configuration.applicationName),
            ("connect_timeout", String(configuration.effectiveConnectTimeoutSeconds)),
            ("keepalives", "1"),
            ("keepalives_idle", String(configuration.keepalivesIdleSeconds)),
            ("keepalives_interval", String(configuration.keepalivesIntervalSeconds)),
            ("keepalives_count", String(configuration.keepalivesCount)),
            ("tcp_user_timeout", String(configuration.tcpUserTimeoutSeconds * 1000)),
            // By default only a server that takes writes: of a multi-host URL's servers, the
            // primary; a standby (or a primary set read-only) is passed over, never written to or
            // listened on. A pool that only reads may prefer a standby.
            ("target_session_attrs", configuration.targetSessionAttributes),
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
        let connection = PostgresConnection(handle: handle)
        // libpq prints notices and warnings to stderr by default; errors reach callers as typed
        // errors, and of the rest only a cancelled wait for a synchronous standby matters (the
        // statement then fails with commitUnconfirmed). The connection outlives its handle's
        // callbacks (its deinit finishes the handle), so it is passed unretained.
        PQsetNoticeReceiver(handle, { context, result in
            guard let context, let result else { return }
            let connection = Unmanaged<PostgresConnection>.fromOpaque(context).takeUnretainedValue()
            let message = PQresultErrorField(result, Int32(UInt8(ascii: "M"))).map { String(cString: $0) } ?? ""
            if PostgresConnection.isCancelledReplicationWait(message) {
                connection.replicationWaitCancelled.store(true, ordering: .relaxed)
            }
        }, Unmanaged.passUnretained(connection).toOpaque())
        // Times the server prints are in UTC, whatever the server's default; one round trip
        // sets the server's own limits too (the text holds only numbers this code made).
        var settings = "SET TimeZone = 'UTC'"
        if let milliseconds = configuration.commandTimeoutMilliseconds {
            // A lock wait gives up first, with an error of its own (55P03), leaving the session usable.
            settings += "; SET statement_timeout = \(milliseconds); SET lock_timeout = \(max(1, milliseconds * 3 / 4))"
            // A transaction whose client has gone quiet (a partition) must not keep its locks:
            // the server ends it once it has waited for the client that long.
            settings += "; SET idle_in_transaction_session_timeout = \(milliseconds)"
        }
        try connection.execute(script: settings)
        return connection
    }

    /// The value of a libpq connection option in effect (`keepalives_idle`,
    /// `tcp_user_timeout`, …), for diagnostics; never the password.
    public func connectionOption(_ keyword: String) -> String? {
        guard keyword != "password", let options = PQconninfo(handle) else { return nil }
        defer { PQconninfoFree(options) }
        var option = options
        while let name = option.pointee.keyword {
            if String(cString: name) == keyword {
                return option.pointee.val.map { String(cString: $0) }
            }
            option += 1
        }
        return nil
    }

    /// Whether the connection is still usable. A broken one must be discarded, never reused.
    public var isHealthy: Bool {
        !isAbandoned && !refusedWrites.load(ordering: .relaxed) && PQstatus(handle) == CONNECTION_OK
            && PQtransactionStatus(handle) == PQTRANS_IDLE
    }

    /// Whether a caller stopped waiting for this connection (``abandon()``).
    public var isAbandoned: Bool { abandoned.load(ordering: .acquiring) }

    /// Marks the connection as given up on: its further statements fail at once with
    /// ``PostgresError/Code/timeout`` and it is never reused. Safe from any thread.
    public func abandon() {
        abandoned.store(true, ordering: .releasing)
    }

    /// Asks the server to cancel the statement running on this connection (`PQcancel`), and
    /// abandons the connection. Blocks for a round trip on a connection of its own: call it from
    /// another thread than the one running the statement. Returns whether the request was sent.
    @discardableResult
    public func cancelRunningStatement() -> Bool {
        abandon()
        guard let cancelHandle else { return false }
        var message = [CChar](repeating: 0, count: 256)
        return PQcancel(cancelHandle, &message, Int32(message.count)) == 1
    }

    /// Cuts the connection's socket (both directions) so that a thread blocked on it in libpq
    /// returns with a connection failure, even when the server is unreachable; abandons the
    /// connection. Safe from any thread, at any time.
    public func interrupt() {
        abandon()
        SocketWait.shutdown(interruptDescriptor)
    }

    /// Whether an idle connection still looks usable without a round trip: healthy, and
    /// nothing arrived on its socket since its last statement (a server that shuts down or
    /// terminates the session sends an error and closes; anything unasked for is suspect).
    public var isQuietWhileIdle: Bool {
        guard isHealthy else { return false }
        let socket = PQsocket(handle)
        return socket >= 0 && !SocketWait.readable(socket, timeoutMilliseconds: 0)
    }

    /// One round trip with an empty statement: whether the server still answers.
    public func validate() -> Bool {
        (try? execute(script: "")) != nil && isHealthy
    }

    /// Whether libpq still considers the connection open (`PQstatus`).
    public var isConnected: Bool { PQstatus(handle) == CONNECTION_OK }

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
        try checkNotAbandoned()
        guard sql.binds.count <= 65535 else {
            throw PostgresError(code: .client, message: "too many parameters (\(sql.binds.count))")
        }
        let statement = sql.binds.isEmpty ? nil : try preparedName(for: sql)
        replicationWaitCancelled.store(false, ordering: .relaxed)
        let result = ResultHandle(try execute(sql, statement: statement, binaryResults: binaryResults))
        do {
            let rows = try result.rows(connection: handle)
            try checkReplicationConfirmed()
            return rows
        } catch {
            // A server that refuses writes: this connection is never reused (the next one goes
            // to a server that takes them).
            if error.code == .readOnly { refusedWrites.store(true, ordering: .relaxed) }
            // A plan invalidated by a schema change (or a statement the server lost): forget it,
            // so the next call prepares it afresh.
            if let statement, error.sqlState == "0A000" || error.sqlState == "26000" {
                prepared[StatementText(sql.text)] = nil
                _ = PQexec(handle, "DEALLOCATE \(statement)").map { PQclear($0) }
            }
            throw error
        }
    }

    private func checkNotAbandoned() throws(PostgresError) {
        if isAbandoned {
            throw PostgresError(code: .timeout, message: "the command's deadline passed; the connection is being closed")
        }
    }

    /// The name of the prepared statement for `sql`'s text, preparing it on first use; nil
    /// when the cache is full.
    private func preparedName(for sql: SQL) throws(PostgresError) -> String? {
        let key = StatementText(sql.text)
        if let name = prepared[key] { return name }
        guard prepared.count < Self.maximumPreparedStatements else { return nil }
        let name = "scavenger_\(prepared.count + 1)"
        let result = ResultHandle(PQprepare(handle, name, sql.text, Int32(sql.binds.count), nil))
        _ = try result.rows(connection: handle)
        prepared[key] = name
        return name
    }

    /// Runs SQL text with no parameters through the simple-query protocol, which allows several
    /// statements in one string (migrations). Never pass input here.
    public func execute(script: String) throws(PostgresError) {
        try checkNotAbandoned()
        replicationWaitCancelled.store(false, ordering: .relaxed)
        let result = ResultHandle(PQexec(handle, script))
        _ = try result.rows(connection: handle)
        try checkReplicationConfirmed()
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
        // Every parameter's bytes in one block, alive for the whole call: text NUL-terminated,
        // binary as it is; nil offsets for NULLs.
        var lengths = [Int32](repeating: 0, count: count)
        var formats = [Int32](repeating: 0, count: count)
        var offsets = [Int](repeating: -1, count: count)
        var block: [CChar] = []
        block.reserveCapacity(sql.binds.reduce(0) { total, bind in
            switch bind {
            case .null: total
            case .text(let text): total + text.utf8.count + 1
            case .bytes(let data): total + max(data.count, 1)
            }
        })
        for (index, bind) in sql.binds.enumerated() {
            switch bind {
            case .null:
                continue
            case .text(let text):
                offsets[index] = block.count
                for byte in text.utf8 {
                    // PostgreSQL text cannot hold NUL: refuse it rather than let the value be cut short.
                    if byte == 0 {
                        throw PostgresError(code: .client, message: "text parameter $\(index + 1) contains a NUL character")
                    }
                    block.append(CChar(bitPattern: byte))
                }
                block.append(0)
                lengths[index] = Int32(block.count - 1 - offsets[index])
            case .bytes(let data):
                formats[index] = 1
                offsets[index] = block.count
                lengths[index] = Int32(clamping: data.count)
                if data.isEmpty {
                    block.append(0)
                } else {
                    data.withUnsafeBufferPointer { bytes in
                        bytes.withMemoryRebound(to: CChar.self) { block.append(contentsOf: $0) }
                    }
                }
            }
        }
        return block.withUnsafeBufferPointer { base in
            let values: [UnsafePointer<CChar>?] = offsets.map { $0 < 0 ? nil : base.baseAddress! + $0 }
            return values.withUnsafeBufferPointer { values in
                if let statement {
                    return PQexecPrepared(handle, statement, Int32(count), values.baseAddress, lengths, formats, binaryResults ? 1 : 0)
                }
                return PQexecParams(handle, sql.text, Int32(count), nil, values.baseAddress, lengths, formats, binaryResults ? 1 : 0)
            }
        }
    }

    fileprivate static func lastErrorMessage(_ handle: OpaquePointer) -> String {
        guard let message = PQerrorMessage(handle) else { return "unknown libpq error" }
        return String(cString: message).trimmingTrailingWhitespace()
    }
}

/// A statement's text as the key of the prepared statements: hashed by its length and its first
/// and last bytes only, since statements run thousands of times a second and some are kilobytes
/// long; texts that share those still differ by `==`.
struct StatementText: Hashable {
    let text: String

    init(_ text: String) {
        self.text = text
    }

    func hash(into hasher: inout Hasher) {
        var text = text
        text.withUTF8 { bytes in
            hasher.combine(bytes.count)
            hasher.combine(bytes: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes.prefix(48))))
            hasher.combine(bytes: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes.suffix(48))))
        }
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
