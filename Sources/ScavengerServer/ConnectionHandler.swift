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

    private var framer: LineFramer
    private var queue = CircularBuffer<InboundFrame>()
    /// When the line deadline passes, if a line is unfinished.
    private var lineDeadline: Scheduled<Void>?
    /// The line deadline passed while earlier requests still had replies to come: its `ERR`
    /// goes out after them, and input is dropped meanwhile.
    private var lineDeadlinePassed = false
    /// A read was asked of the socket and no data has come since: the server is waiting.
    private var waitingForClient = false
    /// The idle timeout's next check, and when the socket last gave bytes.
    private var idleCheck: Scheduled<Void>?
    private var lastRead = NIODeadline.now()
    /// Lines answered since this connection last let others go first, and whether it is
    /// waiting for its next turn.
    private var linesThisTurn = 0
    private var turnYielded = false
    private var queuedBytes = 0
    /// A deferred command is running; its reply comes before anything queued.
    private var awaitingDeferred = false
    /// A `read` was held back because the queue is full.
    private var readHeld = false
    private var inputClosed = false
    /// After QUIT or LINE_TOO_LONG: further input is dropped.
    private var finishing = false
    /// After LINE_TOO_LONG: the client's FIN ends the connection at once.
    private var lingering = false
    private var unflushed = false
    /// Reply bytes written since the last flush.
    private var unflushedBytes = 0
    private var scratch: [UInt8] = []
    /// Largest scratch array (and reply buffer) kept between replies; a bigger one is given back.
    static let scratchCapacity = 64 * 1024
    /// The last reply's buffer: once the channel has written it and let it go, the next reply
    /// reuses its memory instead of allocating (a reply still queued keeps its own).
    private var replyBuffer: ByteBuffer?
    /// Watch events not yet written to the channel (it was above its high-water mark), oldest first.
    /// (`watch` is nil for an `overflow` line, which goes out although its watch has ended.)
    private var pendingEvents = CircularBuffer<(watch: String?, line: ByteBuffer)>()
    private var pendingEventBytes = 0

    init(table: CommandTable, board: Board, registry: ConnectionRegistry, configuration: ServerConfiguration, logger: Logger) {
        self.table = table
        self.board = board
        self.registry = registry
        self.configuration = configuration
        self.logger = logger
        self.framer = LineFramer(maxLineBytes: configuration.limits.maxLineBytes)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        self.executor = EventLoopExecutor(context.eventLoop)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        scheduleIdleCheck(in: .seconds(Int64(configuration.idleTimeoutSeconds)))
        let id = registry.register(
            context.channel, limit: configuration.maxConnections, perAddressLimit: configuration.maxConnectionsPerAddress)
        connectionID = id
        logger[metadataKey: "connection.id"] = "\(id.number)"
        let address = context.channel.remoteAddress?.ipAddress.flatMap(ClientAddress.key)
        let sink = ConnectionEventSink(handler: self, eventLoop: context.eventLoop)
        commandContext = CommandContext(
            session: Session(connectionID: id.number, address: address, eventSink: sink), board: board, logger: logger)
        if let refusal = id.refusal {
            let message: String
            switch refusal {
            case .full(let limit):
                message = "the server is at its connection limit (\(limit)); retry later"
            case .addressFull(let limit):
                message = "too many connections from your address (at most \(limit)); retry later"
            }
            if let refused = registry.noteRefusal() {
                logger.warning("connections refused", metadata: ["count": "\(refused)", "reason": "\(message)"])
            }
            lingeringClose(after: .error(.unavailable, message))
            context.fireChannelActive()
            return
        }
        logger.debug("connection opened", metadata: ["peer": "\(context.channel.remoteAddress.map { "\($0)" } ?? "?")"])
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        cancelLineDeadline()
        idleCheck?.cancel()
        idleCheck = nil
        if let connectionID { registry.unregister(connectionID) }
        if let session = commandContext?.session {
            session.disconnect()
            board.endWatches(session: session)
        }
        pendingEvents.removeAll()
        pendingEventBytes = 0
        logger.debug("connection closed")
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = unwrapInboundIn(data)
        lastRead = .now()
        watchLineDeadline(bytes)
        guard !finishing, !lineDeadlinePassed else { return }
        framer.append(bytes)
        while !finishing, let frame = framer.next(allocator: context.channel.allocator) {
            receive(frame)
        }
    }

    /// One line (or notice of a line too long), in the order received.
    private func receive(_ frame: InboundFrame) {
        if awaitingDeferred || !queue.isEmpty || !context.channel.isWritable || turnSpent {
            enqueue(frame)
            if turnSpent { yieldTurn() }
        } else {
            linesThisTurn += 1
            handle(frame)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if !turnYielded { linesThisTurn = 0 }
        flushIfNeeded()
        context.fireChannelReadComplete()
    }

    /// This connection has answered its share of lines for now.
    private var turnSpent: Bool { linesThisTurn >= Self.linesPerTurn }

    /// Lets the event loop serve other connections, then goes on with the queue.
    private func yieldTurn() {
        guard !turnYielded, let context else { return }
        turnYielded = true
        flushIfNeeded()
        // A task for "now" would run before the loop looks at its sockets again (NIO runs ready
        // tasks until none is left); one a moment ahead lets it wait for I/O first.
        context.eventLoop.assumeIsolated().scheduleTask(in: Self.turnGap) {
            self.turnYielded = false
            self.linesThisTurn = 0
            self.drainQueue()
            self.flushIfNeeded()
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .some(ChannelEvent.inputClosed) = event as? ChannelEvent {
            // A last line without `\n` is incomplete: the client went away before finishing it.
            framer.dropUnfinished()
            cancelLineDeadline()
            inputClosed = true
            if lingering { context.close(promise: nil) } else { closeIfDone() }
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
        if mustHoldReads(context) {
            readHeld = true
        } else {
            readFromClient(context)
        }
    }

    /// Asks the socket for more input: from now on the server waits for the client.
    private func readFromClient(_ context: ChannelHandlerContext) {
        waitingForClient = true
        context.read()
    }

    // MARK: Timers

    /// Arms or cancels the line deadline for bytes just read: a line in progress (bytes after the
    /// last newline) must be finished within it.
    private func watchLineDeadline(_ bytes: ByteBuffer) {
        waitingForClient = false
        guard configuration.lineTimeoutSeconds > 0 else { return }
        let view = bytes.readableBytesView
        if let newline = view.lastIndex(of: UInt8(ascii: "\n")) {
            // The line in progress, if any, starts after the last newline.
            cancelLineDeadline()
            if newline != view.index(before: view.endIndex) { armLineDeadline() }
        } else if lineDeadline == nil, !view.isEmpty {
            armLineDeadline()
        }
    }

    private func armLineDeadline() {
        guard let context else { return }
        let seconds = Int64(configuration.lineTimeoutSeconds)
        lineDeadline = context.eventLoop.assumeIsolated().scheduleTask(in: .seconds(seconds)) { [self] in
            lineDeadline = nil
            guard waitingForClient else {
                // Reads are held back by the server: the client is not the one making us wait.
                armLineDeadline()
                return
            }
            guard !finishing, !lineDeadlinePassed else { return }
            lineDeadlinePassed = true
            // Requests that came whole before the unfinished one are answered first.
            if !awaitingDeferred, queue.isEmpty { closeForLineDeadline() }
        }
    }

    /// Sends the line deadline's `ERR` and closes, once every earlier request has its reply.
    /// The client may still be sending its line: what it sends meanwhile is read and dropped
    /// for a moment, as after `LINE_TOO_LONG`, since closing with it unread would reset the
    /// connection and could destroy the `ERR` on its way.
    private func closeForLineDeadline() {
        guard context != nil, !finishing else { return }
        let reply = Reply.error(
            .badRequest, "request line not finished within \(configuration.lineTimeoutSeconds) s; closing")
        table.metrics?.recordFrontEndReply(reply)
        lingeringClose(after: reply)
    }

    private func cancelLineDeadline() {
        lineDeadline?.cancel()
        lineDeadline = nil
    }

    /// Closes the connection once nothing has been read for the idle timeout (none when 0).
    private func scheduleIdleCheck(in delay: TimeAmount) {
        guard configuration.idleTimeoutSeconds > 0, let context else { return }
        idleCheck = context.eventLoop.assumeIsolated().scheduleTask(deadline: .now() + delay) { [self] in
            let timeout = TimeAmount.seconds(Int64(configuration.idleTimeoutSeconds))
            let quiet = NIODeadline.now() - lastRead
            if quiet >= timeout {
                self.context?.close(promise: nil)
            } else {
                scheduleIdleCheck(in: timeout - quiet)
            }
        }
    }

    /// The client has read enough of its replies: answer what waits, and read again.
    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            drainQueue()
            writePendingEvents()
            flushIfNeeded()
        }
        context.fireChannelWritabilityChanged()
    }

    private func mustHoldReads(_ context: ChannelHandlerContext) -> Bool {
        queue.count >= Self.maximumQueuedLines || queuedBytes >= Self.maximumQueuedBytes || !context.channel.isWritable
    }

    // MARK: Events

    /// Watch events from the hub, on this connection's event loop: each is one whole line,
    /// written between replies (a reply is always written whole); while the channel is above its
    /// high-water mark they wait here, and past `maxEventBytes` waiting the watch at fault gets
    /// `overflow` and ends.
    fileprivate func receive(_ events: [WatchEvent]) {
        guard let context, !finishing, let session = commandContext?.session else { return }
        for event in events where session.holdsWatch(event.watch) {
            if case .overflow = event {
                overflow(event.watch, session: session)
                continue
            }
            scratch.removeAll(keepingCapacity: scratch.capacity <= Self.scratchCapacity)
            EventLine.encode(event, into: &scratch)
            var line = context.channel.allocator.buffer(capacity: scratch.count)
            line.writeBytes(scratch)
            pendingEvents.append((event.watch, line))
            pendingEventBytes += line.readableBytes
            if pendingEventBytes > configuration.maxEventBytes { overflow(event.watch, session: session) }
        }
        writePendingEvents()
        flushIfNeeded()
    }

    /// Drops a watch's waiting events, queues its `overflow` line and ends it.
    private func overflow(_ watch: String, session: Session) {
        var kept = CircularBuffer<(watch: String?, line: ByteBuffer)>(initialCapacity: pendingEvents.count)
        pendingEventBytes = 0
        for event in pendingEvents where event.watch != watch {
            kept.append(event)
            pendingEventBytes += event.line.readableBytes
        }
        var line = context.channel.allocator.buffer(capacity: 64)
        line.writeBytes(EventLine.overflow(watch: watch))
        kept.append((nil, line))
        pendingEventBytes += line.readableBytes
        pendingEvents = kept
        board.endWatch(watch, session: session)
        logger.debug("watch overflowed", metadata: ["watch": "\(watch)"])
    }

    /// Writes waiting events while the channel takes them.
    private func writePendingEvents() {
        guard let context else { return }
        while context.channel.isWritable, !finishing, let event = pendingEvents.popFirst() {
            pendingEventBytes -= event.line.readableBytes
            // A watch ended by UNWATCH since says nothing more.
            if let watch = event.watch, commandContext?.session.holdsWatch(watch) != true { continue }
            unflushed = true
            unflushedBytes += event.line.readableBytes
            context.write(wrapOutboundOut(event.line), promise: nil)
            if unflushedBytes >= configuration.outputHighWaterBytes / 2 { flushIfNeeded() }
        }
    }

    // MARK: Requests

    private func enqueue(_ frame: InboundFrame) {
        queue.append(frame)
        if case .line(let line) = frame { queuedBytes += line.readableBytes }
    }

    private func dequeue() -> InboundFrame? {
        guard let frame = queue.popFirst() else { return nil }
        if case .line(let line) = frame { queuedBytes -= line.readableBytes }
        return frame
    }

    /// Handles one frame; it may leave a deferred command running.
    private func handle(_ frame: InboundFrame) {
        switch frame {
        case .line(let line):
            guard let text = String(validating: line.readableBytesView, as: UTF8.self) else {
                let outcome = CommandOutcome(.error(.badRequest, "request line is not valid UTF-8"))
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
        case .lineTooLong:
            let reply = Reply.error(.lineTooLong, "request line longer than \(configuration.limits.maxLineBytes) bytes; closing")
            table.metrics?.recordFrontEndReply(reply)
            logger.info("closing: line too long")
            lingeringClose(after: reply)
        }
    }

    private func startDeferred(_ work: @escaping @Sendable () async -> CommandOutcome) {
        awaitingDeferred = true
        let promise = context.eventLoop.makePromise(of: CommandOutcome.self)
        Task(executorPreference: executor) { promise.succeed(await work()) }
        promise.futureResult.assumeIsolated().whenSuccess { outcome in
            self.awaitingDeferred = false
            guard self.context != nil else { return }
            self.write(outcome)
            self.drainQueue()
            self.flushIfNeeded()
        }
    }

    /// Handles queued lines in order until one defers, the output is above its high-water mark,
    /// or the queue is empty.
    private func drainQueue() {
        guard let context else { return }
        while !awaitingDeferred, !finishing, context.channel.isWritable, !turnSpent, let frame = dequeue() {
            linesThisTurn += 1
            handle(frame)
        }
        if turnSpent, !queue.isEmpty { yieldTurn() }
        if lineDeadlinePassed, !awaitingDeferred, queue.isEmpty { closeForLineDeadline() }
        if readHeld, !mustHoldReads(context) {
            readHeld = false
            readFromClient(context)
        }
        closeIfDone()
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
            unflushed = true
            unflushedBytes += bytes
            if unflushedBytes >= configuration.outputHighWaterBytes / 2 { flushIfNeeded() }
            return
        }
        finishing = true
        queue.removeAll()
        queuedBytes = 0
        context.write(buffer, promise: nil)
        closeAfterPendingWrites(context)
    }

    private func flushIfNeeded() {
        guard unflushed, let context else { return }
        unflushed = false
        unflushedBytes = 0
        context.flush()
    }

    /// Input has ended and every request has its reply: close once the replies are written.
    private func closeIfDone() {
        guard inputClosed, !awaitingDeferred, queue.isEmpty, !finishing, let context else { return }
        finishing = true
        closeAfterPendingWrites(context)
    }

    /// Closes once everything written so far has reached the socket (closing at once would drop
    /// replies still queued in the channel). Writes complete in order, so an empty write's
    /// completion marks the end of all before it.
    /// A client that reads none of them gets ``closeGraceSeconds`` before the connection is closed anyway.
    private func closeAfterPendingWrites(_ context: ChannelHandlerContext, mode: CloseMode = .all) {
        unflushed = false
        unflushedBytes = 0
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(capacity: 0)))
            .assumeIsolated().whenComplete { _ in context.close(mode: mode, promise: nil) }
        let deadline = context.eventLoop.assumeIsolated().scheduleTask(in: .seconds(Self.closeGraceSeconds)) {
            context.close(promise: nil)
        }
        context.channel.closeFuture.whenComplete { _ in deadline.cancel() }
    }

    /// Sends the reply and FIN but keeps reading (and discarding) for a moment, so the client's
    /// unread upload does not turn the close into a reset that destroys that reply.
    private func lingeringClose(after reply: Reply) {
        finishing = true
        queue.removeAll()
        queuedBytes = 0
        let context = self.context!
        context.write(wrapOutboundOut(buffer(reply)), promise: nil)
        closeAfterPendingWrites(context, mode: .output)
        let deadline = context.eventLoop.assumeIsolated().scheduleTask(in: .seconds(Self.lingerSeconds)) {
            context.close(promise: nil)
        }
        context.channel.closeFuture.whenComplete { _ in deadline.cancel() }
        lingering = true
        if inputClosed { context.close(promise: nil) }
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
