import Foundation
import ScavengerProtocol

/// What one request line produced, once its invariants held.
public enum LineOutcome: Sendable, Equatable {
    /// A blank line (only spaces and tabs): no reply.
    case blank
    /// Answered at once: an error found while parsing, or an in-memory command's answer.
    case reply(Reply)
    /// Parsed; its work would reach the database, and was not run.
    case deferred
}

/// A broken invariant, with the input that broke it.
public struct InvariantViolation: Error, Sendable, CustomStringConvertible {
    /// The request line, as bytes.
    public let input: [UInt8]
    /// What went wrong.
    public let problem: String

    public var description: String {
        "\(problem); input (\(input.count) bytes): \(LineCheck.describe(input))"
    }
}

/// The invariants every request line keeps, whatever its bytes: the fuzz target
/// (`ScavengerProtocolFuzzer`) checks them on generated input, the regression tests on what it found.
///
/// A line is given without its line ending. As the server does, bytes that are not UTF-8 get
/// `ERR BAD_REQUEST`; anything else goes through ``CommandTable/dispatch(line:context:)``:
/// - a blank line gets no reply, and every other line exactly one;
/// - a reply is one line (see ``problem(inReplyLine:)``), never `ERR INTERNAL`;
/// - work that needs the database is only parsed, never run.
public enum LineCheck {
    /// Dispatches `input` as one request line and checks what comes back.
    public static func check(
        _ input: [UInt8], table: CommandTable = .standard, context: CommandContext = LineCheckBoard.context
    ) throws(InvariantViolation) -> LineOutcome {
        guard let line = String(validating: input, as: UTF8.self) else {
            // What the server answers for bytes that are not UTF-8 (ConnectionHandler).
            try checkReply(CommandOutcome.invalidUTF8.reply, for: input)
            return .reply(CommandOutcome.invalidUTF8.reply)
        }
        switch table.dispatch(line: line, context: context) {
        case .reply(nil):
            guard isBlank(input) else { throw InvariantViolation(input: input, problem: "a line that is not blank got no reply") }
            return .blank
        case .reply(let outcome?):
            guard !isBlank(input) else {
                throw InvariantViolation(input: input, problem: "a blank line got a reply: \(outcome.reply.line)")
            }
            try checkReply(outcome.reply, for: input)
            return .reply(outcome.reply)
        case .deferred:
            guard !isBlank(input) else { throw InvariantViolation(input: input, problem: "a blank line was deferred") }
            return .deferred
        }
    }

    private static func checkReply(_ reply: Reply, for input: [UInt8]) throws(InvariantViolation) {
        if let problem = problem(inReplyLine: reply.lineBytes) {
            throw InvariantViolation(input: input, problem: problem)
        }
    }

    /// Whether a request line is blank: empty, or only spaces and tabs.
    public static func isBlank(_ line: some Collection<UInt8>) -> Bool {
        line.allSatisfy { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
    }

    /// The longest `ERR` line: its message is cut to ``Reply/maximumMessageLength`` characters
    /// (echoed input included), so it stays short whatever the request.
    public static let maximumErrorLineBytes = 1024

    /// What is wrong with an encoded reply line, or nil when it is well formed: valid UTF-8,
    /// ending in its only `\n`, with no other control character; `OK ` and one JSON value, or
    /// `ERR `, a code of the contract other than `INTERNAL`, a space and a message, in at most
    /// ``maximumErrorLineBytes``.
    public static func problem(inReplyLine line: [UInt8]) -> String? {
        let shown = "reply " + describe(line)
        guard line.last == UInt8(ascii: "\n") else { return "\(shown) does not end in \\n" }
        let body = line.dropLast()
        if body.contains(UInt8(ascii: "\n")) { return "\(shown) holds more than one line" }
        if body.contains(where: { $0 < 0x20 || $0 == 0x7F }) { return "\(shown) holds a control character" }
        guard String(validating: body, as: UTF8.self) != nil else { return "\(shown) is not valid UTF-8" }
        let ok = Array("OK ".utf8)
        let err = Array("ERR ".utf8)
        if body.starts(with: ok) {
            let value = Data(body.dropFirst(ok.count))
            guard (try? JSONSerialization.jsonObject(with: value, options: [.fragmentsAllowed])) != nil else {
                return "\(shown) is not OK followed by one JSON value"
            }
            return nil
        }
        guard body.starts(with: err) else { return "\(shown) starts with neither OK nor ERR" }
        let rest = body.dropFirst(err.count)
        guard let space = rest.firstIndex(of: UInt8(ascii: " ")), space < rest.endIndex - 1 else {
            return "\(shown) has no code and message"
        }
        let code = String(decoding: rest[..<space], as: UTF8.self)
        guard let known = ErrorCode(rawValue: code) else { return "\(shown) has an unknown error code" }
        if known == .internal { return "\(shown) is an internal error" }
        if line.count > maximumErrorLineBytes { return "\(shown) is \(line.count) bytes, longer than \(maximumErrorLineBytes)" }
        return nil
    }

    /// Bytes as printable text for a report: ASCII as is, `\n`, `\r`, `\t`, `\\`, and `\xNN` for
    /// anything else (so invalid UTF-8 shows); cut after 400 bytes.
    public static func describe(_ bytes: [UInt8], limit: Int = 400) -> String {
        var text = "\"" + escaped(bytes.prefix(limit), namingControls: true) + "\""
        if bytes.count > limit { text += "… (\(bytes.count - limit) more bytes)" }
        return text
    }

    /// Bytes as printable ASCII: `\\`, `\"` and `\xNN` escapes, and with `namingControls` also
    /// `\n`, `\r` and `\t` (libFuzzer's dictionaries know only the first three).
    public static func escaped(_ bytes: some Sequence<UInt8>, namingControls: Bool) -> String {
        var text = ""
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\n") where namingControls: text += "\\n"
            case UInt8(ascii: "\r") where namingControls: text += "\\r"
            case UInt8(ascii: "\t") where namingControls: text += "\\t"
            case UInt8(ascii: "\\"): text += "\\\\"
            case UInt8(ascii: "\""): text += "\\\""
            case 0x20 ..< 0x7F: text.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = String(byte, radix: 16)
                text += "\\x" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return text
    }
}
