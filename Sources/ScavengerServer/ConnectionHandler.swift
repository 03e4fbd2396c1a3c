import Logging
import NIOCore
import ScavengerBoard
import ScavengerCore
import ScavengerProtocol

/// Serves one connection: runs each line through the command table and writes the replies in
/// the order the requests came.
///
/// In-memory commands (PING, NEARBY, REGION, …) are answered right here on the event loop, with
/// no task or thread hop. A command that awaits the database runs as a task on this connection's
/// event loop; lines that arrive meanwhile wait in a queue, and reading stops while the queue is
/// full, so a client that pipelines cannot make the server buffer requests without bound.
///
/// Replies are bounded the same way: while the connection's unsent output is above its high-water
/// mark (the channel is not writable), no further request is answered and nothing more is read;
/// answering resumes once the client has read enough. So a client that pipelines requests and
/// never reads costs at most one reply beyond the mark.
///
/// A connection answers at most ``linesPerTurn`` lines in a row before it lets the event loop
/// serve its other connections, so one client pipelining heavy commands cannot starve them.
///
/// The connection closes only after its last reply has been written: when the client half-closes,
/// on graceful shutdown, and after `QUIT`.
///
/// It also frames the byte stream into lines (``LineFramer``) and keeps the connection's two
/// timers: the idle timeout (nothing read for that long closes the connection) and the line
/// deadline (a request line not finished within it of its first byte gets `ERR BAD_REQUEST` and
/// the connection closes, so a client trickling a byte at a time cannot hold it open). Only time
/// spent waiting for the client counts toward the line deadline: while reads are held back (the
/// queue is full, or the client is not reading its replies) it is pushed back. One handler does
/// all of it so that a request passes through no other handler between the socket and its reply.
///
/// Which of these applies when is the ``ConnectionStateMachine``'s to say: the handler feeds it
/// every event and performs the actions it returns.
final class ConnectionHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// Lines answered one after another before the event loop is given to other connections.
    static let linesPerTurn = 64
    /// How long a connection that used up its turn waits before the next: long enough for the
    /// event loop to serve other sockets first, short against 64 lines' work.
    static let turnGap = TimeAmount.microseconds(50)
    /// Lines kept waiting behind a deferred command before reading stops.
    static let maximumQueuedLines = 64
    /// Bytes kept waiting behind a deferred command before reading stops.
    static let maximumQueuedBytes = 1 << 20
    /// How long a closing connection's unread replies may wait for the client before it is
    /// closed anyway.
    static let closeGraceSeconds: Int64 = 30
    /// How long input is still read and discarded after `LINE_TOO_LONG` before closing.
    static let lingerSeconds: Int64 = 2

    private let table: CommandTable
    private let board: Board
    private let registry: ConnectionRegistry
    private let configuration: ServerConfiguration
    private var logger: Logger

    private var context: ChannelHandlerContext!
    private var commandContext: CommandContext!
    private var connectionID: ConnectionRegistry.ID?
    private var executor: EventLoopExecutor!

    private var stateMachine: ConnectionStateMachine
    private var framer: LineFramer
    /// When the line deadline passes, if a line is unfinished.
    private var lineDeadline: Scheduled<Void>?
    /// The idle timeout's next check.
    private var idleCheck: Scheduled<Void>?
    private var scratch: [UInt8] = []
    /// Largest scratch array (and reply buffer) kept between replies; a bigger one is given back.
    static let scratchCapacity = 64 * 1024
    /// The last reply's buffer: once the channel has written it and let it go, the next reply
    /// reuses its memory instead of allocating (a reply still queued keeps its own).
    private var replyBuffer: ByteBuffer?
    /// Watch events not yet written to the channel (it was above its high-water mark), oldest
    /// first, bounded by `maxEventBytes` (past it the watch at fault overflows).
    private var pendingEvents: PendingWatchEvents

    /// Whether the connection comes from a trusted proxy and waits for ``ProxiedClient`` (sent by
    /// the ``ProxyHeaderHandler`` in front) before it is counted under an address and served.
    private var awaitsProxyHeader: Bool

    init(
        table: CommandTable, board: Board, registry: ConnectionRegistry, configuration: ServerConfiguration,
        awaitsProxyHeader: Bool = false, logger: Logger
    ) {
        self.awaitsProxyHeader = awaitsProxyHeader
        self.table = table
        self.board = board
        self.registry = registry
        self.configuration = configuration
        self.logger = logger
        self.framer = LineFramer(maxLineBytes: configuration.limits.maxLineBytes)
        self.pendingEvents = PendingWatchEvents(maximumBytes: configuration.maxEventBytes)
        self.stateMachine = ConnectionStateMachine(configuration: Self.stateMachineConfiguration(configuration))
    }

    /// The state machine's limits: this handler's constants and the server's configuration.
    static func stateMachineConfiguration(_ configuration: ServerConfiguration) -> ConnectionStateMachine.Configuration {
        ConnectionStateMachine.Configuration(
            linesPerTurn: linesPerTurn,
            maximumQueuedLines: maximumQueuedLines,
            maximumQueuedBytes: maximumQueuedBytes,
            flushBytes: configuration.outputHighWaterBytes / 2,
            lineTimeout: configuration.lineTimeoutSeconds > 0 ? .seconds(Int64(configuration.lineTimeoutSeconds)) : nil,
            idleTimeout: configuration.idleTimeoutSeconds > 0 ? .seconds(Int64(configuration.idleTimeoutSeconds)) : nil)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        self.executor = EventLoopExecutor(context.eventLoop)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        perform(stateMachine.activated(now: context.eventLoop.now))
        let peer = context.channel.remoteAddress?.ipAddress
        // A trusted proxy's connection counts in all at once, under an address once it is known.
        let id = registry.register(context.channel, address: awaitsProxyHeader ? nil : peer)
        connectionID = id
        logger[metadataKey: "connection.id"] = "\(id.number)"
        if awaitsProxyHeader, id.admitted {
            context.fireChannelActive()
            return
        }
        awaitsProxyHeader = false
        begin(context, id: id, address: peer, refusal: id.refusal)
        context.fireChannelActive()
    }

    /// The connection's session under its client's address; or its refusal.
    private func begin(_ context: ChannelHandlerContext, id: ConnectionRegistry.ID, address: String?, refusal: ConnectionRegistry.Refusal?) {
        let sink = ConnectionEventSink(handler: self, eventLoop: context.eventLoop)
        commandContext = CommandContext(
            session: Session(connectionID: id.number, address: address.flatMap(ClientAddress.key), eventSink: sink),
            board: board, logger: logger)
        if let refusal {
            let message = refusal.message
            // A storm of refusals must not use up the descriptors: past those being answered,
            // closed unanswered.
            guard registry.limits.holdRefusal() else {
                _ = registry.noteRefusal()
                context.close(promise: nil)
                return
            }
            let limits = registry.limits
            context.channel.closeFuture.whenComplete { _ in limits.releaseRefusal() }
            if let refused = registry.noteRefusal() {
                logger.warning("connections refused", metadata: ["count": "\(refused)", "reason": "\(message)"])
            }
            perform(stateMachine.refuse(message: message))
            return
        }
        logger.debug("connection opened", metadata: ["peer": "\(context.channel.remoteAddress.map { "\($0)" } ?? "?")"])
    }

    func channelInactive(context: ChannelHandlerContext) {
        stateMachine.closed()
        cancelLineDeadline()
        idleCheck?.cancel()
        idleCheck = nil
        if let connectionID { registry.unregister(connectionID) }
        if let session = commandContext?.session {
            session.disconnect()
            board.endWatches(session: session)
        }
        pendingEvents.removeAll()
        logger.debug("connection closed")
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = unwrapInboundIn(data)
        perform(stateMachine.bytesRead(bytes, now: context.eventLoop.now))
        guard stateMachine.acceptsInput else { return }
        framer.append(bytes)
        while stateMachine.acceptsInput, let frame = framer.next(allocator: context.channel.allocator) {
            perform(stateMachine.frameReceived(frame))
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        stateMachine.readComplete()
        flushIfNeeded()
        context.fireChannelReadComplete()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let client = event as? ProxiedClient {
            // Before any of the connection's bytes: from now on it is the named client's.
            guard awaitsProxyHeader, let connectionID else { return }
            awaitsProxyHeader = false
            // Its input ended before (a TLS connection's, on shutdown): nothing is served.
            guard stateMachine.acceptsInput else { return }
            if client.named { logger[metadataKey: "client"] = "\(client.address ?? "?")" }
            begin(context, id: connectionID, address: client.address, refusal: registry.readdress(connectionID, to: client.address))
            return
        }
        if case .some(ChannelEvent.inputClosed) = event as? ChannelEvent {
            // A last line without `\n` is incomplete: the client went away before finishing it.
            framer.dropUnfinished()
            perform(stateMachine.inputClosed())
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        logger.debug("connection ended with an error", metadata: ["error": "\(error)"])
        context.close(promise: nil)
    }

    /// Holds reads back while the queue is full or the unsent output is above its high-water
    /// mark: the kernel's buffer, then the client, wait.
    func read(context: ChannelHandlerContext) {
        perform(stateMachine.readRequested())
    }

    /// The client has read enough of its replies: answer what waits, and read again.
    func channelWritabilityChanged(context: ChannelHandlerContext) {
        let writable = context.channel.isWritable
        stateMachine.writabilityChanged(writable)
        if writable {
            drainQueue()
            writePendingEvents()
            flushIfNeeded()
        }
        context.fireChannelWritabilityChanged()
    }

    // MARK: Actions

    /// Does what the state machine asked for.
    private func perform(_ action: ConnectionStateMachine.Action) {
        guard let context else { return }
        switch action {
        case .none:
            break
        case .answer(let line):
            answer(line)
        case .read:
            context.read()
        case .flush:
            context.flush()
        case .yieldTurn:
            yieldTurn(context)
        case .startLineDeadline:
            startLineDeadline(context)
        case .cancelLineDeadline:
            cancelLineDeadline()
        case .scheduleIdleCheck(let delay):
            idleCheck = context.eventLoop.assumeIsolated().scheduleTask(in: delay) { [self] in
                perform(stateMachine.idleCheckFired(now: context.eventLoop.now))
            }
        case .close:
            context.close(promise: nil)
        case .closeAfterWrites:
            cancelLineDeadline()
            closeAfterPendingWrites(context)
        case .closeWithError(let error, let closeNow):
            cancelLineDeadline()
            lingeringClose(context, after: reply(closing: error), closeNow: closeNow)
        }
    }

    /// Answers the state machine's next actions until it has none: queued lines, the end of a turn,
    /// a held read, the end of the connection.
    private func drainQueue() {
        while context != nil {
            let action = stateMachine.nextAction()
            if case .none = action { return }
            perform(action)
        }
    }

    private func flushIfNeeded() {
        guard context != nil else { return }
        perform(stateMachine.flushIfNeeded())
    }

    // MARK: Timers

    /// Lets the event loop serve other connections, then goes on with the queue.
    private func yieldTurn(_ context: ChannelHandlerContext) {
        flushIfNeeded()
        // A task for "now" would run before the loop looks at its sockets again (NIO runs ready
        // tasks until none is left); one a moment ahead lets it wait for I/O first.
        context.eventLoop.assumeIsolated().scheduleTask(in: Self.turnGap) {
            self.stateMachine.turnEnded()
            self.drainQueue()
            self.flushIfNeeded()
        }
    }

    /// Starts the line deadline from now (again, if it was running).
    private func startLineDeadline(_ context: ChannelHandlerContext) {
        lineDeadline?.cancel()
        let seconds = Int64(configuration.lineTimeoutSeconds)
        lineDeadline = context.eventLoop.assumeIsolated().scheduleTask(in: .seconds(seconds)) { [self] in
            lineDeadline = nil
            perform(stateMachine.lineDeadlineFired())
        }
    }

    private func cancelLineDeadline() {
        lineDeadline?.cancel()
        lineDeadline = nil
    }

    // MARK: Events

    /// Watch events from the hub, on this connection's event loop: each is one whole line,
    /// written between replies (a reply is always written whole); while the channel is above its
    /// high-water mark they wait here, and past `maxEventBytes` waiting the watch at fault gets
    /// `overflow` and ends.
    fileprivate func receive(_ events: [WatchEvent]) {
        guard stateMachine.acceptsEvents, let session = commandContext?.session else { return }
        let overflowed = pendingEvents.add(events, holds: session.holdsWatch)
        for watch in overflowed {
            board.endWatch(watch, session: session)
            logger.debug("watch overflowed", metadata: ["watch": "\(watch)"])
        }
        pendingEvents.ended(overflowed)
        // A closed watch's last event is queued: the connection no longer holds it.
        for case .closed(let watch, _) in events { board.endWatch(watch, session: session) }
        writePendingEvents()
        flushIfNeeded()
    }

    /// Writes waiting events while the channel takes them.
    private func writePendingEvents() {
        guard let context else { return }
        while stateMachine.mayWriteEvents, let event = pendingEvents.popFirst() {
            // A watch ended by UNWATCH since says nothing more.
            if let watch = event.watch, commandContext?.session.holdsWatch(watch) != true { continue }
            var line = context.channel.allocator.buffer(capacity: event.bytes.count)
            line.writeBytes(event.bytes)
            let flush = stateMachine.wrote(line.readableBytes)
            context.write(wrapOutboundOut(line), promise: nil)
            perform(flush)
        }
    }

    // MARK: Requests

    /// Runs one request line; it may leave a deferred command running.
    private func answer(_ line: ByteBuffer) {
        guard let text = String(validating: line.readableBytesView, as: UTF8.self) else {
            let outcome = CommandOutcome.invalidUTF8
            table.metrics?.recordFrontEndReply(outcome.reply)
            write(outcome)
            return
        }
        switch table.dispatch(line: text, context: commandContext) {
        case .reply(let outcome):
            if let outcome { write(outcome) }
        case .deferred(let work):
            startDeferred(work)
        }
    }

    private func startDeferred(_ work: @escaping @Sendable () async -> CommandOutcome) {
        stateMachine.commandStarted()
        let promise = context.eventLoop.makePromise(of: CommandOutcome.self)
        Task(executorPreference: executor) { promise.succeed(await work()) }
        promise.futureResult.assumeIsolated().whenSuccess { outcome in
            guard self.stateMachine.commandFinished(), self.context != nil else { return }
            self.write(outcome)
            self.drainQueue()
            self.flushIfNeeded()
        }
    }

    /// Writes a reply; flushes once half the output high-water mark is waiting unflushed, since
    /// a handler in front (TLS) may hold unflushed bytes where the channel's writability does not
    /// count them, and a batch of pipelined requests would then be answered without bound.
    private func write(_ outcome: CommandOutcome) {
        let reply = buffer(outcome.reply)
        let bytes = reply.readableBytes
        let buffer = wrapOutboundOut(reply)
        guard outcome.closesConnection else {
            context.write(buffer, promise: nil)
            perform(stateMachine.wrote(bytes))
            // A new watch's events, now behind its reply (they arrive through the event loop).
            outcome.afterReply?()
            return
        }
        let close = stateMachine.closingReply()
        context.write(buffer, promise: nil)
        perform(close)
    }

    /// The error a connection closes with.
    private func reply(closing error: ConnectionStateMachine.ClosingError) -> Reply {
        switch error {
        case .refused(let message):
            return .error(.unavailable, message)
        case .lineTooLong:
            let reply = Reply.error(.lineTooLong, "request line longer than \(configuration.limits.maxLineBytes) bytes; closing")
            table.metrics?.recordFrontEndReply(reply)
            logger.info("closing: line too long")
            return reply
        case .lineTimeout:
            let reply = Reply.error(
                .badRequest, "request line not finished within \(configuration.lineTimeoutSeconds) s; closing")
            table.metrics?.recordFrontEndReply(reply)
            return reply
        }
    }

    /// Closes once everything written so far has reached the socket (closing at once would drop
    /// replies still queued in the channel), then runs `afterwards`. Writes complete in order, so
    /// an empty write's completion marks the end of all before it.
    /// A client that reads none of them gets ``closeGraceSeconds`` before the connection is closed anyway.
    private func closeAfterPendingWrites(
        _ context: ChannelHandlerContext, mode: CloseMode = .all, afterwards: (() -> Void)? = nil
    ) {
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(capacity: 0)))
            .assumeIsolated().whenComplete { _ in
                context.close(mode: mode, promise: nil)
                afterwards?()
            }
        let deadline = context.eventLoop.assumeIsolated().scheduleTask(in: .seconds(Self.closeGraceSeconds)) {
            context.close(promise: nil)
        }
        context.channel.closeFuture.whenComplete { _ in deadline.cancel() }
    }

    /// Sends the reply and FIN but keeps reading (and discarding) for a moment, so the client's
    /// unread upload does not turn the close into a reset that destroys that reply; closes at once
    /// when the client has already closed its side. The moment starts when the reply has reached
    /// the socket: on the TLS port a refusal waits for the handshake, which a slow network or a
    /// busy machine may take longer than the linger over.
    private func lingeringClose(_ context: ChannelHandlerContext, after reply: Reply, closeNow: Bool) {
        context.write(wrapOutboundOut(buffer(reply)), promise: nil)
        closeAfterPendingWrites(context, mode: .output) {
            let deadline = context.eventLoop.assumeIsolated().scheduleTask(in: .seconds(Self.lingerSeconds)) {
                context.close(promise: nil)
            }
            context.channel.closeFuture.whenComplete { _ in deadline.cancel() }
        }
        if closeNow { context.close(promise: nil) }
    }

    /// The reply line in a buffer of the channel's allocator. Encodes into a scratch array the
    /// handler keeps, then copies it into the last reply's buffer when the channel is done with
    /// that one, so a reply usually costs no allocation at all.
    private func buffer(_ reply: Reply) -> ByteBuffer {
        scratch.removeAll(keepingCapacity: scratch.capacity <= Self.scratchCapacity)
        reply.encode(into: &scratch)
        var buffer = replyBuffer ?? context.channel.allocator.buffer(capacity: scratch.count)
        replyBuffer = nil
        // Reuses the memory only if nothing else refers to it (ByteBuffer copies on write).
        buffer.clear(minimumCapacity: scratch.count)
        buffer.writeBytes(scratch)
        if buffer.capacity <= Self.scratchCapacity { replyBuffer = buffer }
        return buffer
    }
}

/// A connection's watch events, handed from whichever thread publishes them to its event loop.
/// Holds the handler weakly: the handler's session holds the sink.
final class ConnectionEventSink: WatchSink {
    private final class Reference {
        weak var handler: ConnectionHandler?
        init(_ handler: ConnectionHandler) { self.handler = handler }
    }

    private let reference: NIOLoopBound<Reference>

    init(handler: ConnectionHandler, eventLoop: any EventLoop) {
        self.reference = NIOLoopBound(Reference(handler), eventLoop: eventLoop)
    }

    func deliver(_ events: [WatchEvent]) {
        let reference = self.reference
        reference.eventLoop.execute { reference.value.handler?.receive(events) }
    }
}
