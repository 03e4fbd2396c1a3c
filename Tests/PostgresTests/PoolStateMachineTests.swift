@testable import Postgres
import ScavengerTestSupport
import Testing

/// The pool's bookkeeping driven event by event, with no database, thread or clock: connections
/// are numbers, time is whatever the test says.
@Suite("PoolStateMachine")
struct PoolStateMachineTests {
    struct Call: Identifiable, Sendable, Equatable {
        let id: Int
    }

    typealias Machine = PoolStateMachine<Int, Call>

    static let t0 = ContinuousClock.now

    static func at(_ milliseconds: Int) -> ContinuousClock.Instant {
        t0 + .milliseconds(milliseconds)
    }

    static func machine(max: Int = 2, validationIdleTime: Duration = .seconds(10)) -> Machine {
        Machine(Machine.Configuration(maxConnections: max, validationIdleTime: validationIdleTime))
    }

    /// Runs request `id` from asking to holding connection `connection` (opened for it).
    static func openAndRun(_ machine: inout Machine, _ id: Int, connection: Int, at time: Int = 0) {
        #expect(machine.leaseRequested(Call(id: id), at: at(time)) == [.start(Call(id: id))])
        #expect(machine.workBegan(id, at: at(time)) == Machine.Step(.connect))
        #expect(machine.connectSucceeded(id, connection, at: at(time)) == Machine.Step(.run(connection)))
    }

    // MARK: Leasing

    @Test("a free slot opens a connection; its work runs on it; it goes idle afterwards")
    func leaseWhenFree() {
        var machine = Self.machine()
        #expect(machine.leaseRequested(Call(id: 1), at: Self.at(0)) == [.start(Call(id: 1))])
        #expect(machine.open == 1 && machine.connecting == 1 && machine.connectsStarted == 0)
        #expect(machine.workBegan(1, at: Self.at(0)) == Machine.Step(.connect))
        #expect(machine.connectsStarted == 1)
        #expect(machine.connectSucceeded(1, 100, at: Self.at(5)) == Machine.Step(.run(100)))
        #expect(machine.phase(of: 1) == .running(100))
        #expect(machine.connecting == 0)
        #expect(machine.workFinished(1, .reusable, at: Self.at(10)) == Machine.Step(.done(answer: true)))
        #expect(machine.open == 1 && machine.idle.map(\.connection) == [100] && machine.leased == 0)
    }

    @Test("an idle connection is handed out, the most recently used first, and checked before use")
    func leaseWhenIdle() {
        var machine = Self.machine(max: 3)
        Self.openAndRun(&machine, 1, connection: 100)
        Self.openAndRun(&machine, 2, connection: 101)
        _ = machine.workFinished(1, .reusable, at: Self.at(10))
        _ = machine.workFinished(2, .reusable, at: Self.at(20))
        #expect(machine.leaseRequested(Call(id: 3), at: Self.at(30)) == [.start(Call(id: 3))])
        #expect(machine.phase(of: 3) == .assigned(101, idleSince: Self.at(20)))
        #expect(machine.workBegan(3, at: Self.at(30)) == Machine.Step(.check(101, roundTrip: false)))
        #expect(machine.connectionChecked(3, usable: true, at: Self.at(31)) == Machine.Step(.run(101)))
        #expect(machine.open == 2 && machine.connectsStarted == 2)
    }

    @Test("a connection idle for longer than the validation time is checked with a round trip")
    func longIdleConnectionsAreValidated() {
        var machine = Self.machine(validationIdleTime: .seconds(10))
        Self.openAndRun(&machine, 1, connection: 100)
        _ = machine.workFinished(1, .reusable, at: Self.at(0))
        _ = machine.leaseRequested(Call(id: 2), at: Self.at(10_000))
        #expect(machine.workBegan(2, at: Self.at(10_000)) == Machine.Step(.check(100, roundTrip: true)))
    }

