/// Why the board refused a request. Nothing was changed. Every front end shows the code its own
/// way (the line protocol as `ERR <CODE> <message>`); the message is for people.
public struct Refusal: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of refusal it is.
    public enum Code: Sendable, Equatable {
        /// Not logged in, a session that ended, or wrong credentials.
        case unauthorized
        /// Logged in, but not allowed to do this.
        case forbidden
        /// The account is banned; the message says until when.
        case banned
        case notFound
        case conflict
        /// Too many requests of this kind; ``retryAfterSeconds`` says when the next can succeed.
        case rateLimited
        /// A value out of range or of the wrong form.
        case badArgument
        /// The server is saturated (e.g. its password-hashing queue is full); retry later.
        case unavailable
    }

    public var code: Code
    public var message: String
    /// For ``Code/rateLimited``: whole seconds to wait before the same kind of request can succeed.
    public var retryAfterSeconds: Int?

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// A rate-limit refusal: retry after `seconds` (at least 1).
    public static func rateLimited(retryAfter seconds: Int, _ message: String) -> Refusal {
        var refusal = Refusal(.rateLimited, message)
        refusal.retryAfterSeconds = max(1, seconds)
        return refusal
    }

    public var description: String { "\(code): \(message)" }
}
