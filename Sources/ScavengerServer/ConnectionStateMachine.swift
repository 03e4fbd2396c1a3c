import NIOCore

/// The life of one connection as ``ConnectionHandler`` serves it: which request is answered now and
/// which waits, when reading stops and starts again, and how the connection ends.
///
/// Pure: the handler tells it what happened (bytes read, a command started or finished, the output's
/// writability, a timer firing, the client's FIN, …) and performs the ``Action`` each call returns.
/// It does no I/O and reads no clock (times come in as arguments).
///
/// Transitions:
/// - `idle` → `active` when the channel becomes active;
/// - `active` → `halfClosed` at the client's FIN while replies are owed (→ `draining` when none are);
/// - `active` → `lineTimedOut` when the line deadline passes while replies are owed (→ `lingering`
///   when none are);
/// - `halfClosed` → `draining` and `lineTimedOut` → `lingering` once nothing is owed;
/// - any serving state → `draining` with `QUIT`'s reply, → `lingering` at `LINE_TOO_LONG` (or, from
///   `active`, when the connection is refused);
/// - `draining` closes once its writes are done, `lingering` at the client's FIN or the linger's end;
/// - any state → `closed` when the channel is inactive.
///
/// `active`, `halfClosed` and `lineTimedOut` are the serving states: queued lines are answered there
/// in order, one command at a time (waiting on the database: ``Serving/commandInFlight``), while the
/// output is below its high-water mark (held back: not ``writable``) and the connection has turns
/// left (``Serving/turn``). Reads are held back in every state while the queue is full or the output
/// is above its mark.
struct ConnectionStateMachine {
    /// Limits and timeouts; the handler's constants and the server's configuration.
    struct Configuration: Equatable {
        /// Lines answered one after another before the event loop goes to other connections.
        var linesPerTurn: Int
        /// Lines queued behind a command or the output before reading stops.
        var maximumQueuedLines: Int
        /// Bytes queued likewise before reading stops.
        var maximumQueuedBytes: Int
        /// Unflushed reply bytes that are flushed at once, without waiting for the end of a read.
        var flushBytes: Int
        /// Time a client has to finish a line it has begun; nil for none.
        var lineTimeout: TimeAmount?
        /// Time without a byte read after which the connection closes; nil for none.
        var idleTimeout: TimeAmount?
    }

    /// Where the connection is in its life.
    enum State: Equatable {
        /// Not active yet.
        case idle
        /// Reading and answering lines.
        case active(Serving)
        /// The client has closed its side (or graceful shutdown closed it): no line comes any more;
        /// those received are still answered, then the connection drains.
        case halfClosed(Serving)
        /// A line was not finished within the line deadline: input is dropped, the lines before it
        /// are still answered, then its `ERR` goes out and the connection lingers.
        case lineTimedOut(Serving, inputClosed: Bool)
        /// Every reply owed is written (the last may be `QUIT`'s): the connection closes once they
        /// have reached the socket. Input is read and dropped meanwhile.
        case draining
        /// A closing error is written: our side shuts once it has reached the socket, and what the
        /// client still sends is read and dropped until its FIN or the linger's end, so that its
        /// unread bytes do not turn the close into a reset that destroys the error.
        case lingering
        /// The channel is inactive.
        case closed

        /// The serving part of a serving state.
        var serving: Serving? {
            switch self {
            case .active(let serving), .halfClosed(let serving), .lineTimedOut(let serving, _): serving
            case .idle, .draining, .lingering, .closed: nil
            }
        }

        /// The same serving state with `serving` in it.
        mutating func replaceServing(_ serving: Serving) {
            switch self {
            case .active: self = .active(serving)
            case .halfClosed: self = .halfClosed(serving)
            case .lineTimedOut(_, let inputClosed): self = .lineTimedOut(serving, inputClosed: inputClosed)
            case .idle, .draining, .lingering, .closed: preconditionFailure("not serving: \(self)")
            }
        }
    }

    /// What a serving connection is doing besides reading.
    struct Serving: Equatable {
        /// A command is waiting on the database (or a thread pool): its reply comes before anything queued.
        var commandInFlight = false
        var turn = Turn.answering(lines: 0)
    }

