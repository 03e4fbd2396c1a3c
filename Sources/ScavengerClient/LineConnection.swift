import Foundation
import NIOCore
import NIOFoundationCompat
import NIOPosix
import NIOSSL
import Synchronization

/// The connection broke (or could not be made) before a reply came.
struct ConnectionLost: Error {
    /// Why no connection could be made, in plain words ("connection refused", "host not
    /// found"); nil when one was made and broke later.
    var connectFailure: String?

    init(connectFailure: String? = nil) { self.connectFailure = connectFailure }

    /// What went wrong with a connection attempt, for people: the system's reason for the
    /// common cases, the error's own description for the rest.
    static func reason(_ error: any Error, timeout: TimeAmount) -> String {
        if let failed = error as? NIOConnectionError {
            if failed.dnsAError != nil || failed.dnsAAAAError != nil, failed.connectionErrors.isEmpty {
                return "host not found"
            }
            if let first = failed.connectionErrors.first { return reason(first.error, timeout: timeout) }
            return "no address to connect to"
        }
        if let io = error as? IOError {
            switch io.errnoCode {
            case ECONNREFUSED: return "connection refused"
            case ENETUNREACH: return "network unreachable"
            case EHOSTUNREACH: return "host unreachable"
            case ETIMEDOUT: return "timed out"
            case EADDRNOTAVAIL: return "address not available"
            default: return String(cString: strerror(io.errnoCode)).lowercased()
            }
        }
        if let channel = error as? ChannelError, case .connectTimeout = channel {
            return "no answer within \(timeout.nanoseconds / 1_000_000_000) s"
        }
        return "\(error)"
    }
}

/// One connection to the server: request lines go out in order with a promise each, reply lines
/// fulfil the promises in the same order (the protocol answers one line per request line, in
/// order), and `EVENT` lines go to the watch their `"watch"` field names, never to a promise.
final class LineConnection: Sendable {
    /// Where a watch's events go: each event's line (without `EVENT `), then nil when the
    /// connection has closed or the watch is unrouted.
    typealias Sink = @Sendable (Substring?) -> Void

    let channel: any Channel
    private let routes = Mutex(Routes())

    private struct Routes {
        var sinks: [String: Sink] = [:]
        /// Events of a watch whose `OK` has been read but not yet routed (its caller has not
        /// resumed yet): kept until it is.
        var early: [String: [Substring]] = [:]
        var closed = false
    }

    /// Where the handler finds the connection once it exists.
    private final class Box: Sendable {
        let connection = Mutex<LineConnection?>(nil)
    }

    private init(channel: any Channel) {
        self.channel = channel
    }

