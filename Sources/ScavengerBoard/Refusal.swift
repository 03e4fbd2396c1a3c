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
        case rateLimited
        /// A value out of range or of the wrong form.
        case badArgument
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