    @Test("with every slot taken, a request queues and is counted as a wait")
    func leaseWhenFull() {
        var machine = Self.machine(max: 1)
        Self.openAndRun(&machine, 1, connection: 100)
        #expect(machine.leaseRequested(Call(id: 2), at: Self.at(10)).isEmpty)
        #expect(machine.isQueued(2))
        #expect(machine.waits == 1 && machine.waiters.count == 1 && machine.open == 1)
        // The connection comes back: the waiter has it at once, and waited 40 ms.
        #expect(machine.workFinished(1, .reusable, at: Self.at(50)) == Machine.Step(.done(answer: true), [.start(Call(id: 2))]))
        #expect(machine.phase(of: 2) == .assigned(100, idleSince: Self.at(50)))
        #expect(machine.waited == .milliseconds(40))
        #expect(machine.idle.isEmpty && machine.open == 1)
    }

    @Test("waiters are served first come, first served, whether the slot comes with a connection or not")
    func waitersAreServedInOrder() {
        var machine = Self.machine(max: 1)
        Self.openAndRun(&machine, 1, connection: 100)
        for id in 2 ... 5 { #expect(machine.leaseRequested(Call(id: id), at: Self.at(id)).isEmpty) }
        var served: [Int] = []
        var holder = 1
        var connection = 100
        for (time, returned) in zip(100..., [Machine.Returned.reusable, .broken, .reusable, .serverGone]) {
            let step = machine.workFinished(holder, returned, at: Self.at(time))
            guard case .start(let next)? = step.actions.last else {
                Issue.record("no waiter served: \(step)")
                return
            }
            served.append(next.id)
            holder = next.id
            // A reusable connection is handed on; otherwise the waiter opens a new one.
            if returned == .reusable {
                #expect(machine.phase(of: holder) == .assigned(connection, idleSince: Self.at(time)))
                _ = machine.workBegan(holder, at: Self.at(time))
                #expect(machine.connectionChecked(holder, usable: true, at: Self.at(time)) == Machine.Step(.run(connection)))
            } else {
                #expect(machine.phase(of: holder) == .connectAllowed)
                _ = machine.workBegan(holder, at: Self.at(time))
                connection += 1
                #expect(machine.connectSucceeded(holder, connection, at: Self.at(time)) == Machine.Step(.run(connection)))
            }
        }
        #expect(served == [2, 3, 4, 5])
        #expect(machine.waiters.isEmpty && machine.open == 1)
    }

    // MARK: Broken connections

    @Test("a broken connection is closed, never reused: the next request opens a new one")
    func brokenConnectionIsReplaced() {
        var machine = Self.machine()
        Self.openAndRun(&machine, 1, connection: 100)
        #expect(machine.workFinished(1, .broken, at: Self.at(10)) == Machine.Step(.done(answer: true), [.close([100])]))
        #expect(machine.open == 0 && machine.idle.isEmpty)
        Self.openAndRun(&machine, 2, connection: 101, at: 20)
        #expect(machine.connectsStarted == 2)
    }

    @Test("a connection the server closed takes every idle connection with it")
    func serverGoneDiscardsIdleConnections() {
        var machine = Self.machine(max: 3)
        Self.openAndRun(&machine, 1, connection: 100)
        Self.openAndRun(&machine, 2, connection: 101)
        Self.openAndRun(&machine, 3, connection: 102)
        _ = machine.workFinished(2, .reusable, at: Self.at(10))
        _ = machine.workFinished(3, .reusable, at: Self.at(10))
        #expect(machine.workFinished(1, .serverGone, at: Self.at(20)) == Machine.Step(.done(answer: true), [.close([101, 102, 100])]))
        #expect(machine.open == 0)
    }

    @Test("a dead idle connection is closed with the other idle ones and replaced by a new one")
    func deadIdleConnectionIsReplaced() {
        var machine = Self.machine(max: 3)
        Self.openAndRun(&machine, 1, connection: 100)
        Self.openAndRun(&machine, 2, connection: 101)
        _ = machine.workFinished(1, .reusable, at: Self.at(10))
        _ = machine.workFinished(2, .reusable, at: Self.at(10))
        _ = machine.leaseRequested(Call(id: 3), at: Self.at(20))
        #expect(machine.workBegan(3, at: Self.at(20)) == Machine.Step(.check(101, roundTrip: false)))
        #expect(machine.connectionChecked(3, usable: false, at: Self.at(21)) == Machine.Step(.connect, [.close([100, 101])]))
        #expect(machine.open == 1 && machine.connecting == 1 && machine.connectsStarted == 3)
        #expect(machine.connectSucceeded(3, 102, at: Self.at(22)) == Machine.Step(.run(102)))
    }

    @Test("a dead idle connection while connects back off: the caller fails at once, the slot is freed")
    func deadIdleConnectionWhileBackingOff() {
        var machine = Self.machine()
        Self.openAndRun(&machine, 1, connection: 100)
        _ = machine.workFinished(1, .reusable, at: Self.at(0))
        // Another connect fails: back off for 100 ms.
        _ = machine.leaseRequested(Call(id: 2), at: Self.at(0))
        _ = machine.leaseRequested(Call(id: 3), at: Self.at(0))
        _ = machine.workBegan(3, at: Self.at(0))
        #expect(machine.connectFailed(3, at: Self.at(10)) == Machine.Step(.done(answer: true)))
        _ = machine.workBegan(2, at: Self.at(20))
        #expect(machine.connectionChecked(2, usable: false, at: Self.at(20))
            == Machine.Step(.done(answer: false), [.close([100]), .fail(Call(id: 2), .unreachable)]))
        #expect(machine.open == 0 && machine.connectsStarted == 2)
    }

