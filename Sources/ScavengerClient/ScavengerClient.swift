import Foundation
import NIOCore
import NIOPosix
import NIOSSL

/// A client of a Scavenger server (`scavengerd`) over its line protocol, on TCP or TLS.
///
/// Calls may run concurrently: they share one connection, their lines pipelined and their replies
/// matched in order. When the connection breaks, the client reconnects with capped exponential
/// back-off and jitter, resumes the session with its token (`AUTH`), and retries what is safe to
/// retry: reads, and writes, which all carry a `REQUEST` key (a write whose reply was lost is
/// sent again with the same key, so it runs once). Watches resume where they stopped
/// (`WATCH … SINCE`).
public actor ScavengerClient {
    /// Where the server is and how to reach it again.
    public struct Configuration: Sendable {
        /// The server's host name or address.
        public var host: String
        /// Its line port (default 7467).
        public var port: Int
        /// TLS settings when the port speaks TLS (`serve --tls-port`); nil for plain TCP.
        public var tls: TLSConfiguration?
        /// The name the server's certificate must hold (default: `host`, unless it is an address).
        public var serverHostname: String?
        /// The first wait before reconnecting (default 50 ms); it doubles with every failure.
        public var initialBackoff: Duration
        /// The longest wait between attempts (default 5 s); each wait is jittered down by up to half.
        public var maximumBackoff: Duration
        /// How many times a call is sent again after a lost connection or `UNAVAILABLE`
        /// before it fails (default 12); watches retry until they are cancelled.
        public var maximumRetries: Int
        /// How long one connection attempt may take (default 10 s).
        public var connectTimeout: Duration

        /// A configuration with the defaults above.
        public init(
            host: String = "127.0.0.1", port: Int = 7467, tls: TLSConfiguration? = nil, serverHostname: String? = nil,
            initialBackoff: Duration = .milliseconds(50), maximumBackoff: Duration = .seconds(5), maximumRetries: Int = 12,
            connectTimeout: Duration = .seconds(10)
        ) {
            self.host = host
            self.port = port
            self.tls = tls
            self.serverHostname = serverHostname
            self.initialBackoff = initialBackoff
            self.maximumBackoff = maximumBackoff
            self.maximumRetries = maximumRetries
            self.connectTimeout = connectTimeout
        }
    }

    /// The configuration it was made with.
    public nonisolated let configuration: Configuration
    private let group: any EventLoopGroup
    private let sslContext: NIOSSLContext?
    private var connection: LineConnection?
    private var connecting: Task<LineConnection, any Error>?
    private var closed = false
    /// The session's token, sent with `AUTH` on every new connection.
    public private(set) var token: String?
    /// How many connections have been opened (the first included).
    public private(set) var connectionCount = 0
    private let rawEvents: AsyncStream<String>.Continuation
    /// `EVENT` lines (their JSON) of watches started with ``send(_:)``, for tools such as the CLI;
    /// ``watch(lat:lon:radiusMeters:kind:)`` and ``watchHunt(_:)`` deliver theirs on their own streams.
    public nonisolated let events: AsyncStream<String>

    /// A client of the server `configuration` names; it connects on the first call.
    /// - Parameter token: a session token to resume with `AUTH` (from an earlier login).
    public init(_ configuration: Configuration, token: String? = nil) throws {
        self.configuration = configuration
        self.token = token
        group = MultiThreadedEventLoopGroup.singleton
        sslContext = try configuration.tls.map { try NIOSSLContext(configuration: $0) }
        let (events, rawEvents) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingNewest(10_000))
        self.events = events
        self.rawEvents = rawEvents
    }

    /// A client of `host`:`port` over plain TCP, with the default settings.
    public init(host: String = "127.0.0.1", port: Int = 7467, token: String? = nil) throws {
        try self.init(Configuration(host: host, port: port), token: token)
    }

    /// Closes the connection; calls after this fail with `CONNECTION_LOST`.
    public func close() {
        closed = true
        connecting?.cancel()
        connection?.close()
        connection = nil
        rawEvents.finish()
    }

    /// Drops the current connection (as a network failure would); the next call reconnects.
    public func disconnect() {
        connection?.close()
        connection = nil
    }

    /// Forgets the session's token (the connection stays as it is).
    public func forgetToken() { token = nil }

    // MARK: Connecting

    /// The open connection, or a new one (with `AUTH` sent first when there is a token).
    func connected() async throws -> LineConnection {
        if closed { throw ConnectionLost() }
        if let connection, connection.isActive { return connection }
        if let connecting { return try await connecting.value }
        let task = Task { try await self.open() }
        connecting = task
        defer { connecting = nil }
        let connection = try await task.value
        self.connection = connection
        return connection
    }

    private func open() async throws -> LineConnection {
        let host = configuration.host
        let serverHostname = configuration.serverHostname ?? (host.allSatisfy { $0.isNumber || $0 == "." || $0 == ":" } ? nil : host)
        let timeout = TimeAmount.nanoseconds(Int64(configuration.connectTimeout.components.seconds) * 1_000_000_000
            + configuration.connectTimeout.components.attoseconds / 1_000_000_000)
        let connection = try await LineConnection.connect(
            host: host, port: configuration.port, tls: sslContext, serverHostname: serverHostname, timeout: timeout, group: group)
        connectionCount += 1
        if let token {
            let reply: String
            do {
                reply = try await connection.send("AUTH " + Line.quote(token))
            } catch {
                connection.close()
                throw error
            }
            if let error = ScavengerError(errLine: reply[...]) {
                if error.code == .unauthorized {
                    // The session ended (logged out, expired): go on without it.
                    self.token = nil
                } else {
                    connection.close()
                    throw ConnectionLost()
                }
            }
        }
        return connection
    }

    /// `host:port` as people write it (an IPv6 address in brackets).
    nonisolated var address: String {
        let host = configuration.host
        return (host.contains(":") ? "[\(host)]" : host) + ":\(configuration.port)"
    }

    /// The wait before attempt `attempt` (1, 2, …): doubling from the initial back-off, capped,
    /// then jittered to between half and all of it.
    nonisolated func backoff(_ attempt: Int) -> Duration {
        let initial = configuration.initialBackoff / .milliseconds(1)
        let maximum = configuration.maximumBackoff / .milliseconds(1)
        let capped = min(maximum, initial * pow(2, Double(min(attempt - 1, 30))))
        return .milliseconds(capped * Double.random(in: 0.5 ... 1))
    }

    func lost(_ broken: LineConnection?) {
        if let broken, broken === connection {
            connection = nil
            broken.close()
        }
    }

    // MARK: Requests

    /// How a request may be retried after a lost connection or `ERR UNAVAILABLE`.
    enum Retry {
        /// Reads, and writes with a REQUEST key: sent again after reconnecting.
        case safe
        /// Sent once; a lost reply is `CONNECTION_LOST` (its outcome unknown).
        case never
    }

    /// Sends `line` and returns the JSON of its `OK`, or throws its `ERR` as ``ScavengerError``.
    func perform(_ line: String, retry: Retry) async throws -> Substring {
        try await exchange(line, retry: retry).payload
    }

    /// ``perform(_:retry:)``, also answering the connection the reply came on.
    func exchange(_ line: String, retry: Retry) async throws -> (payload: Substring, connection: LineConnection) {
        var attempt = 0
        while true {
            var used: LineConnection?
            do {
                let connection = try await connected()
                used = connection
                let reply = try await connection.send(line)
                if reply.hasPrefix("OK ") {
                    let payload = reply.dropFirst(3)
                    remember(line: line, payload: payload)
                    return (payload, connection)
                }
                guard let error = ScavengerError(errLine: reply[...]) else {
                    throw ScavengerError(code: .badReply, message: String(reply.prefix(200)))
                }
                guard error.code == .unavailable, retry == .safe, attempt < configuration.maximumRetries, !closed else { throw error }
            } catch let failure as ConnectionLost {
                lost(used)
                guard retry == .safe, attempt < configuration.maximumRetries, !closed else {
                    // The last attempt found nothing listening (a wrong port or host, a daemon
                    // not started): say so, rather than that a reply was lost.
                    if let reason = failure.connectFailure {
                        throw ScavengerError(code: .connectionLost, message: "cannot connect to \(address) (\(reason))")
                    }
                    throw ScavengerError(code: .connectionLost, message: "the connection to the server was lost before the reply")
                }
            }
            attempt += 1
            try await Task.sleep(for: backoff(attempt))
        }
    }

    /// Keeps the session's token from LOGIN, REGISTER, RESET, AUTH and a guest's JOIN; forgets it on LOGOUT.
    private func remember(line: String, payload: Substring) {
        let command = line.prefix { $0 != " " }.uppercased()
        switch command {
        case "LOGIN", "REGISTER", "RESET":
            if let session = try? Self.decode(Session.self, payload) { token = session.token }
        case "JOIN":
            if let guest = try? Self.decode(GuestSession.self, payload) { token = guest.token }
        case "AUTH":
            token = line.split(separator: " ", maxSplits: 1).last.map { Line.unquote(String($0)) }
        case "LOGOUT":
            token = nil
        default:
            break
        }
    }

    static func decode<T: Decodable>(_ type: T.Type, _ payload: Substring) throws -> T {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let text = try decoder.singleValueContainer().decode(String.self)
            if let date = Self.parseTime(text) { return date }
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not an RFC 3339 time: \(text)"))
        }
        do {
            return try decoder.decode(type, from: Data(payload.utf8))
        } catch {
            throw ScavengerError(code: .badReply, message: String("\(error)".prefix(300)) + " in " + String(payload.prefix(200)))
        }
    }

    static func parseTime(_ text: String) -> Date? {
        if let date = try? Date(text, strategy: .iso8601) { return date }
        return try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    /// The commands that write, each sent with a `REQUEST` key: those the daemon's `HELP` flags
    /// `write` (a test holds the two equal).
    public static let writeCommands: Set<String> = [
        "POST", "POSTPHOTO", "DELETE", "REPLY", "REPORT", "CREATEHUNT", "ADDSTOP", "REMOVESTOP", "JOIN", "LEAVE", "CHECKIN",
        "APPROVE", "REJECT", "HINT", "STARTHUNT", "EXTEND", "ENDHUNT", "CLAIM", "RESOLVE", "BAN", "UNBAN",
    ]

    /// The commands that neither write nor change the connection's state, sent again freely:
    /// those the daemon's `HELP` flags `readonly` (a test holds the two equal).
    public static let readOnlyCommands: Set<String> = [
        "PING", "HELLO", "HELP", "WHOAMI", "GET", "PHOTO", "NEARBY", "MAP", "REGIONS", "REGION", "REPLIES", "MODQUEUE", "MODLOG",
        "HUNT", "HUNTS", "REVIEW", "LEADERBOARD", "RANKING", "PROFILE", "BADGES",
    ]

    /// Sends one request line as typed (tokens quoted as the protocol wants) and returns the
    /// JSON text of its `OK`; an `ERR` throws. A write without a `REQUEST` gets one, so reads
    /// and writes are retried after a lost connection; the session's token follows `LOGIN`,
    /// `REGISTER`, `AUTH` and `LOGOUT`. A `WATCH` started here sends its events to ``events``.
    public func send(_ line: String) async throws -> String {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        let command = trimmed.prefix { $0 != " " && $0 != "\t" }.uppercased()
        var request = trimmed
        var retry = Retry.never
        if Self.writeCommands.contains(command) {
            let words = trimmed.split(whereSeparator: { $0 == " " || $0 == "\t" }).map { $0.uppercased() }
            if !words.contains("REQUEST") { request += " REQUEST " + Self.newRequestKey() }
            retry = .safe
        } else if Self.readOnlyCommands.contains(command) {
            retry = .safe
        }
        if command == "WATCH" {
            let (payload, connection) = try await exchange(request, retry: .never)
            if let started = try? Self.decode(WatchReply.self, payload) {
                let continuation = rawEvents
                connection.route(started.watch) { event in
                    if let event { continuation.yield(String(event)) }
                }
            }
            return String(payload)
        }
        return String(try await perform(request, retry: retry))
    }

    /// A new random `REQUEST` key: 22 characters of `A-Z a-z 0-9` (131 bits).
    public static func newRequestKey() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        var generator = SystemRandomNumberGenerator()
        return String((0 ..< 22).map { _ in alphabet[Int.random(in: 0 ..< alphabet.count, using: &generator)] })
    }

    /// Sends a read (retried freely) and decodes its reply.
    func read<T: Decodable>(_ line: Line, as type: T.Type) async throws -> T {
        try Self.decode(type, try await perform(line.text, retry: .safe))
    }

    /// Sends a write with a new `REQUEST` key (retried with the same key) and decodes its reply.
    func write<T: Decodable>(_ line: Line, as type: T.Type) async throws -> T {
        var keyed = line
        keyed.option("REQUEST", Self.newRequestKey())
        return try Self.decode(type, try await perform(keyed.text, retry: .safe))
    }

    /// Sends a request that is never retried (it changes the connection or cannot carry a key).
    func once<T: Decodable>(_ line: Line, as type: T.Type) async throws -> T {
        try Self.decode(type, try await perform(line.text, retry: .never))
    }
}

