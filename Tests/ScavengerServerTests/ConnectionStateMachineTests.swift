import NIOCore
import Testing

@testable import ScavengerServer

/// The connection's state machine on its own: event sequences in, actions and states out.
@Suite("Connection state machine")
struct ConnectionStateMachineTests {
    typealias Machine = ConnectionStateMachine
    typealias Action = ConnectionStateMachine.Action
    typealias Serving = ConnectionStateMachine.Serving

    /// Small limits, so that turns, a full queue and the timeouts show in a few events.
    static let configuration = Machine.Configuration(
        linesPerTurn: 3, maximumQueuedLines: 4, maximumQueuedBytes: 64, flushBytes: 100,
        lineTimeout: .seconds(1), idleTimeout: .seconds(10))

    /// What happens to the connection, as the handler reports it.
    enum Event: Sendable {
        /// Bytes read from the socket (framing is the handler's: a line arrives with `line`).
        case bytes(String)
        /// A whole line, framed; `DB…` lines start a command, `QUIT` closes.
        case line(String)
        case tooLong
        /// The handler asks the socket for more.
        case read
        case readComplete
        case writable(Bool)
        /// The command in flight finishes.
        case finish
        case turnEnded
        case inputClosed
        case deadline
        case refuse
        case closed
    }

    /// Feeds a machine events the way ``ConnectionHandler`` does, answering lines as it would, and
    /// records every action it is told to perform.
    struct Driver {
        var machine = Machine(configuration: ConnectionStateMachineTests.configuration)
        var actions: [Action] = []

        init() {
            _ = machine.activated(now: .uptimeNanoseconds(0))
        }

        mutating func apply(_ event: Event) {
            switch event {
            case .bytes(let text): record(machine.bytesRead(ByteBuffer(string: text), now: .uptimeNanoseconds(0)))
            case .line(let text): record(machine.frameReceived(.line(ByteBuffer(string: text))))
            case .tooLong: record(machine.frameReceived(.lineTooLong))
            case .read: record(machine.readRequested())
            case .readComplete: machine.readComplete()
            case .writable(let writable):
                machine.writabilityChanged(writable)
                if writable { drain() }
            case .finish:
                if machine.commandFinished() { drain() }
            case .turnEnded:
                machine.turnEnded()
                drain()
            case .inputClosed: record(machine.inputClosed())
            case .deadline: record(machine.lineDeadlineFired())
            case .refuse: record(machine.refuse(message: "full"))
            case .closed: machine.closed()
            }
        }

        /// What the handler's queue drain does.
        mutating func drain() {
            while true {
                let action = machine.nextAction()
                if case .none = action { return }
                record(action)
            }
        }

