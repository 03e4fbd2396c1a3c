import Foundation
import Logging
import NIOCore
import Postgres
@testable import ScavengerBoard
import ScavengerCore
import ScavengerFeed
import ScavengerProtocol
import ScavengerServer
import ScavengerStore
import ScavengerTestSupport
import ServiceLifecycle
import Sodium
import Testing

/// A real server on a real, migrated PostgreSQL schema of its own, its feed and board on `clock`.
func withDatabaseServer(
    configuration: PostgresConfiguration? = nil,
    pinRules: PinRules = PinRules(),
    feedRules: FeedRules = FeedRules(),
    moderationRules: ModerationRules = ModerationRules(),
    listening: Bool = false,
    hashing: PasswordHashing = .minimum,
    hashingThreads: Int = 2,
    clock: any WallClock = .system,
    configure: (inout BoardRules) -> Void = { _ in },
    _ body: (SocketAddress, TestEnvironment) async throws -> Void
) async throws {
    try await TestEnvironment.make(
        configuration: configuration, pinRules: pinRules, feedRules: feedRules, moderationRules: moderationRules, hashing: hashing,
        hashingThreads: hashingThreads, clock: clock, configure: configure
    ).use { environment in
        let extra: [any Service] = listening ? [try await environment.listener()] : []
        try await withServer(board: environment.board, alongside: extra) { address, _ in
            try await body(address, environment)
        }
    }
}

/// One client connection used request by request.
final class Conversation {
    let writer: TestConnection.Writer
    var reader: TestConnection.LineReader

    init(writer: TestConnection.Writer, reader: TestConnection.LineReader) {
        self.writer = writer
        self.reader = reader
    }

    /// Sends one request line and returns its reply line.
    func call(_ line: String) async throws -> String {
        try await writer.send(line + "\n")
        guard let reply = try await reader.next() else { throw ConnectionClosed(request: line) }
        return reply
    }

    /// Sends a request that must succeed and returns its JSON value.
    func ok(_ line: String) async throws -> JSONObject {
        try JSONObject(okLine: try await call(line))
    }

    /// Registers a user (password `password1`) on this connection and returns the token.
    @discardableResult
    func register(_ name: String) async throws -> String {
        let reply = try await ok("REGISTER \(name) \(name)@example.org password1")
        return try reply["token"].string
    }
}

struct ConnectionClosed: Error, CustomStringConvertible {
    let request: String
    var description: String { "the server closed the connection instead of answering \(request.prefix(60))" }
}

/// Opens a connection for `body` (from the local address `source`, if given).
func converse(_ address: SocketAddress, from source: String? = nil, _ body: (Conversation) async throws -> Void) async throws {
    try await converseReturning(address, from: source, body)
}

/// Opens a connection for `body` and returns what it returns.
func converseReturning<T: Sendable>(
    _ address: SocketAddress, from source: String? = nil, _ body: (Conversation) async throws -> T
) async throws -> T {
    try await TestConnection.talk(address, from: source) { writer, reader in
        let conversation = Conversation(writer: writer, reader: reader)
        let value = try await body(conversation)
        reader = conversation.reader
        return value
    }
}

/// A parsed JSON value from a reply, with accessors that fail the test on the wrong shape.
struct JSONObject: @unchecked Sendable {
    let value: Any

    init(value: Any) {
        self.value = value
    }

    /// Parses an `OK <json>` line.
    init(okLine line: String) throws {
        guard line.hasPrefix("OK ") else { throw UnexpectedReply(line: line) }
        value = try JSONSerialization.jsonObject(with: Data(line.dropFirst(3).utf8), options: [.fragmentsAllowed])
    }

    subscript(key: String) -> JSONObject {
        JSONObject(value: (value as? [String: Any])?[key] ?? NSNull())
    }

    subscript(index: Int) -> JSONObject {
        JSONObject(value: (value as? [Any])?[index] ?? NSNull())
    }

    var string: String {
        get throws {
            guard let string = value as? String else { throw UnexpectedReply(line: "\(value) is not a string") }
            return string
        }
    }

    var int: Int? { (value as? NSNumber)?.intValue }
    var double: Double? { (value as? NSNumber)?.doubleValue }
    var bool: Bool? { (value as? NSNumber)?.boolValue }
    var isNull: Bool { value is NSNull }
    var array: [JSONObject] { ((value as? [Any]) ?? []).map(JSONObject.init(value:)) }
    var keys: [String] { ((value as? [String: Any]) ?? [:]).keys.sorted() }
}

struct UnexpectedReply: Error, CustomStringConvertible {
    let line: String
    var description: String { "unexpected reply: \(line.prefix(200))" }
}

/// Quotes text as a JSON string token.
func quoted(_ text: String) -> String {
    JSON.string(text).encoded
}
