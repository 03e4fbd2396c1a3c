@testable import ScavengerFeed
import ScavengerStore
import ScavengerTestSupport
import Synchronization
import Testing

/// Shared catch-ups: one read of the log at a time, and callers that arrive while one runs share
/// the next instead of each starting their own.
@Suite("CatchUpTurns: catch-ups run one at a time and are shared")
struct CatchUpTurnsTests {
    @Test("callers arriving while a run goes on share one run after it; never two at once")
    func sharedRuns() async throws {
        let turns = CatchUpTurns()
        let gate = Gate()
        let runs = Atomic<Int>(0), inFlight = Atomic<Int>(0), mostInFlight = Atomic<Int>(0)
        let work: @Sendable () async throws(StoreError) -> Void = {
            runs.add(1, ordering: .relaxed)
            let now = inFlight.add(1, ordering: .relaxed).newValue
            mostInFlight.max(now, ordering: .relaxed)
            await gate.wait()
            inFlight.subtract(1, ordering: .relaxed)
        }
        let first = Task { try await turns.take(work) }
        while runs.load(ordering: .relaxed) == 0 { await Task.yield() }
        // Ten more while the first run waits at the gate: none of them may start a run now.
        let later = (0 ..< 10).map { _ in Task { try await turns.take(work) } }
        for _ in 0 ..< 1_000 { await Task.yield() }
        #expect(runs.load(ordering: .relaxed) == 1)
        gate.open()
        try await first.value
        for task in later { try await task.value }
        #expect(mostInFlight.load(ordering: .relaxed) == 1)
        // The ten share the run that began after they asked (a straggler that asked only once it
        // had begun waits for one more): far fewer runs than the eleven callers.
        #expect((2 ..< 6).contains(runs.load(ordering: .relaxed)), "\(runs.load(ordering: .relaxed)) runs")
    }

    @Test("a run's failure reaches every caller it served; the next caller runs afresh")
    func failuresAreShared() async throws {
        let turns = CatchUpTurns()
        let calls = Atomic<Int>(0)
        let failing: @Sendable () async throws(StoreError) -> Void = { () throws(StoreError) in
            calls.add(1, ordering: .relaxed)
            throw .unavailable("down")
        }
        await #expect(throws: StoreError.self) { try await turns.take(failing) }
        let succeeding: @Sendable () async throws(StoreError) -> Void = { calls.add(1, ordering: .relaxed) }
        try await turns.take(succeeding)
        #expect(calls.load(ordering: .relaxed) == 2)
    }
}
