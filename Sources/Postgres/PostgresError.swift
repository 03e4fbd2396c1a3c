/// An error from libpq or the PostgreSQL server, with a typed code.
///
/// `description` names the code, the SQLSTATE and the server's primary message only; the
/// connection string (which may hold a password) never appears in it.
public struct PostgresError: Error, CustomStringConvertible, Sendable {
    /// What went wrong, coarse enough to act on.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let name: String
        init(_ name: String) { self.name = name }
        public var description: String { name }

        /// The server is unreachable, the connection broke, or the server is shutting down.
        public static let connectionFailure = Code("connectionFailure")
        /// SQLSTATE 23505.
        public static let uniqueViolation = Code("uniqueViolation")
        /// SQLSTATE 23503.
        public static let foreignKeyViolation = Code("foreignKeyViolation")
        /// SQLSTATE 23514.
        public static let checkViolation = Code("checkViolation")
        /// SQLSTATE 23502.
        public static let notNullViolation = Code("notNullViolation")
        /// SQLSTATE 40001 or 40P01: retrying the transaction may succeed.
        public static let serializationFailure = Code("serializationFailure")
        /// SQLSTATE class 42: the statement itself is wrong.
        public static let syntaxOrAccess = Code("syntaxOrAccess")
        /// SQLSTATE class 22: a value was out of range or of the wrong form.
        public static let dataException = Code("dataException")
        /// SQLSTATE 57014: the statement was cancelled or timed out.
        public static let queryCanceled = Code("queryCanceled")
        /// The command did not finish in time: the pool's deadline
        /// (``PostgresConfiguration/commandTimeout``) passed, or a lock was not granted within
        /// `lock_timeout` (SQLSTATE 55P03). Retrying later may work.
        public static let timeout = Code("timeout")
        /// SQLSTATE 25006: the server refuses writes (a standby, or a primary an operator set
        /// read-only before a failover). The connection is not reused: the next one is opened on
        /// a server that takes writes (`target_session_attrs=read-write`), when there is one.
        public static let readOnly = Code("readOnly")
        /// The statement committed on the primary, but its wait for a synchronous standby was
        /// cancelled (PostgreSQL's `WARNING: canceling wait for synchronous replication`, sent with
        /// a success): the write may be lost if the primary fails now. Not an acknowledgement:
        /// a retry under the same `REQUEST` key finds out what stands.
        public static let commitUnconfirmed = Code("commitUnconfirmed")
        /// Any other server error.
        public static let server = Code("server")
        /// A result value could not be decoded as the requested Swift type.
        public static let decoding = Code("decoding")
        /// The pool was shut down.
        public static let poolClosed = Code("poolClosed")
        /// Misuse of the client (for example more parameters than libpq accepts).
        public static let client = Code("client")
    }

    public var code: Code
    /// The five-character SQLSTATE, when the server sent one.
    public var sqlState: String?
    /// The server's (or libpq's) primary message.
    public var message: String
    /// The violated constraint's name, for integrity violations.
    public var constraint: String?

    public init(code: Code, sqlState: String? = nil, message: String, constraint: String? = nil) {
        self.code = code
        self.sqlState = sqlState
        self.message = message
        self.constraint = constraint
    }

    public var description: String {
        var text = "PostgresError.\(code)"
        if let sqlState { text += " (\(sqlState))" }
        return text + ": " + message
    }

    /// Maps a SQLSTATE to a code.
    public static func code(forSQLState state: String) -> Code {
        switch state {
        case "23505": return .uniqueViolation
        case "23503": return .foreignKeyViolation
        case "23514": return .checkViolation
        case "23502": return .notNullViolation
        case "40001", "40P01": return .serializationFailure
        case "57014": return .queryCanceled
        case "55P03": return .timeout
        case "25006": return .readOnly
        case "57P01", "57P02", "57P03": return .connectionFailure
        default: break
        }
        if state.hasPrefix("08") { return .connectionFailure }
        if state.hasPrefix("42") { return .syntaxOrAccess }
        if state.hasPrefix("22") { return .dataException }
        return .server
    }
}
