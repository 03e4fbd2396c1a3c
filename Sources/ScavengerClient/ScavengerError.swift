/// Every failure of a call: an `ERR` line from the server (its code and message, and for
/// `RATE_LIMITED` the seconds to wait, for `TOO_FAR` the distance), or a failure of the client
/// itself (``Code-swift.struct/connectionLost``, ``Code-swift.struct/badReply``).
public struct ScavengerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The protocol's error code (`NOT_FOUND`, …), or one of the client's own.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        public static let badRequest = Code(rawValue: "BAD_REQUEST")
        public static let unknownCommand = Code(rawValue: "UNKNOWN_COMMAND")
        public static let badArgument = Code(rawValue: "BAD_ARGUMENT")
        public static let unauthorized = Code(rawValue: "UNAUTHORIZED")
        public static let forbidden = Code(rawValue: "FORBIDDEN")
        public static let banned = Code(rawValue: "BANNED")
        public static let notFound = Code(rawValue: "NOT_FOUND")
        public static let conflict = Code(rawValue: "CONFLICT")
        public static let tooLarge = Code(rawValue: "TOO_LARGE")
        public static let rateLimited = Code(rawValue: "RATE_LIMITED")
        public static let tooFar = Code(rawValue: "TOO_FAR")
        public static let lineTooLong = Code(rawValue: "LINE_TOO_LONG")
        public static let unavailable = Code(rawValue: "UNAVAILABLE")
        public static let `internal` = Code(rawValue: "INTERNAL")
        /// The client's own: the connection broke (or could not be made) before the reply came,
        /// and the request could not be retried safely (it has no REQUEST key and is not a read),
        /// or the retries ran out.
        public static let connectionLost = Code(rawValue: "CONNECTION_LOST")
        /// The client's own: a reply the client could not read.
        public static let badReply = Code(rawValue: "BAD_REPLY")
    }

    /// The code.
    public let code: Code
    /// The message, for people (for `RATE_LIMITED` and `TOO_FAR`, without the leading number).
    public let message: String
    /// For `RATE_LIMITED`: how many whole seconds to wait before trying again.
    public let retryAfterSeconds: Int?
    /// For `TOO_FAR`: the distance from the fix to the stop in whole metres.
    public let distanceMeters: Int?

    /// An error with these parts.
    public init(code: Code, message: String, retryAfterSeconds: Int? = nil, distanceMeters: Int? = nil) {
        self.code = code
        self.message = message
        self.retryAfterSeconds = retryAfterSeconds
        self.distanceMeters = distanceMeters
    }

    /// Parses an `ERR CODE message` line (nil when it is not one).
    public init?(errLine line: Substring) {
        guard line.hasPrefix("ERR ") else { return nil }
        let rest = line.dropFirst(4)
        let codeText = rest.prefix { $0 != " " }
        var message = rest.dropFirst(codeText.count).drop { $0 == " " }
        let code = Code(rawValue: String(codeText))
        var number: Int?
        if code == .rateLimited || code == .tooFar {
            let word = message.prefix { $0 != " " }
            if let value = Int(word) {
                number = value
                message = message.dropFirst(word.count).drop { $0 == " " }
            }
        }
        self.init(
            code: code, message: String(message), retryAfterSeconds: code == .rateLimited ? number : nil,
            distanceMeters: code == .tooFar ? number : nil)
    }

    public var description: String {
        let number = retryAfterSeconds ?? distanceMeters
        return "ERR \(code.rawValue)" + (number.map { " \($0)" } ?? "") + (message.isEmpty ? "" : " \(message)")
    }
}
