import NIOCore
import NIOPosix
@testable import Postgres
import Synchronization
import Testing

@Suite("DeadlineTimer", .timeLimit(.minutes(1)))
struct DeadlineTimerTests {
    static let loop = MultiThreadedEventLoopGroup(numberOfThreads: 1).next()

    /// What fired, and when.
    final class Record: Sendable {
        let fired = Mutex<[Int: [NIODeadline]]>([:])

        func action(_ key: Int) -> @Sendable () -> Void {
            { self.fired.withLock { $0[key, default: []].append(.now()) } }
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

    @Test func firesOnceAfterItsDeadline() async throws {
        let timer = DeadlineTimer(loop: Self.loop)
        let record = Record()
        let deadline = NIODeadline.now() + .milliseconds(50)
        _ = timer.schedule(at: deadline, record.action(1))
        #expect(try await Self.eventually { !record.times(1).isEmpty })
        try await Task.sleep(for: .milliseconds(100))
        let times = record.times(1)
        #expect(times.count == 1)
        #expect(times.allSatisfy { $0 >= deadline })
        #expect(timer.count == 0)
    }

    @Test func aCancelledDeadlineNeverFires() async throws {
        let timer = DeadlineTimer(loop: Self.loop)
        let record = Record()
        timer.schedule(at: .now() + .milliseconds(30), record.action(1)).cancel()
        _ = timer.schedule(at: .now() + .milliseconds(80), record.action(2))
        #expect(try await Self.eventually { !record.times(2).isEmpty })
        #expect(record.times(1).isEmpty)
        #expect(timer.count == 0)
    }

    /// The loop waits for the later deadline; the earlier one must wake it, not wait a minute.
    @Test func anEarlierDeadlineArmedAfterALaterOneFiresInTime() async throws {
        let timer = DeadlineTimer(loop: Self.loop)
        let record = Record()
        let late = timer.schedule(at: .now() + .seconds(60), record.action(1))
        _ = timer.schedule(at: .now() + .milliseconds(50), record.action(2))
        #expect(try await Self.eventually(within: 10) { !record.times(2).isEmpty })
        #expect(record.times(1).isEmpty)
        late.cancel()
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
