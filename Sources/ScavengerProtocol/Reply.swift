import ScavengerBoard

/// The error codes of the contract; the raw value is what goes on the wire.
public enum ErrorCode: String, Sendable, CaseIterable {
    case badRequest = "BAD_REQUEST"
    case unknownCommand = "UNKNOWN_COMMAND"
    case badArgument = "BAD_ARGUMENT"
    case unauthorized = "UNAUTHORIZED"
    case forbidden = "FORBIDDEN"
    case banned = "BANNED"
    case notFound = "NOT_FOUND"
    case conflict = "CONFLICT"
    case tooLarge = "TOO_LARGE"
    case rateLimited = "RATE_LIMITED"
    case lineTooLong = "LINE_TOO_LONG"
    case unavailable = "UNAVAILABLE"
    case `internal` = "INTERNAL"
    /// Only CHECKIN: `TOO_FAR <distance_m> <message>`.
    case tooFar = "TOO_FAR"
}

/// A command failure that becomes `ERR <CODE> <message>`.
public struct CommandError: Error, Sendable, Equatable, CustomStringConvertible {
    public var code: ErrorCode
    public var message: String

    public init(_ code: ErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue) \(message)" }

    /// The line protocol's form of the board's refusal.
    public init(_ refusal: BoardError) {
        let code: ErrorCode = switch refusal.code {
        case .unauthorized: .unauthorized
        case .forbidden: .forbidden
        case .banned: .banned
        case .notFound: .notFound
        case .conflict: .conflict
        case .rateLimited: .rateLimited
        case .badArgument: .badArgument
        case .tooLarge: .tooLarge
        case .unavailable: .unavailable
        case .internalError: .internal
        case .tooFar: .tooFar
        }
        // `RATE_LIMITED <seconds> <message>`: the first word is how long to wait;
        // `TOO_FAR <metres> <message>`: the first word is the distance.
        if refusal.code == .rateLimited {
            self.init(code, "\(refusal.retryAfterSeconds ?? 1) \(refusal.message)")
        } else if refusal.code == .tooFar {
            self.init(code, "\(refusal.distanceMeters ?? 0) \(refusal.message)")
        } else {
            self.init(code, refusal.message)
        }
    }

    public static func badArgument(_ message: String) -> CommandError { CommandError(.badArgument, message) }
    public static func badRequest(_ message: String) -> CommandError { CommandError(.badRequest, message) }
}

/// One reply line.
public enum Reply: Sendable, Equatable {
    case ok(JSON)
    case error(ErrorCode, String)

    public init(_ error: CommandError) {
        self = .error(error.code, error.message)
    }

    /// Longest message text sent back, in Unicode scalars; echoed input is cut to fit.
    ///
    /// Scalars, not characters: one character can hold any number of combining marks, so only
    /// a count of scalars bounds the bytes (at most 4 each).
    public static let maximumMessageLength = 200

    /// The reply line, ending in `\n`.
    public var line: String {
        String(decoding: lineBytes, as: UTF8.self)
    }

    /// The reply line as bytes, ending in `\n`.
    public var lineBytes: [UInt8] {
        var bytes: [UInt8] = []
        encode(into: &bytes)
        return bytes
    }

    /// Appends the reply line, ending in `\n`.
    public func encode(into bytes: inout [UInt8]) {
        switch self {
        case .ok(let value):
            bytes.append(contentsOf: "OK ".utf8)
            value.encode(into: &bytes)
        case .error(let code, let message):
            bytes.append(contentsOf: "ERR ".utf8)
            bytes.append(contentsOf: code.rawValue.utf8)
            bytes.append(UInt8(ascii: " "))
            bytes.append(contentsOf: Reply.sanitize(message).utf8)
        }
        bytes.append(UInt8(ascii: "\n"))
    }

    /// One line of printable text: control characters become spaces, and long text is cut.
    static func sanitize(_ message: String) -> String {
        let text = printable(message, longest: maximumMessageLength, cutTo: maximumMessageLength - 1)
        return text.isEmpty ? "error" : text
    }

    /// Quotes a piece of client input for an error message, cut short (to `limit` Unicode
    /// scalars) and on one line.
    public static func echo(_ input: String, limit: Int = 40) -> String {
        "'" + printable(input, longest: limit, cutTo: limit) + "'"
    }

    /// `text` with control characters as spaces; when longer than `longest` Unicode scalars,
    /// its first `cutTo` and `…`. Only what is kept is copied, however long the input.
    private static func printable(_ text: String, longest: Int, cutTo: Int) -> String {
        let scalars = text.unicodeScalars
        let isCut = !scalars.dropFirst(longest).isEmpty
        var kept = String.UnicodeScalarView()
        for scalar in isCut ? scalars.prefix(cutTo) : scalars[...] {
            kept.append(scalar.value < 0x20 || scalar.value == 0x7F ? " " : scalar)
        }
        return isCut ? String(kept) + "…" : String(kept)
    }
}
