import HummingbirdCore
import Logging
import NIOCore
import NIOSSL
import ProxyHeaders
import ScavengerBoard
import ScavengerTLS

/// The HTTP port's limits on what a client sends before a request is handed on: how long a
/// request line and a whole request head may be, and how long a head may take to arrive.
public struct HTTPHeadLimits: Sendable, Equatable {
    /// The longest request line (`GET /path HTTP/1.1`), in bytes; longer gets `414`.
    public var maxRequestLineBytes: Int
    /// The longest request head (request line and header fields), in bytes; longer gets `431`.
    public var maxHeaderBytes: Int

    /// The largest head the HTTP parser underneath accepts (llhttp's 80 KiB); the limits stay
    /// below it, so that this guard, not the parser, is what refuses a large head.
    public static let parserMaximum = 80 * 1024

    public init(maxRequestLineBytes: Int = 8 * 1024, maxHeaderBytes: Int = 32 * 1024) {
        self.maxRequestLineBytes = maxRequestLineBytes
        self.maxHeaderBytes = maxHeaderBytes
    }
}

/// What the HTTP port's guard knows of a connection's bytes, as a state machine over the raw
/// stream (it sits before the HTTP parser): where the current request head is, whether a body
/// follows and how long it is, and when the connection has become a WebSocket (after which its
/// bytes are frames, not heads). Pure: fed bytes and events, it answers what to do.
struct HTTPGuardStateMachine {
    enum State: Equatable {
        /// Between requests, or inside a request head: `headBytes` of it so far (0: none yet),
        /// `lineBytes` of its current line, whether the request line is done, and the head's
        /// text so far (for the body's length).
        case head(headBytes: Int, lineBytes: Int, requestLineDone: Bool)
        /// Inside a request body of which `remaining` bytes are still to come.
        case body(remaining: Int)
        /// Bytes no longer read as HTT/1 heads: the connection was upgraded to a WebSocket, or a
        /// body of unknown length (chunked) follows. The idle timeout still applies.
        case opaque
        /// A refusal was sent: nothing more is read.
        case refused
    }

    /// Why a request was refused, with the status it gets.
    enum Refusal: Equatable {
        case requestLineTooLong
        case headerTooLarge
        case headerTimeout
        case badHead
        case originNotAllowed

        var status: (code: Int, reason: String) {
            switch self {
            case .requestLineTooLong: (414, "URI Too Long")
            case .headerTooLarge: (431, "Request Header Fields Too Large")
            case .headerTimeout: (408, "Request Timeout")
            case .badHead: (400, "Bad Request")
            case .originNotAllowed: (403, "Forbidden")
            }
        }
    }

    /// What the handler does after bytes were read.
    enum ReadAction: Equatable {
        /// Pass the bytes on; `headStarted` when a head began in them (arm its deadline) and
        /// `headEnded` when one ended (disarm it).
        case forward(headStarted: Bool, headEnded: Bool)
        /// Send this refusal and close; pass nothing on.
        case refuse(Refusal)
        /// Drop the bytes (a refusal was already sent).
        case drop
    }

    let limits: HTTPHeadLimits
    /// The origins a WebSocket may be opened from; nil: any.
    let allowedOrigins: Set<String>?
    private(set) var state: State = .head(headBytes: 0, lineBytes: 0, requestLineDone: false)
    /// The header fields of the connection's first complete request head (names lower-cased).
    private(set) var firstHeadFields: [(name: String, value: String)]?
    /// The current head's bytes, kept (at most `maxHeaderBytes`) to read its body's length.
    private var headText: [UInt8] = []

    init(limits: HTTPHeadLimits, allowedOrigins: Set<String>? = nil) {
        self.limits = limits
        self.allowedOrigins = allowedOrigins
    }

