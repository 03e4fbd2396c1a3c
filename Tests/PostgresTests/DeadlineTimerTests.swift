import NIOCore
import NIOEmbedded
import NIOPosix
@testable import Postgres
import Synchronization
import Testing

@Suite("DeadlineTimer", .timeLimit(.minutes(1)))
struct DeadlineTimerTests {
    static let loop = MultiThreadedEventLoopGroup(numberOfThreads: 1).next()

    /// What fired, and when by `loop`'s time.
    final class Record: Sendable {
        let fired = Mutex<[Int: [NIODeadline]]>([:])
        let loop: any EventLoop

        init(_ loop: any EventLoop = DeadlineTimerTests.loop) {
            self.loop = loop
        }

        func action(_ key: Int) -> @Sendable () -> Void {
            { [loop] in self.fired.withLock { $0[key, default: []].append(loop.now) } }
        }

        func times(_ key: Int) -> [NIODeadline] {
            fired.withLock { $0[key] ?? [] }
        }
    }

    /// Polls until `condition` holds or `seconds` pass; whether it held.
    static func eventually(within seconds: Double = 10, _ condition: () -> Bool) async throws -> Bool {
        let end = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < end {
            if condition() { return true }
            try await Task.sleep(for: .milliseconds(5))
        }
        return condition()
    }

    // The timer on an `EmbeddedEventLoop`, whose time moves only when the test advances it:
    // what fires, and when, is exact, and nothing waits. (Synchronous tests: such a loop is used
    // on the thread that made it.)

    @Test func firesOnceAfterItsDeadline() {
        let loop = EmbeddedEventLoop()
        let timer = DeadlineTimer(loop: loop)
        let record = Record(loop)
        let deadline = loop.now + .milliseconds(50)
        _ = timer.schedule(at: deadline, record.action(1))
        loop.advanceTime(by: .milliseconds(49))
        #expect(record.times(1).isEmpty)
        loop.advanceTime(by: .milliseconds(1))
        #expect(record.times(1) == [deadline])
        loop.advanceTime(by: .seconds(10))
        #expect(record.times(1).count == 1)
        #expect(timer.count == 0)
    }

    @Test func aCancelledDeadlineNeverFires() {
        let loop = EmbeddedEventLoop()
        let timer = DeadlineTimer(loop: loop)
        let record = Record(loop)
        timer.schedule(at: loop.now + .milliseconds(30), record.action(1)).cancel()
        let second = loop.now + .milliseconds(80)
        _ = timer.schedule(at: second, record.action(2))
        loop.advanceTime(by: .milliseconds(30))
        #expect(record.times(1).isEmpty)
        #expect(timer.count == 1)
        loop.advanceTime(by: .milliseconds(50))
        #expect(record.times(2) == [second])
        #expect(record.times(1).isEmpty)
        #expect(timer.count == 0)
    }

    /// The loop waits for the later deadline; the earlier one must wake it, not wait a minute.
    @Test func anEarlierDeadlineArmedAfterALaterOneFiresInTime() {
        let loop = EmbeddedEventLoop()
        let timer = DeadlineTimer(loop: loop)
        let record = Record(loop)
        let late = timer.schedule(at: loop.now + .seconds(60), record.action(1))
        let early = loop.now + .milliseconds(50)
        _ = timer.schedule(at: early, record.action(2))
        loop.advanceTime(by: .milliseconds(50))
        #expect(record.times(2) == [early])
        #expect(record.times(1).isEmpty)
        late.cancel()
        loop.advanceTime(by: .seconds(60))
        #expect(record.times(1).isEmpty)
        #expect(timer.count == 0)
    }

    /// A deadline already passed when it is armed fires on the loop's next turn; one armed for
    /// later than the armed one fires when the loop, woken for the earlier, re-arms for it.
    @Test func passedAndLaterDeadlines() {
        let loop = EmbeddedEventLoop()
        let timer = DeadlineTimer(loop: loop)
        let record = Record(loop)
        loop.advanceTime(by: .seconds(1))
        let start = loop.now
        _ = timer.schedule(at: start + .milliseconds(10), record.action(1))
        _ = timer.schedule(at: start + .milliseconds(20), record.action(2))
        _ = timer.schedule(at: start - .milliseconds(5), record.action(3))
        loop.run()
        // (When: an `EmbeddedEventLoop` runs a task scheduled in the past at that past time.)
        #expect(record.times(3).count == 1)
        #expect(record.times(1).isEmpty && record.times(2).isEmpty)
        loop.advanceTime(by: .milliseconds(10))
        #expect(record.times(1) == [start + .milliseconds(10)])
        #expect(record.times(2).isEmpty)
        loop.advanceTime(by: .milliseconds(10))
        #expect(record.times(2) == [start + .milliseconds(20)])
        #expect(timer.count == 0)
    }

    /// Deadlines armed from many threads, some already passed, half of them cancelled: each
    /// one left fires exactly once, and the timer keeps nothing afterwards.
    @Test func manyDeadlinesFromManyThreads() async throws {
        let timer = DeadlineTimer(loop: Self.loop)
        let record = Record()
        await withTaskGroup(of: Void.self) { group in
            for key in 0 ..< 400 {
                group.addTask {
                    let handle = timer.schedule(at: .now() + .milliseconds(Int64(key % 40) * 5 - 20), record.action(key))
                    if key % 2 == 1 { handle.cancel() }
                }
            }
        }
        #expect(try await Self.eventually { (0 ..< 400).allSatisfy { $0 % 2 == 1 || !record.times($0).isEmpty } })
        try await Task.sleep(for: .milliseconds(100))
        for key in 0 ..< 400 {
            // A cancel may come after a passed deadline has fired; a live one fires once.
            if key % 2 == 0 { #expect(record.times(key).count == 1) } else { #expect(record.times(key).count <= 1) }
        }
        #expect(timer.count == 0)
    }
}