    /// Connects to `host`:`port`, through TLS when `tls` is given.
    static func connect(
        host: String, port: Int, tls: NIOSSLContext?, serverHostname: String?, timeout: TimeAmount,
        group: any EventLoopGroup
    ) async throws -> LineConnection {
        let box = Box()
        let bootstrap = ClientBootstrap(group: group)
            .connectTimeout(timeout)
            .channelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tls {
                        try channel.pipeline.syncOperations.addHandler(
                            try NIOSSLClientHandler(context: tls, serverHostname: serverHostname))
                    }
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(LineDecoder()))
                    try channel.pipeline.syncOperations.addHandler(LineHandler { line in
                        box.connection.withLock { $0 }?.deliver(event: line)
                    } closed: {
                        box.connection.withLock { $0 }?.closeRoutes()
                    })
                }
            }
        let channel: any Channel
        do {
            channel = try await bootstrap.connect(host: host, port: port).get()
        } catch {
            throw ConnectionLost(connectFailure: ConnectionLost.reason(error, timeout: timeout))
        }
        let connection = LineConnection(channel: channel)
        box.connection.withLock { $0 = connection }
        // Closed before the box was filled: the routes must still end.
        if !channel.isActive { connection.closeRoutes() }
        return connection
    }

    var isActive: Bool { channel.isActive && !routes.withLock { $0.closed } }

    /// Sends one request line (without its `\n`) and returns its reply line.
    func send(_ line: String) async throws -> String {
        let promise = channel.eventLoop.makePromise(of: String.self)
        // A channel already closed has no handlers left: the request never reaches the line
        // handler, and only the write's own promise says so. (Failing a reply that came is a
        // no-op: a promise completes once.)
        let written = channel.eventLoop.makePromise(of: Void.self)
        written.futureResult.whenFailure { _ in promise.fail(ConnectionLost()) }
        channel.writeAndFlush(Outgoing(line: line, reply: promise), promise: written)
        do {
            return try await promise.futureResult.get()
        } catch {
            throw ConnectionLost()
        }
    }

    /// Routes the events of `watch` to `sink`, those that came already first. On a closed
    /// connection the sink ends at once.
    func route(_ watch: String, to sink: @escaping Sink) {
        let (early, closed) = routes.withLock { routes -> ([Substring], Bool) in
            if routes.closed { return ([], true) }
            routes.sinks[watch] = sink
            return (routes.early.removeValue(forKey: watch) ?? [], false)
        }
        for event in early { sink(event) }
        if closed { sink(nil) }
    }

    /// Stops routing `watch`'s events; its sink ends.
    func unroute(_ watch: String) {
        let sink = routes.withLock { routes in
            routes.early[watch] = nil
            return routes.sinks.removeValue(forKey: watch)
        }
        sink?(nil)
    }

    /// Closes the connection.
    func close() {
        channel.close(promise: nil)
    }

    private func deliver(event: Substring) {
        guard let watch = Self.watchID(of: event) else { return }
        let sink = routes.withLock { routes -> Sink? in
            if let sink = routes.sinks[watch] { return sink }
            // Bounded: a watch unrouted while its events were on the way never claims them.
            if routes.early[watch, default: []].count < 100_000 { routes.early[watch, default: []].append(event) }
            return nil
        }
        sink?(event)
    }

    private func closeRoutes() {
        let sinks = routes.withLock { routes in
            routes.closed = true
            routes.early = [:]
            let sinks = routes.sinks
            routes.sinks = [:]
            return sinks
        }
        for sink in sinks.values { sink(nil) }
    }

    private struct WatchField: Decodable { var watch: String }

    static func watchID(of event: Substring) -> String? {
        try? JSONDecoder().decode(WatchField.self, from: Data(event.utf8)).watch
    }
}

/// Splits what arrives into lines (without their `\n`).
struct LineDecoder: ByteToMessageDecoder {
    typealias InboundOut = ByteBuffer
    private var scanned = 0

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        let view = buffer.readableBytesView
        guard let newline = view.dropFirst(scanned).firstIndex(of: UInt8(ascii: "\n")) else {
            scanned = view.count
            return .needMoreData
        }
        let length = newline - view.startIndex
        let line = buffer.readSlice(length: length)!
        buffer.moveReaderIndex(forwardBy: 1)
        scanned = 0
        context.fireChannelRead(wrapInboundOut(line))
        return .continue
    }
}

/// A request line and the promise of its reply.
struct Outgoing {
    var line: String
    var reply: EventLoopPromise<String>
}

/// Matches reply lines to requests in order and hands `EVENT` lines on; fails every waiting
/// request when the connection closes.
final class LineHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = Outgoing
    typealias OutboundOut = ByteBuffer

    private var waiting = CircularBuffer<EventLoopPromise<String>>()
    private var active = true
    private let event: (Substring) -> Void
    private let closed: () -> Void

    init(event: @escaping (Substring) -> Void, closed: @escaping () -> Void) {
        self.event = event
        self.closed = closed
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let outgoing = unwrapOutboundIn(data)
        guard active else {
            outgoing.reply.fail(ConnectionLost())
            promise?.fail(ConnectionLost())
            return
        }
        waiting.append(outgoing.reply)
        var buffer = context.channel.allocator.buffer(capacity: outgoing.line.utf8.count + 1)
        buffer.writeString(outgoing.line)
        buffer.writeInteger(UInt8(ascii: "\n"))
        context.write(wrapOutboundOut(buffer), promise: promise)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        var line = buffer.readString(length: buffer.readableBytes) ?? ""
        if line.hasSuffix("\r") { line.removeLast() }
        if line.hasPrefix("EVENT ") {
            event(line.dropFirst(6))
        } else if !waiting.isEmpty {
            waiting.removeFirst().succeed(line)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        failAll()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        failAll()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        failAll()
        context.close(promise: nil)
    }

    private func failAll() {
        guard active else { return }
        active = false
        while let promise = waiting.popFirst() { promise.fail(ConnectionLost()) }
        closed()
    }
}