        /// Keeps an action; answering a line may start a command or close, as in the handler.
        mutating func record(_ action: Action) {
            if case .none = action { return }
            actions.append(action)
            guard case .answer(let line) = action else { return }
            let text = String(buffer: line)
            if text.hasPrefix("DB") { machine.commandStarted() }
            if text == "QUIT" { record(machine.closingReply()) }
        }
    }

    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let events: [Event]
        let actions: [Action]
        let state: Machine.State
        /// Frames still waiting at the end.
        var queued = 0
        var testDescription: String { name }
    }

    static func answer(_ text: String) -> Action { .answer(ByteBuffer(string: text)) }

    static func active(lines: Int, command: Bool = false) -> Machine.State {
        .active(Serving(commandInFlight: command, turn: .answering(lines: lines)))
    }

    static let cases: [Case] = [
        Case(name: "a line is answered at once", events: [.line("PING")], actions: [answer("PING")], state: active(lines: 1)),
        Case(
            name: "lines behind a command wait for its reply, then go in order",
            events: [.line("DB"), .line("A"), .line("B"), .finish],
            actions: [answer("DB"), answer("A"), answer("B")], state: active(lines: 3)),
        Case(
            name: "a command behind a command waits for it",
            events: [.line("DB1"), .line("DB2"), .line("A"), .finish],
            actions: [answer("DB1"), answer("DB2")], state: active(lines: 2, command: true), queued: 1),
        Case(
            name: "above the output's mark, lines wait and reads are held",
            events: [.writable(false), .line("A"), .line("B"), .read],
            actions: [], state: active(lines: 0), queued: 2),
        Case(
            name: "above the output's mark, lines wait and reads are held until it drains",
            events: [.writable(false), .line("A"), .read, .writable(true)],
            actions: [answer("A"), .read], state: active(lines: 1)),
        Case(
            name: "a full queue holds reads; answering frees them, then the turn ends",
            events: [.line("DB"), .line("A"), .line("B"), .line("C"), .line("D"), .read, .finish, .turnEnded],
            actions: [answer("DB"), answer("A"), answer("B"), .yieldTurn, .read, answer("C"), answer("D")],
            state: active(lines: 2)),
        Case(
            name: "queued bytes hold reads too",
            events: [.line("DB"), .line(String(repeating: "x", count: 64)), .read, .finish],
            actions: [answer("DB"), answer(String(repeating: "x", count: 64)), .read], state: active(lines: 2)),
        Case(
            name: "a spent turn yields once; the rest waits for the next turn, not for a read's end",
            events: [.line("A"), .line("B"), .line("C"), .line("D"), .line("E"), .readComplete, .turnEnded],
            actions: [answer("A"), answer("B"), answer("C"), .yieldTurn, answer("D"), answer("E")],
            state: active(lines: 2)),
        Case(
            name: "a yielded turn is not given back by a read's end nor by the output draining",
            events: [.line("A"), .line("B"), .line("C"), .line("D"), .line("E"), .readComplete, .writable(true)],
            actions: [answer("A"), answer("B"), answer("C"), .yieldTurn],
            state: .active(Serving(commandInFlight: false, turn: .yielded)), queued: 2),
        Case(
            name: "a read's end starts a new turn when none was yielded",
            events: [.line("A"), .line("B"), .line("C"), .readComplete, .line("D")],
            actions: [answer("A"), answer("B"), answer("C"), answer("D")], state: active(lines: 1)),
        Case(
            name: "a turn spent with nothing queued yields at the next line",
            events: [.line("A"), .line("B"), .line("C"), .line("D")],
            actions: [answer("A"), answer("B"), answer("C"), .yieldTurn],
            state: .active(Serving(commandInFlight: false, turn: .yielded)), queued: 1),
        Case(name: "a FIN with nothing owed drains at once", events: [.inputClosed], actions: [.closeAfterWrites], state: .draining),
        Case(
            name: "a FIN: what was received is answered first",
            events: [.line("DB"), .line("A"), .inputClosed, .finish],
            actions: [answer("DB"), answer("A"), .closeAfterWrites], state: .draining),
        Case(
            name: "a FIN stops a running line deadline",
            events: [.bytes("DB\nPI"), .line("DB"), .inputClosed, .finish],
            actions: [.startLineDeadline, answer("DB"), .cancelLineDeadline, .closeAfterWrites], state: .draining),
        Case(
            name: "after a FIN, a full queue still frees its held read",
            events: [.line("DB"), .line("A"), .line("B"), .line("C"), .line("D"), .read, .inputClosed, .finish, .turnEnded],
            actions: [answer("DB"), answer("A"), answer("B"), .yieldTurn, .read, answer("C"), answer("D"), .closeAfterWrites],
            state: .draining),
        Case(
            name: "QUIT drains, and nothing after it is answered",
            events: [.line("DB"), .line("QUIT"), .line("A"), .finish],
            actions: [answer("DB"), answer("QUIT"), .closeAfterWrites], state: .draining),
        Case(
            name: "while draining, reads are still held by the output and freed by it",
            events: [.line("QUIT"), .writable(false), .read, .writable(true)],
            actions: [answer("QUIT"), .closeAfterWrites, .read], state: .draining),
        Case(
            name: "LINE_TOO_LONG closes with its error and lingers; the client's FIN then closes",
            events: [.tooLong, .inputClosed],
            actions: [.closeWithError(.lineTooLong, closeNow: false), .close], state: .lingering),
        Case(
            name: "LINE_TOO_LONG behind a command after a FIN closes at once",
            events: [.line("DB"), .tooLong, .inputClosed, .finish],
            actions: [answer("DB"), .closeWithError(.lineTooLong, closeNow: true)], state: .lingering),
        Case(
            name: "the line deadline, while waiting for the client, closes with its error",
            events: [.read, .bytes("PI"), .readComplete, .read, .deadline],
            actions: [.read, .startLineDeadline, .read, .closeWithError(.lineTimeout, closeNow: false)], state: .lingering),
        Case(
            name: "while reads are held the line deadline starts again",
            events: [.read, .bytes("PI"), .writable(false), .read, .deadline, .writable(true), .deadline],
            actions: [.read, .startLineDeadline, .startLineDeadline, .read, .closeWithError(.lineTimeout, closeNow: false)],
            state: .lingering),
        Case(
            name: "the line deadline's error waits for the replies owed; input meanwhile is dropped",
            events: [.read, .bytes("DB\nPI"), .line("DB"), .read, .deadline, .bytes("NG\nPI"), .finish],
            actions: [.read, .startLineDeadline, answer("DB"), .read, .closeWithError(.lineTimeout, closeNow: false)],
            state: .lingering),
        Case(
            name: "the line deadline's error waits for the command in flight and for lines held back by the output",
            events: [.read, .bytes("DB\nA\nPI"), .line("DB"), .line("A"), .read, .deadline, .writable(false), .finish, .writable(true)],
            actions: [.read, .startLineDeadline, answer("DB"), .read, answer("A"), .closeWithError(.lineTimeout, closeNow: false)],
            state: .lingering),
        Case(
            name: "a FIN after the line deadline: the error still goes out, then the close is at once",
            events: [.read, .bytes("DB\nPI"), .line("DB"), .read, .deadline, .inputClosed, .finish],
            actions: [.read, .startLineDeadline, answer("DB"), .read, .closeWithError(.lineTimeout, closeNow: true)],
            state: .lingering),
        Case(
            name: "the line deadline runs from a line's first byte until its newline",
            events: [.bytes("PI"), .bytes("N"), .bytes("G\n"), .bytes("G\n"), .bytes("PING\nPI"), .bytes("NG\nPI"), .bytes("")],
            actions: [.startLineDeadline, .cancelLineDeadline, .startLineDeadline, .startLineDeadline],
            state: active(lines: 0)),
        Case(
            name: "refused: the error, then lingering",
            events: [.refuse], actions: [.closeWithError(.refused(message: "full"), closeNow: false)], state: .lingering),
        Case(
            name: "a command that finishes after the close is dropped",
            events: [.line("DB"), .line("A"), .closed, .finish], actions: [answer("DB")], state: .closed),
    ]

    @Test("event sequences", arguments: cases)
    func sequence(_ test: Case) {
        var driver = Driver()
        for event in test.events { driver.apply(event) }
        #expect(driver.actions == test.actions)
        #expect(driver.machine.state == test.state)
        #expect(driver.machine.queuedFrames == test.queued)
    }

    @Test("after the line deadline, input is no longer framed; the queue keeps its lines")
    func deadlineDropsInput() {
        var driver = Driver()
        for event: Event in [.read, .bytes("DB\nA\nPI"), .line("DB"), .line("A"), .read, .deadline] { driver.apply(event) }
        #expect(driver.machine.state == .lineTimedOut(Serving(commandInFlight: true, turn: .answering(lines: 1)), inputClosed: false))
        #expect(!driver.machine.acceptsInput)
        #expect(driver.machine.queuedFrames == 1)
        driver.apply(.finish)
        #expect(driver.actions.suffix(2) == [Self.answer("A"), .closeWithError(.lineTimeout, closeNow: false)])
    }

    @Test("the idle check closes only once nothing was read for the whole timeout")
    func idle() {
        var machine = Machine(configuration: Self.configuration)
        #expect(machine.activated(now: .uptimeNanoseconds(0)) == .scheduleIdleCheck(in: .seconds(10)))
        _ = machine.bytesRead(ByteBuffer(string: "PING\n"), now: .uptimeNanoseconds(4_000_000_000))
        #expect(machine.idleCheckFired(now: .uptimeNanoseconds(10_000_000_000)) == .scheduleIdleCheck(in: .seconds(4)))
        #expect(machine.idleCheckFired(now: .uptimeNanoseconds(14_000_000_000)) == .close)
        // Time spent waiting on the database or the output counts too: only reads reset it.
        var busy = Machine(configuration: Self.configuration)
        _ = busy.activated(now: .uptimeNanoseconds(0))
        #expect(busy.frameReceived(.line(ByteBuffer(string: "DB"))) == Self.answer("DB"))
        busy.commandStarted()
        #expect(busy.idleCheckFired(now: .uptimeNanoseconds(10_000_000_000)) == .close)
    }

    @Test("no timeouts configured: no idle check, no line deadline")
    func noTimeouts() {
        var configuration = Self.configuration
        configuration.lineTimeout = nil
        configuration.idleTimeout = nil
        var machine = Machine(configuration: configuration)
        #expect(machine.activated(now: .uptimeNanoseconds(0)) == .none)
        #expect(machine.bytesRead(ByteBuffer(string: "PI"), now: .uptimeNanoseconds(0)) == .none)
    }

    @Test("output is flushed once enough waits, and at the end of a batch")
    func flushing() {
        var machine = Machine(configuration: Self.configuration)
        _ = machine.activated(now: .uptimeNanoseconds(0))
        #expect(machine.flushIfNeeded() == .none)
        #expect(machine.wrote(60) == .none)
        #expect(machine.wrote(40) == .flush)
        #expect(machine.flushIfNeeded() == .none)
        #expect(machine.wrote(1) == .none)
        #expect(machine.flushIfNeeded() == .flush)
        #expect(machine.flushIfNeeded() == .none)
        // Closing flushes everything itself.
        #expect(machine.wrote(1) == .none)
        #expect(machine.closingReply() == .closeAfterWrites)
        #expect(machine.flushIfNeeded() == .none)
    }

    @Test("input, events and their writing by state")
    func gates() {
        var driver = Driver()
        #expect(driver.machine.acceptsInput && driver.machine.acceptsEvents && driver.machine.mayWriteEvents)
        driver.apply(.writable(false))
        #expect(driver.machine.acceptsEvents && !driver.machine.mayWriteEvents)
        driver.apply(.writable(true))
        driver.apply(.line("DB"))
        driver.apply(.inputClosed)
        #expect(!driver.machine.acceptsInput && driver.machine.acceptsEvents && driver.machine.mayWriteEvents)
        driver.apply(.finish)
        #expect(driver.machine.state == .draining)
        #expect(!driver.machine.acceptsInput && !driver.machine.acceptsEvents && !driver.machine.mayWriteEvents)
        var lingering = Driver()
        lingering.apply(.tooLong)
        #expect(!lingering.machine.acceptsInput && !lingering.machine.acceptsEvents)
    }

    // MARK: Transitions that cannot happen

    @Test("a command finishing with none in flight stops the process")
    func finishWithoutCommand() async {
        await #expect(processExitsWith: .failure) {
            var machine = ConnectionStateMachine(configuration: ConnectionStateMachineTests.configuration)
            _ = machine.activated(now: .uptimeNanoseconds(0))
            _ = machine.commandFinished()
        }
    }

    @Test("a second command while one is in flight stops the process")
    func twoCommands() async {
        await #expect(processExitsWith: .failure) {
            var machine = ConnectionStateMachine(configuration: ConnectionStateMachineTests.configuration)
            _ = machine.activated(now: .uptimeNanoseconds(0))
            machine.commandStarted()
            machine.commandStarted()
        }
    }

    @Test("a line framed after the client's FIN stops the process")
    func lineAfterFIN() async {
        await #expect(processExitsWith: .failure) {
            var machine = ConnectionStateMachine(configuration: ConnectionStateMachineTests.configuration)
            _ = machine.activated(now: .uptimeNanoseconds(0))
            _ = machine.frameReceived(.line(ByteBuffer(string: "DB")))
            machine.commandStarted()
            _ = machine.inputClosed()
            _ = machine.frameReceived(.line(ByteBuffer(string: "PING")))
        }
    }

    @Test("a reply after the connection began closing stops the process")
    func replyWhileDraining() async {
        await #expect(processExitsWith: .failure) {
            var machine = ConnectionStateMachine(configuration: ConnectionStateMachineTests.configuration)
            _ = machine.activated(now: .uptimeNanoseconds(0))
            _ = machine.inputClosed()
            _ = machine.closingReply()
        }
    }

    @Test("activating twice stops the process")
    func activatedTwice() async {
        await #expect(processExitsWith: .failure) {
            var machine = ConnectionStateMachine(configuration: ConnectionStateMachineTests.configuration)
            _ = machine.activated(now: .uptimeNanoseconds(0))
            _ = machine.activated(now: .uptimeNanoseconds(0))
        }
    }
}