    /// Bytes read from the client.
    mutating func read(_ bytes: ByteBufferView) -> ReadAction {
        var headStarted = false
        var headEnded = false
        var index = bytes.startIndex
        while index < bytes.endIndex {
            switch state {
            case .refused:
                return .drop
            case .opaque:
                return .forward(headStarted: headStarted, headEnded: headEnded)
            case .body(let remaining):
                let available = bytes.distance(from: index, to: bytes.endIndex)
                let taken = min(available, remaining)
                index = bytes.index(index, offsetBy: taken)
                state = remaining - taken == 0 ? .head(headBytes: 0, lineBytes: 0, requestLineDone: false) : .body(remaining: remaining - taken)
            case .head(var headBytes, var lineBytes, var requestLineDone):
                let byte = bytes[index]
                index = bytes.index(after: index)
                // Empty lines before a request line are allowed (RFC 9112, 2.2) and not counted.
                if headBytes == 0, byte == UInt8(ascii: "\r") || byte == UInt8(ascii: "\n") { continue }
                if headBytes == 0 {
                    headStarted = true
                    headText.removeAll(keepingCapacity: true)
                }
                headBytes += 1
                headText.append(byte)
                if byte == UInt8(ascii: "\n") {
                    if !requestLineDone {
                        requestLineDone = true
                    } else if lineBytes == 0 || (lineBytes == 1 && headText[headText.count - 2] == UInt8(ascii: "\r")) {
                        // The empty line: the head is complete.
                        headEnded = true
                        let fields = fields()
                        if firstHeadFields == nil { firstHeadFields = fields }
                        if isForbiddenUpgrade(fields) {
                            state = .refused
                            return .refuse(.originNotAllowed)
                        }
                        switch bodyLength(fields) {
                        case .none: state = .head(headBytes: 0, lineBytes: 0, requestLineDone: false)
                        case .length(let length): state = length > 0 ? .body(remaining: length) : .head(headBytes: 0, lineBytes: 0, requestLineDone: false)
                        case .unknown: state = .opaque
                        case .invalid:
                            state = .refused
                            return .refuse(.badHead)
                        }
                        continue
                    }
                    lineBytes = 0
                } else {
                    lineBytes += 1
                    if !requestLineDone, lineBytes > limits.maxRequestLineBytes {
                        state = .refused
                        return .refuse(.requestLineTooLong)
                    }
                }
                if headBytes > limits.maxHeaderBytes {
                    state = .refused
                    return .refuse(.headerTooLarge)
                }
                state = .head(headBytes: headBytes, lineBytes: lineBytes, requestLineDone: requestLineDone)
            }
        }
        return .forward(headStarted: headStarted, headEnded: headEnded)
    }

    /// The head's deadline passed: refuse when a head is still incomplete.
    mutating func headDeadlinePassed() -> Refusal? {
        guard case .head(let headBytes, _, _) = state, headBytes > 0 else { return nil }
        state = .refused
        return .headerTimeout
    }

    /// The server answered `101 Switching Protocols`: from now on the bytes are WebSocket frames.
    mutating func upgraded() {
        if state != .refused { state = .opaque }
    }

    /// The handler refused the connection for a reason of its own: nothing more is read.
    mutating func refused() {
        state = .refused
    }

    /// Whether a head is arriving now (its deadline should be armed).
    var isInsideHead: Bool {
        if case .head(let headBytes, _, _) = state { return headBytes > 0 }
        return false
    }

    private enum BodyLength { case none, length(Int), unknown, invalid }

    /// The head's header fields, names lower-cased, values trimmed, in order.
    private func fields() -> [(name: String, value: String)] {
        let lines = headText.split(omittingEmptySubsequences: true) { $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") }
        return lines.dropFirst().compactMap { line in
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return nil }
            let name = String(decoding: line[..<colon], as: UTF8.self).lowercased()
            var value = line[line.index(after: colon)...]
            while let first = value.first, first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") { value = value.dropFirst() }
            while let last = value.last, last == UInt8(ascii: " ") || last == UInt8(ascii: "\t") { value = value.dropLast() }
            return (name, String(decoding: value, as: UTF8.self))
        }
    }

    /// The body's length from the head: `Content-Length`, or unknown with `Transfer-Encoding`.
    private func bodyLength(_ fields: [(name: String, value: String)]) -> BodyLength {
        var length: BodyLength = .none
        for (name, value) in fields {
            if name == "transfer-encoding" { return .unknown }
            if name == "content-length" {
                guard value.utf8.allSatisfy({ (UInt8(ascii: "0") ... UInt8(ascii: "9")).contains($0) }), let value = Int(value) else {
                    return .invalid
                }
                if case .length(let other) = length, other != value { return .invalid }
                length = .length(value)
            }
        }
        return length
    }