    /// A connection's share of its event loop.
    enum Turn: Equatable {
        /// Lines answered since the connection last let the others go first.
        case answering(lines: Int)
        /// Its share is used up: the queue waits until ``ConnectionStateMachine/turnEnded()``.
        case yielded
    }

    /// Why a connection closes with an error and lingers.
    enum ClosingError: Equatable {
        /// Over the connection limits; the message says which.
        case refused(message: String)
        case lineTooLong
        case lineTimeout
    }

    /// What the handler does after an event.
    enum Action: Equatable {
        case none
        /// Runs this request line through the command table and writes its reply.
        case answer(ByteBuffer)
        /// Asks the socket for more input.
        case read
        /// Flushes what was written.
        case flush
        /// Flushes, then lets the event loop serve other connections: ``turnEnded()`` after a short gap.
        case yieldTurn
        /// Starts the line deadline's timer, or starts it again: ``lineDeadlineFired()`` when it passes.
        case startLineDeadline
        /// Stops the line deadline's timer.
        case cancelLineDeadline
        /// ``idleCheckFired(now:)`` after this long.
        case scheduleIdleCheck(in: TimeAmount)
        /// Closes the connection now.
        case close
        /// Stops the line deadline; flushes, and closes once everything written has reached the socket.
        case closeAfterWrites
        /// Stops the line deadline; writes the error, shuts our side once it has reached the socket,
        /// reads and drops input for the linger, then closes (at once when `closeNow`: the client has
        /// already closed its side).
        case closeWithError(ClosingError, closeNow: Bool)
    }

    let configuration: Configuration
    private(set) var state = State.idle
    /// Whether the channel takes more output (it is below its high-water mark).
    private(set) var writable = true
    /// A read was asked of the socket and no bytes have come since: the server waits for the client.
    private(set) var waitingForClient = false
    /// A read was held back (the queue is full, or the output above its mark); it goes out when that passes.
    private(set) var readHeld = false
    /// The line deadline's timer is running (only ever while `active`).
    private(set) var lineDeadlineRunning = false
    /// Reply bytes written since the last flush.
    private(set) var unflushedBytes = 0
    /// Frames waiting for their turn, oldest first; empty outside the serving states.
    private var queue = CircularBuffer<InboundFrame>()
    /// The bytes of the queued lines.
    private(set) var queuedBytes = 0
    /// When the socket last gave bytes.
    private var lastRead = NIODeadline.uptimeNanoseconds(0)

    init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// Frames waiting for their turn.
    var queuedFrames: Int { queue.count }

    /// Bytes read now are framed into lines (else they are dropped).
    var acceptsInput: Bool {
        if case .active = state { true } else { false }
    }

    /// Watch events are kept for the client (they are dropped once the connection is ending).
    var acceptsEvents: Bool { state.serving != nil }

    /// Watch events may be written now.
    var mayWriteEvents: Bool { writable && acceptsEvents }

    /// While this holds, a read is held back: the kernel's buffer, then the client, wait.
    private var mustHoldReads: Bool {
        queue.count >= configuration.maximumQueuedLines || queuedBytes >= configuration.maximumQueuedBytes || !writable
    }

    // MARK: Events

    /// The channel is active: the connection starts reading.
    mutating func activated(now: NIODeadline) -> Action {
        guard case .idle = state else { preconditionFailure("activated twice (\(state))") }
        state = .active(Serving())
        lastRead = now
        return configuration.idleTimeout.map { .scheduleIdleCheck(in: $0) } ?? .none
    }

    /// The connection is over a limit: it answers `ERR UNAVAILABLE` with `message` and lingers.
    mutating func refuse(message: String) -> Action {
        guard case .active = state else { preconditionFailure("refused when not active (\(state))") }
        return closeWithError(.refused(message: message))
    }

    /// The handler asks for more input.
    mutating func readRequested() -> Action {
        if mustHoldReads {
            readHeld = true
            return .none
        }
        waitingForClient = true
        return .read
    }