    // MARK: Back-off

    @Test("after a failed connect, connects back off: refused until the back-off has passed")
    func backoffRefusesConnects() {
        var machine = Self.machine()
        _ = machine.leaseRequested(Call(id: 1), at: Self.at(0))
        _ = machine.workBegan(1, at: Self.at(0))
        #expect(machine.connectFailed(1, at: Self.at(0)) == Machine.Step(.done(answer: true)))
        #expect(machine.open == 0)
        #expect(machine.leaseRequested(Call(id: 2), at: Self.at(99)) == [.fail(Call(id: 2), .unreachable)])
        #expect(machine.leaseRequested(Call(id: 3), at: Self.at(100)) == [.start(Call(id: 3))])
        // One attempt at a time: while it runs, others are refused though slots are free.
        #expect(machine.leaseRequested(Call(id: 4), at: Self.at(100)) == [.fail(Call(id: 4), .unreachable)])
        _ = machine.workBegan(3, at: Self.at(100))
        #expect(machine.connectSucceeded(3, 100, at: Self.at(105)) == Machine.Step(.run(100)))
        // A success ends the back-off at once.
        #expect(machine.leaseRequested(Call(id: 5), at: Self.at(105)) == [.start(Call(id: 5))])
        #expect(machine.connectsStarted == 2)
    }

    /// (failed connects in a row, the back-off after them in milliseconds)
    @Test("the back-off doubles from 100 ms up to 2 s", arguments: [
        (1, 100), (2, 200), (3, 400), (4, 800), (5, 1600), (6, 2000), (9, 2000),
    ])
    func backoffDoubles(failures: Int, delay: Int) {
        var machine = Self.machine()
        var time = 0
        for attempt in 1 ... failures {
            _ = machine.leaseRequested(Call(id: attempt), at: Self.at(time))
            _ = machine.workBegan(attempt, at: Self.at(time))
            _ = machine.connectFailed(attempt, at: Self.at(time))
            time += 10_000
        }
        let failedAt = time - 10_000
        #expect(machine.backoff.delay == .milliseconds(delay))
        #expect(machine.leaseRequested(Call(id: 100), at: Self.at(failedAt + delay - 1)) == [.fail(Call(id: 100), .unreachable)])
        #expect(machine.leaseRequested(Call(id: 101), at: Self.at(failedAt + delay)) == [.start(Call(id: 101))])
    }