    /// Whether the head asks for a WebSocket from an origin that is not allowed. A request with
    /// no `Origin` (not sent by a browser) is allowed.
    private func isForbiddenUpgrade(_ fields: [(name: String, value: String)]) -> Bool {
        guard let allowedOrigins,
              fields.contains(where: { $0.name == "upgrade" && $0.value.lowercased() == "websocket" }),
              let origin = fields.first(where: { $0.name == "origin" })?.value
        else { return false }
        return !allowedOrigins.contains(origin)
    }
}

/// The first handler of every HTTP connection, before the HTTP parser: it admits the connection
/// under the daemon's connection limits (a refused one gets `503` and is closed), refuses a
/// request line or head over the limits (`414`, `431`) or one that does not arrive within the
/// head deadline (`408`), and closes a connection that sent nothing for the idle timeout. Every
/// refusal is a whole HTTP response followed by a close: a client is never left hanging.
final class HTTPGuardHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// What the guard is told to enforce.
    struct Settings: Sendable {
        /// The daemon's connection limits, shared with the line port.
        var limits: ConnectionLimits
        var head: HTTPHeadLimits
        /// Seconds a request head may take once its first byte arrived; 0: no limit.
        var headTimeoutSeconds: Int
        /// Seconds of silence from the client before the connection is closed; 0: never.
        var idleTimeoutSeconds: Int
        /// The origins a WebSocket may be opened from; nil: any.
        var allowedOrigins: Set<String>?
        /// Peers whose `Forwarded`/`X-Forwarded-For` name the client (``ForwardedClient``).
        var trustedProxies: TrustedProxies = .none
    }

    private let settings: Settings
    private var machine: HTTPGuardStateMachine
    private var admission: ConnectionLimits.Admission?
    /// A trusted proxy's connection, counted in all but under no address until its first
    /// request head names the client.
    private var awaitsClient = false
    private var headDeadline: Scheduled<Void>?
    private var idleCheck: Scheduled<Void>?
    private var lastRead = NIODeadline.now()

    init(settings: Settings) {
        self.settings = settings
        self.machine = HTTPGuardStateMachine(limits: settings.head, allowedOrigins: settings.allowedOrigins)
    }

    func channelActive(context: ChannelHandlerContext) {
        let address = context.channel.remoteAddress?.ipAddress
        awaitsClient = settings.trustedProxies.contains(address)
        switch settings.limits.admit(address: awaitsClient ? nil : address) {
        case .success(let admission):
            self.admission = admission
            lastRead = .now()
            scheduleIdleCheck(context, in: .seconds(Int64(settings.idleTimeoutSeconds)))
            context.fireChannelActive()
        case .failure(let refusal):
            // Past the refusals being answered, closed unanswered (see ConnectionLimits.maximumRefusing).
            guard settings.limits.holdRefusal() else { return context.close(promise: nil) }
            let limits = settings.limits
            context.channel.closeFuture.whenComplete { _ in limits.releaseRefusal() }
            context.fireChannelActive()
            refuse(context, code: 503, reason: "Service Unavailable", message: refusal.message, retryAfter: true)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let admission {
            settings.limits.leave(admission)
            self.admission = nil
        }
        headDeadline?.cancel()
        idleCheck?.cancel()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = unwrapInboundIn(data)
        lastRead = .now()
        switch machine.read(bytes.readableBytesView) {
        case .drop:
            return
        case .refuse(let refusal):
            let status = refusal.status
            refuse(context, code: status.code, reason: status.reason, message: Self.message(for: refusal), retryAfter: false)
        case .forward(let headStarted, let headEnded):
            if awaitsClient, let fields = machine.firstHeadFields, let admission {
                // A trusted proxy's first request names whom the connection is for: it counts
                // under that address from now on, or is refused if that address is full.
                awaitsClient = false
                let peer = context.channel.remoteAddress?.ipAddress
                let client = ForwardedClient.address(peer: peer, fields: fields, trusted: settings.trustedProxies)
                switch settings.limits.readdress(admission, to: client) {
                case .success(let moved):
                    self.admission = moved
                case .failure(let refusal):
                    machine.refused()
                    return refuse(context, code: 503, reason: "Service Unavailable", message: refusal.message, retryAfter: true)
                }
            }
            if headEnded, !machine.isInsideHead {
                headDeadline?.cancel()
                headDeadline = nil
            }
            if machine.isInsideHead, headStarted || headEnded, settings.headTimeoutSeconds > 0 {
                headDeadline?.cancel()
                headDeadline = context.eventLoop.assumeIsolated().scheduleTask(in: .seconds(Int64(settings.headTimeoutSeconds))) {
                    [self] in
                    guard let refusal = machine.headDeadlinePassed() else { return }
                    let status = refusal.status
                    refuse(context, code: status.code, reason: status.reason, message: Self.message(for: refusal), retryAfter: false)
                }
            }
            context.fireChannelRead(data)
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        // A response head is written as a buffer of its own, first: `101` means a WebSocket.
        let bytes = unwrapOutboundIn(data)
        if bytes.readableBytesView.starts(with: Self.switchingProtocols) {
            machine.upgraded()
            headDeadline?.cancel()
            headDeadline = nil
        }
        context.write(data, promise: promise)
    }

    private static let switchingProtocols = Array("HTTP/1.1 101".utf8)

    private static func message(for refusal: HTTPGuardStateMachine.Refusal) -> String {
        switch refusal {
        case .requestLineTooLong: "the request line is too long"
        case .headerTooLarge: "the request's header fields are too large"
        case .headerTimeout: "the request's head did not arrive in time"
        case .badHead: "the request's head is malformed"
        case .originNotAllowed: "WebSocket connections from this origin are not allowed"
        }
    }

    /// Writes a whole response with `Connection: close` and closes once it is written.
    private func refuse(_ context: ChannelHandlerContext, code: Int, reason: String, message: String, retryAfter: Bool) {
        headDeadline?.cancel()
        headDeadline = nil
        let body = message + "\n"
        var head = "HTTP/1.1 \(code) \(reason)\r\nContent-Type: text/plain; charset=utf-8\r\n"
        head += "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n"
        if retryAfter { head += "Retry-After: 1\r\n" }
        head += "X-Content-Type-Options: nosniff\r\n\r\n"
        var buffer = context.channel.allocator.buffer(capacity: head.utf8.count + body.utf8.count)
        buffer.writeString(head)
        buffer.writeString(body)
        context.writeAndFlush(wrapOutboundOut(buffer)).assumeIsolated().whenComplete { _ in
            context.close(promise: nil)
        }
    }

    /// Closes the connection once nothing has been read for the idle timeout (none when 0).
    private func scheduleIdleCheck(_ context: ChannelHandlerContext, in delay: TimeAmount) {
        guard settings.idleTimeoutSeconds > 0 else { return }
        idleCheck = context.eventLoop.assumeIsolated().scheduleTask(deadline: .now() + delay) { [self] in
            let timeout = TimeAmount.seconds(Int64(settings.idleTimeoutSeconds))
            let quiet = NIODeadline.now() - lastRead
            if quiet >= timeout {
                context.close(promise: nil)
            } else {
                scheduleIdleCheck(context, in: timeout - quiet)
            }
        }
    }
}

/// A Hummingbird child channel with the guard in front of it: every HTTP connection passes
/// ``HTTPGuardHandler`` before the HTTP parser sees a byte. With a certificate, TLS (and its
/// handshake deadline) comes first, so the guard counts the connection as it opens and reads the
/// decrypted requests; each connection gets the certificate current when it connects.
struct GuardedChildChannel<Inner: ServerChildChannel>: ServerChildChannel {
    typealias Value = Inner.Value

    let inner: Inner
    let settings: HTTPGuardHandler.Settings
    var tls: ServerCertificate? = nil
    var tlsHandshakeTimeoutSeconds = 10

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            var handlers: [any ChannelHandler] = []
            if let tls {
                handlers.append(NIOSSLServerHandler(context: tls.context))
                if tlsHandshakeTimeoutSeconds > 0 { handlers.append(TLSHandshakeDeadline(seconds: tlsHandshakeTimeoutSeconds)) }
            }
            handlers.append(HTTPGuardHandler(settings: settings))
            try channel.pipeline.syncOperations.addHandlers(handlers, position: .first)
        }.flatMap {
            inner.setup(channel: channel, logger: logger)
        }
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}
