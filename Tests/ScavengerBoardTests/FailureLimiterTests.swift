@testable import ScavengerBoard
import ScavengerCore
import Synchronization
import Testing

/// A clock the test moves by hand.
private final class HeldClock: Sendable {
    private let instant = Mutex(ContinuousClock.now)
    var now: ContinuousClock.Instant { instant.withLock { $0 } }
    func advance(_ duration: Duration) { instant.withLock { $0 += duration } }
}

@Suite("FailureLimiter: a per-address limit on failures, exact for a burst, free for successes")
struct FailureLimiterTests {
    @Test("failures spend tokens, successes none; past the tokens a try is refused with the wait; time refills them")
    func spendsOnFailures() async throws {
        let clock = HeldClock()
        let limiter = FailureLimiter(rate: RateLimit(count: 2, seconds: 600), now: { clock.now })
        for _ in 0 ..< 5 {
            try await limiter.begin("a", action: "tries")
            limiter.end("a", failed: false)
        }
        for _ in 0 ..< 2 {
            try await limiter.begin("a", action: "tries")
            limiter.end("a", failed: true)
        }
        await #expect(throws: BoardError.self) { try await limiter.begin("a", action: "tries") }
        // Another address has its own bucket; no address (a Unix socket) is not limited.
        try await limiter.begin("b", action: "tries")
        limiter.end("b", failed: true)
        try await limiter.begin(nil, action: "tries")
        // One token comes back every 300 s.
        clock.advance(.seconds(300))
        try await limiter.begin("a", action: "tries")
        limiter.end("a", failed: true)
        await #expect(throws: BoardError.self) { try await limiter.begin("a", action: "tries") }
    }

    @Test("with every token held by tries in flight, the next waits for them: given back by a success, it goes; spent by failures, it is refused")
    func waitsForTriesInFlight() async throws {
        let clock = HeldClock()
        let limiter = FailureLimiter(rate: RateLimit(count: 1, seconds: 600), now: { clock.now })
        try await limiter.begin("a", action: "tries")
        let waiting = Task { try await limiter.begin("a", action: "tries") }
        // The waiter cannot go until the first settles: a success gives the place back.
        limiter.end("a", failed: false)
        try await waiting.value
        let refused = Task { () -> Bool in
            do {
                try await limiter.begin("a", action: "tries")
                return false
            } catch {
                return true
            }
        }
        limiter.end("a", failed: true)
        #expect(await refused.value)
    }
}