    /// Bytes came from the socket (they are framed only if ``acceptsInput``). A line begun must be
    /// finished within the line deadline: the bytes after the last newline start or continue one.
    mutating func bytesRead(_ bytes: ByteBuffer, now: NIODeadline) -> Action {
        lastRead = now
        waitingForClient = false
        guard configuration.lineTimeout != nil, case .active = state else { return .none }
        let view = bytes.readableBytesView
        if let newline = view.lastIndex(of: UInt8(ascii: "\n")) {
            if newline != view.index(before: view.endIndex) {
                lineDeadlineRunning = true
                return .startLineDeadline
            }
            guard lineDeadlineRunning else { return .none }
            lineDeadlineRunning = false
            return .cancelLineDeadline
        }
        guard !lineDeadlineRunning, !view.isEmpty else { return .none }
        lineDeadlineRunning = true
        return .startLineDeadline
    }

    /// A frame came out of the bytes read (only while ``acceptsInput``): it is answered at once, or
    /// queued behind a command in flight, earlier lines, output above its mark or a spent turn.
    mutating func frameReceived(_ frame: InboundFrame) -> Action {
        guard case .active(var serving) = state else { preconditionFailure("a line arrived while \(state)") }
        guard !serving.commandInFlight, queue.isEmpty, writable, !serving.turnSpent(configuration.linesPerTurn) else {
            enqueue(frame)
            guard serving.turn != .yielded, serving.turnSpent(configuration.linesPerTurn) else { return .none }
            serving.turn = .yielded
            state = .active(serving)
            return .yieldTurn
        }
        serving.countLine()
        state = .active(serving)
        return answer(frame)
    }

    /// A read has ended: a connection that has not yielded starts a new turn.
    mutating func readComplete() {
        guard var serving = state.serving, case .answering = serving.turn else { return }
        serving.turn = .answering(lines: 0)
        state.replaceServing(serving)
    }

    /// The turn gap has passed: the connection may answer again.
    mutating func turnEnded() {
        guard var serving = state.serving else { return }
        serving.turn = .answering(lines: 0)
        state.replaceServing(serving)
    }

    /// The next thing to do with what waits, until `.none`: queued lines in order (one command at a
    /// time, while the output is below its mark and the turn lasts), then the end of a turn, the line
    /// deadline's error, a read held back, the end of a half-closed connection.
    mutating func nextAction() -> Action {
        switch state {
        case .idle, .closed: return .none
        case .active, .halfClosed, .lineTimedOut, .draining, .lingering: break
        }
        if var serving = state.serving {
            let spent = serving.turnSpent(configuration.linesPerTurn)
            if !serving.commandInFlight, writable, !spent, let frame = dequeue() {
                serving.countLine()
                state.replaceServing(serving)
                return answer(frame)
            }
            if spent, serving.turn != .yielded, !queue.isEmpty {
                serving.turn = .yielded
                state.replaceServing(serving)
                return .yieldTurn
            }
            if case .lineTimedOut = state, !serving.commandInFlight, queue.isEmpty {
                return closeWithError(.lineTimeout)
            }
        }
        if readHeld, !mustHoldReads {
            readHeld = false
            waitingForClient = true
            return .read
        }
        if case .halfClosed(let serving) = state, !serving.commandInFlight, queue.isEmpty {
            return drain()
        }
        return .none
    }

    /// A line's command awaits the database: nothing else is answered until it finishes.
    mutating func commandStarted() {
        guard var serving = state.serving, !serving.commandInFlight else {
            preconditionFailure("a command started while \(state)")
        }
        serving.commandInFlight = true
        state.replaceServing(serving)
    }

    /// The command in flight has its reply; returns whether to write it (not once the connection has
    /// closed). ``nextAction()`` then goes on with the queue.
    mutating func commandFinished() -> Bool {
        if case .closed = state { return false }
        guard var serving = state.serving, serving.commandInFlight else {
            preconditionFailure("a command finished while none was in flight (\(state))")
        }
        serving.commandInFlight = false
        state.replaceServing(serving)
        return true
    }

    /// The reply about to be written closes the connection (`QUIT`): nothing more is answered.
    mutating func closingReply() -> Action {
        guard state.serving != nil else { preconditionFailure("a closing reply while \(state)") }
        return drain()
    }

    /// The channel's writability changed.
    mutating func writabilityChanged(_ writable: Bool) {
        self.writable = writable
    }

    /// `bytes` of output were written; returns `.flush` once enough waits unflushed (a handler in front,
    /// TLS, may hold unflushed bytes the channel's writability does not count).
    mutating func wrote(_ bytes: Int) -> Action {
        unflushedBytes += bytes
        guard unflushedBytes >= configuration.flushBytes else { return .none }
        unflushedBytes = 0
        return .flush
    }