/// `OK {"watch", "seq", "resumed"}`.
struct WatchReply: Decodable, Sendable {
    var watch: String
    var seq: Int?
    var resumed: Bool?
}

/// A request line being built: arguments quoted when they must be, options appended.
struct Line {
    private(set) var text: String

    init(_ command: String) { text = command }

    /// Adds an argument: a bare word when it is one, else a JSON string literal.
    mutating func add(_ argument: String) { text += " " + Self.quote(argument) }

    /// Adds a number argument.
    mutating func add(_ number: Double) { text += " " + Self.number(number) }

    /// Adds a whole-number argument.
    mutating func add(_ number: Int) { text += " \(number)" }

    /// Adds `KEYWORD value`.
    mutating func option(_ keyword: String, _ value: String?) {
        guard let value else { return }
        text += " \(keyword) " + Self.quote(value)
    }

    /// Adds `KEYWORD number`.
    mutating func option(_ keyword: String, _ value: Int?) {
        guard let value else { return }
        text += " \(keyword) \(value)"
    }

    /// Adds `KEYWORD number`.
    mutating func option(_ keyword: String, _ value: Double?) {
        guard let value else { return }
        text += " \(keyword) " + Self.number(value)
    }

    /// Adds a bare `KEYWORD` when `present`.
    mutating func flag(_ keyword: String, _ present: Bool) {
        if present { text += " \(keyword)" }
    }