    @Test("a slot freed while connects back off fails every waiter at once instead of handing it on")
    func backoffFailsWaiters() {
        var machine = Self.machine(max: 2)
        Self.openAndRun(&machine, 1, connection: 100)
        _ = machine.leaseRequested(Call(id: 2), at: Self.at(0))
        _ = machine.workBegan(2, at: Self.at(0))
        #expect(machine.leaseRequested(Call(id: 3), at: Self.at(1)).isEmpty)
        #expect(machine.leaseRequested(Call(id: 4), at: Self.at(2)).isEmpty)
        #expect(machine.connectFailed(2, at: Self.at(10))
            == Machine.Step(.done(answer: true), [.fail(Call(id: 3), .unreachable), .fail(Call(id: 4), .unreachable)]))
        #expect(machine.waiters.isEmpty && machine.open == 1)
        // A reusable connection coming back is not a connect: it goes idle for the next request.
        #expect(machine.workFinished(1, .reusable, at: Self.at(20)) == Machine.Step(.done(answer: true)))
        #expect(machine.leaseRequested(Call(id: 5), at: Self.at(21)) == [.start(Call(id: 5))])
        #expect(machine.phase(of: 5) == .assigned(100, idleSince: Self.at(20)))
    }

    // MARK: Deadlines

    @Test("a waiter's deadline: it leaves the queue, answered once, and the slot goes on to nobody")
    func deadlineOfAWaiter() {
        var machine = Self.machine(max: 1)
        Self.openAndRun(&machine, 1, connection: 100)
        _ = machine.leaseRequested(Call(id: 2), at: Self.at(0))
        #expect(machine.deadlinePassed(2, at: Self.at(1000)) == [.fail(Call(id: 2), .timedOutWaiting)])
        #expect(!machine.isQueued(2) && machine.waited == .seconds(1))
        #expect(machine.deadlinePassed(2, at: Self.at(1001)).isEmpty)
        #expect(machine.workFinished(1, .reusable, at: Self.at(1100)) == Machine.Step(.done(answer: true)))
        #expect(machine.idle.map(\.connection) == [100])
    }

    @Test("a deadline during a statement: abandoned, cancelled, its socket cut later; the connection is closed when back")
    func deadlineWhileRunning() {
        var machine = Self.machine()
        Self.openAndRun(&machine, 1, connection: 100)
        #expect(machine.deadlinePassed(1, at: Self.at(1000))
            == [.abandon(100), .fail(Call(id: 1), .timedOutWorking), .cancel(100), .scheduleInterrupt(Call(id: 1))])
        #expect(machine.cancelling == 1)
        #expect(machine.deadlinePassed(1, at: Self.at(1001)).isEmpty)
        // Still blocked a grace period later: the socket is cut.
        #expect(machine.interruptDue(1) == [.interrupt(100)])
        // Its slot stays taken until the thread is back; the answer was given already.
        #expect(machine.open == 1)
        #expect(machine.workFinished(1, .reusable, at: Self.at(2500)) == Machine.Step(.done(answer: false), [.close([100])]))
        #expect(machine.open == 0 && machine.idle.isEmpty)
        #expect(machine.interruptDue(1).isEmpty)
        machine.cancelFinished()
        #expect(machine.cancelling == 0)
    }

    @Test("cancel requests are bounded: with every cancel thread busy, a timed-out statement is not cancelled")
    func cancelsAreBounded() {
        var machine = Self.machine(max: 1)
        Self.openAndRun(&machine, 1, connection: 100)
        #expect(machine.deadlinePassed(1, at: Self.at(1000)).contains(.cancel(100)))
        _ = machine.workFinished(1, .broken, at: Self.at(1001))
        Self.openAndRun(&machine, 2, connection: 101, at: 1002)
        #expect(machine.deadlinePassed(2, at: Self.at(2000))
            == [.abandon(101), .fail(Call(id: 2), .timedOutWorking), .scheduleInterrupt(Call(id: 2))])
        #expect(machine.cancelling == 1)
    }

    @Test("a deadline during a connect counts it as failed; the connection, if it comes, goes to the next one")
    func deadlineWhileConnecting() {
        var machine = Self.machine(max: 1)
        _ = machine.leaseRequested(Call(id: 1), at: Self.at(0))
        _ = machine.workBegan(1, at: Self.at(0))
        #expect(machine.deadlinePassed(1, at: Self.at(1000)) == [.fail(Call(id: 1), .timedOutWorking)])
        #expect(machine.phase(of: 1) == .connecting(timedOut: true))
        // Backing off, and the connect still under way: nobody else tries.
        #expect(machine.leaseRequested(Call(id: 2), at: Self.at(5000)) == [.fail(Call(id: 2), .unreachable)])
        // The connect's own failure is not counted a second time.
        #expect(machine.connectFailed(1, at: Self.at(2000)) == Machine.Step(.done(answer: false)))
        #expect(machine.backoff.delay == .milliseconds(100))
        #expect(machine.open == 0)
    }

    @Test("a connect that ends after its caller's deadline hands the connection to the first waiter")
    func lateConnectionServesAWaiter() {
        var machine = Self.machine(max: 1)
        _ = machine.leaseRequested(Call(id: 1), at: Self.at(0))
        _ = machine.workBegan(1, at: Self.at(0))
        _ = machine.leaseRequested(Call(id: 2), at: Self.at(10))
        _ = machine.deadlinePassed(1, at: Self.at(1000))
        #expect(machine.connectSucceeded(1, 100, at: Self.at(1500)) == Machine.Step(.done(answer: false), [.start(Call(id: 2))]))
        #expect(machine.phase(of: 2) == .assigned(100, idleSince: Self.at(1500)))
    }

    @Test("a deadline before the lease's thread started: the connection goes back untouched")
    func deadlineBeforeTheThreadStarted() {
        var machine = Self.machine()
        Self.openAndRun(&machine, 1, connection: 100)
        _ = machine.workFinished(1, .reusable, at: Self.at(0))
        _ = machine.leaseRequested(Call(id: 2), at: Self.at(10))
        #expect(machine.deadlinePassed(2, at: Self.at(1010)) == [.fail(Call(id: 2), .timedOutWorking)])
        #expect(machine.workBegan(2, at: Self.at(1020)) == Machine.Step(.done(answer: false)))
        #expect(machine.idle.map(\.connection) == [100])
        #expect(machine.backoff.delay == nil)
    }

    // MARK: Closing

    @Test("closing fails every waiter once; connections that come back afterwards are closed")
    func closeFailsEveryWaiterOnce() {
        var machine = Self.machine(max: 2)
        Self.openAndRun(&machine, 1, connection: 100)
        Self.openAndRun(&machine, 2, connection: 101)
        for id in 3 ... 5 { _ = machine.leaseRequested(Call(id: id), at: Self.at(10)) }
        #expect(machine.closeRequested(at: Self.at(20))
            == [.fail(Call(id: 3), .closed), .fail(Call(id: 4), .closed), .fail(Call(id: 5), .closed)])
        #expect(machine.waiters.isEmpty && machine.waited == .milliseconds(30))
        #expect(machine.closeRequested(at: Self.at(21)).isEmpty)
        #expect(machine.deadlinePassed(4, at: Self.at(1000)).isEmpty)
        #expect(machine.leaseRequested(Call(id: 6), at: Self.at(30)) == [.fail(Call(id: 6), .closed)])
        #expect(machine.workFinished(1, .reusable, at: Self.at(40)) == Machine.Step(.done(answer: true), [.close([100])]))
        #expect(machine.workFinished(2, .broken, at: Self.at(40)) == Machine.Step(.done(answer: true), [.close([101])]))
        #expect(machine.open == 0)
    }

    @Test("closing with idle connections closes them")
    func closeClosesIdleConnections() {
        var machine = Self.machine()
        Self.openAndRun(&machine, 1, connection: 100)
        _ = machine.workFinished(1, .reusable, at: Self.at(5))
        #expect(machine.closeRequested(at: Self.at(10)) == [.close([100])])
        #expect(machine.open == 0)
    }

    @Test("work the stopped thread pool refused ends its lease: the caller hears the pool is closed")
    func rejectedWork() {
        var machine = Self.machine(max: 2)
        Self.openAndRun(&machine, 1, connection: 100)
        _ = machine.workFinished(1, .reusable, at: Self.at(0))
        _ = machine.leaseRequested(Call(id: 2), at: Self.at(1))
        _ = machine.leaseRequested(Call(id: 3), at: Self.at(1))
        #expect(machine.phase(of: 2) == .assigned(100, idleSince: Self.at(0)) && machine.phase(of: 3) == .connectAllowed)
        #expect(machine.workRejected(2, at: Self.at(2)) == [.close([100]), .fail(Call(id: 2), .closed)])
        #expect(machine.workRejected(3, at: Self.at(2)) == [.fail(Call(id: 3), .closed)])
        #expect(machine.open == 0 && machine.connectsStarted == 1 && machine.backoff.delay == nil)
    }

    // MARK: Random sequences

    /// Drives a machine with random events, as a pool's threads, timers and callers might send
    /// them in any order, and checks after each event what must always hold.
    struct Simulation {
        var machine: Machine
        var rng: SplitMix64
        var time = 0
        var nextRequest = 1
        var nextConnection = 1
        /// Started leases whose thread has not begun.
        var started: [Int] = []
        /// Leases whose thread waits to report on this work.
        var working: [Int: Machine.Work] = [:]
        var answers: [Int: Int] = [:]
        var asked: [Int] = []
        /// Queued requests, oldest first, until they leave the queue.
        var queued: [Int] = []
        var cancels = 0
        var interrupts: Set<Int> = []
        var opened: Set<Int> = []
        var closedCount: [Int: Int] = [:]
        var problems: [String] = []

        init(seed: UInt64) {
            rng = SplitMix64(seed: seed)
            let max = rng.int(in: 1 ... 4)
            machine = Machine(Machine.Configuration(maxConnections: max, validationIdleTime: .milliseconds(500)))
        }

        var now: ContinuousClock.Instant { PoolStateMachineTests.at(time) }

        mutating func problem(_ text: String) { problems.append(text) }

        mutating func apply(_ actions: [Machine.Action]) {
            for action in actions {
                switch action {
                case .start(let call):
                    if answers[call.id, default: 0] != 0 { problem("request \(call.id) started after its answer") }
                    if let index = queued.firstIndex(of: call.id) {
                        if index != 0 { problem("request \(call.id) served before \(queued[0]), which queued first") }
                        queued.remove(at: index)
                    }
                    started.append(call.id)
                case .fail(let call, _):
                    answers[call.id, default: 0] += 1
                    queued.removeAll { $0 == call.id }
                case .close(let connections):
                    for connection in connections { closedCount[connection, default: 0] += 1 }
                case .cancel:
                    cancels += 1
                case .scheduleInterrupt(let call):
                    interrupts.insert(call.id)
                case .abandon, .interrupt:
                    break
                }
            }
        }

        mutating func apply(_ step: Machine.Step, for id: Int) {
            apply(step.actions)
            if case .done(let answer) = step.work {
                if answer { answers[id, default: 0] += 1 }
                working[id] = nil
            } else {
                working[id] = step.work
            }
        }

        mutating func request() {
            let id = nextRequest
            nextRequest += 1
            asked.append(id)
            let actions = machine.leaseRequested(Call(id: id), at: now)
            if actions.isEmpty { queued.append(id) }
            apply(actions)
        }

        mutating func begin(_ index: Int) {
            let id = started.remove(at: index)
            apply(machine.workBegan(id, at: now), for: id)
        }

        /// The thread reports on its work; `succeed` makes every outcome a good one.
        mutating func report(_ id: Int, succeed: Bool) {
            switch working[id] {
            case .check?:
                apply(machine.connectionChecked(id, usable: succeed || rng.chance(0.8), at: now), for: id)
            case .connect?:
                if succeed || rng.chance(0.7) {
                    let connection = nextConnection
                    nextConnection += 1
                    opened.insert(connection)
                    apply(machine.connectSucceeded(id, connection, at: now), for: id)
                } else {
                    apply(machine.connectFailed(id, at: now), for: id)
                }
            case .run?:
                let returned: Machine.Returned = succeed ? .reusable : [.reusable, .reusable, .broken, .serverGone][rng.int(in: 0 ... 3)]
                apply(machine.workFinished(id, returned, at: now), for: id)
            case .done?, nil:
                problem("no work to report for \(id)")
            }
        }

        mutating func randomEvent() {
            switch rng.int(in: 0 ... 99) {
            case 0 ..< 25:
                request()
            case 25 ..< 45 where !started.isEmpty:
                let index = rng.int(in: 0 ... started.count - 1)
                if rng.chance(0.03) {
                    let id = started.remove(at: index)
                    apply(machine.workRejected(id, at: now))
                } else {
                    begin(index)
                }
            case 45 ..< 70 where !working.isEmpty:
                report(working.keys.sorted()[rng.int(in: 0 ... working.count - 1)], succeed: false)
            case 70 ..< 78 where !asked.isEmpty:
                apply(machine.deadlinePassed(asked[rng.int(in: 0 ... asked.count - 1)], at: now))
            case 78 ..< 81 where !interrupts.isEmpty:
                apply(machine.interruptDue(interrupts.sorted()[rng.int(in: 0 ... interrupts.count - 1)]))
            case 81 ..< 85 where cancels > 0:
                cancels -= 1
                machine.cancelFinished()
            case 85 ..< 87:
                apply(machine.discardIdle())
            case 87:
                // Rarely: most sequences run open to the end.
                if rng.chance(0.02) { apply(machine.closeRequested(at: now)) }
            default:
                time += rng.int(in: 0 ... 300)
            }
        }

        /// What must hold after every event.
        mutating func checkInvariants() {
            let max = machine.configuration.maxConnections
            if machine.open > max { problem("\(machine.open) open, above \(max)") }
            if machine.leased + machine.idle.count != machine.open { problem("open is not leases plus idle") }
            if machine.connecting > machine.leased { problem("more connecting than leased") }
            if machine.cancelling < 0 || machine.cancelling > max { problem("\(machine.cancelling) cancelling") }
            if machine.cancelling != cancels { problem("\(machine.cancelling) cancelling, \(cancels) sent") }
            if !machine.waiters.isEmpty, !machine.idle.isEmpty || machine.open != max {
                problem("a request waits while a slot or an idle connection is free")
            }
            if machine.isClosed, !machine.waiters.isEmpty || !machine.idle.isEmpty { problem("closed, yet holding waiters or idle connections") }
            if machine.waiters.map(\.request.id) != queued { problem("queue \(machine.waiters.map(\.request.id)), expected \(queued)") }
            if let twice = answers.first(where: { $0.value > 1 }) { problem("request \(twice.key) answered \(twice.value) times") }
            // Each connection is in one place at most: idle, in one lease, or closed (once).
            var places: [Int: Int] = [:]
            for connection in machine.idle.map(\.connection) { places[connection, default: 0] += 1 }
            for id in asked {
                switch machine.phase(of: id) {
                case .assigned(let connection, _)?, .checking(let connection)?, .running(let connection)?:
                    places[connection, default: 0] += 1
                default:
                    break
                }
            }
            for (connection, count) in closedCount { places[connection, default: 0] += count }
            if let twice = places.first(where: { $0.value > 1 }) { problem("connection \(twice.key) is in \(twice.value) places") }
        }

        /// Lets every thread finish well, then closes the pool and lets the last ones finish.
        mutating func drain() {
            for closing in [false, true] {
                if closing { apply(machine.closeRequested(at: now)) }
                var rounds = 0
                while !started.isEmpty || !working.isEmpty || cancels > 0 {
                    rounds += 1
                    if rounds > 10_000 {
                        problem("draining does not end")
                        return
                    }
                    time += 50
                    if !started.isEmpty { begin(0) }
                    if let id = working.keys.min() { report(id, succeed: true) }
                    if cancels > 0 {
                        cancels -= 1
                        machine.cancelFinished()
                    }
                    checkInvariants()
                }
            }
        }
    }

    @Test("random event sequences: never above the maximum, every request answered exactly once", arguments: 0 ..< 40)
    func randomSequences(seed: UInt64) {
        var simulation = Simulation(seed: seed)
        for event in 0 ..< 3000 {
            simulation.randomEvent()
            simulation.checkInvariants()
            if !simulation.problems.isEmpty {
                Issue.record("seed \(seed), event \(event): \(simulation.problems)")
                return
            }
        }
        simulation.drain()
        let unanswered = simulation.asked.filter { simulation.answers[$0, default: 0] != 1 }
        #expect(unanswered.isEmpty, "seed \(seed): requests not answered exactly once: \(unanswered)")
        #expect(simulation.problems.isEmpty, "seed \(seed): \(simulation.problems)")
        #expect(simulation.machine.open == 0 && simulation.machine.leased == 0 && simulation.machine.waiters.isEmpty)
        let notClosedOnce = simulation.opened.filter { simulation.closedCount[$0, default: 0] != 1 }
        #expect(notClosedOnce.isEmpty, "seed \(seed): connections not closed exactly once: \(notClosedOnce.sorted())")
        // The sequences reach the states that matter.
        #expect(simulation.machine.waits > 0)
        #expect(simulation.asked.count > 100)
    }
}
