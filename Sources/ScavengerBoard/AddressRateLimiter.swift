import ScavengerCore
import Synchronization

/// Token buckets per client address, in memory (per daemon): for REGISTER, which has no user
/// to charge yet. Bounded: at most `maximumTracked` addresses, full buckets forgotten first.
public final class AddressRateLimiter: Sendable {
    /// Nil: unlimited.
    public let rate: RateLimit?
    private let maximumTracked: Int
    private let buckets = Mutex<[String: Bucket]>([:])

    struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    public init(rate: RateLimit?, maximumTracked: Int = 100_000) {
        self.rate = rate
        self.maximumTracked = maximumTracked
    }

    /// Takes a token for `address`, or refuses with the seconds until one is there. Connections
    /// without an address (a Unix socket) are not limited.
    public func take(_ address: String?, action: String, now: ContinuousClock.Instant = .now) throws(BoardError) {
        guard let rate, let address else { return }
        let capacity = Double(rate.count)
        let wait = buckets.withLock { buckets -> Double? in
            if buckets[address] == nil, buckets.count >= maximumTracked { Self.makeRoom(&buckets, rate: rate, now: now) }
            var bucket = buckets[address] ?? Bucket(tokens: capacity, updated: now)
            bucket.tokens = Self.tokens(bucket, rate: rate, now: now)
            bucket.updated = now
            guard bucket.tokens >= 1 else {
                buckets[address] = bucket
                return (1 - bucket.tokens) / rate.perSecond
            }
            bucket.tokens -= 1
            buckets[address] = bucket
            return nil
        }
        if let wait {
            let seconds = max(1, Int(wait.rounded(.up)))
            throw .rateLimited(retryAfter: seconds, "too many \(action) from your address; wait \(seconds) s")
        }
    }

    static func tokens(_ bucket: Bucket, rate: RateLimit, now: ContinuousClock.Instant) -> Double {
        let elapsed = max(0, Double((now - bucket.updated).components.seconds)
            + Double((now - bucket.updated).components.attoseconds) / 1e18)
        return min(Double(rate.count), bucket.tokens + elapsed * rate.perSecond)
    }

    /// Forgets buckets that have refilled, then, if still full, the least recently used tenth.
    private static func makeRoom(_ buckets: inout [String: Bucket], rate: RateLimit, now: ContinuousClock.Instant) {
        let capacity = Double(rate.count)
        let limit = buckets.count
        buckets = buckets.filter { tokens($0.value, rate: rate, now: now) < capacity }
        guard buckets.count >= limit else { return }
        let oldest = buckets.sorted { $0.value.updated < $1.value.updated }.prefix(max(1, limit / 10))
        for (key, _) in oldest { buckets[key] = nil }
    }
}
