import ScavengerCore
import Synchronization

/// A per-address limit that charges failures only (JOINs by codes that find no hunt), exact
/// however many requests arrive at once, in memory (per daemon).
///
/// A request holds a place while its outcome is unknown (``begin(_:action:)``), and settles it
/// (``end(_:failed:)``): a failure takes a token, a success nothing. Places are given only while
/// the tokens left cover every place held, so no burst can have more failures judged than there
/// are tokens. When they do not, a request waits for those in flight to settle (a class behind
/// one address typing a right code at once waits a moment each, and gets in: right codes give
/// their places back), and is refused only when nothing is in flight and no token is left.
public final class FailureLimiter: Sendable {
    /// Nil: unlimited.
    public let rate: RateLimit?
    private let maximumTracked: Int
    private let state = Mutex<[String: Bucket]>([:])
    /// The time as the buckets see it (tests hold it still or move it on).
    private let now: @Sendable () -> ContinuousClock.Instant

    struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
        var inFlight = 0
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    public init(rate: RateLimit?, maximumTracked: Int = 100_000, now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }) {
        self.rate = rate
        self.maximumTracked = maximumTracked
        self.now = now
    }

    /// What ``begin(_:action:)`` decided for one try.
    enum Decision {
        case go
        case wait
        case refuse(seconds: Int)
    }

    /// Takes a place for a request from `address` whose outcome is not known yet, waiting while
    /// places held by others may still give tokens back; `rateLimited` when none is left.
    /// Connections without an address (a Unix socket) are not limited.
    public func begin(_ address: String?, action: String) async throws(BoardError) {
        guard let rate, let address else { return }
        while true {
            var decided = Decision.wait
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                decided = state.withLock { buckets -> Decision in
                    let now = self.now()
                    if buckets[address] == nil, buckets.count >= maximumTracked { Self.makeRoom(&buckets, rate: rate, now: now) }
                    var bucket = buckets[address] ?? Bucket(tokens: Double(rate.count), updated: now)
                    bucket.tokens = Self.tokens(bucket, rate: rate, now: now)
                    bucket.updated = now
                    defer { buckets[address] = bucket }
                    if bucket.tokens - Double(bucket.inFlight) >= 1 {
                        bucket.inFlight += 1
                        return .go
                    }
                    if bucket.inFlight > 0 {
                        // Resumed by the next settling of this address.
                        bucket.waiters.append(continuation)
                        return .wait
                    }
                    return .refuse(seconds: max(1, Int(((1 - bucket.tokens) / rate.perSecond).rounded(.up))))
                }
                if case .wait = decided { return }
                continuation.resume()
            }
            switch decided {
            case .go: return
            case .wait: continue
            case .refuse(let seconds):
                throw .rateLimited(retryAfter: seconds, "too many \(action) from your address; wait \(seconds) s")
            }
        }
    }

    /// The bucket's tokens at `now`: refilled at the rate since its last update, up to its size.
    static func tokens(_ bucket: Bucket, rate: RateLimit, now: ContinuousClock.Instant) -> Double {
        let elapsed = now - bucket.updated
        let seconds = max(0, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
        return min(Double(rate.count), bucket.tokens + seconds * rate.perSecond)
    }

    /// Settles a place taken by ``begin(_:action:)``: a failure takes a token. Wakes the
    /// requests waiting on this address to try again.
    public func end(_ address: String?, failed: Bool) {
        guard let rate, let address else { return }
        let waiters = state.withLock { buckets -> [CheckedContinuation<Void, Never>] in
            guard var bucket = buckets[address] else { return [] }
            let now = self.now()
            bucket.tokens = Self.tokens(bucket, rate: rate, now: now)
            bucket.updated = now
            bucket.inFlight = max(0, bucket.inFlight - 1)
            if failed { bucket.tokens = max(0, bucket.tokens - 1) }
            let waiting = bucket.waiters
            bucket.waiters = []
            buckets[address] = bucket
            return waiting
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Forgets buckets that have refilled with nothing in flight, then, if still full, the least
    /// recently used tenth of those with nothing in flight.
    private static func makeRoom(_ buckets: inout [String: Bucket], rate: RateLimit, now: ContinuousClock.Instant) {
        let capacity = Double(rate.count)
        let limit = buckets.count
        buckets = buckets.filter {
            $0.value.inFlight > 0 || tokens($0.value, rate: rate, now: now) < capacity
        }
        guard buckets.count >= limit else { return }
        let idle = buckets.filter { $0.value.inFlight == 0 }.sorted { $0.value.updated < $1.value.updated }.prefix(max(1, limit / 10))
        for (key, _) in idle { buckets[key] = nil }
    }
}