    /// Returns `.flush` if anything written is not flushed yet.
    mutating func flushIfNeeded() -> Action {
        guard unflushedBytes > 0 else { return .none }
        unflushedBytes = 0
        return .flush
    }

    /// The client closed its side (or shutdown closed it): what was received is answered, then the
    /// connection closes; a lingering one closes at once.
    mutating func inputClosed() -> Action {
        switch state {
        case .active(let serving):
            guard serving.commandInFlight || !queue.isEmpty else { return drain() }
            state = .halfClosed(serving)
            guard lineDeadlineRunning else { return .none }
            lineDeadlineRunning = false
            return .cancelLineDeadline
        case .lineTimedOut(let serving, _):
            state = .lineTimedOut(serving, inputClosed: true)
            return .none
        case .lingering:
            return .close
        case .idle, .halfClosed, .draining, .closed:
            return .none
        }
    }

    /// The line deadline passed. Only time spent waiting for the client counts: while reads are held
    /// back it starts again. Else the lines received before are answered, then the error goes out.
    mutating func lineDeadlineFired() -> Action {
        lineDeadlineRunning = false
        guard case .active(let serving) = state else { return .none }
        guard waitingForClient else {
            lineDeadlineRunning = true
            return .startLineDeadline
        }
        guard serving.commandInFlight || !queue.isEmpty else {
            return closeWithError(.lineTimeout)
        }
        state = .lineTimedOut(serving, inputClosed: false)
        return .none
    }

    /// The idle check's time came: closes a connection that has read nothing for the idle timeout,
    /// else checks again when it would have.
    mutating func idleCheckFired(now: NIODeadline) -> Action {
        guard let timeout = configuration.idleTimeout else { return .none }
        if case .closed = state { return .none }
        let quiet = now - lastRead
        return quiet >= timeout ? .close : .scheduleIdleCheck(in: timeout - quiet)
    }

    /// The channel is inactive.
    mutating func closed() {
        state = .closed
        clearQueue()
        lineDeadlineRunning = false
        readHeld = false
        waitingForClient = false
        unflushedBytes = 0
    }

    // MARK: Transitions

    /// A frame's answer: a line to run, or the end for a line too long.
    private mutating func answer(_ frame: InboundFrame) -> Action {
        switch frame {
        case .line(let line): .answer(line)
        case .lineTooLong: closeWithError(.lineTooLong)
        }
    }

    /// From a serving state to `draining`.
    private mutating func drain() -> Action {
        state = .draining
        leaveServing()
        return .closeAfterWrites
    }

    /// From a serving state to `lingering`.
    private mutating func closeWithError(_ error: ClosingError) -> Action {
        let closeNow =
            switch state {
            case .active: false
            case .halfClosed: true
            case .lineTimedOut(_, let inputClosed): inputClosed
            case .idle, .draining, .lingering, .closed: preconditionFailure("closing with \(error) while \(state)")
            }
        state = .lingering
        leaveServing()
        return .closeWithError(error, closeNow: closeNow)
    }

    /// Nothing more is answered; the close flushes what was written.
    private mutating func leaveServing() {
        clearQueue()
        lineDeadlineRunning = false
        unflushedBytes = 0
    }

    private mutating func enqueue(_ frame: InboundFrame) {
        queue.append(frame)
        if case .line(let line) = frame { queuedBytes += line.readableBytes }
    }

    private mutating func dequeue() -> InboundFrame? {
        guard let frame = queue.popFirst() else { return nil }
        if case .line(let line) = frame { queuedBytes -= line.readableBytes }
        return frame
    }

    private mutating func clearQueue() {
        queue.removeAll()
        queuedBytes = 0
    }
}

extension ConnectionStateMachine.Serving {
    /// This connection has answered its share of lines for now.
    func turnSpent(_ linesPerTurn: Int) -> Bool {
        switch turn {
        case .answering(let lines): lines >= linesPerTurn
        case .yielded: true
        }
    }

    mutating func countLine() {
        if case .answering(let lines) = turn { turn = .answering(lines: lines + 1) }
    }
}