    static func number(_ value: Double) -> String {
        if value.rounded() == value, abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }

    /// The token for `text`: as is when it is a plain word, else quoted as JSON.
    static func quote(_ text: String) -> String {
        let plain = !text.isEmpty && !text.hasPrefix("\"") && text.unicodeScalars.allSatisfy {
            $0.value > 0x20 && $0.value < 0x7F && $0 != "\""
        }
        if plain { return text }
        var quoted = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": quoted += "\\\""
            case "\\": quoted += "\\\\"
            case "\n": quoted += "\\n"
            case "\r": quoted += "\\r"
            case "\t": quoted += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                quoted += String(format: "\\u%04x", scalar.value)
            default: quoted.unicodeScalars.append(scalar)
            }
        }
        return quoted + "\""
    }

    /// A token without its JSON quotes (as is when not quoted).
    static func unquote(_ token: String) -> String {
        guard token.hasPrefix("\""), let text = try? JSONDecoder().decode(String.self, from: Data(token.utf8)) else { return token }
        return text
    }
}

extension ScavengerClient {
    /// `text` as one token of a request line: as is when it is a plain word, else quoted as a
    /// JSON string (for building lines for ``send(_:)``).
    public static func token(_ text: String) -> String {
        Line.quote(text)
    }

    /// A JSON encoder that writes the models as the protocol does (times as RFC 3339).
    public static func makeEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(Self.time(date))
        }
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return encoder
    }
}
